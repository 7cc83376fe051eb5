"""stale gate conformance: duplicate invoice numbers per seller, values copied from the
previous document of the format."""
from __future__ import annotations

import copy

import pytest

from docassay.verifiers.errors import VerifyError
from docassay.verifiers.gates import stale
from docassay.verifiers.history import MemoryHistory
from docassay.verifiers.settings import VerifySettings
from docassay.verifiers.verify import verify
from tests.verifiers.conftest import SCHEMA, ctx

UNIQUE = {"invoice_number": ("seller_name",)}


def _history(*records, exclude: str = "this") -> MemoryHistory:
    h = MemoryHistory(exclude_sha256=exclude)
    for i, r in enumerate(records):
        h.accept(f"doc{i}", r, UNIQUE)
    return h


def test_full_pass(good) -> None:
    prev = dict(good, invoice_number="RE-2024-000", issue_date="2024-02-01")
    r = stale.check(ctx(good, history=_history(prev)))
    assert r.passed and r.details["previous"] == "doc0"


def test_no_history_passes_and_says_so(good) -> None:
    r = stale.check(ctx(good))
    assert r.passed and r.details == {"history": False}


def test_fails_for_exactly_its_reason_a_duplicate(good) -> None:
    earlier = dict(good, issue_date="2024-01-01", invoice_number=" re-2024-001 ")   # same number, folded
    v = verify(ctx(good, history=_history(earlier)))
    assert v.failed_gates == ["stale"]
    (x,) = v.gates["stale"].violations
    assert (x.rule, x.field) == ("duplicate", "invoice_number") and not x.repairable
    assert v.failing_fields == [] and not v.repairable             # repair must not hide a duplicate


def test_same_number_from_another_seller_is_no_duplicate(good) -> None:
    other = dict(good, seller_name="Andere GmbH", issue_date="2024-01-01")
    assert stale.check(ctx(good, history=_history(other))).passed


def test_the_same_document_again_is_no_duplicate(good) -> None:
    assert stale.check(ctx(good, history=_history(good, exclude="doc0"))).passed


def test_a_date_copied_from_the_previous_document(good) -> None:
    prev = dict(good, invoice_number="RE-2024-000")                # another invoice, same date
    r = stale.check(ctx(good, history=_history(prev)))
    assert not r.passed and [(x.rule, x.field) for x in r.violations] == [("copied", "issue_date")]
    assert r.violations[0].repairable


def test_malformed_input(good) -> None:
    assert not stale.check(ctx([], history=_history())).passed
    odd = dict(good, seller_name=None)                               # no scope: cannot be a duplicate
    r = stale.check(ctx(odd, history=_history(dict(good))))
    assert r.passed and not r.violations


def test_deterministic(good) -> None:
    h = _history(dict(good, issue_date="2024-01-01"))
    assert verify(ctx(good, history=h)).to_json() == verify(ctx(good, history=h)).to_json()


# -- possible duplicates: x-docassay unique.near (the same seller, date and gross under another number)

NEAR_SCHEMA = copy.deepcopy(SCHEMA)
NEAR_SCHEMA["properties"]["invoice_number"]["x-docassay"]["unique"]["near"] = ["issue_date", "gross_total"]
del NEAR_SCHEMA["properties"]["issue_date"]["x-docassay"]     # the twins below are of other formats: nothing `copied`
NEAR = {"invoice_number": ("issue_date", "gross_total")}


def _near_history(*records, exclude: str = "this") -> MemoryHistory:
    h = MemoryHistory(exclude_sha256=exclude)
    for i, r in enumerate(records):
        h.accept(f"doc{i}", r, UNIQUE, near=NEAR)
    return h


def test_another_number_for_the_same_seller_date_and_gross_is_a_possible_duplicate(good) -> None:
    earlier = dict(good, invoice_number="RE-2024-007")              # misread here, or billed twice
    v = verify(ctx(good, schema=NEAR_SCHEMA, history=_near_history(earlier)))
    assert v.failed_gates == ["stale"] and not v.repairable
    (x,) = v.gates["stale"].violations
    assert (x.rule, x.field, x.repairable) == ("possible_duplicate", "invoice_number", False)
    assert "doc0" in x.message and "re-2024-007" in x.message and "'2024-03-05'" in x.message


def test_a_possible_duplicate_needs_every_near_field_equal(good) -> None:
    for change in ({"gross_total": 119.5}, {"issue_date": "2024-03-06"}, {"seller_name": "Andere GmbH"}):
        other = dict(good, invoice_number="RE-2024-007", **change)
        assert stale.check(ctx(good, schema=NEAR_SCHEMA, history=_near_history(other))).passed, change
    assert not stale.check(ctx(dict(good, gross_total=119), schema=NEAR_SCHEMA,         # 119 == 119.0
                               history=_near_history(dict(good, invoice_number="X-1")))).passed


def test_near_is_opt_in_and_the_same_number_stays_a_plain_duplicate(good) -> None:
    earlier = dict(good, invoice_number="RE-2024-007")
    no_near = copy.deepcopy(NEAR_SCHEMA)
    del no_near["properties"]["invoice_number"]["x-docassay"]["unique"]["near"]
    assert stale.check(ctx(good, schema=no_near, history=_near_history(earlier))).passed
    r = stale.check(ctx(good, schema=NEAR_SCHEMA, history=_near_history(dict(good))))
    assert [x.rule for x in r.violations] == ["duplicate"]
    assert stale.check(ctx(good, schema=NEAR_SCHEMA, history=_near_history(earlier, exclude="doc0"))).passed


def test_near_names_fields_of_the_schema() -> None:
    bad = copy.deepcopy(SCHEMA)
    bad["properties"]["invoice_number"]["x-docassay"]["unique"]["near"] = ["issue_dat"]
    with pytest.raises(VerifyError, match="unique.near"):
        VerifySettings.from_schema(bad)
