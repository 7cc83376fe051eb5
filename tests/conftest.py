"""Shared fixtures.

`pg_dsn`        a real PostgreSQL server for the whole session: `$DOCASSAY_TEST_DSN` if set,
                else an embedded server (infra.db.embedded) in a fresh temporary home outside
                /root, stopped and deleted at the end. Bare: no migrations applied.
`pg_fresh_dsn`  a new, empty database on that server for one test (dropped afterwards); use it
                when a test needs tables of its own or a schema nobody else touches.

Tests that use either are marked `pg` automatically.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from docassay.flows.prefect_env import DEFAULTS as _PREFECT_DEFAULTS
from docassay.infra.db.scratch import fresh_database  # noqa: F401  (re-exported: tests import it from here)

# Prefect reads its settings once, when it is first imported, which in a test session may be long
# before any docassay command sets its defaults: set them now, so that an ephemeral Prefect API on a
# loaded machine gets the same start-up time (120 s) as a command does, not Prefect's 20 s.
for _k, _v in _PREFECT_DEFAULTS.items():
    os.environ.setdefault(_k, _v)

# tests/awsmock.py as a plugin: its `aws_offline` fixture is there for every test without an import (an imported
# fixture reads to pyflakes as an unused name that a parameter then redefines).
pytest_plugins = ["awsmock", "prefect_guard"]   # prefect_guard: the `prefect` marker kept true

TEST_DSN_ENV = "DOCASSAY_TEST_DSN"


@pytest.fixture(scope="session")
def pg_dsn() -> Iterator[str]:
    external = os.environ.get(TEST_DSN_ENV)
    if external:
        yield external
        return
    from docassay.infra.db import embedded

    base = Path(tempfile.gettempdir())
    if base.resolve().is_relative_to("/root"):
        base = Path("/var/tmp")
    home = Path(tempfile.mkdtemp(prefix="docassay-test-home-", dir=base))
    server = embedded.ensure_running(data_dir=home / "pg")
    try:
        yield server.dsn
    finally:
        embedded.stop(server.data_dir)
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def pg_fresh_dsn(pg_dsn: str) -> Iterator[str]:
    with fresh_database(pg_dsn) as dsn:
        yield dsn


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if {"pg_dsn", "pg_fresh_dsn"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.pg)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop the temporary API servers Prefect started in this process (tests that run a Prefect
    flow without PREFECT_API_URL), while the session's streams are still open: left to Prefect's
    atexit hook they outlived the test run (issue 15: no Prefect process left after the suite)."""
    import sys
    server_mod = sys.modules.get("prefect.server.api.server")
    if server_mod is None:
        return
    for server in list(getattr(server_mod.SubprocessASGIServer, "_instances", {}).values()):
        proc = getattr(server, "server_process", None)
        try:
            server.stop()
        finally:
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
