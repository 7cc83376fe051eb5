"""Issue 15: a rule pack runs as one statement per record (`rules.runner._run_together`); its
results must be exactly what running each rule on its own gives: violations, their values (numbers,
dates, repeated column names), truncation, and a failing rule that falls back to rule by rule."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import psycopg
import pytest

from docassay.rules import parse_rules, relation_schema, run_rules, runner

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SCHEMA = json.loads((EXAMPLES / "invoices/schema.json").read_text())
PACK = """
-- rule: totals
-- fields: gross_total
SELECT gross_total AS actual, net_total + tax_total AS expected FROM doc
WHERE abs(gross_total - (net_total + tax_total)) > 0.02;
-- rule: items
-- severity: warning
-- fields: line_items
SELECT idx, line_total, quantity * unit_price AS expected, 'line_items[' || idx || '].line_total' AS field
FROM line_items WHERE abs(line_total - quantity * unit_price) > 0.01 ORDER BY idx;
-- rule: twice
SELECT issue_date, issue_date, 100.50 AS amount, 7 AS n, true AS flag FROM doc WHERE issue_date IS NOT NULL;
-- rule: percent
SELECT invoice_number FROM doc WHERE invoice_number LIKE '%X%';
"""
RECORD = {"invoice_number": "AX-1", "issue_date": "2024-03-01", "gross_total": 130.0, "net_total": 100.0,
          "tax_total": 19.0, "line_items": [{"description": f"item {i}", "quantity": 2, "unit_price": 5.0,
                                             "line_total": 10.0 + (i % 2)} for i in range(7)]}


@pytest.fixture(scope="module")
def conn(pg_dsn: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        yield c


def _one_by_one(conn, rules, **kw):
    """Each rule on its own, in the same sandbox `run_rules` uses (rules.sandbox)."""
    from docassay.rules.sandbox import SandboxLimits, ensure_sandbox, enter_statements
    enter = enter_statements(SandboxLimits(), timeout_ms=2000, superuser=ensure_sandbox(conn))
    return [runner._run_one(conn, runner.bind_record(relation_schema(SCHEMA), RECORD), r, enter, 2000,
                            kw.get("max_v", 100)) for r in rules]


def _strip(results):
    return [(r.rule, r.passed, r.error, r.truncated, [(v.field, v.message, v.values) for v in r.violations])
            for r in results]


@pytest.mark.parametrize("max_v", [100, 2])
def test_together_equals_one_by_one(conn: psycopg.Connection, max_v: int) -> None:
    rules = parse_rules(PACK)
    together = run_rules(conn, SCHEMA, RECORD, rules, timeout_ms=2000, max_violations=max_v)
    assert _strip(together) == _strip(_one_by_one(conn, rules, max_v=max_v))
    by_name = {r.rule: r for r in together}
    assert not by_name["totals"].passed and by_name["totals"].violations[0].values == {"actual": 130, "expected": 119}
    assert set(by_name["twice"].violations[0].values) == {"issue_date", "issue_date_2", "amount", "n", "flag"}
    assert by_name["items"].truncated == (max_v == 2)


def test_a_failing_rule_falls_back_to_one_by_one(conn: psycopg.Connection) -> None:
    rules = parse_rules(PACK + "\n-- rule: broken\nSELECT 1 / 0 AS boom FROM doc;\n")
    results = {r.rule: r for r in run_rules(conn, SCHEMA, RECORD, rules, timeout_ms=2000)}
    assert results["broken"].error and "division by zero" in results["broken"].error
    assert results["totals"].error is None and not results["totals"].passed
    assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
