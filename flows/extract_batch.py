"""The body of `docassay extract`, whoever orchestrates it: collect the documents (or a retry's
rows), run each through `flows.pipeline.process_document`, write rows as they finish, record the
run in the database, and judge the error ratio.

How documents are spread is a `Dispatch`: `ThreadDispatch` (a thread pool in this process, no
Prefect) or the Prefect tasks of `flows/extract_flow.py`. The same rows, database records and exit
statuses come out of both; only a Prefect run also leaves task runs and artifacts on its server.

Drift (a known format failing `drift_threshold` replays in a row) is queued during the batch and
proposed after the last document (`flows.pipeline.propose_queued_drift`, one proposal per format;
`DOCASSAY_DRIFT_DEFERRED=0` proposes on the failing document's path, as `process_document` alone
does); the outcomes are in the run's database record. The batch's documents of a format that got a
new version (or whose failing layout became a format of its own) and were held (`needs_review`,
`failed`) are then read once more (`reread_after_drift`): a second reading that is accepted
replaces the row, any other keeps the first (so deferring the proposal costs those documents
nothing against proposing it on their own path).

Rows are appended to the output folder's partial file as documents finish and moved onto
`results.jsonl` once every input has its row (flows/output.py: one run per folder, an existing
results.jsonl is only replaced when asked, a killed or stopped run's rows are resumed by the same
command). A database outage costs a document a retry, not the batch (flows/outages.py).

A stop request (`flows.signals.StopRequest`: SIGTERM, SIGINT) ends the batch early: no new document
starts, the documents in flight get `STOP_GRACE_S` to finish, every finished row is kept (in the
folder's partial file, which the same command resumes; results.jsonl is left as it was) and in the
database, and `BatchInterrupted` says how far it got.
"""
from __future__ import annotations

import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from docassay.flows.batch import collect_sources, ground_truth_sidecar
from docassay.flows.context import Job, RunContext, open_context
from docassay.flows.dispatch import POLL_S, STOP_GRACE_S, Dispatch, ThreadDispatch
from docassay.flows.jobs import JobOptions, build_job
from docassay.flows.outages import Outage, run_bookkeeping
from docassay.flows.output import OutputFolder
from docassay.flows.pipeline import DriftOutcome, DriftQueue, propose_queued_drift
from docassay.flows.progress import Progress
from docassay.flows.results import ResultsWriteError, Row, Summary, summarize
from docassay.flows.results_store import is_remote, local_dir, publish
from docassay.flows.retry import plan_retry
from docassay.flows.signals import StopRequest
from docassay.flows.status import record_run_documents
from docassay.infra import store
from docassay.infra.errors import DocassayError, StorageError

__all__ = ["BatchFailed", "BatchInterrupted", "BatchOutcome", "Dispatch", "ResultsIncomplete", "ThreadDispatch",
           "STOP_GRACE_S", "POLL_S", "check_error_ratio", "extract_batch", "extract_batch_outcome", "run_documents",
           "reread_after_drift"]

REREAD_STATUSES = ("needs_review", "failed")       # held rows a new version may read right
ACCEPTED_STATUSES = ("passed", "repaired")
IMPROVED_OUTCOMES = ("new_version", "new_format")

class BatchFailed(DocassayError):
    """More documents failed than `--max-error-ratio` allows (raised after all were persisted)."""
    kind = "max_error_ratio"


class ResultsIncomplete(StorageError):
    """Some rows could not be written (disk full): results.jsonl was left as it was; the rows that
    were written wait in the folder's partial file for the next run to resume."""


class BatchInterrupted(DocassayError):
    """A stop request (signal) ended the batch early; finished rows are kept. Context: `signal`,
    `done` (rows written), `total`, `abandoned` (documents in flight that did not finish)."""
    kind = "interrupted"


@dataclass
class BatchOutcome:
    rows: list[Row]
    summary: Summary
    results_path: Path
    run_id: str
    abandoned: list[str] = field(default_factory=list)


Artifacts = Callable[[str, list[Row], Summary, Path], None]
"""Publishes a finished batch somewhere besides results.jsonl and the database (Prefect artifacts)."""


