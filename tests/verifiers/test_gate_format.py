"""format gate conformance: full pass, fails for its reason (every error with its path),
malformed input, determinism."""
from __future__ import annotations

from docassay.verifiers.context import VerifyContext
from docassay.verifiers.gates import format as format_gate
from docassay.verifiers.verify import verify
from tests.verifiers.conftest import ctx


def test_full_pass(good) -> None:
    r = format_gate.check(ctx(good))
    assert r.passed and not r.violations


def test_fails_for_exactly_its_reason_with_every_path(good) -> None:
    good["issue_date"] = "05.03.2024"
    good["buyer_name"] = ""
    good["line_items"][1]["description"] = 40
    v = verify(ctx(good))
    assert v.failed_gates == ["format"]
    paths = {x.field for x in v.gates["format"].violations}
    assert paths == {"issue_date", "buyer_name", "line_items/1/description"}
    assert all(x.message for x in v.gates["format"].violations)


def test_malformed_record_and_schema_fail_clearly(good) -> None:
    r = format_gate.check(ctx(["not", "an", "object"]))
    assert not r.passed and "object" in r.violations[0].message
    bad_schema = VerifyContext(schema={"type": "object", "properties": {"a": {"type": "nonsense"}}}, record={})
    r = format_gate.check(bad_schema)
    assert not r.passed and r.violations[0].rule == "schema" and "JSON Schema" in r.violations[0].message


def test_deterministic(good) -> None:
    good["gross_total"] = "x"
    a, b = verify(ctx(good)).to_json(), verify(ctx(good)).to_json()
    assert a == b
