"""Who runs a `docassay extract` batch: Prefect, when there is a Prefect server to record it, else
a thread pool in this process. Both run the same batch (flows/extract_batch.py): the same rows,
database records, exit statuses and signal handling.

    auto     (default) prefect when a Prefect API is configured (`PREFECT_API_URL` in the
             environment or in the active Prefect profile) or the task runner is Dask; else local
    local    no orchestrator, no server: documents on `--concurrency` threads
    prefect  a Prefect flow run, one task run per document, artifacts; with no Prefect API
             configured Prefect starts its temporary server for this one command (seconds)

Why: Prefect's temporary ("ephemeral") API server is a subprocess started by every command that
runs a flow without a server, 8-10 s of a one-document run on two cores (BENCHMARKS.md, issue 15),
and importing Prefect alone takes about 2 s. A user who wants flow runs, task runs and artifacts
has a server (`prefect server start`, the one scheduled deployments need anyway) and sets
`PREFECT_API_URL`; then every command reuses it and pays no start. Without one, nothing would keep
those records, so nothing is started. A machine-wide server kept alive by docassay would hide a
long-lived process behind a CLI and still cost the 2 s import; it was measured and not chosen.

`DOCASSAY_ORCHESTRATOR` sets the default of `--orchestrator`.
"""
from __future__ import annotations

import os
import tomllib
from pathlib import Path

from docassay.infra.errors import ConfigError

__all__ = ["ORCHESTRATORS", "ORCHESTRATOR_ENV", "choose", "prefect_api_configured"]

ORCHESTRATORS = ("auto", "local", "prefect")
ORCHESTRATOR_ENV = "DOCASSAY_ORCHESTRATOR"


def prefect_api_configured(env: "os._Environ[str] | dict[str, str] | None" = None) -> bool:
    """Whether Prefect would talk to a server: `PREFECT_API_URL` in the environment, or in the
    active profile of Prefect's profiles file (read without importing Prefect)."""
    env = os.environ if env is None else env
    if env.get("PREFECT_API_URL"):
        return True
    profiles = Path(env.get("PREFECT_PROFILES_PATH")
                    or Path(env.get("PREFECT_HOME") or Path.home() / ".prefect") / "profiles.toml").expanduser()
    try:
        data = tomllib.loads(profiles.read_text("utf-8"))
    except (OSError, ValueError):
        return False
    active = env.get("PREFECT_PROFILE") or data.get("active") or "ephemeral"
    profile = (data.get("profiles") or {}).get(active) or {}
    return bool(isinstance(profile, dict) and profile.get("PREFECT_API_URL"))


def choose(requested: str | None, task_runner: str = "threads") -> str:
    """`local` or `prefect` for the `--orchestrator` value (None: $DOCASSAY_ORCHESTRATOR, else auto)."""
    name = (requested or os.environ.get(ORCHESTRATOR_ENV) or "auto").strip().lower()
    if name not in ORCHESTRATORS:
        raise ConfigError(f"unknown orchestrator {name!r}: choose one of {', '.join(ORCHESTRATORS)}",
                          setting="orchestrator")
    in_process = (task_runner or "threads").strip() == "threads"
    if name == "local" and not in_process:
        raise ConfigError(f"--task-runner {task_runner} needs Prefect: use --orchestrator prefect (or auto)",
                          setting="orchestrator")
    if name == "auto":
        return "prefect" if (not in_process or prefect_api_configured()) else "local"
    return name
