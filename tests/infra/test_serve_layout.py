"""The model server serving the layout reader (issue 13): rank 0's layout front equals the in-process
`LayoutReader` bit for bit (token choice, expert choice, dense), the wire format for words and field
queries, the checkpoint's kind chosen from the file; then a real server (3 processes) scaled up and
down under concurrent callers and a rank killed under load, every answer checked bit for bit, and
`--generator layout --model-url` scoring proposals as the in-process scorer does."""
from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from serve_helpers import CallerLoad, ServerProcess, layout_reference, random_layout_docs, write_layout_weights

from docassay.infra.errors import ConfigError
from docassay.infra.serve.errors import BadRequest, ServeError
from docassay.infra.serve.placement import EMPTY, holders

pytestmark = pytest.mark.distributed

TOKEN = "layout-admin-token"
ROOT = Path(__file__).resolve().parents[2]


def _equal(got, want) -> bool:
    return len(got) == len(want) and all(np.array_equal(gb, wb) and np.array_equal(ge, we)
                                         for (gb, ge), (wb, we) in zip(got, want))


@pytest.mark.parametrize("routing, d_model, d_expert", [("token", 16, 24), ("expert", 16, 24), ("dense", 16, 24),
                                                       ("token", 64, 2048)])     # the last: 1.06 MB experts
def test_layout_front_equals_the_in_process_reader_bit_for_bit(world, tmp_path: Path, routing: str, d_model: int,
                                                               d_expert: int) -> None:
    from docassay.infra.model.checkpoint import load_layout
    from docassay.infra.serve.layout_front import LayoutFront, LayoutInput
    from docassay.infra.serve.shard import ExpertShard

    weights = write_layout_weights(tmp_path / "tiny.pt", routing=routing, capacity=1.0, d_model=d_model,
                                   d_expert=d_expert)
    model, _ = load_layout(weights)
    if d_expert == 2048:
        assert model.expert_bytes() >= 1_000_000
    docs = random_layout_docs(5, model.cfg, seed=2, max_words=80)
    want = layout_reference(weights, docs, threads=torch.get_num_threads())
    front = LayoutFront(model, world.device)
    experts = front.take_experts()
    e = model.cfg.n_experts
    shard = ExpertShard(len(experts), model.cfg.d_model, model.cfg.d_expert, world.device)
    shard.load_all(experts, world.device)
    placement = torch.full((len(experts), 1, max(e, 1)), EMPTY, dtype=torch.long)
    placement[:, 0, :e] = torch.arange(e)
    got, stats = front.forward(world, 1, shard, holders(placement, e), [LayoutInput(d) for d in docs])
    assert _equal([(b.numpy(), en.numpy()) for b, en in got], want)
    assert got[0][0].shape == (docs[0].n_fields, docs[0].n_words + 1)
    if routing == "dense":
        assert front.moe_layers == [] and stats.rows_per_expert == []
    else:
        assert len(stats.rows_per_expert) == 2 and stats.rows_per_rank[0] == sum(map(sum, stats.rows_per_expert)) > 0


def test_layout_documents_cross_the_wire_exactly_and_bad_ones_are_refused_with_a_reason() -> None:
    from docassay.infra.model.layout import LayoutConfig
    from docassay.infra.serve.wire import decode_layout_doc, decode_spans, encode_layout_doc, encode_spans

    cfg = LayoutConfig(n_buckets=512)
    (d,) = random_layout_docs(1, cfg, seed=4)
    wire = json.loads(json.dumps(encode_layout_doc(d)))
    back = decode_layout_doc(wire, 512, cfg.n_flags, 4096).doc
    for name in ("ids", "id_start", "pos", "flags", "xy", "q_ids", "q_start", "q_type"):
        assert np.array_equal(getattr(back, name), getattr(d, name)), name
    begin, end = np.random.default_rng(0).normal(size=(2, 3, 6)).astype(np.float32)
    b2, e2 = decode_spans(json.loads(json.dumps(encode_spans((begin, end[:, :5])))))
    assert np.array_equal(b2, begin) and np.array_equal(e2, end[:, :5])

    def bad(change: dict, match: str, **kw) -> None:
        w = json.loads(json.dumps(encode_layout_doc(d)))
        for k, v in change.items():
            w[k] = v
        with pytest.raises(BadRequest, match=match):
            decode_layout_doc(w, kw.get("n_buckets", 512), cfg.n_flags, kw.get("max_words", 4096))

    from docassay.infra.serve.wire import encode_array
    n = d.n_words
    pos = d.pos.copy()
    pos[0, 4] = 99                                                       # page past the page embedding
    bad({"pos": encode_array(pos)}, "pos: columns must lie")
    bad({"q_type": encode_array(np.full(d.n_fields, 42, dtype=np.int64))}, "q_type must lie")
    bad({"ids": encode_array(d.ids + 512)}, "ids must lie")
    bad({"id_start": encode_array(d.id_start[:-1])}, "id_start must run")
    bad({"flags": encode_array(np.zeros((n, 3), dtype=np.float32))}, "flags")
    xy = d.xy.copy()
    xy[0, 0] = np.nan
    bad({"xy": encode_array(xy)}, "finite")
    if n > 1:
        bad({}, f"{n} words, at most 1", max_words=1)
    bad({"q_type": encode_array(np.zeros(0, dtype=np.int64)), "q_start": encode_array(np.zeros(1, dtype=np.int64)),
         "q_ids": encode_array(np.zeros(0, dtype=np.int64))}, "at least one word and one field")
    with pytest.raises(BadRequest, match="do not belong together"):
        decode_spans(encode_spans((begin, end)))


