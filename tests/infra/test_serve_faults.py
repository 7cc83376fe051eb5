"""A rank killed under a running server: detected, reported, worked around, no request lost."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest
from serve_helpers import ServerProcess, random_docs, reference_scores, write_weights

from docassay.infra.serve.errors import ServeError

pytestmark = [pytest.mark.distributed, pytest.mark.slow]

TOKEN = "faults-admin-token"


def _workers(pid: int) -> list[int]:
    """The rank processes forked by the server (same command line as the server)."""
    cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
    kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(k) for k in kids if Path(f"/proc/{k}/cmdline").exists() and Path(f"/proc/{k}/cmdline").read_bytes() == cmd]


def test_a_killed_rank_degrades_the_server_instead_of_failing_it(tmp_path: Path) -> None:
    from docassay.extractors.instructions.model_features import N_BUCKETS, N_NUMERIC
    weights = write_weights(tmp_path / "tiny.pt")
    docs = random_docs(6, N_BUCKETS, N_NUMERIC, seed=3)
    refs = reference_scores(weights, docs, threads=1)
    srv = ServerProcess(weights, max_ranks=2, ranks=2, token=TOKEN, log=tmp_path / "server.log")
    try:
        client = srv.client(timeout_s=120)
        before = client.score(docs)
        assert client.status().active_ranks == 2
        assert any(len(ex) for ex in client.status().placement[0][1:]), "rank 1 holds experts"
        (victim,) = _workers(srv.proc.pid)
        os.kill(victim, signal.SIGKILL)
        time.sleep(0.5)
        after = client.score(docs)                          # the batch that meets the dead rank is rerun
        for got, again, want in zip(before, after, refs):
            assert np.array_equal(got, want) and np.array_equal(again, want)
        status = client.status()
        assert status.state == "degraded" and status.lost_ranks == [1] and status.active_ranks == 1
        assert "rank(s) [1] lost" in (status.error or "")
        assert status.counters.failed == 0
        assert client.health() == "degraded"
        with pytest.raises(ServeError) as exc:
            client.scale(2)
        assert exc.value.status == 409 and "restart" in exc.value.message
    finally:
        assert srv.stop() == 0, srv.log.read_text()[-3000:]


def test_an_idle_rank_that_dies_is_seen_without_a_request(tmp_path: Path) -> None:
    from docassay.extractors.instructions.model_features import N_BUCKETS, N_NUMERIC
    weights = write_weights(tmp_path / "tiny.pt")
    docs = random_docs(4, N_BUCKETS, N_NUMERIC, seed=5)
    refs = reference_scores(weights, docs, threads=1)
    srv = ServerProcess(weights, max_ranks=3, ranks=2, token=TOKEN, log=tmp_path / "server.log")
    try:
        client = srv.client(timeout_s=120)
        workers = sorted(_workers(srv.proc.pid))
        assert len(workers) == 2
        os.kill(workers[-1], signal.SIGKILL)                 # rank 2: idle, on the parent group only
        deadline = time.monotonic() + 30
        while client.status().state != "degraded" and time.monotonic() < deadline:
            time.sleep(0.2)
        status = client.status()
        assert status.state == "degraded" and status.lost_ranks == [2], status
        for got, want in zip(client.score(docs), refs):
            assert np.array_equal(got, want)
    finally:
        assert srv.stop() == 0, srv.log.read_text()[-3000:]
