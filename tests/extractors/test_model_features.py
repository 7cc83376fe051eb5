"""Proposal features for the MoE ranker, and the training labels built from synthetic documents."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from extractors.instructions import baseline
from extractors.instructions.generator import detect_locale, schema_fields
from extractors.instructions.model_data import label_document, same_value, synth_examples
from extractors.instructions.model_features import N_BUCKETS, NUMERIC, _h, featurize, value_shape
from extractors.instructions.proposals import propose
from extractors.spans import DocIndex
from extractors.synth import generate

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "examples" / "invoices" / "schema.json").read_text())


def _docs(n_formats=1, docs=2, seed=3):
    return list(generate(n_formats, docs, kind="invoice", seed=seed, split="train"))


def test_value_shape_and_hashing_are_stable():
    assert value_shape("R-2019/07") == "a-9/9"
    assert value_shape("INV 12") == "A 9"
    assert value_shape("Müller GmbH") == "a a"
    assert _h("L", "rechnung") == _h("L", "rechnung")            # crc32: the same in every process
    assert _h("L", "rechnung") != _h("S", "rechnung")            # namespaces separate


def test_featurize_gives_one_row_per_proposal_in_field_order():
    sd = _docs()[0]
    ix = DocIndex(sd.document)
    specs, _ = schema_fields(SCHEMA)
    props = {s.name: propose(ix, s, detect_locale(ix)) for s in specs}
    baseline.score_proposals(ix, specs, props)
    f = featurize(ix, specs, props)
    n = sum(len(v) for v in props.values())
    assert len(f.proposals) == n and f.num.shape == (n, len(NUMERIC)) and f.id_start.shape == (n + 1,)
    assert f.ids.min() >= 0 and f.ids.max() < N_BUCKETS
    assert np.all(np.diff(f.id_start) > 0)
    assert list(np.unique(f.group)) == list(range(len(f.fields)))
    assert np.all(np.diff(f.group) >= 0)                          # grouped by field
    assert np.isfinite(f.num).all()
    base = NUMERIC.index("baseline")
    assert np.allclose(f.num[:, base], [p.score for p in f.proposals])
    again = featurize(ix, specs, props)
    assert np.array_equal(again.ids, f.ids) and np.array_equal(again.num, f.num)


def test_same_value():
    assert same_value("amount", 10.004, 10.0) and not same_value("amount", 10.02, 10.0)
    assert not same_value("amount", "10", 10.0)
    assert same_value("date", "2020-01-02", "2020-01-02") and not same_value("date", "2020-02-01", "2020-01-02")
    assert same_value("identifier", "# inv 12", "INV12")
    assert same_value("text", "Müller  GmbH", "müller gmbh") and not same_value("text", "Müller", "Müller GmbH")
    assert not same_value("text", None, "x")


def test_labels_mark_true_proposals_and_generalising_locators():
    docs = _docs(docs=3)
    specs, _ = schema_fields(SCHEMA)
    ixs = [DocIndex(d.document) for d in docs]
    ex = label_document(ixs[0], docs[0].truth, specs, [(ixs[1], docs[1].truth), (ixs[2], docs[2].truth)])
    ts = ex.tokens
    assert ts.n_docs == 1
    assert not np.any(ts.gen_ok & ~ts.value_ok)                   # generalising implies right here
    found = {ex.fields[g] for g in np.unique(ts.group[ts.value_ok])}
    assert {"invoice_number", "issue_date", "gross_total", "currency"} <= found
    assert ts.gen_ok.sum() >= 4
    # a field the truth does not have is unannotated and has no positive
    for g, name in enumerate(ex.fields):
        m = ts.group == g
        assert ts.annotated[m].all() == (docs[0].truth.get(name) is not None)


def test_training_sample_keeps_every_positive_and_caps_negatives():
    docs = _docs(docs=2)
    specs, _ = schema_fields(SCHEMA)
    ixs = [DocIndex(d.document) for d in docs]
    full = label_document(ixs[0], docs[0].truth, specs, [(ixs[1], docs[1].truth)]).tokens
    cut = label_document(ixs[0], docs[0].truth, specs, [(ixs[1], docs[1].truth)], negatives=(2, 3),
                         rng=np.random.default_rng(0)).tokens
    assert cut.value_ok.sum() == full.value_ok.sum() and cut.gen_ok.sum() == full.gen_ok.sum()
    for g in np.unique(full.group):
        assert (cut.group[~cut.value_ok] == g).sum() <= 5
    assert cut.n_tokens < full.n_tokens
    assert len(cut.ids) == cut.id_start[-1]


def test_synth_examples_keep_formats_together():
    ex = list(synth_examples("invoice", SCHEMA, 2, 2, split="dev", seed=1))
    assert len(ex) == 4
    assert ex[0].format_id == ex[1].format_id != ex[2].format_id
