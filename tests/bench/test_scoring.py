"""bench.scoring: the one scorer both systems are measured with."""
from __future__ import annotations

import pytest

from bench.scoring import aggregate, field_correct, group_mean, score_document, score_items

TRUTH = {"invoice_number": "RE-1", "issue_date": "2024-03-01", "gross_total": 119.0, "seller_name": "Acme GmbH",
         "line_items": [{"description": "Widget", "quantity": 2, "line_total": 100.0},
                        {"description": "Service fee", "line_total": 19.0}]}


def test_fields_compare_by_kind():
    assert field_correct("gross_total", 119.004, 119.0)
    assert not field_correct("gross_total", 119.1, 119.0)
    assert not field_correct("gross_total", "119.00", 119.0)          # a string is not a number
    assert field_correct("invoice_number", "# re- 1", "RE-1")            # whitespace, case, leading # ignored
    assert not field_correct("invoice_number", "RE-11", "RE-1")
    assert field_correct("invoice_number", "#re-1", "RE-1")
    assert not field_correct("issue_date", "01.03.2024", "2024-03-01")
    assert field_correct("seller_name", "ACME  gmbh", "Acme GmbH")
    assert field_correct("company", "ACME GMBH.", "Acme GmbH", fuzzy=True)
    assert not field_correct("seller_name", None, "Acme GmbH")


def test_items_matched_by_description():
    s = score_items([{"description": "widget", "quantity": 2, "line_total": 100.0},
                     {"description": "Shipping", "line_total": 5.0}], TRUTH["line_items"])
    assert (s.matched, s.predicted, s.expected) == (1, 2, 2)
    assert (s.fields_right, s.fields_total) == (2, 3)


def test_only_annotated_keys_are_scored():
    d = score_document("a", "passed", {"invoice_number": "RE-1", "due_date": "2024-04-01"}, {"invoice_number": "RE-1"})
    assert d.fields == {"invoice_number": True} and d.exact


def test_verified_precision_counts_accepted_documents_only():
    right = {k: v for k, v in TRUTH.items()}
    wrong = dict(right, gross_total=120.0)
    scores = [score_document("ok", "passed", right, TRUTH), score_document("bad", "repaired", wrong, TRUTH),
              score_document("held", "needs_review", wrong, TRUTH), score_document("err", "error", {}, TRUTH)]
    r = aggregate(scores)
    assert r.accepted == 2 and r.pass_rate == pytest.approx(0.5)
    assert r.verified_precision == pytest.approx(0.5)              # 'bad' was accepted and is wrong
    assert r.exact == pytest.approx(0.25)
    assert r.per_field["gross_total"] == (1, 4)
    assert r.item_precision == pytest.approx(1.0) and r.item_recall == pytest.approx(6 / 8)


def test_header_verified_precision_ignores_line_items():
    got = {k: v for k, v in TRUTH.items() if k != "line_items"}
    r = aggregate([score_document("a", "passed", got, TRUTH)])
    assert r.verified_precision == 0.0 and r.verified_precision_header == 1.0


def test_no_accepted_document_means_no_verified_precision():
    r = aggregate([score_document("a", "needs_review", {}, TRUTH)])
    assert r.verified_precision is None and r.pass_rate == 0.0


def test_group_mean_weighs_groups_equally():
    t = {"invoice_number": "X"}
    scores = [score_document(f"g1-{i}", "passed", {"invoice_number": "X"}, t) for i in range(9)]
    scores.append(score_document("g2-0", "passed", {"invoice_number": "Y"}, t))
    groups = {s.doc_id: s.doc_id.split("-")[0] for s in scores}
    gm = group_mean(scores, groups)
    assert gm.groups == 2 and gm.documents == 10
    assert gm.micro == pytest.approx(0.5)                          # pooled it would be 0.9
    assert gm.verified_precision == pytest.approx(0.5)
    assert aggregate(scores).micro == pytest.approx(0.9)
