"""The layout reader (issue 13): shapes, per-document determinism, schema conditioning, the LocMoE+
switch, the scorer, save/load and seeded training. Tiny configurations on a few synthetic documents."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from docassay.extractors.instructions.generator import detect_locale, schema_fields
from docassay.extractors.instructions.layout_data import label_layout, synth_layout_docs
from docassay.extractors.instructions.layout_features import doc_words, layout_doc
from docassay.extractors.instructions.layout_scorer import LayoutScorer
from docassay.extractors.instructions.proposals import propose
from docassay.extractors.spans import DocIndex
from docassay.extractors.synth import generate as synth
from docassay.infra.model.checkpoint import load_layout, save_layout
from docassay.infra.model.layout import LayoutConfig, LayoutOutput, LayoutReader, collate
from docassay.infra.model.layout_train import LayoutTrainConfig, evaluate_layout, train_layout

torch.set_num_threads(1)      # tiny tensors: one thread is fastest, and the machine is shared
ROOT = Path(__file__).resolve().parents[2]
TINY = LayoutConfig(d_model=16, n_head=2, n_layer=2, n_experts=4, d_expert=16, dropout=0.0)


def _schema(kind: str = "invoice") -> dict:
    return json.loads((ROOT / "examples" / ("invoices" if kind == "invoice" else "receipts") / "schema.json").read_text())


@pytest.fixture(scope="module")
def docs():
    inv = list(synth_layout_docs("invoice", _schema(), 2, 2, split="train", seed=0, ocr_share=0.0))
    rec = list(synth_layout_docs("receipt", _schema("receipt"), 2, 2, split="train", seed=0, ocr_share=1.0))
    return inv + rec


def _model(routing: str = "token", **kw) -> LayoutReader:
    torch.manual_seed(0)
    cfg = replace(TINY, routing=routing, n_experts=0 if routing == "dense" else TINY.n_experts, **kw)
    return LayoutReader(cfg).eval()


def test_shapes_and_targets(docs):
    d = docs[0]
    assert d.n_words > 20 and d.n_fields == 10 and d.known.any()
    assert d.begin.shape == d.end.shape == (d.n_fields, d.n_words)
    b = collate(docs[:3])
    out = _model()(b)
    T = b.mask.shape[1]
    assert out.begin.shape == (3, b.q_type.shape[1], T + 1) and out.end.shape == (3, b.q_type.shape[1], T)
    assert torch.isfinite(out.begin[..., -1]).all()
    assert torch.isinf(out.end[0, :, docs[0].n_words:]).all() or docs[0].n_words == T   # padding never wins
    assert len(out.routings) == TINY.n_layer


@pytest.mark.parametrize("routing", ["token", "expert", "dense"])
def test_document_alone_equals_document_in_a_batch(docs, routing):
    m = _model(routing, capacity=1.0)
    alone = m(collate([docs[1]]))
    batch = m(collate([docs[2], docs[1], docs[0]]))
    n, f = docs[1].n_words, docs[1].n_fields
    torch.testing.assert_close(batch.end[1, :f, :n], alone.end[0, :f, :n], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(batch.begin[1, :f, :n], alone.begin[0, :f, :n], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(batch.begin[1, :f, -1], alone.begin[0, :f, -1], rtol=1e-5, atol=1e-5)


def test_renamed_field_with_the_same_labels_reads_the_same_and_a_new_field_gets_a_query():
    sd = next(synth(1, 1, kind="invoice", seed=0, split="train"))
    ix = DocIndex(sd.document)
    specs, _ = schema_fields(_schema())
    renamed = [replace(specs[0], name="rechnung_kennung")] + specs[1:]
    m = _model()
    a = m(collate([layout_doc(ix, specs)]))
    b = m(collate([layout_doc(ix, renamed)]))
    assert torch.equal(a.begin, b.begin) and torch.equal(a.end, b.end)
    new = schema_fields({"properties": {"parcel_tracking_code": {"type": "string", "description": "Tracking code of the parcel"}}})[0]
    d = layout_doc(ix, new)
    q = m.queries(torch.from_numpy(d.q_ids), torch.from_numpy(d.q_start[:-1]), torch.from_numpy(d.q_type)[None])
    known = m.queries(torch.from_numpy(layout_doc(ix, specs[:1]).q_ids), torch.tensor([0]), torch.tensor([[0]]))
    assert len(d.q_ids) > 5 and torch.isfinite(q).all() and not torch.allclose(q, known)


def test_switch_criterion_fires_by_itself(docs):
    cfg = LayoutTrainConfig(epochs=4, docs_per_batch=2, seed=0, switch_by_epoch=99, probe_docs=4)   # default criterion
    res = train_layout(TINY, cfg, docs, docs[:2], log=lambda s: None)
    assert res.switched_at is not None and "forced" not in (res.switch_reason or "")
    modes = [e.mode for e in res.log]
    assert modes[0] == "token" and modes[-1] == "expert"
    after = [e for e in res.log if e.mode == "expert"]
    assert all("capacity_lower_bound" in e.router for e in after)
    assert after[-1].router["slots_per_token"] <= after[-1].capacity + 0.1      # ceil per document and expert


def test_seeded_training_gives_the_same_weights(docs, tmp_path):
    cfg = LayoutTrainConfig(epochs=2, docs_per_batch=4, seed=3, probe_docs=4)
    a = train_layout(TINY, cfg, docs, docs[:2], log=lambda s: None).model.state_dict()
    b = train_layout(TINY, cfg, docs, docs[:2], log=lambda s: None).model.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_save_load_round_trip(docs, tmp_path):
    m = _model("expert", capacity=1.5)
    path = save_layout(tmp_path / "l.pt", m, {"note": "x"}, half=False)
    m2, meta = load_layout(path)
    b = collate(docs[:2])
    assert meta == {"note": "x"} and m2.cfg == m.cfg
    assert torch.equal(m(b).begin, m2(b).begin)
    half, _ = load_layout(save_layout(tmp_path / "h.pt", m))
    torch.testing.assert_close(half(b).end, m(b).end, rtol=0.05, atol=0.05)
    assert evaluate_layout(m2, docs[:2]) == evaluate_layout(m, docs[:2])


class _Points(LayoutReader):
    """A reader whose every field begins and ends at one chosen word (tests the scorer alone)."""

    def __init__(self, cfg: LayoutConfig, word: int) -> None:
        super().__init__(cfg)
        self.word = word

    def forward(self, b, **kw) -> LayoutOutput:
        B, T = b.mask.shape
        Fm = b.q_type.shape[1]
        begin = torch.full((B, Fm, T + 1), -5.0)
        end = torch.full((B, Fm, T), -5.0)
        begin[..., self.word] = end[..., self.word] = 5.0
        return LayoutOutput(begin, end, torch.zeros(()), [])


def test_scorer_ranks_the_span_the_model_prefers_first_with_a_probability():
    # a classic format (the document this test was written on): the scorer pools a value's probability
    # over all its spans, and the richer families print amounts again (with their currency mark as a
    # word of its own, on a payment slip, ...), which would give other spans the target's probability
    sd = next(synth(1, 1, kind="invoice", seed=0, split="train", families=["classic"]))
    ix = DocIndex(sd.document)
    specs, _ = schema_fields(_schema())
    spec = next(s for s in specs if s.name == "gross_total")
    props = propose(ix, spec, detect_locale(ix))
    words = doc_words(ix)
    one_word = [p for p in props if (fl := words.span_words(ix, p.span)) and fl[0] == fl[1]]
    target = one_word[-1]                                       # some single-word candidate, not the baseline's pick
    w = words.span_words(ix, target.span)[0]
    scorer = LayoutScorer(_Points(TINY, w).eval(), {}, Path("x.pt"), blend=1.0)     # the model alone
    ranked = scorer(ix, [spec], {spec.name: props})[spec.name]
    assert words.span_words(ix, ranked[0].span) == (w, w)
    assert 0.5 < ranked[0].score <= 1.0 and ranked[0].features["layout_top"] == 1.0
    assert all(p.score < 0.01 for p in ranked if words.span_words(ix, p.span) != (w, w))
    assert scorer.tokens(ix, [spec], {spec.name: props}) == (len(words.refs), 1)
    mixed = LayoutScorer(_Points(TINY, w).eval(), {}, Path("x.pt"), blend=0.5)
    for p in mixed(ix, [spec], {spec.name: propose(ix, spec, detect_locale(ix))})[spec.name]:
        assert p.score == pytest.approx(0.5 * p.features["layout_p"] + 0.5 * p.features["baseline"])


def test_dev_style_truth_leaves_missing_fields_unscored():
    sd = next(synth(1, 1, kind="invoice", seed=0, split="train"))
    specs, _ = schema_fields(_schema())
    truth = {k: v for k, v in sd.truth.items() if k != "due_date"}
    d = label_layout(DocIndex(sd.document), truth, specs, absent_known=False)
    j = [s.name for s in specs].index("due_date")
    assert not d.known[j] and not d.absent[j]
    i = [s.name for s in specs].index("gross_total")
    assert d.known[i] and d.begin[i].any() and d.end[i].any()


@pytest.mark.slow
def test_cli_trains_a_layout_model_and_the_same_seed_gives_the_same_weights(tmp_path):
    from docassay.extractors.instructions.layout_scorer import layout_scorer
    from docassay.flows.cli import main

    args = ["model", "train", "--model", "layout", "--formats", "1", "--docs", "1", "--val-formats", "1",
            "--epochs", "2", "--d-model", "16", "--d-expert", "16", "--seed", "4"]
    assert main([*args, "--out", str(tmp_path / "a.pt")]) == 0
    assert main([*args, "--out", str(tmp_path / "b.pt")]) == 0
    a, _ = load_layout(tmp_path / "a.pt")
    b, meta = load_layout(tmp_path / "b.pt")
    sa, sb = a.state_dict(), b.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa) and meta["seed"] == 4 and meta["model"] == "layout"
    assert layout_scorer(tmp_path / "a.pt").model.cfg.d_model == 16
    assert main(["model", "train", "--model", "layout", "--formats", "1"]) == 2     # no --out, no --force


def test_scorer_reads_at_most_max_read_words_and_scores_later_spans_zero(monkeypatch):
    from docassay.extractors.instructions import layout_scorer as ls
    monkeypatch.setattr(ls, "MAX_READ_WORDS", 10)
    # classic: its amounts are printed once; a value printed before and after word 10 pools both spans
    sd = next(synth(1, 1, kind="invoice", seed=0, split="train", families=["classic"]))
    ix = DocIndex(sd.document)
    specs, _ = schema_fields(_schema())
    spec = next(s for s in specs if s.name == "gross_total")
    words = doc_words(ix)
    ranked = LayoutScorer(_model(), {}, Path("x.pt"))(ix, [spec], {spec.name: propose(ix, spec, detect_locale(ix))})[spec.name]
    late = [p for p in ranked if words.span_words(ix, p.span)[0] >= 10]
    assert late and all(p.features["layout_p"] == 0.0 for p in late)
