"""The Prefect flow behind `docassay extract`: one task per document, concurrency bounded.

Parameters are plain JSON values (paths, names, numbers), so the same flow serves the CLI, a
scheduled deployment and a Dask task runner. The task only wraps
`flows.pipeline.process_document` (no caching: the format library is the cache that matters).
Rows are appended to the output folder's partial file as tasks finish and moved onto
`results.jsonl` once every input has its row (flows/output.py: one run per folder, an existing
results.jsonl is only replaced when asked, a killed run's rows are resumed). A database outage
costs a document a retry, not the batch (flows/outages.py). When the share of failed documents exceeds `max_error_ratio`, the flow run fails after
everything was processed and persisted.

Token budgets: a batch whose generator calls a model is refused before it starts (QuotaExceeded)
when a quota that applies is spent. Per-document status goes to results.jsonl, the `documents`
and `run_documents` tables, and two Prefect artifacts (a table of every document and a summary).
`retry_from` reruns only the rows of an earlier results.jsonl that did not end well.
"""
from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed
from prefect.context import FlowRunContext

from flows.batch import collect_sources, ground_truth_sidecar
from flows.jobs import DEFAULT_GENERATOR, JobOptions, build_job
from flows.outages import Outage, process_with_reconnect, run_bookkeeping
from flows.output import OutputFolder
from flows.pipeline import Job, RunContext, open_context
from flows.progress import Progress
from flows.results import ResultsWriteError, Row, Summary, summarize
from flows.results_store import is_remote, local_dir, publish
from flows.retry import plan_retry
from flows.runners import is_in_process, make_task_runner
from flows.workers import job_context
from flows.status import publish_artifacts, record_run_documents
from infra import store
from infra.errors import DocassayError, StorageError

__all__ = ["extract_flow", "BatchOutcome", "BatchFailed", "ResultsIncomplete", "run_extract"]


class BatchFailed(DocassayError):
    """More documents failed than `--max-error-ratio` allows (raised after all were persisted)."""
    kind = "max_error_ratio"


class ResultsIncomplete(StorageError):
    """Some rows could not be written (disk full): results.jsonl was left as it was; the rows that
    were written wait in the folder's partial file for the next run to resume."""


@dataclass
class BatchOutcome:
    rows: list[Row]
    summary: Summary
    results_path: Path
    run_id: str


@task(name="extract-document", cache_policy=NO_CACHE, persist_result=False, log_prints=False)
def extract_document(source: str, job: Job, ctx: RunContext, outage: Outage) -> Row:
    return process_with_reconnect(source, job, ctx, outage)


@task(name="extract-document", cache_policy=NO_CACHE, persist_result=False, log_prints=False)
def extract_document_in_worker(source: str, opts: JobOptions) -> Row:
    """The same step for a task runner in other processes (Dask): the worker builds its own job
    and context once (flows.workers) from the plain options."""
    job, ctx = job_context(opts)
    return process_with_reconnect(source, job, ctx, Outage())


@flow(name="docassay-extract", persist_result=False, log_prints=False)
def extract_flow(paths: list[str], schema_path: str, out: str, rules: str | None = None, home: str | None = None,
                 db: str | None = None, generator: str = DEFAULT_GENERATOR, concurrency: int = 2,
                 max_error_ratio: float | None = None, quiet: bool = True, project: str | None = None,
                 user: str | None = None, retry_from: str | None = None, parser: str = "local",
                 index: str | None = None, model_url: str | None = None, follow_links: bool = False,
                 overwrite: bool = False) -> dict:
    """Extract every document under `paths` (or the rows of `retry_from` that did not end well, and
    the inputs of a killed run that have none) into `out/results.jsonl`; returns the batch summary.
    An existing results.jsonl is replaced only with `overwrite` or when it is `retry_from`."""
    opts = JobOptions(schema=schema_path, rules=rules, home=home, db=db, generator=generator, concurrency=concurrency,
                      project=project, user=user, parser=parser, index=index, model_url=model_url,
                      follow_links=follow_links)
    job = build_job(opts)
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
            outcome = run_batch_tasks(sources, job, folder, quiet=quiet, kept=kept, opts=opts)
        if is_remote(out):
            publish(out, outcome.results_path, outcome.rows)   # results.jsonl + one object per document
    finally:
        if job.budget is not None:
            job.budget.close()
    check_error_ratio(outcome.summary, max_error_ratio)
    return outcome.summary.to_json()


def _same_folder(results: str | Path, out: str | Path) -> bool:
    return not is_remote(out) and Path(results).parent.resolve() == Path(out).resolve()


