"""A rank killed under a running server (issue 18): detected within a bounded time, reported in
`status` (rank, since when, why), worked around — the survivors re-form the world and serve, every
request answered with the in-process scores, none failed — and the operator can scale again."""
from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from serve_helpers import CallerLoad, ServerProcess, random_docs, reference_scores, write_weights

pytestmark = [pytest.mark.distributed, pytest.mark.slow]

TOKEN = "faults-admin-token"
DETECT_BOUND_S = 10.0          # a lost rank must show in status by then (the watcher sees it in < 1 s)


def _workers(pid: int) -> list[int]:
    """The rank processes forked by the server (same command line as the server), rank 1 first."""
    cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
    kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return sorted(int(k) for k in kids
                  if Path(f"/proc/{k}/cmdline").exists() and Path(f"/proc/{k}/cmdline").read_bytes() == cmd)


def _equal(got, want) -> bool:
    return len(got) == len(want) and all(np.array_equal(g, w) for g, w in zip(got, want))


def _wait_status(client, ok, what: str, log: Path | None = None):
    """The first status for which `ok(status)` holds within DETECT_BOUND_S; else AssertionError(what),
    with the end of the server's `log` when given."""
    deadline = time.monotonic() + DETECT_BOUND_S
    while time.monotonic() < deadline:
        status = client.status()
        if ok(status):
            return status
        time.sleep(0.1)
    tail = f"; its log ends: {log.read_text()[-3000:]}" if log is not None else ""
    raise AssertionError(f"{what} within {DETECT_BOUND_S} s: {client.status()}{tail}")


def _wait_lost(client, ranks: list[int]):
    return _wait_status(client, lambda s: s.lost_ranks == ranks and s.state == "serving",
                        f"rank(s) {ranks} not reported lost")


def _wait_state(client, state: str, log: Path):
    return _wait_status(client, lambda s: s.state == state, f"the server is not {state}", log)


def test_an_active_rank_killed_under_load_fails_no_request_and_the_survivors_serve(tmp_path: Path) -> None:
    from docassay.extractors.instructions.model_features import N_BUCKETS, N_NUMERIC
    weights = write_weights(tmp_path / "tiny.pt")
    docs = random_docs(12, N_BUCKETS, N_NUMERIC, seed=3)
    refs = reference_scores(weights, docs, threads=1)
    srv = ServerProcess(weights, max_ranks=4, ranks=3, token=TOKEN, log=tmp_path / "server.log")
    try:
        client = srv.client(timeout_s=120)
        assert _equal(client.score(docs), refs)
        before = client.status()
        assert before.active_ranks == 3 and any(before.placement[0][1]), "rank 1 holds experts"
        load = CallerLoad(srv, docs, refs, n=8, call="score", equal=_equal)
        time.sleep(1.0)
        served_before = load.ok
        victim = _workers(srv.proc.pid)[0]                    # rank 1: active, in the middle of batches
        killed = time.time()
        os.kill(victim, signal.SIGKILL)
        status = _wait_lost(client, [1])
        time.sleep(1.0)
        load.stop()
        assert load.failures == [] and load.wrong == 0, (load.failures[:3], load.wrong)
        assert served_before > 0 and load.ok > served_before, "requests were served before and after the loss"
        (lost,) = status.lost
        assert lost.rank == 1 and "SIGKILL" in lost.why and killed - 1 <= lost.since <= killed + DETECT_BOUND_S
        assert status.ranks == [0, 2, 3] and status.max_ranks == 3
        assert status.active_ranks == 2, "the surviving active rank serves on, not rank 0 alone"
        assert len(status.placement[0]) == 2 and all(status.placement[0]), "both survivors hold experts"
        assert lost.restored_copies > 0, "rank 1's experts were read again from the weights file"
        assert status.counters.failed == 0
        assert _equal(client.score(docs), refs)
        report = client.scale(3)                              # the operator scales up again: the idle survivor
        assert report["phase"] == "done" and report["to_ranks"] == 3
        assert client.status().active_ranks == 3
        assert _equal(client.score(docs), refs)
    finally:
        assert srv.stop() == 0, srv.log.read_text()[-3000:]


def test_an_idle_rank_that_dies_is_reported_without_a_request_and_scaling_works(tmp_path: Path) -> None:
    from docassay.extractors.instructions.model_features import N_BUCKETS, N_NUMERIC
    weights = write_weights(tmp_path / "tiny.pt")
    docs = random_docs(4, N_BUCKETS, N_NUMERIC, seed=5)
    refs = reference_scores(weights, docs, threads=1)
    srv = ServerProcess(weights, max_ranks=4, ranks=2, token=TOKEN, log=tmp_path / "server.log")
    try:
        client = srv.client(timeout_s=120)
        workers = _workers(srv.proc.pid)
        assert len(workers) == 3
        os.kill(workers[1], signal.SIGKILL)                   # rank 2: idle, on the parent group only
        status = _wait_lost(client, [2])
        (lost,) = status.lost
        assert lost.rank == 2 and "SIGKILL" in lost.why and lost.restored_copies == 0
        assert status.active_ranks == 2 and status.ranks == [0, 1, 3]
        assert _equal(client.score(docs), refs)
        assert client.scale(3)["phase"] == "done"            # the next scale-up uses the remaining idle rank
        assert _equal(client.score(docs), refs)
        assert client.scale(1)["phase"] == "done"
        assert _equal(client.score(docs), refs)
        assert client.status().counters.failed == 0
    finally:
        assert srv.stop() == 0, srv.log.read_text()[-3000:]


