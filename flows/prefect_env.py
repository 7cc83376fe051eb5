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


QUIET = {
    "PREFECT_LOGGING_LEVEL": "ERROR",
    "PREFECT_SERVER_LOGGING_LEVEL": "ERROR",
    "PREFECT_LOGGING_TO_API_ENABLED": "false",   # no log shipping to flush at exit
}
"""`--quiet`: only errors reach the terminal."""


def quiet_prefect(*, quiet: bool = False) -> None:
    for k, v in {**DEFAULTS, **(QUIET if quiet else {})}.items():
        os.environ.setdefault(k, v)
