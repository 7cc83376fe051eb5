"""The body of `docassay extract`, whoever orchestrates it: collect the documents (or a retry's
rows), run each through `flows.pipeline.process_document`, write rows as they finish, record the
run in the database, and judge the error ratio.

How documents are spread is a `Dispatch`: `ThreadDispatch` (a thread pool in this process, no
Prefect) or the Prefect tasks of `flows/extract_flow.py`. The same rows, database records and exit
statuses come out of both; only a Prefect run also leaves task runs and artifacts on its server.

Drift (a known format failing `drift_threshold` replays in a row) is queued during the batch and
proposed after the last document (`flows.pipeline.propose_queued_drift`, one proposal per format;
`DOCASSAY_DRIFT_DEFERRED=0` proposes on the failing document's path, as `process_document` alone
does); the outcomes are in the run's database record.

A stop request (`flows.signals.StopRequest`: SIGTERM, SIGINT) ends the batch early: no new document
starts, the documents in flight get `STOP_GRACE_S` to finish, every finished row is kept in
results.jsonl and the database, and `BatchInterrupted` says how far it got.
"""
from __future__ import annotations

import sys
import uuid
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Protocol

from flows.batch import collect_sources, ground_truth_sidecar
from flows.jobs import JobOptions, build_job
from flows.pipeline import DriftQueue, Job, RunContext, open_context, process_document, propose_queued_drift
from flows.progress import Progress
from flows.results import ResultsWriter, Row, Summary, summarize
from flows.results_store import is_remote, local_dir, publish
from flows.retry import plan_retry
from flows.signals import StopRequest
from flows.status import record_run_documents
from infra import store
from infra.errors import DocassayError

__all__ = ["BatchFailed", "BatchInterrupted", "BatchOutcome", "Dispatch", "ThreadDispatch", "STOP_GRACE_S",
           "POLL_S", "check_error_ratio", "extract_batch", "run_documents"]

STOP_GRACE_S = 5.0
"""After a stop request, how long the documents in flight may take to finish before they are abandoned
(well inside the 10 s a container runtime waits between SIGTERM and SIGKILL)."""
POLL_S = 0.2
"""How often the batch looks at the stop request while it waits for documents."""


class BatchFailed(DocassayError):
    """More documents failed than `--max-error-ratio` allows (raised after all were persisted)."""
    kind = "max_error_ratio"


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


class Dispatch(Protocol):
    """Runs `process_document` over `sources`; yields (index, row) as documents finish. After
    `stop` is set it starts no new document and yields only what finishes within the grace period."""
    def run(self, sources: list[str], job: Job, ctx: RunContext, stop: StopRequest) -> Iterator[tuple[int, Row]]: ...


@dataclass
class ThreadDispatch:
    """Documents on a thread pool of `workers` threads in this process (no orchestrator, no server)."""
    workers: int
    grace_s: float = STOP_GRACE_S
    abandoned: list[str] = field(default_factory=list)

    def run(self, sources: list[str], job: Job, ctx: RunContext, stop: StopRequest) -> Iterator[tuple[int, Row]]:
        pool = ThreadPoolExecutor(max_workers=max(1, self.workers), thread_name_prefix="docassay-doc")
        pending: dict[Future, int] = {}
        nxt = 0
        try:
            while nxt < len(sources) or pending:
                while not stop.is_set() and nxt < len(sources) and len(pending) < max(1, self.workers):
                    pending[pool.submit(process_document, sources[nxt], job, ctx)] = nxt
                    nxt += 1
                if stop.is_set():
                    break
                done, _ = wait(list(pending), timeout=POLL_S, return_when=FIRST_COMPLETED)
                for fut in done:
                    yield pending.pop(fut), fut.result()
            if pending:                                   # stopped: the documents in flight may finish
                done, _ = wait(list(pending), timeout=self.grace_s)
                for fut in done:
                    yield pending.pop(fut), fut.result()
                self.abandoned = [sources[i] for i in pending.values()]
        finally:
            pool.shutdown(wait=not pending, cancel_futures=True)