def test_the_checkpoint_says_its_kind_and_a_mismatch_is_refused_before_a_process_starts(tmp_path: Path) -> None:
    from serve_helpers import write_weights

    from docassay.infra.model.checkpoint import kind_of, load_any
    from docassay.infra.serve.launch import ServeOptions, start

    layout = write_layout_weights(tmp_path / "layout.pt")
    ranker = write_weights(tmp_path / "ranker.pt", d_model=8, d_expert=8, n_experts=2)
    assert kind_of(layout) == "layout" and kind_of(ranker) == "ranker"
    kind, model, meta = load_any(layout)
    assert kind == "layout" and type(model).__name__ == "LayoutReader" and meta == {"kind": "test"}
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(ConfigError, match="cannot be read as a checkpoint"):
        kind_of(tmp_path / "junk.pt")
    torch.save({"format": "someone-else/1"}, tmp_path / "foreign.pt")
    with pytest.raises(ConfigError, match="not a docassay checkpoint"):
        kind_of(tmp_path / "foreign.pt")
    with pytest.raises(ConfigError, match="holds a layout checkpoint"):
        start(ServeOptions(weights=layout, model="ranker", max_ranks=1, admin_token="t", port=0))


def test_a_layout_reader_cut_to_its_first_words_is_what_collate_reads() -> None:
    from docassay.infra.model.layout import LayoutConfig, collate

    (d,) = random_layout_docs(1, LayoutConfig(n_buckets=512), seed=5, max_words=200)
    k = max(1, d.n_words // 2)
    a, b = collate([d], k), collate([d.first_words(k)])
    for name in ("ids", "offsets", "pos", "flags", "xy", "mask", "q_ids", "q_offsets", "q_type"):
        assert torch.equal(getattr(a, name), getattr(b, name)), name
    assert d.first_words(d.n_words + 5) is d


# -- a real server ----------------------------------------------------------------------------------

M = 3


@pytest.fixture(scope="module")
def layout_weights(tmp_path_factory) -> Path:
    """Tiny experts (4 KB); the pipeline's hashed-id table, so the scorer's documents fit it."""
    from docassay.extractors.instructions.layout_features import N_BUCKETS
    return write_layout_weights(tmp_path_factory.mktemp("serve-layout") / "layout-tiny.pt", n_buckets=N_BUCKETS)


@pytest.fixture(scope="module")
def layout_server(layout_weights: Path, tmp_path_factory):
    srv = ServerProcess(layout_weights, max_ranks=M, ranks=1, token=TOKEN, extra=("--model", "layout"),
                        log=tmp_path_factory.mktemp("serve-layout-log") / "server.log")
    try:
        yield srv
    finally:
        assert srv.stop() == 0, srv.log.read_text()[-3000:]


@pytest.mark.slow
def test_layout_server_scales_up_and_down_under_callers_and_survives_a_lost_rank(layout_server, layout_weights) -> None:
    from docassay.infra.model.checkpoint import load_layout

    cfg = load_layout(layout_weights)[0].cfg
    docs = random_layout_docs(10, cfg, seed=1, max_words=150)
    refs = layout_reference(layout_weights, docs, threads=1)
    client = layout_server.client(timeout_s=120)
    status = client.status()
    assert status.model.kind == "layout" and layout_server.ready["model"] == "layout"
    assert _equal(client.read(docs), refs)
    with pytest.raises(BadRequest):                         # a ranker's document is not a layout document
        client.score_one(np.zeros(1, dtype=np.int64), np.array([0, 1], dtype=np.int64), np.zeros((1, 3), np.float32))
    callers = CallerLoad(layout_server, docs, refs, n=3, call="read", equal=_equal)
    reports = []
    try:
        callers.wait_for(3)
        for k in (2, 3):
            reports.append(client.scale(k))
            st = client.status()
            assert st.active_ranks == k and len(st.placement[0]) == k and all(st.placement[0])
            callers.wait_for(3)
        # a lost active rank: the survivors re-form, every request is still answered with the same bits
        pid = layout_server.proc.pid
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        workers = sorted(int(k) for k in kids if Path(f"/proc/{k}/cmdline").exists()
                         and Path(f"/proc/{k}/cmdline").read_bytes() == cmd)
        os.kill(workers[0], signal.SIGKILL)                 # rank 1: active, in the middle of batches
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            st = client.status()
            if st.lost_ranks == [1] and st.state == "serving":
                break
            time.sleep(0.1)
        assert st.lost_ranks == [1] and st.state == "serving", st
        assert st.active_ranks == 2 and st.ranks == [0, 2], "both survivors serve"
        served = callers.ok
        callers.wait_for(3)
        assert callers.ok > served, "requests were served after the loss"
        for k in (1, 2):                                    # the operator scales the survivors down and up
            reports.append(client.scale(k))
            callers.wait_for(3)
    finally:
        callers.stop()
    assert callers.failures == [] and callers.wrong == 0, (callers.failures[:3], callers.wrong)
    assert [(r["from_ranks"], r["to_ranks"], r["phase"]) for r in reports] == [(1, 2, "done"), (2, 3, "done"),
                                                                              (2, 1, "done"), (1, 2, "done")]
    assert all(r["moved_copies"] > 0 for r in reports)
    st = client.status()
    assert st.lost[0].restored_copies > 0 and st.counters.failed == 0 and st.counters.timeouts == 0
    assert sum(st.rank_load[1:]) > 0, "words went to the other ranks while they were active"
    assert _equal(client.read(docs), refs)


@pytest.mark.slow
def test_generator_layout_through_the_server_ranks_as_the_in_process_scorer(layout_server, layout_weights) -> None:
    from docassay.extractors.instructions.generator import detect_locale, schema_fields
    from docassay.extractors.instructions.layout_scorer import LayoutScorer
    from docassay.extractors.instructions.proposals import propose
    from docassay.extractors.spans import DocIndex
    from docassay.extractors.synth import generate as synth
    from docassay.flows.remote_scorer import remote_layout_scorer, remote_scorer
    from docassay.infra.model.checkpoint import load_layout

    schema = json.loads((ROOT / "examples" / "invoices" / "schema.json").read_text())
    specs, _ = schema_fields(schema)
    model, meta = load_layout(layout_weights)
    torch.set_num_threads(1)
    local = LayoutScorer(model, meta, layout_weights, blend=0.5, level="model")
    remote = remote_layout_scorer(layout_server.url)
    remote.blend, remote.level = 0.5, "model"
    assert remote.name.startswith("layout:layout-tiny@")
    for sd in synth(2, 1, kind="invoice", seed=3, split="train"):
        ix = DocIndex(sd.document)
        locale = detect_locale(ix)
        want = local(ix, specs, {s.name: propose(ix, s, locale) for s in specs})
        got = remote(ix, specs, {s.name: propose(ix, s, locale) for s in specs})
        assert remote.tokens(ix, specs, got) == local.tokens(ix, specs, want)
        for s in specs:
            assert [(p.span.key, p.score, p.features.get("layout_p")) for p in got[s.name]] == \
                   [(p.span.key, p.score, p.features.get("layout_p")) for p in want[s.name]], s.name
    with pytest.raises(ConfigError, match="needs a server of the ranker"):
        remote_scorer(layout_server.url)
    with pytest.raises(ServeError):
        remote_layout_scorer("http://127.0.0.1:1", timeout_s=1)
