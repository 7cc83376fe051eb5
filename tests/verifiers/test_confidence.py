"""The field-confidence calibrator, its calibration figures and the decision it drives.

No database: SQL rules are not given; verification runs the real gates and the real checks."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from docassay.flows.results import Row
from docassay.flows.status import problem_lines
from docassay.verifiers.confidence import (
    Calibrator,
    ConfidencePolicy,
    Example,
    ece,
    family_of,
    load,
    load_default,
    reliability,
)
from docassay.verifiers.confidence.calibrator import POOLED, FamilyModel, sign_of
from docassay.verifiers.context import VerifyContext
from docassay.verifiers.errors import VerifyError
from docassay.verifiers.verify import verify

SCHEMA = {"type": "object", "required": ["invoice_number", "gross_total"],
          "properties": {"invoice_number": {"type": "string", "x-docassay": {"kind": "identifier"}},
                         "gross_total": {"type": "number"},
                         "note": {"type": "string"}}}


def tiny_examples(n: int = 400, seed: int = 0) -> list[Example]:
    """A value with a passing check is right 90% of the time, without it 50%; a failing check 10%."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        kind = rng.integers(3)
        feats = {"bias": 1.0}
        if kind == 0:
            feats["sum:pass"] = 1.0
            p = 0.9
        elif kind == 1:
            feats["sum:fail"] = 1.0
            p = 0.1
        else:
            p = 0.5
        out.append(Example("amount", feats, bool(rng.random() < p)))
    return out


def fixed(weights: dict[str, float]) -> Calibrator:
    return Calibrator({POOLED: FamilyModel(list(weights), list(weights.values()))})


def test_fit_recovers_the_rates_and_is_calibrated_on_its_data() -> None:
    ex = tiny_examples()
    cal = Calibrator.fit(ex)
    p_pass = cal.predict("amount", {"bias": 1.0, "sum:pass": 1.0})
    p_none = cal.predict("amount", {"bias": 1.0})
    p_fail = cal.predict("amount", {"bias": 1.0, "sum:fail": 1.0})
    assert p_fail < p_none < p_pass
    assert abs(p_pass - 0.9) < 0.08 and abs(p_fail - 0.1) < 0.08 and abs(p_none - 0.5) < 0.1
    conf = [cal.predict(e.family, e.features) for e in ex]
    assert ece(conf, [e.correct for e in ex]) < 0.05


def test_fit_is_deterministic_and_round_trips_through_json(tmp_path: Path) -> None:
    a, b = Calibrator.fit(tiny_examples()), Calibrator.fit(tiny_examples())
    assert a.to_json() == b.to_json()
    a.save(tmp_path / "w.json")
    c = load(tmp_path / "w.json")
    x = {"bias": 1.0, "sum:pass": 1.0}
    assert c.predict("amount", x) == pytest.approx(a.predict("amount", x), abs=1e-5)
    with pytest.raises(ValueError, match="not a docassay calibrator"):
        Calibrator.from_json({"kind": "other"})


def test_monotone_even_when_the_data_says_otherwise() -> None:
    """A passing check is evidence for the value: its weight is never negative, whatever the data."""
    rng = np.random.default_rng(1)
    ex = [Example("id", {"bias": 1.0, "odd:pass": 1.0} if i % 2 else {"bias": 1.0, "odd:fail": 1.0},
                  bool(rng.random() < (0.2 if i % 2 else 0.8))) for i in range(300)]
    cal = Calibrator.fit(ex)
    m = cal.model_for("id")
    w = dict(zip(m.features, m.weights))
    assert w["odd:pass"] >= 0.0 and w["odd:fail"] <= 0.0
    base = {"bias": 1.0}
    assert cal.predict("id", {**base, "odd:pass": 1.0}) >= cal.predict("id", base) >= \
        cal.predict("id", {**base, "odd:fail": 1.0})
    assert sign_of("docassay.rules:held") == 1 and sign_of("value_is_label") == -1 and sign_of("how:label") == 0


def test_a_family_without_enough_examples_uses_the_pooled_model() -> None:
    ex = tiny_examples(200) + [Example("date", {"bias": 1.0}, True)] * 3
    cal = Calibrator.fit(ex)
    assert "date" not in cal.families and "amount" in cal.families
    assert cal.predict("date", {"bias": 1.0}) == cal.predict(POOLED, {"bias": 1.0})


