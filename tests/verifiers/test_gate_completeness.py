"""completeness gate conformance: pages read, items reconcile, items lost at a page break."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from docassay.verifiers.gates import completeness
from docassay.verifiers.settings import VerifySettings
from docassay.verifiers.verify import verify
from tests.verifiers.conftest import SCHEMA, ctx, document


@dataclass
class _Prov:
    page: int


@dataclass
class _Extraction:
    provenance: dict
    alternatives: dict


def _items_on(pages: list[int]) -> _Extraction:
    return _Extraction({f"line_items/{i}/line_total": _Prov(p) for i, p in enumerate(pages)}, {})


def test_full_pass(good) -> None:
    r = completeness.check(ctx(good, document=document(2)))
    assert r.passed and r.details["line_items"]["reconciled"] == "net_total"


def test_items_reconcile_with_the_gross_total_too(good) -> None:
    good["line_items"][0]["line_total"] = 79.0                      # 119 = gross
    assert completeness.check(ctx(good)).passed


def test_fails_for_exactly_its_reason_items_sum(good) -> None:
    good["line_items"].pop()                                        # 60 of 100: a line was missed
    v = verify(ctx(good))
    assert v.failed_gates == ["completeness"]
    (x,) = v.gates["completeness"].violations
    assert x.rule == "items_sum" and x.expected == 100.0 and x.actual == 60.0
    assert set(x.fields) == {"line_items", "net_total"}           # both go to repair


def test_items_lost_at_a_page_break(good) -> None:
    good["line_items"].pop()
    r = completeness.check(ctx(good, document=document(2), extraction=_items_on([1])))
    assert not r.passed and r.violations[0].rule == "items_page_break"
    assert "page 1 of 2" in r.violations[0].message
    gap = dict(good, line_items=good["line_items"] + [{"description": "x", "line_total": 1.0}])
    r = completeness.check(ctx(gap, document=document(3), extraction=_items_on([1, 3])))
    assert r.violations[0].rule == "items_page_break" and "page 2" in r.violations[0].message


def test_items_missing_while_totals_present(good) -> None:
    del good["line_items"]
    r = completeness.check(ctx(good))
    assert not r.passed and r.violations[0].rule == "items_missing"
    allowed = VerifySettings.from_schema(SCHEMA)
    from dataclasses import replace
    allowed = replace(allowed, items=tuple(replace(i, absent="allowed") for i in allowed.items))
    assert completeness.check(ctx(good, settings=allowed)).passed


def test_every_page_read(good) -> None:
    r = completeness.check(ctx(good, document=document(3, empty=(2,))))
    assert not r.passed and r.violations[0].rule == "page_not_read" and "page 2 of 3" in r.violations[0].message


def test_item_without_amount(good) -> None:
    del good["line_items"][1]["line_total"]
    r = completeness.check(ctx(good))
    assert not r.passed and r.violations[0].field == "line_items/1/line_total"


@pytest.mark.parametrize("bad", [["x"], {"a": 1}, [1, 2]])
def test_malformed_input(good, bad) -> None:
    good["line_items"] = bad
    r = completeness.check(ctx(good))
    assert not r.passed and r.violations[0].rule in ("malformed", "items_missing")
    assert not completeness.check(ctx(42)).passed


def test_deterministic(good) -> None:
    good["line_items"].pop()
    assert verify(ctx(good)).to_json() == verify(ctx(good)).to_json()
