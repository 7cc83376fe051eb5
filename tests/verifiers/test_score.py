"""The run-time score: per-field agreement with what the checks expect, times evidence, weighted;
named tolerances from the schema's x-docassay keywords."""
from __future__ import annotations

import pytest

from docassay.verifiers.errors import VerifyError
from docassay.verifiers.settings import TOLERANCES, Tolerance, VerifySettings
from docassay.verifiers.tolerance import closeness, matches, similarity
from docassay.verifiers.verify import verify
from tests.verifiers.conftest import SCHEMA, ctx, labelled


def test_a_clean_record_scores_one(good) -> None:
    v = verify(ctx(good))
    assert v.passed and v.score == pytest.approx(1.0)


def test_score_is_in_unit_range_and_deterministic(good) -> None:
    good["line_items"].pop()
    a, b = verify(ctx(good)), verify(ctx(good))
    assert 0.0 <= a.score < 1.0 and a.score == b.score and a.components == b.components


def test_empty_record_scores_zero() -> None:
    assert verify(ctx({})).score == 0.0


def test_weights_and_tolerances_come_from_the_schema() -> None:
    s = VerifySettings.from_schema(SCHEMA)
    assert s.fields["gross_total"].weight == 2 and s.fields["gross_total"].tolerance == Tolerance("number", 0.01, 0.001)
    assert s.fields["invoice_number"].kind == "identifier" and s.fields["invoice_number"].unique_per == ("seller_name",)
    assert s.fields["issue_date"].kind == "date" and s.fields["issue_date"].stale_previous
    assert s.fields["buyer_name"].kind == "text" and s.fields["net_total"].tolerance is TOLERANCES["amount"]
    assert s.items[0].sum == "line_total" and s.items[0].totals == ("net_total", "gross_total")


@pytest.mark.parametrize("bad", [
    {"kind": "colour"}, {"tolerance": "nonesuch"}, {"tolerance": {"abs": -1}}, {"weight": "heavy"},
    {"items": {"sum": "x"}}, {"unique": "yes"}])
def test_bad_keywords_are_clear_errors(bad) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "number", "x-docassay": bad}}}
    with pytest.raises(VerifyError) as e:
        VerifySettings.from_schema(schema)
    assert "a" in e.value.message


def test_named_tolerances() -> None:
    amount = TOLERANCES["amount"]
    assert matches(amount, 100.0, 100.02) and not matches(amount, 100.0, 100.05)
    assert matches(amount, 100000.0, 100009.0)                   # relative part on large sums
    assert closeness(amount, 100.0, 50.0) == pytest.approx(0.5)
    assert closeness(amount, "100", 100.0) == 0.0                 # wrong type never equal
    assert matches(TOLERANCES["identifier"], "RE 2024-001", "re2024-001")
    assert not matches(TOLERANCES["date"], "2024-03-05", "2024-05-03")
    assert matches(TOLERANCES["text"], "Lieferant GmbH", "LIEFERANT  GMBH")
    assert 0.5 < similarity("Lieferant GmbH", "Lieferant GmbH & Co.") < 1.0


def test_weak_evidence_lowers_the_score(good) -> None:
    from dataclasses import replace
    ev = labelled(good)
    ev["buyer_name"] = replace(ev["buyer_name"], value_is_label=True)
    v = verify(ctx(good, evidence=ev))
    assert v.components["buyer_name"] == pytest.approx(0.2) and v.score < 1.0


def test_min_score_gates_only_when_configured(good) -> None:
    from dataclasses import replace
    ev = labelled(good)
    ev["seller_name"] = replace(ev["seller_name"], how="position")
    s = VerifySettings.from_schema(SCHEMA)
    assert verify(ctx(good, evidence=ev, settings=s)).passed
    assert not verify(ctx(good, evidence=ev, settings=replace(s, min_score=0.99))).passed
