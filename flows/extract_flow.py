"""The Prefect flow behind `docassay extract`: one task per document, concurrency bounded.

Used when a Prefect server is there to record it (`PREFECT_API_URL`, or `--orchestrator prefect`;
see flows/orchestration.py). The batch itself (collect, process, write rows as they finish, record
the run, judge the error ratio) is `flows.extract_batch.extract_batch`; this module only adds the
Prefect parts: the flow run, one task run per document (the task wraps
`flows.pipeline.process_document`, no caching: the format library is the cache that matters) and
two artifacts (a table of every document and a summary).

Parameters are plain JSON values (paths, names, numbers; the job options as one `options` object,
flows/job_options.py), so the same flow serves the CLI, a
scheduled deployment and a Dask task runner. When the share of failed documents exceeds
`max_error_ratio`, the flow run fails after everything was processed and persisted.
"""
from __future__ import annotations

import logging
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from docassay.flows.prefect_env import quiet_prefect

quiet_prefect()          # before Prefect is imported: it reads its settings (start-up timeout, log levels) once

from prefect import flow, task  # noqa: E402
from prefect.cache_policies import NO_CACHE  # noqa: E402
from prefect.context import FlowRunContext  # noqa: E402
from prefect.futures import wait  # noqa: E402

from docassay.flows.context import Job, RunContext
from docassay.flows.extract_batch import (
    POLL_S,
    STOP_GRACE_S,
    BatchFailed,
    BatchInterrupted,
    BatchOutcome,
    ResultsIncomplete,
    check_error_ratio,
    extract_batch,
)
from docassay.flows.job_options import JobOptions
from docassay.flows.outages import Outage, process_with_reconnect
from docassay.flows.results import Row
from docassay.flows.runners import is_in_process, make_task_runner
from docassay.flows.signals import StopRequest
from docassay.flows.status import publish_artifacts
from docassay.flows.workers import job_context
from docassay.infra.errors import DocassayError

__all__ = ["extract_flow", "BatchOutcome", "BatchFailed", "BatchInterrupted", "PrefectDispatch", "ResultsIncomplete",
           "run_extract", "check_error_ratio"]


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
def extract_flow(paths: list[str], out: str, options: dict, max_error_ratio: float | None = None, quiet: bool = True,
                 retry_from: str | None = None, overwrite: bool = False) -> dict:
    """Extract every document under `paths` (or the rows of `retry_from` that did not end well, and
    the inputs of a killed run that have none) into `out/results.jsonl`; returns the batch summary.
    `options`: the job options as plain JSON (`JobOptions.to_json`). An existing results.jsonl is
    replaced only with `overwrite` or when it is `retry_from`."""
    opts = JobOptions.from_json(options)
    return extract_batch(paths, opts, out, dispatch=PrefectDispatch(opts), quiet=quiet,
                         max_error_ratio=max_error_ratio, retry_from=retry_from, artifacts=publish_artifacts,
                         stop=_STOP.get(), overwrite=overwrite)


_STOP: ContextVar[StopRequest | None] = ContextVar("docassay_extract_stop", default=None)
"""The stop request of the flow run started by `run_extract` (flow parameters are plain JSON)."""


@dataclass
class PrefectDispatch:
    """Documents as Prefect task runs on the flow's task runner. In-process (threads): at most
    `opts.concurrency` submitted ahead, so a stop request leaves nothing queued; other processes
    (Dask): every document submitted at once, each worker building its own context."""
    opts: JobOptions
    grace_s: float = STOP_GRACE_S
    abandoned: list[str] = field(default_factory=list)
    outage: Outage = field(default_factory=Outage)

    def run(self, sources: list[str], job: Job, ctx: RunContext, stop: StopRequest) -> Iterator[tuple[int, Row]]:
        remote = not is_in_process(FlowRunContext.get().task_runner)
        window = len(sources) if remote else max(1, self.opts.concurrency)
        pending: dict = {}
        nxt = 0
        while nxt < len(sources) or pending:
            while not stop.is_set() and nxt < len(sources) and len(pending) < window:
                src = sources[nxt]
                fut = extract_document_in_worker.submit(src, self.opts) if remote else extract_document.submit(src, job, ctx, self.outage)
                pending[fut] = nxt
                nxt += 1
            if stop.is_set():
                break
            done = wait(list(pending), timeout=POLL_S).done
            for fut in done:
                yield pending.pop(fut), fut.result()
        if pending:
            for fut in wait(list(pending), timeout=self.grace_s).done:
                yield pending.pop(fut), fut.result()
            self.abandoned = [sources[i] for i in pending.values()]


class _TypedErrors(logging.Filter):
    """Drop Prefect's traceback of a docassay error that ends the flow: the CLI reports it itself,
    in one `docassay:` line (the flow run still ends Failed)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, DocassayError)


_TYPED_ERRORS = _TypedErrors()


def run_extract(paths: list[str], opts: JobOptions, out: Path | str, *, quiet: bool = False,
                max_error_ratio: float | None = None, retry_from: str | Path | None = None,
                task_runner: str = "threads", stop: StopRequest | None = None, overwrite: bool = False) -> dict:
    """Run the flow with `task_runner` (flows.runners: a thread pool of `opts.concurrency` workers
    by default, or Dask); `out` may be `s3://bucket/prefix` (what the CLI calls). `stop` (set by a
    signal) ends the batch early."""
    runner = make_task_runner(task_runner, opts.concurrency)
    for name in ("prefect.flow_runs", "prefect.task_runs"):
        if _TYPED_ERRORS not in logging.getLogger(name).filters:
            logging.getLogger(name).addFilter(_TYPED_ERRORS)
    token = _STOP.set(stop)
    try:
        return extract_flow.with_options(task_runner=runner)(
            paths=list(paths), out=str(out), options=opts.to_json(), max_error_ratio=max_error_ratio, quiet=quiet,
            retry_from=retry_from and str(retry_from), overwrite=overwrite)
    finally:
        _STOP.reset(token)