def test_ece_and_reliability() -> None:
    assert ece([0.9] * 10, [True] * 9 + [False]) == pytest.approx(0.0)
    assert ece([1.0, 1.0], [False, False]) == pytest.approx(1.0)
    # two bins: 0.25 (half right: off by 0.25) and 0.75 (all right: off by 0.25)
    assert ece([0.25, 0.25, 0.75, 0.75], [True, False, True, True]) == pytest.approx(0.25)
    table = reliability([0.05, 0.95, 1.0], [False, True, True])
    assert [(b.lo, b.n) for b in table] == [(0.0, 1), (0.9, 2)]
    with pytest.raises(ValueError):
        reliability([0.5], [True, False])


def test_every_field_gets_a_family() -> None:
    assert family_of("invoice_number", "identifier") == "id"
    assert family_of("po_date", "date") == "date"
    assert family_of("freight", "amount") == "amount"
    assert family_of("carrier_name", "text") == "name"
    assert family_of("delivery_address", "text") == "text"
    assert family_of("incoterm", "code") == "code"
    assert family_of("line_items", "array") == "items"


def test_the_shipped_weights_load_and_cover_every_family() -> None:
    cal = load_default()
    assert POOLED in cal.families
    for fam in ("id", "date", "amount", "name", "code", "text", "items", "something-new"):
        assert 0.0 < cal.predict(fam, {"bias": 1.0, "how:label": 1.0}) < 1.0


def test_policy_per_field_and_bad_values() -> None:
    schema = {"properties": {"a": {"type": "number", "x-docassay": {"min_confidence": 0.99}}, "b": {"type": "string"}}}
    p = ConfidencePolicy.from_schema(schema, 0.8)
    assert p.target("a") == 0.99 and p.target("b") == 0.8
    with pytest.raises(VerifyError, match="min_confidence"):
        ConfidencePolicy.from_schema({"properties": {"a": {"x-docassay": {"min_confidence": 2}}}})


def verify_with(record: dict, cal: Calibrator, target: float | None = None, schema: dict = SCHEMA):
    return verify(VerifyContext(schema=schema, record=record, calibrator=cal, min_confidence=target))


def test_a_doubtful_required_field_sends_the_record_to_review_naming_it() -> None:
    # values without provenance (how: unknown): confident ids, doubtful amounts
    cal = Calibrator({POOLED: FamilyModel(["bias"], [3.0]), "amount": FamilyModel(["bias", "how:unknown"], [3.0, -4.0])})
    v = verify_with({"invoice_number": "RE-1", "gross_total": 12.5, "note": "x"}, cal, 0.9)
    assert v.passed and not v.accepted
    assert v.doubtful == ["gross_total"]
    assert v.fields["invoice_number"].status == "verified" and v.fields["gross_total"].status == "doubtful"
    assert v.fields["gross_total"].confidence == pytest.approx(1 / (1 + np.exp(1.0)), abs=1e-6)

    class R:                                              # what Row.finish reads of a repair result
        extraction = type("E", (), {"record": {"invoice_number": "RE-1", "gross_total": 12.5},
                                    "provenance_json": lambda self: {}})()
        verdict, attempts, changes = v, 1, []

    row = Row(source="a.pdf")
    row.finish(R(), repaired=False)
    assert row.status == "needs_review" and row.doubtful == ["gross_total"]
    out = row.to_json()
    assert out["fields"]["gross_total"]["status"] == "doubtful"
    assert out["fields"]["gross_total"]["value"] == 12.5
    assert out["record"] == {"invoice_number": "RE-1", "gross_total": 12.5}          # values kept
    assert "features" not in out
    line = problem_lines([row])[0]
    assert "doubtful: gross_total 0.27" in line and "found_by" in line
    json.dumps(out)


def test_an_optional_doubtful_field_does_not_block_and_a_missing_required_one_does() -> None:
    cal = Calibrator({POOLED: FamilyModel(["bias"], [3.0]), "text": FamilyModel(["bias"], [-3.0])})
    v = verify_with({"invoice_number": "RE-1", "gross_total": 12.5, "note": "x"}, cal, 0.9)
    assert v.accepted and v.fields["note"].status == "doubtful" and not v.all_verified
    v = verify_with({"invoice_number": "RE-1"}, cal, 0.9)
    assert not v.passed and v.fields["gross_total"].status == "missing" and "gross_total" in v.doubtful


