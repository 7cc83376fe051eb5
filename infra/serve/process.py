"""`docassay model serve` as a child process (tests, benchmarks, scripts that need a server for a while).

    with ServerProcess(weights, max_ranks=4, ranks=1, token="...", log=Path("server.log")) as srv:
        srv.client().score(...)

The child binds a free loopback port and prints one JSON line when it serves; `ready_s` is the wall
time from starting the child to that line (a cold start: interpreter, imports, world, weights).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from docassay.infra.serve.client import ModelClient
from docassay.infra.serve.errors import ServeError

__all__ = ["ServerProcess"]

ROOT = Path(__file__).resolve().parents[2]


class ServerProcess:
    def __init__(self, weights: Path, *, max_ranks: int, ranks: int, token: str, log: Path,
                 extra: tuple[str, ...] = (), startup_timeout_s: float = 300.0, threads: int = 1) -> None:
        cmd = [sys.executable, "-m", "docassay.flows.cli", "model", "serve", "--max-ranks", str(max_ranks),
               "--ranks", str(ranks), "--port", "0", "--weights", str(weights), "--admin-token", token,
               "--threads", str(threads), *extra]
        self.log = Path(log)
        self.token = token
        self._log_fh = open(self.log, "w")
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=self._log_fh, text=True,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})
        line: list[str] = []
        stdout = self.proc.stdout
        assert stdout is not None                          # stdout=PIPE
        reader = threading.Thread(target=lambda: line.append(stdout.readline()), daemon=True)
        reader.start()
        reader.join(startup_timeout_s)
        if not line or not line[0].strip():
            self.kill()
            raise ServeError(f"the server did not start; its log ends: {self.log.read_text()[-3000:]}", status=0)
        self.ready_s = time.perf_counter() - t0
        self.ready = json.loads(line[0])
        self.url: str = self.ready["url"]

    def client(self, **kw) -> ModelClient:
        kw.setdefault("token", self.token)
        return ModelClient(self.url, **kw)

    def stop(self, timeout_s: float = 60.0) -> int:
        """Ask the server to shut down (admin call), wait for it, kill it if it does not exit."""
        if self.proc.poll() is None:
            try:
                self.client(timeout_s=10).shutdown()
            except ServeError:
                pass
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log_fh.close()
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        if not self._log_fh.closed:
            self._log_fh.close()

    def __enter__(self) -> "ServerProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