def reread_after_drift(outcomes: list[DriftOutcome], rows: dict[int, Row], todo: list[str], job: Job,
                       ctx: RunContext, dispatch: Dispatch, stop: StopRequest) -> tuple[int, dict[int, Row]]:
    """Read again the held rows (`rows[i]` is the row of `todo[i]`) of the formats that drift gave a
    new version or split into a format of their own. Nothing is queued for drift again. Returns
    (documents read again, {i: accepted second reading}), the rows that should replace `rows[i]`."""
    improved = {o.format_id for o in outcomes if o.outcome in IMPROVED_OUTCOMES}
    again = [i for i in sorted(rows) if rows[i].status in REREAD_STATUSES and rows[i].format.get("id") in improved]
    if not again or stop.is_set():
        return 0, {}
    ctx.drift = DriftQueue()                       # a second reading proposes nothing more
    before = list(getattr(dispatch, "abandoned", []) or [])
    better = {again[j]: row for j, row in dispatch.run([todo[i] for i in again], job, ctx, stop)
              if row.status in ACCEPTED_STATUSES}
    if hasattr(dispatch, "abandoned"):
        dispatch.abandoned = before                # a second reading cut short by a stop: its first one stands
    return len(again), better


def check_error_ratio(summary: Summary, max_error_ratio: float | None) -> None:
    if max_error_ratio is not None and summary.error_ratio > max_error_ratio:
        errs = "; ".join(summary.errors[:3])
        raise BatchFailed(f"{summary.failed} of {summary.total} documents failed "
                          f"({summary.error_ratio:.1%} > max error ratio {max_error_ratio:.1%})"
                          + (f": {errs}" if errs else ""), failed=summary.failed, summary=summary.to_json())


def extract_batch(paths: list[str], opts: JobOptions, out: str, *, dispatch: Dispatch, quiet: bool = True,
                  max_error_ratio: float | None = None, retry_from: str | None = None,
                  artifacts: Artifacts | None = None, stop: StopRequest | None = None,
                  job: Job | None = None, overwrite: bool = False) -> dict:
    """Extract every document under `paths` (or the rows of `retry_from` that did not end well, and
    the inputs of a killed run that have none) into `out/results.jsonl` (`out` may be
    s3://bucket/prefix); returns the batch summary. An existing results.jsonl is replaced only with
    `overwrite` or when it is `retry_from`. Raises
    BatchInterrupted after a stop request, BatchFailed past `max_error_ratio`, QuotaExceeded when
    the quota is spent before anything is read. `job`: built from `opts` already (the CLI's
    pre-flight); this call closes its budget."""
    return extract_batch_outcome(paths, opts, out, dispatch=dispatch, quiet=quiet, max_error_ratio=max_error_ratio,
                                 retry_from=retry_from, artifacts=artifacts, stop=stop, job=job,
                                 overwrite=overwrite).summary.to_json()


def extract_batch_outcome(paths: list[str], opts: JobOptions, out: str, *, dispatch: Dispatch, quiet: bool = True,
                          max_error_ratio: float | None = None, retry_from: str | None = None,
                          artifacts: Artifacts | None = None, stop: StopRequest | None = None,
                          job: Job | None = None, overwrite: bool = False) -> BatchOutcome:
    """`extract_batch`, returning the whole outcome (every row, in input order) instead of the
    summary alone (`docassay.extract` returns the rows)."""
    stop = stop or StopRequest()
    job = job or build_job(opts)
    try:
        if job.budget is not None:
            job.budget.check()                 # a spent quota refuses the batch before anything is read
        kept: list[Row] = []
        folder = OutputFolder(local_dir(out, job.settings.home), overwrite=overwrite,
                              replaces=Path(retry_from) if retry_from else None,
                              resume=not (retry_from and _same_folder(retry_from, out)))
        with folder:
            if retry_from:
                plan = plan_retry(retry_from, folder_held=_same_folder(retry_from, out))
                sources, kept = plan.sources, plan.kept
            else:
                sources = collect_sources(paths, skip=ground_truth_sidecar, follow_links=job.settings.follow_links)
            outcome = run_documents(sources, job, folder, dispatch=dispatch, quiet=quiet,
                                    kept=kept, artifacts=artifacts, stop=stop)
        if is_remote(out) and not stop.is_set():
            publish(out, outcome.results_path, outcome.rows)   # results.jsonl + one object per document
    finally:
        if job.budget is not None:
            job.budget.close()
    if stop.is_set():
        raise BatchInterrupted(f"stopped by {stop.name} after {len(outcome.rows)} of {len(sources) + len(kept)} "
                               f"documents; the rows written are kept in {outcome.results_path} and the same "
                               f"command resumes them",
                               signal=stop.signum, done=len(outcome.rows), total=len(sources) + len(kept),
                               abandoned=outcome.abandoned, summary=outcome.summary.to_json())
    check_error_ratio(outcome.summary, max_error_ratio)
    return outcome


