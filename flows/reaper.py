"""No helper process outlives the command that started it, even one killed with SIGKILL.

Prefect runs its API in a subprocess of the command (an ephemeral server, about 226 MB) that a
command killed with SIGKILL would leave running for good, as it would Dask workers. `guard()`
puts a token in this process's environment (every child inherits it) and starts a small watchdog
process holding the read end of a pipe whose write end only this process has. However this process
ends, the kernel closes that pipe; the watchdog then gives what still carries the token
`GRACE_S` to exit by itself, terminates it, and kills it after another `GRACE_S`. The embedded
PostgreSQL is spared: it is shared by design, and infra/db/embedded.py decides when it stops.

    python -m docassay.flows.reaper TOKEN PARENT_PID      the watchdog (started by `guard`, reads stdin to EOF)
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

__all__ = ["TOKEN_ENV", "GRACE_S", "guard", "carriers"]

TOKEN_ENV = "DOCASSAY_RUN_TOKEN"
GRACE_S = 5.0
_SPARED = ("postgres", "pg_ctl", "initdb")          # the embedded server outlives commands by design
_guarded = threading.Lock()
_started = False
_keep: list[int] = []                               # the pipe's write end, open for this process's life


def guard() -> str:
    """Start the watchdog for this process (once); returns the token its children carry."""
    global _started
    with _guarded:
        if _started:
            return os.environ[TOKEN_ENV]
        token = uuid.uuid4().hex
        os.environ[TOKEN_ENV] = token
        read_end, write_end = os.pipe()               # both non-inheritable: children never hold them
        env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
        root = str(Path(__file__).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        subprocess.Popen([sys.executable, "-m", "docassay.flows.reaper", token, str(os.getpid())], stdin=read_end,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
        os.close(read_end)
        _started = True                               # write_end stays open until this process ends
        _keep.append(write_end)
        return token



def carriers(token: str) -> list[int]:
    """Pids of live processes whose environment carries `token` (the embedded server's excepted)."""
    needle = f"{TOKEN_ENV}={token}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            name = (entry / "comm").read_text().strip()
        except OSError:
            continue
        if name not in _SPARED:
            found.append(int(entry.name))
    return found


def _reap(token: str) -> None:
    deadline = time.monotonic() + GRACE_S
    while carriers(token) and time.monotonic() < deadline:
        time.sleep(0.2)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = carriers(token)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + GRACE_S
        while carriers(token) and time.monotonic() < deadline:
            time.sleep(0.2)


def main(argv: list[str]) -> int:
    token = argv[0]
    sys.stdin.buffer.read()                           # returns when the guarded process has ended
    _reap(token)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
