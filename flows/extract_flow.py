"""The Prefect flow behind `docassay extract`: one task per document, concurrency bounded.

Parameters are plain JSON values (paths, names, numbers), so the same flow serves the CLI, a
scheduled deployment and a Dask task runner. The task only wraps
`flows.pipeline.process_document` (no caching: the format library is the cache that matters).
Rows are appended to `results.jsonl` as tasks finish, so an interrupted batch keeps what it
accepted. When the share of failed documents exceeds `max_error_ratio`, the flow run fails after
everything was processed and persisted.

Token budgets: a batch whose generator calls a model is refused before it starts (QuotaExceeded)
when a quota that applies is spent. Per-document status goes to results.jsonl, the `documents`
and `run_documents` tables, and two Prefect artifacts (a table of every document and a summary).
`retry_from` reruns only the rows of an earlier results.jsonl that did not end well.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed
from prefect.context import FlowRunContext

from flows.batch import collect_sources, ground_truth_sidecar
from flows.jobs import DEFAULT_GENERATOR, JobOptions, build_job
from flows.pipeline import Job, RunContext, open_context, process_document
from flows.progress import Progress
from flows.results import ResultsWriter, Row, Summary, summarize
from flows.results_store import is_remote, local_dir, publish
from flows.retry import plan_retry
from flows.runners import is_in_process, make_task_runner
from flows.workers import job_context
from flows.status import publish_artifacts, record_run_documents
from infra import store
from infra.errors import DocassayError

__all__ = ["extract_flow", "BatchOutcome", "BatchFailed", "run_extract"]


class BatchFailed(DocassayError):
    """More documents failed than `--max-error-ratio` allows (raised after all were persisted)."""
    kind = "max_error_ratio"


@dataclass
class BatchOutcome:
    rows: list[Row]
    summary: Summary
    results_path: Path
    run_id: str


@task(name="extract-document", cache_policy=NO_CACHE, persist_result=False, log_prints=False)
def extract_document(source: str, job: Job, ctx: RunContext) -> Row:
    return process_document(source, job, ctx)


@task(name="extract-document", cache_policy=NO_CACHE, persist_result=False, log_prints=False)
def extract_document_in_worker(source: str, opts: JobOptions) -> Row:
    """The same step for a task runner in other processes (Dask): the worker builds its own job
    and context once (flows.workers) from the plain options."""
    job, ctx = job_context(opts)
    return process_document(source, job, ctx)


@flow(name="docassay-extract", persist_result=False, log_prints=False)
def extract_flow(paths: list[str], schema_path: str, out: str, rules: str | None = None, home: str | None = None,
                 db: str | None = None, generator: str = DEFAULT_GENERATOR, concurrency: int = 2,
                 max_error_ratio: float | None = None, quiet: bool = True, project: str | None = None,
                 user: str | None = None, retry_from: str | None = None, parser: str = "local",
                 index: str | None = None, model_url: str | None = None, min_confidence: float | None = None) -> dict:
    """Extract every document under `paths` (or the rows of `retry_from` that did not end well)
    into `out/results.jsonl`; returns the batch summary."""
    opts = JobOptions(schema=schema_path, rules=rules, home=home, db=db, generator=generator, concurrency=concurrency,
                      project=project, user=user, parser=parser, index=index, model_url=model_url,
                      min_confidence=min_confidence)
    job = build_job(opts)
    try:
        if job.budget is not None:
            job.budget.check()                 # a spent quota refuses the batch before anything is read
        kept: list[Row] = []
        if retry_from:
            plan = plan_retry(retry_from)      # read before results.jsonl is opened (it may be the same file)
            sources, kept = plan.sources, plan.kept
        else:
            sources = collect_sources(paths, skip=ground_truth_sidecar)
        outcome = run_batch_tasks(sources, job, local_dir(out, job.settings.home), quiet=quiet, kept=kept, opts=opts)
        if is_remote(out):
            publish(out, outcome.results_path, outcome.rows)   # results.jsonl + one object per document
    finally:
        if job.budget is not None:
            job.budget.close()
    check_error_ratio(outcome.summary, max_error_ratio)
    return outcome.summary.to_json()


def check_error_ratio(summary: Summary, max_error_ratio: float | None) -> None:
    if max_error_ratio is not None and summary.error_ratio > max_error_ratio:
        errs = "; ".join(summary.errors[:3])
        raise BatchFailed(f"{summary.failed} of {summary.total} documents failed "
                          f"({summary.error_ratio:.1%} > max error ratio {max_error_ratio:.1%})"
                          + (f": {errs}" if errs else ""), failed=summary.failed, summary=summary.to_json())


def run_batch_tasks(sources: list[str], job: Job, out: Path, *, quiet: bool, kept: list[Row] | None = None,
                    opts: JobOptions | None = None) -> BatchOutcome:
    """Inside a flow: one Prefect task per document; rows written as they finish. `kept` rows (a
    retry's rows that ended well) are written first and count in the summary. With a task runner
    in other processes (Dask), tasks get `opts` and build their own context."""
    run_id = "run-" + uuid.uuid4().hex[:12]
    writer = ResultsWriter(out / "results.jsonl")
    progress = Progress(len(sources), quiet=quiet)
    rows: dict[int, Row] = {}
    kept = kept or []
    try:
        for row in kept:
            writer.write(row)
        with open_context(job.settings) as ctx:
            store.start_run(ctx.conn, run_id)
            remote = opts is not None and not is_in_process(FlowRunContext.get().task_runner)
            futures = {(extract_document_in_worker.submit(src, opts) if remote else extract_document.submit(src, job, ctx)): i
                       for i, src in enumerate(sources)}
            for fut in as_completed(list(futures)):
                row = fut.result()
                rows[futures[fut]] = row
                writer.write(row)
                progress.update(row)
            ordered = kept + [rows[i] for i in range(len(sources))]
            summary = summarize(ordered)
            store.finish_run(ctx.conn, run_id, {**summary.to_json(), "out": str(out)})
            record_run_documents(ctx.conn, run_id, ordered)
            publish_artifacts(run_id, ordered, summary, out / "results.jsonl")
    finally:
        writer.close()
        progress.close()
    return BatchOutcome(ordered, summary, out / "results.jsonl", run_id)


def run_extract(paths: list[str], opts: JobOptions, out: Path | str, *, quiet: bool = False,
                max_error_ratio: float | None = None, retry_from: str | Path | None = None,
                task_runner: str = "threads") -> dict:
    """Run the flow with `task_runner` (flows.runners: a thread pool of `opts.concurrency` workers
    by default, or Dask); `out` may be `s3://bucket/prefix` (what the CLI calls)."""
    runner = make_task_runner(task_runner, opts.concurrency)
    return extract_flow.with_options(task_runner=runner)(
        paths=list(paths), schema_path=str(opts.schema), out=str(out), rules=opts.rules and str(opts.rules),
        home=opts.home and str(opts.home), db=opts.db, generator=opts.generator, concurrency=opts.concurrency,
        max_error_ratio=max_error_ratio, quiet=quiet, project=opts.project, user=opts.user,
        retry_from=retry_from and str(retry_from), parser=opts.parser, index=opts.index, model_url=opts.model_url,
        min_confidence=opts.min_confidence)
