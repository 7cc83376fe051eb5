"""The MoE ranker on a tiny configuration (hidden 16, four experts) on the CPU: routing modes,
capacity, determinism per document, the balance loss, save/load, and a short training run."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from docassay.infra.errors import ConfigError
from docassay.infra.model.checkpoint import load, save
from docassay.infra.model.moe import MoEConfig, ProposalRanker, load_balancing_loss
from docassay.infra.model.tokens import TokenSet
from docassay.infra.model.train import TrainConfig, capacity_lower_bound, evaluate, group_top1, train

torch.set_num_threads(1)      # tiny tensors: one thread is fastest, and the machine is shared

TINY = dict(n_buckets=64, n_numeric=3, d_model=16, n_layer=2, n_experts=4, d_expert=8, top_k=2, dropout=0.0)


def _inputs(sizes: list[int], seed: int = 0):
    """Random tokens of documents with `sizes` tokens each: (ids, offsets, num, doc)."""
    g = torch.Generator().manual_seed(seed)
    n = sum(sizes)
    per = torch.randint(1, 4, (n,), generator=g)
    ids = torch.randint(0, 64, (int(per.sum()),), generator=g)
    offsets = torch.cumsum(per, 0) - per
    num = torch.randn(n, 3, generator=g)
    doc = torch.repeat_interleave(torch.arange(len(sizes)), torch.tensor(sizes))
    return ids, offsets, num, doc


def _model(routing: str = "token", capacity: float = 2.0, experts: int = 4) -> ProposalRanker:
    torch.manual_seed(0)
    return ProposalRanker(MoEConfig(**{**TINY, "n_experts": experts, "routing": routing, "capacity": capacity})).eval()


def test_token_choice_gives_every_token_k_experts_with_weights_summing_to_one():
    m = _model("token")
    ids, offs, num, doc = _inputs([7, 5])
    out = m(ids, offs, num, doc)
    assert len(out.routings) == 2
    for r in out.routings:
        counts = torch.bincount(r.token_idx, minlength=12)
        assert counts.tolist() == [2] * 12                           # top-k, no token dropped
        w = torch.zeros(12).index_add_(0, r.token_idx, r.weight)
        assert torch.allclose(w, torch.ones(12), atol=1e-6)
        assert r.slots == 24
        assert torch.all(r.affinity.abs() <= 1 + 1e-6)              # cosine affinities
    assert float(out.balance_loss.detach()) > 0


def test_expert_choice_takes_capacity_tokens_per_expert_within_each_document():
    m = _model("expert", capacity=1.0)
    sizes = [9, 4]
    ids, offs, num, doc = _inputs(sizes)
    out = m(ids, offs, num, doc)
    for r in out.routings:
        for d, n in enumerate(sizes):
            cap = min(math.ceil(1.0 * n / 4), n)
            in_doc = doc[r.token_idx] == d
            per_expert = torch.bincount(r.expert_idx[in_doc], minlength=4)
            assert per_expert.tolist() == [cap] * 4                  # each expert fills its capacity
        # an expert never takes a token twice, and its picks are its highest-affinity tokens
        for e in range(4):
            picked = r.token_idx[(r.expert_idx == e) & (doc[r.token_idx] == 0)]
            assert len(set(picked.tolist())) == len(picked)
            aff = r.affinity[:9, e]
            assert aff[picked].min() >= aff.topk(len(picked)).values.min() - 1e-6
        assert torch.allclose(r.weight, r.probs[r.token_idx, r.expert_idx])
    assert float(out.balance_loss) == 0.0


def test_lower_capacity_means_fewer_expert_slots_and_some_tokens_skip_experts():
    ids, offs, num, doc = _inputs([40])
    m = _model("expert")
    full = m(ids, offs, num, doc, capacity=2.0).routings[0]
    low = m(ids, offs, num, doc, capacity=0.5).routings[0]
    assert full.slots == 80 and low.slots == 20
    assert low.token_idx.numel() == 20
    assert len(set(low.token_idx.tolist())) < 40                     # residual path only for the rest


def _cat(*docs):
    """Concatenate single-document inputs into one batch, documents numbered in order."""
    ids = torch.cat([d[0] for d in docs])
    shifts = torch.cumsum(torch.tensor([0] + [len(d[0]) for d in docs[:-1]]), 0)
    offs = torch.cat([d[1] + s for d, s in zip(docs, shifts)])
    num = torch.cat([d[2] for d in docs])
    doc = torch.cat([torch.full((len(d[1]),), i) for i, d in enumerate(docs)])
    return ids, offs, num, doc


@pytest.mark.parametrize("routing", ["token", "expert", "dense"])
def test_a_documents_scores_do_not_depend_on_the_rest_of_the_batch(routing):
    m = _model(routing, capacity=0.75, experts=0 if routing == "dense" else 4)
    a, b, c = _inputs([11], seed=1), _inputs([6], seed=2), _inputs([13], seed=3)
    alone = m(*a).logits
    batched = m(*_cat(b, a, c)).logits[6:17]
    assert torch.allclose(alone, batched, atol=1e-5)
    assert torch.equal(torch.argsort(alone), torch.argsort(batched))


def test_balance_loss_is_one_when_uniform_and_grows_when_concentrated():
    probs = torch.full((8, 4), 0.25)
    even = torch.tensor([[0, 1], [2, 3]] * 4)
    assert float(load_balancing_loss(probs, even, 4)) == pytest.approx(1.0)
    skew = torch.tensor([[0.7, 0.1, 0.1, 0.1]] * 8)
    one = torch.zeros(8, 2, dtype=torch.long)
    assert float(load_balancing_loss(skew, one, 4)) > 2.0


def test_save_load_round_trip(tmp_path):
    m = _model("expert", capacity=0.75)
    x = _inputs([10, 7])
    p = save(tmp_path / "w.pt", m, {"feature_version": 1, "note": "tiny"}, half=False)
    m2, meta = load(p)
    assert meta == {"feature_version": 1, "note": "tiny"}
    assert m2.cfg == m.cfg
    assert torch.equal(m(*x).logits, m2(*x).logits)
    m3, _ = load(save(tmp_path / "h.pt", m, {}))                     # float16 on disk
    assert torch.allclose(m(*x).logits, m3(*x).logits, atol=2e-2)
    assert (tmp_path / "h.pt").stat().st_size < (tmp_path / "w.pt").stat().st_size


def test_load_refuses_missing_and_foreign_files(tmp_path):
    with pytest.raises(ConfigError):
        load(tmp_path / "nope.pt")
    torch.save({"format": "other"}, tmp_path / "x.pt")
    with pytest.raises(ConfigError):
        load(tmp_path / "x.pt")


def test_config_rejects_inconsistent_routing():
    with pytest.raises(ValueError):
        MoEConfig(**{**TINY, "routing": "dense"})
    with pytest.raises(ValueError):
        MoEConfig(**{**TINY, "routing": "sideways"})


def _toy_set(n_docs: int, seed: int) -> TokenSet:
    """Documents of 3 fields x 6 proposals; the right proposal carries id 7 and a positive number."""
    rng = np.random.default_rng(seed)
    ids, id_start, num, group, ok = [], [0], [], [], []
    for _ in range(n_docs):
        for g in range(3):
            right = rng.integers(6)
            for j in range(6):
                tok = list(rng.integers(8, 64, size=3)) + ([7] if j == right else [])
                ids += tok
                id_start.append(len(ids))
                num.append([float(j == right) + rng.normal(0, 0.3), rng.normal(), g / 3])
                group.append(g)
                ok.append(j == right)
    n = len(group)
    ok_a = np.array(ok)
    return TokenSet(np.array(ids, dtype=np.int64), np.array(id_start, dtype=np.int64), np.array(num, dtype=np.float32),
                    np.arange(0, n + 1, 18, dtype=np.int64), np.array(group, dtype=np.int64), ok_a, ok_a,
                    np.ones(n, dtype=bool))


@pytest.mark.slow
def test_training_switches_to_expert_choice_and_shrinks_capacity():
    tr, va = _toy_set(16, 0), _toy_set(6, 1)
    cfg = TrainConfig(schedule="switch", epochs=7, docs_per_batch=4, lr=2e-2, warmup_steps=2, probe_docs=8,
                      switch_by_epoch=2, min_epochs_before_switch=1, capacity_floor=0.5, capacity_tolerance=1.0)
    lines: list[str] = []
    res = train(MoEConfig(**TINY), cfg, tr, va, log=lines.append)
    assert res.switched_at is not None and res.switched_at <= 2
    modes = [e.mode for e in res.log]
    assert modes[:res.switched_at] == ["token"] * res.switched_at and modes[-1] == "expert"
    caps = [e.capacity for e in res.log if e.capacity is not None]
    assert caps[0] == 2.0 and caps[-1] == 0.5 and caps == sorted(caps, reverse=True)
    assert all("capacity_lower_bound" in e.router for e in res.log if e.capacity is not None)
    assert res.model.cfg.routing == "expert" and res.model.cfg.capacity == 0.5
    assert res.log[-1].val_accuracy > 0.6                          # chance is 1/6
    assert any("SWITCH" in line for line in lines) and all("load" in line for line in lines[2:])
    assert sum(res.log[-1].router["load"]) == pytest.approx(1.0, abs=1e-3)


def test_capacity_reference_is_the_first_expert_epoch_or_token_choices_best():
    tr, va = _toy_set(8, 0), _toy_set(4, 1)
    for ref in ("expert", "token"):
        cfg = TrainConfig(schedule="switch", epochs=4, docs_per_batch=4, lr=2e-2, warmup_steps=2, probe_docs=4,
                          switch_by_epoch=2, min_epochs_before_switch=1, capacity_reference=ref)
        res = train(MoEConfig(**TINY), cfg, tr, va, log=lambda s: None)
        token_best = max(e.val_accuracy for e in res.log if e.mode == "token")
        first_expert = next(e for e in res.log if e.mode == "expert")
        want = first_expert.val_accuracy if ref == "expert" else token_best
        assert all(e.router["capacity_reference"] == want for e in res.log if e.mode == "expert")
    with pytest.raises(ValueError):
        TrainConfig(capacity_reference="best")


def test_token_and_dense_schedules_never_switch():
    tr, va = _toy_set(6, 0), _toy_set(2, 1)
    for schedule in ("token", "dense"):
        res = train(MoEConfig(**TINY), TrainConfig(schedule=schedule, epochs=2, docs_per_batch=3, probe_docs=4,
                                                   switch_by_epoch=1), tr, va, log=lambda s: None)
        assert res.switched_at is None
        assert {e.mode for e in res.log} == {schedule if schedule == "dense" else "token"}


def test_capacity_lower_bound_and_group_top1():
    ts = _toy_set(4, 0)
    m = _model("expert")
    assert capacity_lower_bound(m, ts, 0.0, upper=2.0, lower=0.6) == 0.6      # no accuracy asked: down to `lower`
    assert capacity_lower_bound(m, ts, 1.01, upper=2.0, lower=0.6) == 2.0     # unreachable: stays
    top = group_top1(torch.tensor([0.1, 0.5, 0.5, 0.2, 0.9]), torch.tensor([0, 0, 0, 1, 1]), 2)
    assert top.tolist() == [1, 4]
    ev = evaluate(m, ts)
    assert 0.0 <= ev["accuracy"] <= 1.0 and ev["fields"] == 12


def test_token_set_batches_renumber_documents_and_groups(tmp_path):
    ts = _toy_set(3, 0)
    b = ts.batch([2, 0])
    assert b.doc.tolist() == [0] * 18 + [1] * 18
    assert b.n_groups == 6 and b.group[:18].max() == 2 and b.group[18:].min() == 3
    assert int(b.offsets[18]) == int(ts.id_start[36] - ts.id_start[36]) + int(ts.id_start[54] - ts.id_start[36])
    ts.save(tmp_path / "t.npz")
    again = TokenSet.load(tmp_path / "t.npz")
    assert np.array_equal(again.ids, ts.ids) and again.n_docs == 3
    both = TokenSet.concat([ts, again])
    assert both.n_docs == 6 and both.n_tokens == 2 * ts.n_tokens
    assert torch.equal(both.batch([3]).ids, ts.batch([0]).ids)


def test_text_dropout_drops_whole_tokens_and_single_ids():
    from docassay.infra.model.train import _id_dropout
    b = _toy_set(4, 0).batch([0, 1, 2, 3])
    assert _id_dropout(b, TrainConfig()) is None
    torch.manual_seed(0)
    w = _id_dropout(b, TrainConfig(text_dropout=1.0))
    assert w is not None and float(w.sum()) == 0.0
    w = _id_dropout(b, TrainConfig(id_dropout=0.5))
    assert w.shape == b.ids.shape and 0.3 < float(w.mean()) < 0.7
    m = _model("token")
    out = m(b.ids, b.offsets, b.num, b.doc, id_weights=torch.ones_like(b.ids, dtype=torch.float))
    assert torch.allclose(out.logits, m(b.ids, b.offsets, b.num, b.doc).logits)


# -- residual on the baseline --------------------------------------------------------------------------

RES = dict(TINY, residual=0.3, baseline_index=0, residual_slope=8.0, residual_threshold=0.3)


def _base_logit(b: torch.Tensor) -> torch.Tensor:
    return 8.0 * (b - 0.3) + math.log(0.3 / 0.7)


@torch.no_grad()
def test_a_residual_model_starts_as_the_baseline_and_corrects_within_beta():
    torch.manual_seed(0)
    m = ProposalRanker(MoEConfig(**{**RES, "routing": "expert", "capacity": 0.5})).eval()
    ids, offsets, num, doc = _inputs([9, 14])
    out = m(ids, offsets, num, doc)
    assert torch.allclose(out.logits, _base_logit(num[:, 0]), atol=1e-6)        # head starts at zero
    assert out.correction is not None and float(out.correction.abs().max()) == 0.0
    m.head.weight.normal_(0, 3.0)                                                # a trained head: corrections
    out = m(ids, offsets, num, doc)
    moved = (out.logits - _base_logit(num[:, 0])).abs()
    assert float(moved.max()) <= 8.0 * 0.3 + 1e-5 and float(moved.max()) > 0.5
    b = num[:, 0]
    far = (b[:, None] - b[None, :]) > 2 * 0.3 + 1e-6                             # pairs the baseline sets apart
    assert bool((out.logits[:, None] > out.logits[None, :])[far].all())          # ... keep their order


def test_residual_config_is_checked_and_round_trips(tmp_path):
    with pytest.raises(ValueError):
        MoEConfig(**{**RES, "baseline_index": 3})                                # only 3 numeric columns
    with pytest.raises(ValueError):
        MoEConfig(**{**RES, "residual": -0.1})
    torch.manual_seed(1)
    m = ProposalRanker(MoEConfig(**{**RES, "routing": "expert", "capacity": 0.5})).eval()
    with torch.no_grad():
        m.head.weight.normal_(0, 1.0)
    x = _inputs([10, 7])
    m2, _ = load(save(tmp_path / "r.pt", m, {}, half=False))
    assert m2.cfg == m.cfg and torch.equal(m(*x).logits, m2(*x).logits)


def test_residual_training_logs_the_correction_and_learns():
    tr, va = _toy_set(12, 0), _toy_set(4, 1)
    res = train(MoEConfig(**RES), TrainConfig(schedule="token", epochs=3, docs_per_batch=4, lr=2e-2, warmup_steps=2,
                                              probe_docs=4, bce_coef=0.0, correction_coef=0.1), tr, va, log=lambda s: None)
    assert all(e.correction is not None and 0.0 <= e.correction <= 1.0 for e in res.log)
    assert res.log[-1].correction > 0.0 and res.log[-1].val_accuracy > 0.5
