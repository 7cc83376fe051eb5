"""A benchmark session stopped by SIGTERM stops its embedded PostgreSQL and removes its scratch."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import sys, time
from bench.session import Session
with Session() as s:
    s.admin_dsn()
    print(s.scratch, flush=True)
    time.sleep(120)
"""


def _postmaster_alive(data_dir: Path) -> bool:
    pid_file = data_dir / "postmaster.pid"
    if not pid_file.exists():
        return False
    try:
        os.kill(int(pid_file.read_text().split()[0]), 0)
    except (ProcessLookupError, ValueError):
        return False
    return True


@pytest.mark.pg
def test_sigterm_stops_the_embedded_server_and_removes_scratch() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", CHILD], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    scratch = None
    try:
        scratch = Path(proc.stdout.readline().strip())
        assert scratch.name.startswith("docassay-bench-"), scratch
        assert _postmaster_alive(scratch / "pg")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 128 + signal.SIGTERM
        deadline = time.monotonic() + 10
        while _postmaster_alive(scratch / "pg") and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _postmaster_alive(scratch / "pg"), "the embedded server outlived its session"
        assert not scratch.exists()
    finally:
        if proc.poll() is None:
            proc.kill()
        if scratch is not None and _postmaster_alive(scratch / "pg"):     # the failure left it running
            from docassay.infra.db import embedded
            embedded.stop(scratch / "pg")