def check_error_ratio(summary: Summary, max_error_ratio: float | None) -> None:
    if max_error_ratio is not None and summary.error_ratio > max_error_ratio:
        errs = "; ".join(summary.errors[:3])
        raise BatchFailed(f"{summary.failed} of {summary.total} documents failed "
                          f"({summary.error_ratio:.1%} > max error ratio {max_error_ratio:.1%})"
                          + (f": {errs}" if errs else ""), failed=summary.failed, summary=summary.to_json())


def extract_batch(paths: list[str], opts: JobOptions, out: str, *, dispatch: Dispatch, quiet: bool = True,
                  max_error_ratio: float | None = None, retry_from: str | None = None,
                  artifacts: Artifacts | None = None, stop: StopRequest | None = None,
                  job: Job | None = None) -> dict:
    """Extract every document under `paths` (or the rows of `retry_from` that did not end well) into
    `out/results.jsonl` (`out` may be s3://bucket/prefix); returns the batch summary. Raises
    BatchInterrupted after a stop request, BatchFailed past `max_error_ratio`, QuotaExceeded when
    the quota is spent before anything is read. `job`: built from `opts` already (the CLI's
    pre-flight); this call closes its budget."""
    stop = stop or StopRequest()
    job = job or build_job(opts)
    try:
        if job.budget is not None:
            job.budget.check()                 # a spent quota refuses the batch before anything is read
        kept: list[Row] = []
        if retry_from:
            plan = plan_retry(retry_from)      # read before results.jsonl is opened (it may be the same file)
            sources, kept = plan.sources, plan.kept
        else:
            sources = collect_sources(paths, skip=ground_truth_sidecar)
        outcome = run_documents(sources, job, local_dir(out, job.settings.home), dispatch=dispatch, quiet=quiet,
                                kept=kept, artifacts=artifacts, stop=stop)
        if is_remote(out):
            publish(out, outcome.results_path, outcome.rows)   # results.jsonl + one object per document
    finally:
        if job.budget is not None:
            job.budget.close()
    if stop.is_set():
        raise BatchInterrupted(f"stopped by {stop.name} after {len(outcome.rows)} of {len(sources) + len(kept)} "
                               f"documents; the rows written are kept in {outcome.results_path}",
                               signal=stop.signum, done=len(outcome.rows), total=len(sources) + len(kept),
                               abandoned=outcome.abandoned, summary=outcome.summary.to_json())
    check_error_ratio(outcome.summary, max_error_ratio)
    return outcome.summary.to_json()


def run_documents(sources: list[str], job: Job, out: Path, *, dispatch: Dispatch, quiet: bool,
                  kept: list[Row] | None = None, artifacts: Artifacts | None = None,
                  stop: StopRequest | None = None) -> BatchOutcome:
    """Rows written to `out/results.jsonl` as they finish; `kept` rows (a retry's rows that ended
    well) first, counted in the summary. The run and its documents are recorded in the database
    even when a stop request ends it early (then in the order they finished)."""
    stop = stop or StopRequest()
    run_id = "run-" + uuid.uuid4().hex[:12]
    writer = ResultsWriter(out / "results.jsonl")
    progress = Progress(len(sources), quiet=quiet)
    rows: dict[int, Row] = {}
    kept = kept or []
    try:
        for row in kept:
            writer.write(row)
        with open_context(job.settings) as ctx:
            if job.policy.drift_deferred:
                ctx.drift = DriftQueue()
            store.start_run(ctx.conn, run_id)
            for i, row in dispatch.run(sources, job, ctx, stop):
                rows[i] = row
                writer.write(row)
                progress.update(row)
            ordered = kept + [rows[i] for i in sorted(rows)]
            summary = summarize(ordered)
            meta = {**summary.to_json(), "out": str(out)}
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
            store.finish_run(ctx.conn, run_id, meta)
            record_run_documents(ctx.conn, run_id, ordered)
            if artifacts is not None:
                artifacts(run_id, ordered, summary, out / "results.jsonl")
    finally:
        writer.close()
        progress.close()
    return BatchOutcome(ordered, summary, out / "results.jsonl", run_id,
                        abandoned=list(getattr(dispatch, "abandoned", []) or []))
