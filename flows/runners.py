"""Task runners by name, for the CLI and deployments (`--task-runner`).

    threads            a thread pool of `concurrency` workers in the flow's process (default)
    dask               a local Dask cluster of `concurrency` worker processes (prefect-dask)
    dask:N             the same with N worker processes
    tcp://HOST:PORT    an existing Dask scheduler (documents spread over its workers)

Tasks that run in another process cannot share the flow's database connections or format
library: they build their own once per process (flows/workers.py). The format index is safe for
several processes (faiss file lock, or S3 Vectors), and learning a new format is claimed in the
database (extractors.library.LearnLock), so a layout seen at the same moment by two processes is
learned once (on Aurora DSQL, whose locks do not block, the claim narrows that race only).
"""
from __future__ import annotations

import os
from typing import Any

from docassay.infra.errors import ConfigError

__all__ = ["make_task_runner", "is_in_process", "TASK_RUNNERS"]

TASK_RUNNERS = ("threads", "dask", "dask:N", "tcp://HOST:PORT")


def make_task_runner(spec: str, concurrency: int) -> Any:
    """The Prefect task runner named by `spec` (see the module docstring); ConfigError when unknown."""
    spec = (spec or "threads").strip()
    if spec == "threads":
        from prefect.task_runners import ThreadPoolTaskRunner
        return ThreadPoolTaskRunner(max_workers=max(1, concurrency))
    if spec == "dask" or spec.startswith("dask:") or spec.startswith("tcp://"):
        os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")   # before dask loads its config; workers inherit it
        try:
            from prefect_dask import DaskTaskRunner
        except ImportError as exc:
            raise ConfigError("the dask task runner needs prefect-dask: pip install prefect-dask",
                              setting="task_runner") from exc
        if spec.startswith("tcp://"):
            return DaskTaskRunner(address=spec)
        n = concurrency
        if spec.startswith("dask:"):
            try:
                n = int(spec.split(":", 1)[1])
            except ValueError as exc:
                raise ConfigError(f"--task-runner {spec!r}: expected dask:N with N a number",
                                  setting="task_runner") from exc
        if n < 1:
            raise ConfigError("a Dask cluster needs at least one worker", setting="task_runner")
        return DaskTaskRunner(cluster_kwargs={"n_workers": n, "threads_per_worker": 1, "processes": True,
                                              "dashboard_address": None})
    raise ConfigError(f"unknown task runner {spec!r}: choose one of {', '.join(TASK_RUNNERS)}",
                      setting="task_runner")


def is_in_process(runner: Any) -> bool:
    """Whether tasks of `runner` run in the flow's own process (and may share its objects)."""
    from prefect.task_runners import ThreadPoolTaskRunner
    return isinstance(runner, ThreadPoolTaskRunner)
