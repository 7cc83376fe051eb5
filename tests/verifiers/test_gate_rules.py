"""rules gate conformance on a real PostgreSQL: errors gate, warnings are reported."""
from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from docassay.rules.loader import load_rules
from docassay.verifiers.gates import rules as rules_gate
from docassay.verifiers.verify import verify
from tests.verifiers.conftest import ctx

PACK = """
-- rule: gross_equals_net_plus_tax
-- severity: error
-- fields: gross_total, net_total, tax_total
-- message: gross total must equal net total plus tax total
SELECT gross_total AS actual, net_total + tax_total AS expected FROM doc
WHERE abs(gross_total - (net_total + tax_total)) > 0.02;

-- rule: big_invoice
-- severity: warning
-- fields: gross_total
-- message: a large invoice
SELECT gross_total AS actual FROM doc WHERE gross_total > 100;
"""


@pytest.fixture
def conn(pg_fresh_dsn: str):
    with psycopg.connect(pg_fresh_dsn, autocommit=True) as c:
        yield c


@pytest.fixture
def pack(tmp_path: Path) -> list:
    p = tmp_path / "rules.sql"
    p.write_text(PACK)
    return load_rules(p)


def test_full_pass_with_a_warning_reported(good, conn, pack) -> None:
    r = rules_gate.check(ctx(good, rules=pack, conn=conn))
    assert r.passed and r.details["warnings"] == 1
    assert [v.severity for v in r.violations] == ["warning"]


def test_fails_for_exactly_its_reason(good, conn, pack) -> None:
    good["tax_total"] = 91.0                                # 100 + 91 != 119
    v = verify(ctx(good, rules=pack, conn=conn))
    assert v.failed_gates == ["rules"]
    err = [x for x in v.gates["rules"].violations if x.severity == "error"]
    assert err[0].rule == "gross_equals_net_plus_tax" and err[0].expected == 191.0 and err[0].actual == 119.0
    assert set(v.failing_fields) == {"gross_total", "net_total", "tax_total"}
    assert v.components["gross_total"] < 1.0                # the score compares actual with the rule's expected


def test_malformed_input(good, conn, pack) -> None:
    assert not rules_gate.check(ctx("x", rules=pack, conn=conn)).passed
    r = rules_gate.check(ctx(good, rules=pack, conn=None))
    assert not r.passed and r.violations[0].rule == "database"


def test_deterministic(good, conn, pack) -> None:
    good["tax_total"] = 91.0
    assert verify(ctx(good, rules=pack, conn=conn)).to_json() == verify(ctx(good, rules=pack, conn=conn)).to_json()