def check_error_ratio(summary: Summary, max_error_ratio: float | None) -> None:
    if max_error_ratio is not None and summary.error_ratio > max_error_ratio:
        errs = "; ".join(summary.errors[:3])
        raise BatchFailed(f"{summary.failed} of {summary.total} documents failed "
                          f"({summary.error_ratio:.1%} > max error ratio {max_error_ratio:.1%})"
                          + (f": {errs}" if errs else ""), failed=summary.failed, summary=summary.to_json())


def run_batch_tasks(sources: list[str], job: Job, out: Path | OutputFolder, *, quiet: bool,
                    kept: list[Row] | None = None, opts: JobOptions | None = None) -> BatchOutcome:
    """Inside a flow: one Prefect task per document; rows written as they finish. `kept` rows (a
    retry's rows that ended well) are written first and count in the summary, as do the rows a
    killed run left in the folder for these inputs (resumed, not processed again). With a task
    runner in other processes (Dask), tasks get `opts` and build their own context. `out` is an
    open OutputFolder, or a folder path (opened here with the defaults)."""
    if not isinstance(out, OutputFolder):
        with OutputFolder(Path(out)) as folder:
            return run_batch_tasks(sources, job, folder, quiet=quiet, kept=kept, opts=opts)
    folder = out
    run_id = "run-" + uuid.uuid4().hex[:12]
    todo, written = folder.start(sources, kept or [])
    progress = Progress(len(todo), quiet=quiet)
    rows: dict[int, Row] = {}
    unwritten: list[ResultsWriteError] = []
    outage = Outage()
    try:
        with open_context(job.settings) as ctx:
            run_bookkeeping("the run", lambda c: store.start_run(c, run_id), ctx, outage)
            remote = opts is not None and not is_in_process(FlowRunContext.get().task_runner)
            futures = {(extract_document_in_worker.submit(src, opts) if remote
                        else extract_document.submit(src, job, ctx, outage)): i for i, src in enumerate(todo)}
            for fut in as_completed(list(futures)):
                row = fut.result()
                rows[futures[fut]] = row
                try:
                    folder.writer.write(row)
                except ResultsWriteError as exc:
                    unwritten.append(exc)
                progress.update(row)
            ordered = written + [rows[i] for i in range(len(todo))]
            summary = summarize(ordered)
            run_bookkeeping("the run's summary", lambda c: store.finish_run(
                c, run_id, {**summary.to_json(), "out": str(folder.folder)}), ctx, outage)
            run_bookkeeping("the run's documents", lambda c: record_run_documents(c, run_id, ordered), ctx, outage)
    finally:
        progress.close()
    if unwritten:
        raise ResultsIncomplete(
            f"{len(unwritten)} of {len(ordered)} rows could not be written ({unwritten[0].message}); "
            f"{folder.results} was left as it was and the {len(ordered) - len(unwritten)} rows written are "
            f"kept beside it: free space and run the same command again to finish",
            unwritten=len(unwritten), path=str(folder.results))
    results = folder.commit()
    publish_artifacts(run_id, ordered, summary, results)
    return BatchOutcome(ordered, summary, results, run_id)


class _TypedErrors(logging.Filter):
    """Drop Prefect's traceback of a docassay error that ends the flow: the CLI reports it itself,
    in one `docassay:` line (the flow run still ends Failed)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, DocassayError)


_TYPED_ERRORS = _TypedErrors()


def run_extract(paths: list[str], opts: JobOptions, out: Path | str, *, quiet: bool = False,
                max_error_ratio: float | None = None, retry_from: str | Path | None = None,
                task_runner: str = "threads", overwrite: bool = False) -> dict:
    """Run the flow with `task_runner` (flows.runners: a thread pool of `opts.concurrency` workers
    by default, or Dask); `out` may be `s3://bucket/prefix` (what the CLI calls)."""
    runner = make_task_runner(task_runner, opts.concurrency)
    for name in ("prefect.flow_runs", "prefect.task_runs"):
        if _TYPED_ERRORS not in logging.getLogger(name).filters:
            logging.getLogger(name).addFilter(_TYPED_ERRORS)
    return extract_flow.with_options(task_runner=runner)(
        paths=list(paths), schema_path=str(opts.schema), out=str(out), rules=opts.rules and str(opts.rules),
        home=opts.home and str(opts.home), db=opts.db, generator=opts.generator, concurrency=opts.concurrency,
        max_error_ratio=max_error_ratio, quiet=quiet, project=opts.project, user=opts.user,
        retry_from=retry_from and str(retry_from), parser=opts.parser, index=opts.index, model_url=opts.model_url,
        follow_links=opts.follow_links, overwrite=overwrite)
