"""Who stops the embedded server, reconnecting after it died, and the learning claim.

Real embedded PostgreSQL servers in temporary homes (a few seconds each)."""
from __future__ import annotations

import fcntl
import os
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path
from typing import Iterator

import psycopg
import pytest

from docassay.extractors.library import LearnLock
from docassay.flows.cli import main
from docassay.infra.config import Settings
from docassay.infra.db import Database, embedded


@pytest.fixture
def home() -> Iterator[Path]:
    h = Path(tempfile.mkdtemp(prefix="docassay-lifecycle-", dir="/var/tmp"))
    yield h
    embedded.stop(h / "pg")
    shutil.rmtree(h, ignore_errors=True)


def _running(home: Path) -> bool:
    return embedded.status(embedded.data_dir_for(home)).running


def test_a_command_stops_the_server_it_started(home: Path, capsys: pytest.CaptureFixture,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(embedded.KEEP_ENV, raising=False)
    assert main(["formats", "list", "--home", str(home)]) == 0     # starts the server, uses it
    assert not _running(home), "stopped when the command ended"
    monkeypatch.setenv(embedded.KEEP_ENV, "1")
    assert main(["formats", "list", "--home", str(home)]) == 0
    assert _running(home), "DOCASSAY_PG_KEEP=1 keeps it"
    monkeypatch.delenv(embedded.KEEP_ENV)
    assert main(["formats", "list", "--home", str(home)]) == 0
    assert _running(home), "kept by the command that started it"
    capsys.readouterr()
    assert main(["db", "status", "--home", str(home)]) == 0
    assert "running (pid" in capsys.readouterr().out
    assert main(["db", "stop", "--home", str(home)]) == 0
    assert not _running(home)


def test_db_start_keeps_it_and_another_user_is_not_cut_off(home: Path, capsys: pytest.CaptureFixture,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(embedded.KEEP_ENV, raising=False)
    assert main(["db", "start", "--home", str(home)]) == 0
    assert "kept until `docassay db stop`" in capsys.readouterr().out
    assert main(["formats", "list", "--home", str(home)]) == 0
    assert _running(home)
    assert main(["db", "stop", "--home", str(home)]) == 0
    # Another process uses the server (holds its shared use lock): a command that started it
    # leaves it running; the last user out stops it.
    data_dir = embedded.data_dir_for(home)
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    other = os.open(data_dir.parent / f".{data_dir.name}.users", os.O_RDWR | os.O_CREAT)
    fcntl.flock(other, fcntl.LOCK_SH)
    try:
        assert main(["formats", "list", "--home", str(home)]) == 0
        assert _running(home), "another process still uses it"
    finally:
        os.close(other)
    assert main(["formats", "list", "--home", str(home)]) == 0
    assert not _running(home), "the last user out stopped it"
    capsys.readouterr()
    assert main(["db", "status", "--home", str(home)]) == 0
    assert "not running" in capsys.readouterr().out


def test_connect_restarts_a_killed_embedded_server(home: Path) -> None:
    settings = Settings.load(home=home)
    db = Database.from_settings(settings)
    with db.connect() as c:
        assert c.execute("SELECT 1").fetchone() == (1,)
    data_dir = embedded.data_dir_for(home)
    pid = int((data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while embedded.status(data_dir).running and time.monotonic() < deadline:
        time.sleep(0.05)
    with db.connect() as c:                              # reconnect: the server is started again
        assert c.execute("SELECT 1").fetchone() == (1,)
    assert embedded.status(data_dir).pid not in (None, pid)


def test_an_external_database_that_stays_down_is_a_clear_error() -> None:
    from docassay.infra.db.connection import ReconnectPolicy
    from docassay.infra.errors import DatabaseError
    db = Database("host=/nonexistent-socket-dir dbname=x user=x", migrate=False,
                  reconnect=ReconnectPolicy(attempts=2, base_delay_s=0.01))
    with pytest.raises(DatabaseError, match=r"cannot connect to the database \(2 tries\)"):
        db.connect()


def test_the_learning_claim_holds_off_a_second_learner(pg_fresh_dsn: str) -> None:
    db = Database(pg_fresh_dsn)
    first, second = LearnLock(db.connect), LearnLock(db.connect)   # as two processes would hold them
    order: list[str] = []
    with first:
        t = threading.Thread(target=lambda: (second.__enter__(), order.append("second in"), second.__exit__()))
        t.start()
        time.sleep(1.0)
        order.append("first out")
    t.join(10)
    assert order == ["first out", "second in"]
    with psycopg.connect(pg_fresh_dsn) as c:
        assert c.execute("SELECT claims FROM learn_claims").fetchone() == (2,)
    first.close()
    second.close()


def test_a_dead_holder_releases_the_learning_claim(pg_fresh_dsn: str) -> None:
    db = Database(pg_fresh_dsn)
    holder = LearnLock(db.connect)
    holder.__enter__()
    holder._conn.pgconn.finish()                         # its process died: the connection is gone
    holder._thread.release()
    other = LearnLock(db.connect)
    done = threading.Event()
    threading.Thread(target=lambda: (other.__enter__(), done.set(), other.__exit__()), daemon=True).start()
    assert done.wait(10), "the claim went with the dead holder's connection"
    other.close()
