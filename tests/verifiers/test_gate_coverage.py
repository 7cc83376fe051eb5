"""coverage gate conformance."""
from __future__ import annotations

from docassay.verifiers.gates import coverage
from docassay.verifiers.verify import verify
from tests.verifiers.conftest import ctx


def test_full_pass(good) -> None:
    r = coverage.check(ctx(good))
    assert r.passed and r.details["required_found"] == 4


def test_fails_for_a_missing_required_field(good) -> None:
    del good["seller_name"]
    r = coverage.check(ctx(good))
    assert not r.passed and [v.field for v in r.violations] == ["seller_name"]
    assert r.violations[0].rule == "required"


def test_fails_for_exactly_its_reason_the_optional_share(good) -> None:
    del good["buyer_name"], good["tax_total"]
    assert verify(ctx(good)).passed                                # default share 0
    v = verify(ctx(good, optional_share=0.75))                     # 2 of 4 optional found
    assert v.failed_gates == ["coverage"]
    r = v.gates["coverage"]
    assert r.violations[0].rule == "optional_share"
    assert "buyer_name" in r.violations[0].field and r.violations[0].actual == 0.5


def test_malformed_input(good) -> None:
    r = coverage.check(ctx("a string"))
    assert not r.passed and r.violations[0].rule == "malformed"
    assert verify(ctx(None)).passed is False


def test_deterministic(good) -> None:
    del good["issue_date"]
    assert verify(ctx(good)).to_json() == verify(ctx(good)).to_json()
