"""What a task needs to process documents, built once per process and kept for later tasks.

A task that runs in a Dask worker process gets only plain, picklable arguments (options, paths);
it cannot use the flow's database connections or format library. `job_context(opts)` builds the
`Job` and a `RunContext` (database, format library) the first time a process needs them for
these options and returns the same ones afterwards; in the flow's own process (thread pool) that
is the flow's context. `close(opts)` / `close_all()` release them (connections are per thread).
"""
from __future__ import annotations

import dataclasses
import threading

from docassay.extractors.library import FormatLibrary
from docassay.flows.context import Job, RunContext
from docassay.flows.jobs import JobOptions, build_job
from docassay.infra.db import Database

__all__ = ["job_context", "close", "close_all"]

_lock = threading.Lock()
_contexts: dict[tuple, tuple[Job, RunContext]] = {}


def _key(opts: JobOptions) -> tuple:
    return tuple(str(v) for v in dataclasses.astuple(opts))


def job_context(opts: JobOptions) -> tuple[Job, RunContext]:
    """This process's (Job, RunContext) for `opts`, built on first use."""
    key = _key(opts)
    with _lock:
        got = _contexts.get(key)
        if got is None:
            job = build_job(opts)
            ctx = RunContext(Database.from_settings(job.settings), FormatLibrary.from_settings(job.settings))
            got = _contexts[key] = (job, ctx)
        return got


def close(opts: JobOptions) -> None:
    with _lock:
        got = _contexts.pop(_key(opts), None)
    if got is not None:
        _release(*got)


def close_all() -> None:
    with _lock:
        items = list(_contexts.values())
        _contexts.clear()
    for job, ctx in items:
        _release(job, ctx)


def _release(job: Job, ctx: RunContext) -> None:
    ctx.close()
    if job.budget is not None:
        job.budget.close()