def test_the_target_decides() -> None:
    cal = fixed({"bias": 1.0})                            # 0.73 for every value
    rec = {"invoice_number": "RE-1", "gross_total": 12.5}
    assert verify_with(rec, cal, 0.7).accepted
    assert not verify_with(rec, cal, 0.75).accepted
    per_field = {**SCHEMA, "properties": {**SCHEMA["properties"],
                                          "gross_total": {"type": "number", "x-docassay": {"min_confidence": 0.5}}}}
    assert verify_with(rec, fixed({"bias": 0.5}), 0.9, per_field).doubtful == ["invoice_number"]


def test_scope_present_makes_every_value_count() -> None:
    cal = Calibrator({POOLED: FamilyModel(["bias"], [3.0]), "text": FamilyModel(["bias"], [-3.0])})
    strict = {**SCHEMA, "x-docassay": {"verify": {"verified": "present"}}}
    v = verify_with({"invoice_number": "RE-1", "gross_total": 12.5, "note": "x"}, cal, 0.9, strict)
    assert not v.accepted and v.doubtful == ["note"]
    assert verify_with({"invoice_number": "RE-1", "gross_total": 12.5}, cal, 0.9, strict).accepted
    with pytest.raises(VerifyError, match="verified"):
        ConfidencePolicy.from_schema({"x-docassay": {"verify": {"verified": "some"}}})


def _finished(v, record: dict) -> Row:
    class R:                                              # what Row.finish reads of a repair result
        extraction = type("E", (), {"record": dict(record), "provenance_json": lambda self: {}})()
        verdict, attempts, changes = v, 1, []
    row = Row(source="a.pdf")
    row.finish(R(), repaired=False)
    return row


def test_an_accepted_record_leaves_a_doubtful_optional_value_out_and_the_row_keeps_it() -> None:
    cal = Calibrator({POOLED: FamilyModel(["bias"], [3.0]), "text": FamilyModel(["bias"], [-3.0])})
    rec = {"invoice_number": "RE-1", "gross_total": 12.5, "note": "x"}
    v = verify_with(rec, cal, 0.9)
    assert v.accepted and v.omitted == ["note"] and v.fields["note"].omitted
    row = _finished(v, rec)
    out = row.to_json()
    assert row.status == "passed" and out["record"] == {"invoice_number": "RE-1", "gross_total": 12.5}
    assert out["fields"]["note"] == {**out["fields"]["note"], "value": "x", "status": "doubtful", "omitted": True}
    # a record that goes to review keeps every value
    doubtful_amount = Calibrator({POOLED: FamilyModel(["bias"], [3.0]), "text": FamilyModel(["bias"], [-3.0]),
                                  "amount": FamilyModel(["bias"], [-3.0])})
    v = verify_with(rec, doubtful_amount, 0.9)
    assert not v.accepted and v.omitted == [] and _finished(v, rec).to_json()["record"] == rec


def test_doubtful_optional_keep_and_bad_values() -> None:
    cal = Calibrator({POOLED: FamilyModel(["bias"], [3.0]), "text": FamilyModel(["bias"], [-3.0])})
    keep = {**SCHEMA, "x-docassay": {"verify": {"doubtful_optional": "keep"}}}
    rec = {"invoice_number": "RE-1", "gross_total": 12.5, "note": "x"}
    v = verify_with(rec, cal, 0.9, keep)
    assert v.accepted and v.omitted == [] and not v.fields["note"].omitted
    assert _finished(v, rec).to_json()["record"] == rec
    present = {**SCHEMA, "x-docassay": {"verify": {"verified": "present"}}}
    assert verify_with(rec, cal, 0.9, present).omitted == []            # every value counts: nothing left out
    with pytest.raises(VerifyError, match="doubtful_optional"):
        ConfidencePolicy.from_schema({"x-docassay": {"verify": {"doubtful_optional": "drop"}}})


