"""evidence gate conformance: labels read as values, two fields from one span, wrong kinds,
position-only required values."""
from __future__ import annotations

from dataclasses import replace

from docassay.verifiers.gates import evidence
from docassay.verifiers.verify import verify
from tests.verifiers.conftest import ctx, labelled


def test_full_pass(good) -> None:
    r = evidence.check(ctx(good))
    assert r.passed and not r.violations and r.details["weak"] == []


def test_fails_for_exactly_its_reason_a_label_read_as_value(good) -> None:
    good["buyer_name"] = "Nummer"
    ev = labelled(good)
    ev["buyer_name"] = replace(ev["buyer_name"], value_is_label=True)
    v = verify(ctx(good, evidence=ev))
    assert v.failed_gates == ["evidence"]
    (x,) = v.gates["evidence"].violations
    assert (x.rule, x.field) == ("label_as_value", "buyer_name")
    assert v.failing_fields == ["buyer_name"]


def test_two_fields_from_the_same_words(good) -> None:
    good["buyer_name"] = good["seller_name"]
    ev = labelled(good)
    ev["buyer_name"] = replace(ev["seller_name"], field="buyer_name")
    r = evidence.check(ctx(good, evidence=ev))
    assert not r.passed and r.violations[0].rule == "shared_span"
    assert set(r.violations[0].fields) == {"buyer_name", "seller_name"}


def test_a_name_that_reads_as_a_date(good) -> None:
    ev = labelled(good)
    ev["seller_name"] = replace(ev["seller_name"], reads_as="date", text="14 MAR 2018 18:40")
    r = evidence.check(ctx(good, evidence=ev))
    assert not r.passed and r.violations[0].rule == "wrong_kind"


def test_position_only_is_a_warning_by_default(good) -> None:
    ev = labelled(good)
    ev["seller_name"] = replace(ev["seller_name"], how="position", label=None)
    v = verify(ctx(good, evidence=ev))
    assert v.passed
    assert [x.rule for x in v.gates["evidence"].violations] == ["position_only"]
    assert v.gates["evidence"].violations[0].severity == "warning"
    assert v.components["seller_name"] < 1.0 == v.components["buyer_name"]


def test_malformed_input(good) -> None:
    assert not evidence.check(ctx(3.5)).passed
    junk = {"seller_name": "not evidence", "buyer_name": None}
    assert evidence.check(ctx(good, evidence=junk)).passed       # nothing it can judge: no finding


def test_deterministic(good) -> None:
    ev = labelled(good)
    ev["buyer_name"] = replace(ev["buyer_name"], value_is_label=True)
    assert verify(ctx(good, evidence=ev)).to_json() == verify(ctx(good, evidence=ev)).to_json()