def _same_folder(results: str | Path, out: str | Path) -> bool:
    return not is_remote(out) and Path(results).parent.resolve() == Path(out).resolve()


def run_documents(sources: list[str], job: Job, out: Path | OutputFolder, *, dispatch: Dispatch, quiet: bool,
                  kept: list[Row] | None = None, artifacts: Artifacts | None = None,
                  stop: StopRequest | None = None) -> BatchOutcome:
    """Rows written to the output folder's partial file as they finish and committed onto
    results.jsonl when every input has one; `kept` rows (a retry's rows that ended well) first, and
    the rows a killed run left for these inputs (resumed, not processed again), counted in the
    summary. The run and its documents are recorded in the database even when a stop request ends
    it early (then in the order they finished, and results.jsonl is not replaced). `out` is an open
    OutputFolder, or a folder path (opened here with the defaults)."""
    if not isinstance(out, OutputFolder):
        with OutputFolder(Path(out)) as folder:
            return run_documents(sources, job, folder, dispatch=dispatch, quiet=quiet, kept=kept,
                                 artifacts=artifacts, stop=stop)
    folder = out
    stop = stop or StopRequest()
    run_id = "run-" + uuid.uuid4().hex[:12]
    todo, written = folder.start(sources, kept or [])
    writer = folder.writer
    assert writer is not None                     # start() opened the partial file
    progress = Progress(len(todo), quiet=quiet)
    rows: dict[int, Row] = {}
    unwritten: list[ResultsWriteError] = []
    outage = getattr(dispatch, "outage", None) or Outage()
    try:
        with open_context(job.settings) as ctx:
            if job.policy.drift_deferred:
                ctx.drift = DriftQueue()
            run_bookkeeping("the run", lambda c: store.start_run(c, run_id), ctx, outage)
            for i, row in dispatch.run(todo, job, ctx, stop):
                rows[i] = row
                try:
                    writer.write(row)
                except ResultsWriteError as exc:
                    unwritten.append(exc)
                progress.update(row)
            ordered = written + [rows[i] for i in sorted(rows)]
            summary = summarize(ordered)
            meta = {**summary.to_json(), "out": str(folder.folder)}
            if stop.is_set():
                meta["interrupted"] = {"signal": stop.name, "of": len(sources)}
            elif ctx.drift is not None and len(ctx.drift):
                drift = propose_queued_drift(job, ctx)
                meta["drift"] = [o.to_json() for o in drift]
                if not quiet:
                    for o in drift:
                        print(f"drift: format {o.format_id}: {o.outcome}"
                              + (f" (version {o.version})" if o.version else "")
                              + (f" ({o.new_format_id})" if o.new_format_id else "")
                              + f", from {o.source}", file=sys.stderr)
                again, better = reread_after_drift(drift, rows, todo, job, ctx, dispatch, stop)
                if better:
                    try:
                        folder.rewrite(written + [better.get(i, rows[i]) for i in sorted(rows)])
                        rows.update(better)
                    except ResultsWriteError as exc:             # the first readings stay, as written
                        print(f"drift: the second readings could not be written ({exc.message}); the first "
                              "ones are kept", file=sys.stderr)
                        better = {}
                    ordered = written + [rows[i] for i in sorted(rows)]
                    summary = summarize(ordered)
                    meta.update(summary.to_json())
                if again:
                    meta["drift_reread"] = {"documents": again, "accepted": len(better)}
                    if not quiet:
                        print(f"drift: read {again} held document(s) of those formats again, {len(better)} "
                              "accepted", file=sys.stderr)
            run_bookkeeping("the run's summary", lambda c: store.finish_run(c, run_id, meta), ctx, outage)
            run_bookkeeping("the run's documents", lambda c: record_run_documents(c, run_id, ordered), ctx, outage)
    finally:
        progress.close()
    abandoned = list(getattr(dispatch, "abandoned", []) or [])
    if unwritten:
        raise ResultsIncomplete(
            f"{len(unwritten)} of {len(ordered)} rows could not be written ({unwritten[0].message}); "
            f"{folder.results} was left as it was and the {len(ordered) - len(unwritten)} rows written are "
            f"kept beside it: free space and run the same command again to finish",
            unwritten=len(unwritten), path=str(folder.results))
    if stop.is_set():                  # not every input has its row: the partial waits for the same command
        return BatchOutcome(ordered, summary, folder.partial, run_id, abandoned=abandoned)
    results = folder.commit()
    if artifacts is not None:
        artifacts(run_id, ordered, summary, results)
    return BatchOutcome(ordered, summary, results, run_id, abandoned=abandoned)
