"""lifecycle gate conformance: the pending_review policy and archived formats."""
from __future__ import annotations

import pytest

from docassay.verifiers.gates import lifecycle
from docassay.verifiers.verify import verify
from tests.verifiers.conftest import ctx


@pytest.mark.parametrize("status", [None, "active", "pending_review"])
def test_full_pass(good, status) -> None:
    assert lifecycle.check(ctx(good, format_status=status)).passed


def test_fails_for_exactly_its_reason_pending_not_allowed(good) -> None:
    v = verify(ctx(good, format_status="pending_review", pending_may_pass=False))
    assert v.failed_gates == ["lifecycle"] and not v.passed
    assert v.gates["lifecycle"].violations[0].rule == "format_pending_review"
    assert v.failing_fields == [] and not v.repairable


def test_archived_never_passes(good) -> None:
    assert not lifecycle.check(ctx(good, format_status="archived")).passed


def test_malformed_input_and_determinism() -> None:
    a = verify(ctx(None, format_status="pending_review", pending_may_pass=False)).to_json()
    assert a == verify(ctx(None, format_status="pending_review", pending_may_pass=False)).to_json()
    assert a["passed"] is False
