"""Prefect settings docassay needs, applied before Prefect is imported (Prefect reads its
settings from the environment once, at import)."""
from __future__ import annotations

import os

DEFAULTS = {
    "PREFECT_LOGGING_LEVEL": "WARNING",                       # keep Prefect's logs off the user's terminal
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",              # no network
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",  # the ephemeral API starts slowly on 2 busy cores
    "PREFECT_SERVER_LOGGING_LEVEL": "WARNING",
}


def quiet_prefect() -> None:
    for k, v in DEFAULTS.items():
        os.environ.setdefault(k, v)
