"""A real model server (4 processes, one gloo world on loopback) scaled up and down under load.

One server for the module: `docassay model serve --max-ranks 4 --ranks 1` in a child process, with
a freshly initialised tiny ranker. The reference is the single-process model with the same number
of torch threads as each rank (1): the server must return the same bits.
"""
from __future__ import annotations

import http.client
import json
import random
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from serve_helpers import ServerProcess, random_docs, reference_scores, write_weights

from docassay.infra.serve.errors import BadRequest, ServeError, Unauthorized
from docassay.infra.serve.placement import EMPTY, check_placement

pytestmark = [pytest.mark.distributed, pytest.mark.slow]

TOKEN = "test-admin-token"
M = 4


@pytest.fixture(scope="module")
def weights(tmp_path_factory) -> Path:
    return write_weights(tmp_path_factory.mktemp("serve") / "tiny.pt")


@pytest.fixture(scope="module")
def server(weights: Path, tmp_path_factory):
    srv = ServerProcess(weights, max_ranks=M, ranks=1, token=TOKEN, log=tmp_path_factory.mktemp("serve-log") / "server.log")
    try:
        yield srv
    finally:
        assert srv.stop() == 0, srv.log.read_text()[-3000:]


@pytest.fixture(scope="module")
def docs_and_refs(weights: Path):
    from docassay.extractors.instructions.model_features import N_BUCKETS, N_NUMERIC
    docs = random_docs(24, N_BUCKETS, N_NUMERIC, seed=1)
    return docs, reference_scores(weights, docs, threads=1)


def _placement_tensor(placement: list[list[list[int]]], n_world: int) -> torch.Tensor:
    s = max((len(ex) for layer in placement for ex in layer), default=1)
    t = torch.full((len(placement), n_world, s), EMPTY, dtype=torch.long)
    for l, layer in enumerate(placement):
        for r, ex in enumerate(layer):
            t[l, r, :len(ex)] = torch.tensor(ex, dtype=torch.long)
    return t


@pytest.mark.slow
def test_scale_up_and_down_under_load_serves_every_request_bit_for_bit(server, docs_and_refs) -> None:
    docs, refs = docs_and_refs
    client = server.client(timeout_s=120)
    if client.status().active_ranks != 1:
        client.scale(1)
    stop = threading.Event()
    failures: list[str] = []
    mismatches: list[int] = []
    latencies: list[tuple[float, float]] = []
    lock = threading.Lock()

    def load(seed: int) -> None:
        rng = random.Random(seed)
        c = server.client(timeout_s=120)
        while not stop.is_set():
            pick = rng.sample(range(len(docs)), rng.randint(1, 3))
            t0 = time.perf_counter()
            try:
                got = c.score([docs[i] for i in pick])
            except ServeError as exc:
                with lock:
                    failures.append(f"{type(exc).__name__}: {exc}")
                continue
            t1 = time.perf_counter()
            with lock:
                latencies.append((t0, t1))
                mismatches.extend(i for i, g in zip(pick, got) if not np.array_equal(g, refs[i]))

    threads = [threading.Thread(target=load, args=(s,)) for s in range(3)]
    for t in threads:
        t.start()
    reports = []
    try:
        time.sleep(1.0)
        for k in (2, 4, 2, 1):
            before = len(latencies)
            reports.append(client.scale(k))
            st = client.status()
            assert st.active_ranks == k and not st.scale_in_progress
            placement = _placement_tensor(st.placement, M)
            assert check_placement(placement, 8, k) == [], st.placement
            assert len(st.placement[0]) == k
            idle = [m for m in st.memory if m["rank"] >= k]
            assert all(m["expert_bytes"] == 0 and m["copies"] == 0 for m in idle), st.memory
            deadline = time.monotonic() + 30
            while len(latencies) < before + 5 and time.monotonic() < deadline:
                time.sleep(0.05)          # some requests served at this size before the next scale
    finally:
        stop.set()
        for t in threads:
            t.join(120)
    assert failures == []
    assert mismatches == [], f"documents whose scores differ from the single-process model: {sorted(set(mismatches))}"
    assert len(latencies) > 20
    for rep, (k_from, k_to) in zip(reports, ((1, 2), (2, 4), (4, 2), (2, 1))):
        assert (rep["from_ranks"], rep["to_ranks"], rep["phase"]) == (k_from, k_to, "done")
        assert rep["moved_copies"] > 0 and rep["total_s"] >= rep["move_s"] > 0
    shrink = reports[2]                                    # 4 -> 2: ranks 2 and 3 went idle
    assert {int(r) for r in shrink["released_bytes"]} >= {2, 3}
    st = client.status()
    assert st.counters.failed == 0 and st.counters.timeouts == 0
    assert st.counters.reconfigurations >= 4
    assert [r["to_ranks"] for r in st.reconfigurations[-4:]] == [2, 4, 2, 1]
    assert sum(st.rank_load[1:]) > 0, "tokens went to the other ranks while they were active"
    assert sum(sum(layer) for layer in st.expert_load) > 0


def test_admin_endpoints_refuse_without_the_token(server) -> None:
    anon = server.client(token=None)
    active = anon.status().active_ranks
    with pytest.raises(Unauthorized) as missing:
        anon.scale(2)
    assert missing.value.status == 401
    with pytest.raises(Unauthorized) as wrong:
        anon.scale(2, token="not-the-token")
    assert wrong.value.status == 403
    conn = http.client.HTTPConnection(server.url.split("//")[1].split(":")[0], int(server.url.rsplit(":", 1)[1]), timeout=30)
    conn.request("POST", "/v1/admin/shutdown", body=b"{}", headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    body = json.loads(resp.read())
    assert resp.status == 401 and body["error"]["kind"] == "serve_unauthorized"
    assert resp.getheader("WWW-Authenticate", "").startswith("Bearer")
    conn.close()
    assert anon.health() == "serving"
    assert anon.status().active_ranks == active, "a refused call changed nothing"
    with pytest.raises(ServeError) as bad_k:
        server.client().scale(M + 1)
    assert bad_k.value.status == 400


def test_malformed_documents_are_refused_with_a_reason(server) -> None:
    client = server.client()
    ids = np.array([1, 2, 3], dtype=np.int64)
    with pytest.raises(BadRequest, match="features per token"):
        client.score_one(ids, np.array([0, 3], dtype=np.int64), np.zeros((1, 5), dtype=np.float32))
    n_numeric = client.status().model.config["n_numeric"]
    with pytest.raises(BadRequest, match="id_start"):
        client.score_one(ids, np.array([0, 2], dtype=np.int64), np.zeros((1, n_numeric), dtype=np.float32))
    with pytest.raises(BadRequest, match="ids must lie"):
        client.score_one(np.array([-1], dtype=np.int64), np.array([0, 1], dtype=np.int64),
                         np.zeros((1, n_numeric), dtype=np.float32))
    assert client.health() == "serving"
