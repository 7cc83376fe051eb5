"""Proposal features for the MoE ranker, and the training labels built from synthetic documents."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from docassay.extractors.instructions import baseline
from docassay.extractors.instructions.generator import detect_locale, schema_fields
from docassay.extractors.instructions.model_data import (
    as_ocr_lines,
    label_document,
    reword_format,
    same_value,
    synth_examples,
    synth_labelled,
)
from docassay.extractors.instructions.model_features import (
    N_BUCKETS,
    NUMERIC,
    _h,
    concept_matches,
    featurize,
    numeric_names,
    value_class,
    value_shape,
)
from docassay.extractors.instructions.proposals import propose
from docassay.extractors.spans import DocIndex
from docassay.extractors.synth import generate

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


def _proposals(seed=3):
    sd = _docs(seed=seed)[0]
    ix = DocIndex(sd.document)
    specs, _ = schema_fields(SCHEMA)
    props = {s.name: propose(ix, s, detect_locale(ix)) for s in specs}
    baseline.score_proposals(ix, specs, props)
    return ix, specs, props


def test_version_2_reads_labels_through_lexicon_concepts_not_their_wording():
    ix, specs, props = _proposals()
    p = next(p for p in props["invoice_number"] if p.label)
    ids = {}
    for label in ("Factuurnummer:", "RECHNUNGSNR.", "Belegnummer", "Order reference"):
        q = replace(p, label=label, score=p.score)
        ids[label] = featurize(ix, specs, {"invoice_number": [q]}, version=2).ids.tolist()
    assert ids["Factuurnummer:"] == ids["RECHNUNGSNR."] == ids["Belegnummer"]        # one concept, any language
    assert ids["Order reference"] != ids["Belegnummer"]
    v1 = [featurize(ix, specs, {"invoice_number": [replace(p, label=x, score=p.score)]}, version=1).ids.tolist()
          for x in ("Factuurnummer:", "RECHNUNGSNR.")]
    assert v1[0] != v1[1]                                                            # version 1 hashed the words
    assert concept_matches("Rechnungsnr.")[0][0] == "invoice_number"
    assert concept_matches("QTY")[0][0] == "col:quantity" and concept_matches("") == ()


def test_both_feature_versions_have_their_own_numbers():
    ix, specs, props = _proposals()
    f1, f2 = featurize(ix, specs, props, version=1), featurize(ix, specs, props, version=2)
    assert f1.num.shape[1] == len(numeric_names(1)) < f2.num.shape[1] == len(numeric_names(2)) == len(NUMERIC)
    assert numeric_names(2)[:len(numeric_names(1))] == numeric_names(1)
    same = NUMERIC.index("same_value")                                               # a count in v1, a flag in v2
    keep = [j for j in range(f1.num.shape[1]) if j != same]
    assert np.array_equal(f1.num[:, keep], f2.num[:, keep])
    assert set(np.unique(f2.num[:, same])) <= {0.0, 1.0} and f1.num[:, same].max() > 1.0
    gap, rank = NUMERIC.index("baseline_gap"), NUMERIC.index("baseline_rank")
    for g in np.unique(f2.group):
        m = f2.group == g
        assert f2.num[m, gap].max() == 0.0 and f2.num[m, rank].min() == 0.0         # the baseline's best of the field
    assert value_class("Müller GmbH") == "L|w2|G" and value_class("2019-07-01") == "Ds|w1|"


def test_reworded_formats_print_one_new_label_per_field_on_every_document():
    docs = _docs(docs=2, seed=5)
    pairs = reword_format(docs, np.random.default_rng(1))
    assert [t for _, t in pairs] == [d.truth for d in docs]
    changed = 0
    for (doc, _), sd in zip(pairs, docs):
        before, after = sd.document.pages[0].text, doc.pages[0].text
        assert len(doc.pages[0].words) > 0 and before != after
        changed += 1
        for fs in sd.truth_spans.fields.values():                # the values themselves are still printed
            if fs.page == 1:
                assert fs.text in after
    again = reword_format(docs, np.random.default_rng(1))
    assert [d.pages[0].text for d, _ in again] == [d.pages[0].text for d, _ in pairs]   # seeded
    new_lines = [set(d.pages[0].text.splitlines()) - set(sd.document.pages[0].text.splitlines())
                 for (d, _), sd in zip(pairs, docs)]
    assert {ln.split(":")[0] for ln in new_lines[0]} & {ln.split(":")[0] for ln in new_lines[1]}  # same label both


def test_ocr_share_reads_formats_as_ocr_line_files_with_the_same_truth():
    receipt_schema = json.loads((Path(__file__).resolve().parents[2] / "examples" / "receipts" / "schema.json").read_text())
    plain = list(synth_labelled("receipt", receipt_schema, 2, 2, split="dev", seed=4))
    ocr = list(synth_labelled("receipt", receipt_schema, 2, 2, split="dev", seed=4, ocr_share=1.0))
    assert [lab.doc_id for lab in ocr] == [lab.doc_id for lab in plain]
    for p, o in zip(plain, ocr):
        assert p.ix.doc.parser == "synth" and o.ix.doc.parser == "ocr-lines"
        assert o.annotated == p.annotated
        assert any(v.any() for v in o.value_ok.values())            # the truth is still found in the OCR lines
    sd = generate(1, 1, kind="receipt", seed=4, split="dev").__next__()
    doc = as_ocr_lines(sd)
    assert all(w.font_size is None for w in doc.pages[0].words)     # a line file carries no font sizes
    assert sorted(doc.pages[0].text.split()) == sorted(sd.document.pages[0].text.split())   # same words, new geometry
    assert synth_labelled("receipt", receipt_schema, 1, 2, split="dev", seed=4, ocr_share=0.0).__next__().ix.doc.parser \
        == "synth"
