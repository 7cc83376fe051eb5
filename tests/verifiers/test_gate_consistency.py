"""consistency gate conformance: a known format's sender fields hold its previous document's value."""
from __future__ import annotations

import copy

from docassay.verifiers.gates import consistency
from docassay.verifiers.history import MemoryHistory
from docassay.verifiers.verify import verify
from tests.verifiers.conftest import SCHEMA, ctx

SAME = copy.deepcopy(SCHEMA)
SAME["properties"]["seller_name"]["x-docassay"] = {"per_format": "same"}


def _history(prev: dict) -> MemoryHistory:
    h = MemoryHistory(exclude_sha256="this")
    h.accept("prev", prev, {})
    return h


def _prev(good: dict, **kw) -> dict:
    return dict(good, invoice_number="RE-2024-000", issue_date="2024-02-01", **kw)


def test_full_pass_within_the_name_tolerance(good) -> None:
    r = consistency.check(ctx(good, schema=SAME, history=_history(_prev(good, seller_name="LIEFERANT GmbH"))))
    assert r.passed and r.details["checked"]


def test_new_format_or_no_history_passes(good) -> None:
    assert consistency.check(ctx(good, schema=SAME)).details == {"checked": False}
    assert consistency.check(ctx(good, schema=SAME, history=MemoryHistory())).passed


def test_fails_for_exactly_its_reason_another_sender(good) -> None:
    v = verify(ctx(good, schema=SAME, history=_history(_prev(good, seller_name="Verkehrsbetriebe GmbH"))))
    assert v.failed_gates == ["consistency"]
    (x,) = v.gates["consistency"].violations
    assert (x.rule, x.field, x.expected, x.actual) == ("sender_changed", "seller_name", "Verkehrsbetriebe GmbH",
                                                       "Lieferant GmbH")
    assert v.failing_fields == ["seller_name"]                     # repair may look for a misread first


def test_malformed_input(good) -> None:
    assert not consistency.check(ctx(None, schema=SAME, history=_history(good))).passed
    odd = _prev(good, seller_name=["not", "a", "name"])
    assert not consistency.check(ctx(good, schema=SAME, history=_history(odd))).passed


def test_deterministic(good) -> None:
    h = _history(_prev(good, seller_name="Andere GmbH"))
    assert verify(ctx(good, schema=SAME, history=h)).to_json() == verify(ctx(good, schema=SAME, history=h)).to_json()