def test_a_rank_lost_during_a_scale_answers_503_with_a_retry_and_the_retry_works(tmp_path: Path) -> None:
    """The rank dies while a scale moves experts: the scale answers 503 (retry), the server serves on
    the survivors, and the scale asked again succeeds."""
    from docassay.extractors.instructions.model_features import N_BUCKETS, N_NUMERIC
    from docassay.infra.serve.errors import ServeError
    weights = write_weights(tmp_path / "tiny.pt")
    docs = random_docs(4, N_BUCKETS, N_NUMERIC, seed=7)
    refs = reference_scores(weights, docs, threads=1)
    srv = ServerProcess(weights, max_ranks=4, ranks=2, token=TOKEN, log=tmp_path / "server.log")
    try:
        client = srv.client(timeout_s=120)
        workers = _workers(srv.proc.pid)
        os.kill(workers[2], signal.SIGSTOP)                   # rank 3 cannot take part in the scale ...
        result: dict = {}
        scale = threading.Thread(target=lambda: result.update(r=_try(lambda: client.scale(4))), daemon=True)
        scale.start()
        time.sleep(1.0)
        os.kill(workers[2], signal.SIGKILL)                   # ... and dies in the middle of it
        scale.join(60)
        err = result["r"]
        assert isinstance(err, ServeError) and err.status == 503 and "retry" in err.message, err
        status = _wait_lost(client, [3])
        assert status.max_ranks == 3
        assert _equal(client.score(docs), refs)
        assert client.scale(3)["phase"] == "done"
        assert _equal(client.score(docs), refs)
    finally:
        assert srv.stop() == 0, srv.log.read_text()[-3000:]


def test_a_second_rank_lost_while_the_world_re_forms_is_dropped_at_once(tmp_path: Path) -> None:
    """Rank 3 hangs (SIGSTOP) and rank 1 dies: the survivors' world waits for rank 3; when rank 3
    dies too, the re-form goes on without it at once, not after the 30 s join timeout."""
    from docassay.extractors.instructions.model_features import N_BUCKETS, N_NUMERIC
    weights = write_weights(tmp_path / "tiny.pt")
    docs = random_docs(4, N_BUCKETS, N_NUMERIC, seed=9)
    refs = reference_scores(weights, docs, threads=1)
    srv = ServerProcess(weights, max_ranks=4, ranks=2, token=TOKEN, log=tmp_path / "server.log")
    try:
        client = srv.client(timeout_s=120)
        workers = _workers(srv.proc.pid)
        os.kill(workers[2], signal.SIGSTOP)                   # rank 3: idle, cannot answer the re-form
        os.kill(workers[0], signal.SIGKILL)                   # rank 1: active
        time.sleep(1.0)
        assert client.status().state == "recovering"
        os.kill(workers[2], signal.SIGKILL)
        status = _wait_lost(client, [1, 3])
        assert status.ranks == [0, 2] and status.active_ranks == 1
        assert _equal(client.score(docs), refs)
        assert client.scale(2)["phase"] == "done"
        assert _equal(client.score(docs), refs)
    finally:
        assert srv.stop() == 0, srv.log.read_text()[-3000:]


def test_lost_experts_whose_weights_cannot_be_read_again_fail_the_server_with_the_reason(tmp_path: Path) -> None:
    from docassay.extractors.instructions.model_features import N_BUCKETS, N_NUMERIC
    from docassay.infra.serve.errors import ServerUnavailable
    weights = write_weights(tmp_path / "tiny.pt")
    docs = random_docs(2, N_BUCKETS, N_NUMERIC, seed=11)
    srv = ServerProcess(weights, max_ranks=2, ranks=2, token=TOKEN, log=tmp_path / "server.log")
    try:
        client = srv.client(timeout_s=120)
        weights.unlink()                                      # rank 1's experts exist nowhere else now
        os.kill(_workers(srv.proc.pid)[0], signal.SIGKILL)
        status = _wait_state(client, "failed", srv.log)       # the watcher sees the loss: no request needed
        assert "weights could not be read again" in status.error
        with pytest.raises(ServerUnavailable) as exc:
            client.score(docs, timeout_s=30)
        assert exc.value.status == 503 and "weights could not be read again" in exc.value.message, \
            srv.log.read_text()[-3000:]
    finally:
        srv.stop()
        assert srv.proc.returncode is not None


def _try(fn):
    try:
        return fn()
    except Exception as exc:                          # noqa: BLE001
        return exc