def test_l2_per_family_shrinks_only_that_family() -> None:
    ex = tiny_examples() + [Example("text", e.features, e.correct) for e in tiny_examples(seed=1)]
    plain = Calibrator.fit(ex, iterations=500)
    strong = Calibrator.fit(ex, iterations=500, l2_by_family={"text": 1.0})

    def w(c: Calibrator, fam: str) -> dict:
        return dict(zip(c.model_for(fam).features, c.model_for(fam).weights))
    assert abs(w(strong, "text")["sum:pass"]) < abs(w(plain, "text")["sum:pass"]) / 2
    assert w(strong, "amount") == w(plain, "amount") and strong.meta["l2_by_family"] == {"text": 1.0}


def test_a_doubt_check_makes_a_field_doubtful_whatever_its_confidence():
    from docassay.verifiers.checks import Signal
    from docassay.verifiers.confidence.decision import DOUBT_CAP, assess
    from docassay.verifiers.confidence.features import FieldBasis
    cal = Calibrator({POOLED: FamilyModel(["bias"], [6.0])})
    fail = Signal("issue_date", "other_document", "fail", "its label 'Ursprungsrechnung R-1 vom' names another document")
    bases = {"issue_date": FieldBasis("issue_date", "date", True, "2018-09-29", [fail], {"bias": 1.0}),
             "due_date": FieldBasis("due_date", "date", True, "2018-10-29", [], {"bias": 1.0})}
    out = assess(bases, cal, ConfidencePolicy(default=0.3), required=("issue_date",))
    assert out["issue_date"].status == "doubtful" and out["issue_date"].confidence == DOUBT_CAP
    assert out["due_date"].status == "verified" and out["due_date"].confidence > 0.99
    passing = dict(bases, issue_date=FieldBasis("issue_date", "date", True, "2018-09-29",
                                                [Signal("issue_date", "other_document", "pass", "")], {"bias": 1.0}))
    assert assess(passing, cal, ConfidencePolicy(default=0.3))["issue_date"].status == "verified"
    person = dict(bases, issue_date=FieldBasis("issue_date", "date", True, "2018-09-29", [fail],
                                               {"bias": 1.0, "how:person": 1.0}))
    assert assess(person, cal, ConfidencePolicy(default=0.3))["issue_date"].status == "verified"   # a person's value


def test_a_total_below_a_printed_subtotal_or_a_column_of_a_row_is_doubtful():
    from docassay.verifiers.checks import Signal
    from docassay.verifiers.confidence.decision import DOUBT_CAP, assess
    from docassay.verifiers.confidence.features import FieldBasis
    cal = Calibrator({POOLED: FamilyModel(["bias"], [6.0])})
    fail = Signal("total", "total_covers_subtotal", "fail", "total 11.6 is less than the subtotal printed on 'SUBTOTAL RM53.60'")
    bases = {"total": FieldBasis("total", "amount", True, 11.6, [fail], {"bias": 1.0})}
    out = assess(bases, cal, ConfidencePolicy(default=0.3), required=("total",))
    assert out["total"].status == "doubtful" and out["total"].confidence == DOUBT_CAP
    column = Signal("total", "total_last", "fail", "one column of '6%   12.88   0.77', not its last amount")
    out = assess({"total": FieldBasis("total", "amount", True, 12.88, [column], {"bias": 1.0})}, cal,
                 ConfidencePolicy(default=0.3), required=("total",))
    assert out["total"].status == "doubtful" and out["total"].confidence == DOUBT_CAP


def test_an_ambiguity_fail_is_weighed_on_its_own_not_counted_among_the_fails():
    import math

    from docassay.verifiers.checks import Signal
    from docassay.verifiers.confidence.features import AMBIGUITY_CHECKS, field_bases
    from tests.verifiers.checkkit import GOOD, ctx
    c = ctx(dict(GOOD))
    alt = Signal("invoice_number", "alternative_agrees", "fail", "another reading: 'R-2'")
    wrong = Signal("issue_date", "label_meaning", "fail", "labelled 'Lieferdatum'")
    amb = Signal("issue_date", "reading_ambiguous", "fail", "05.03.2018 reads as 3 May too")
    bases = field_bases(c, {}, [alt, wrong, amb])
    inv, date = bases["invoice_number"].features, bases["issue_date"].features
    assert "alternative_agrees" in AMBIGUITY_CHECKS and "reading_ambiguous" in AMBIGUITY_CHECKS
    assert inv["alternative_agrees:fail"] == 1.0 and inv["checks:fail_n"] == 0.0
    assert date["reading_ambiguous:fail"] == 1.0 and date["checks:fail_n"] == math.log1p(1)
