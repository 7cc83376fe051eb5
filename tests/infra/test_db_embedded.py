"""The embedded PostgreSQL server: where its data lives, start-up, reuse across processes."""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Iterator

import psycopg
import pytest

from docassay.infra.db import embedded


@pytest.fixture
def home() -> Iterator[Path]:
    """A fresh home outside /root; its embedded server (if any) is stopped afterwards."""
    path = Path(tempfile.mkdtemp(prefix="docassay-test-home-", dir="/var/tmp"))
    try:
        yield path
    finally:
        embedded.stop(path / "pg")
        shutil.rmtree(path, ignore_errors=True)


def test_data_dir_under_home_when_home_is_outside_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(embedded.PG_DIR_ENV, raising=False)
    assert embedded.data_dir_for(Path("/srv/docassay")) == Path("/srv/docassay/pg")


def test_data_dir_leaves_root_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(embedded.PG_DIR_ENV, raising=False)
    a = embedded.data_dir_for(Path("/root/.docassay"))
    b = embedded.data_dir_for(Path("/root/other"))
    digest = hashlib.sha256(b"/root/.docassay").hexdigest()[:12]
    assert a == Path(f"/var/tmp/docassay-pg-{digest}")
    assert a != b and a == embedded.data_dir_for(Path("/root/.docassay/"))   # stable per home


def test_data_dir_env_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(embedded.PG_DIR_ENV, str(tmp_path / "db"))
    assert embedded.data_dir_for(Path("/root/.docassay")) == tmp_path / "db"


def test_stop_without_a_server_is_a_no_op(tmp_path: Path) -> None:
    assert embedded.stop(tmp_path / "never-started") is False


_STARTER = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from docassay.infra.config import Settings
    from docassay.infra.db import connect
    home, go = Path(sys.argv[1]), Path(sys.argv[2])
    while not go.exists():
        time.sleep(0.01)
    with connect(Settings(home=home)) as conn:
        rows = conn.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall()
    print(json.dumps([r[0] for r in rows]))
""")


@pytest.mark.pg
def test_concurrent_starters_share_one_server_that_outlives_them(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(embedded.PG_DIR_ENV, raising=False)
    go = home / "go"
    procs = [subprocess.Popen([sys.executable, "-c", _STARTER, str(home), str(go)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    time.sleep(0.5)                      # both past their imports, waiting on the same signal
    go.touch()
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (_, err) in zip(procs, outs):
        assert p.returncode == 0, err
    versions = [json.loads(out) for out, _ in outs]
    assert versions[0] == versions[1] and versions[0][0] == 1

    # the starters have exited; the server has not
    again = embedded.ensure_running(home)
    assert again.started is False and again.data_dir == home / "pg"
    with psycopg.connect(again.dsn) as conn:
        counts = conn.execute("SELECT count(*), count(DISTINCT version) FROM schema_migrations").fetchone()
    assert counts is not None and counts[0] == counts[1] == len(versions[0])   # each migration once

    # stopped, it starts again on the same data
    assert embedded.stop(home / "pg") is True
    restarted = embedded.ensure_running(home)
    assert restarted.started is True
    with psycopg.connect(restarted.dsn) as conn:
        assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone() == (len(versions[0]),)
