"""Running rules in real PostgreSQL: results, relations, hostile data, read-only, timeouts."""
from __future__ import annotations

import json
import time
from typing import Any, Iterator

import psycopg
import pytest

from docassay.rules import Rule, parse_rules, run_rules

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "invoice_number": {"type": "string"},
        "issue_date": {"type": "string", "format": "date"},
        "due_date": {"type": "string", "format": "date"},
        "net_total": {"type": "number"},
        "tax_total": {"type": "number"},
        "gross_total": {"type": "number"},
        "pages": {"type": "integer"},
        "paid": {"type": "boolean"},
        "line_items": {"type": "array", "items": {"type": "object", "properties": {
            "description": {"type": "string"}, "quantity": {"type": "number"}, "line_total": {"type": "number"}}}},
    },
}
RECORD: dict[str, Any] = {
    "invoice_number": "INV-1", "issue_date": "2024-03-01", "due_date": "2024-03-31",
    "net_total": 100.0, "tax_total": 19.0, "gross_total": 119.0, "pages": 1, "paid": False,
    "line_items": [{"description": "a", "quantity": 2, "line_total": 60.0},
                   {"description": "b", "quantity": 1, "line_total": 40.0}],
}
GROSS = """-- rule: gross
-- fields: gross_total, net_total, tax_total
-- message: gross must be net plus tax
SELECT gross_total, net_total + tax_total AS expected FROM doc
WHERE abs(gross_total - (net_total + tax_total)) > 0.02;
"""


@pytest.fixture
def conn(pg_dsn: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        yield c


def run(conn: psycopg.Connection, text: str, record: dict[str, Any] | None = None, *,
        schema: dict[str, Any] | None = None, timeout_ms: int = 2000, **kw: Any) -> list[Any]:
    return run_rules(conn, schema or SCHEMA, RECORD if record is None else record,
                     parse_rules(text, source_file="t.sql"), timeout_ms=timeout_ms, **kw)


def test_a_rule_passes_when_it_returns_no_rows(conn: psycopg.Connection) -> None:
    (r,) = run(conn, GROSS)
    assert r.passed and r.error is None and r.violations == () and not r.blocking


def test_each_returned_row_is_a_violation_with_its_columns(conn: psycopg.Connection) -> None:
    (r,) = run(conn, GROSS, {**RECORD, "gross_total": 120.5})
    assert not r.passed and r.blocking
    (v,) = r.violations
    assert v.values == {"gross_total": 120.5, "expected": 119, "actual": 120.5}
    assert (v.field, v.message, v.expected, v.actual) == (
        "gross_total, net_total, tax_total", "gross must be net plus tax", 119, 120.5)
    row = v.as_row()
    assert row["rule"] == "gross" and row["severity"] == "error"
    json.dumps(row)


def test_columns_typed_as_the_schema_says(conn: psycopg.Connection) -> None:
    (r,) = run(conn, """SELECT pg_typeof(invoice_number)::text AS a, pg_typeof(issue_date)::text AS b,
        pg_typeof(net_total)::text AS c, pg_typeof(pages)::text AS d, pg_typeof(paid)::text AS e,
        due_date - issue_date AS days FROM doc""")
    assert r.violations[0].values == {"a": "text", "b": "date", "c": "numeric", "d": "bigint", "e": "boolean",
                                      "days": 30}


def test_array_relations_carry_idx_and_row_fields_override(conn: psycopg.Connection) -> None:
    text = """-- rule: qty
-- severity: warning
-- fields: line_items.quantity
SELECT idx, 'line_items[' || idx || '].quantity' AS field, quantity AS actual, description,
       'line ' || idx || ' orders more than one' AS message
FROM line_items WHERE quantity > 1 ORDER BY idx"""
    (r,) = run(conn, text, {**RECORD, "line_items": RECORD["line_items"] + [{"description": "c", "quantity": 5}]})
    assert not r.passed and not r.blocking                      # a warning never blocks
    assert [(v.values["idx"], v.field, v.actual, v.message) for v in r.violations] == [
        (0, "line_items[0].quantity", 2, "line 0 orders more than one"),
        (2, "line_items[2].quantity", 5, "line 2 orders more than one")]


def test_empty_and_missing_arrays_are_typed_relations_without_rows(conn: psycopg.Connection) -> None:
    text = """SELECT n FROM (SELECT count(*) AS n, sum(quantity) + 1 AS q, max(description) || 'x' AS d,
        max(idx) + 1 AS i FROM line_items) s WHERE n <> 0 OR q IS NOT NULL OR d IS NOT NULL OR i IS NOT NULL"""
    for record in ({**RECORD, "line_items": []}, {"invoice_number": "x"}):
        (r,) = run(conn, text, record)
        assert r.passed and r.error is None


def test_missing_values_are_null(conn: psycopg.Connection) -> None:
    (r,) = run(conn, "SELECT 'no due date' AS why FROM doc WHERE due_date IS NULL AND paid IS NULL",
               {"invoice_number": "x"})
    assert len(r.violations) == 1 and r.coercions == ()


def test_values_that_do_not_fit_are_null_and_reported(conn: psycopg.Connection) -> None:
    record = {**RECORD, "issue_date": "31.02.2020", "net_total": "12,50 EUR"}
    (r,) = run(conn, "SELECT issue_date, net_total FROM doc WHERE issue_date IS NULL AND net_total IS NULL", record)
    assert r.error is None and len(r.violations) == 1
    assert {c.path for c in r.coercions} == {"issue_date", "net_total"}


@pytest.mark.parametrize("hostile", [
    "'; DROP TABLE rules_sentinel; --",
    "Robert'); DELETE FROM rules_sentinel WHERE ('1'='1",
    "%s %(x)s {} {0} $1 $$ \\' \\\\",
    "Ünïcödé ‮gnp.exe ☃ 💶 e\u0301 中文",
])
def test_hostile_strings_stay_data(pg_fresh_dsn: str, hostile: str) -> None:
    with psycopg.connect(pg_fresh_dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE rules_sentinel (x int)")
        conn.execute("INSERT INTO rules_sentinel VALUES (1)")
        record = {**RECORD, "invoice_number": hostile,
                  "line_items": [{"description": hostile, "quantity": 1, "line_total": 1}]}
        (r,) = run(conn, "SELECT d.invoice_number, l.description FROM doc d CROSS JOIN line_items l", record)
        assert r.error is None and r.violations[0].values == {"invoice_number": hostile, "description": hostile}
        assert conn.execute("SELECT count(*) FROM rules_sentinel").fetchone() == (1,)


def test_nul_bytes_are_stripped_and_reported(conn: psycopg.Connection) -> None:
    (r,) = run(conn, "SELECT invoice_number FROM doc", {**RECORD, "invoice_number": "INV\x00-1\x00"})
    assert r.violations[0].values["invoice_number"] == "INV-1"
    assert [c.path for c in r.coercions] == ["invoice_number"] and "NUL" in r.coercions[0].reason


def test_percent_signs_and_own_with_clauses_in_rules(conn: psycopg.Connection) -> None:
    text = """-- rule: pct
SELECT invoice_number FROM doc WHERE invoice_number LIKE 'INV%' AND pages % 2 = 1
-- rule: own_with
WITH big AS (SELECT * FROM line_items WHERE line_total > 50) SELECT description FROM big"""
    pct, own = run(conn, text)
    assert [v.values for v in pct.violations] == [{"invoice_number": "INV-1"}]
    assert [v.values for v in own.violations] == [{"description": "a"}]


def test_failing_rules_become_results_and_the_batch_goes_on(conn: psycopg.Connection) -> None:
    text = """-- rule: syntax
SELECT FROM WHERE doc
-- rule: types
SELECT invoice_number::int FROM doc
-- rule: unknown
SELECT nope FROM doc
-- rule: divide
SELECT 1 / (pages - 1) FROM doc
-- rule: fine
SELECT 1 AS one FROM doc"""
    results = run(conn, text)
    assert [r.rule for r in results] == ["syntax", "types", "unknown", "divide", "fine"]
    for r in results[:4]:
        assert not r.passed and r.error and "SQLSTATE" in r.error and r.blocking
    assert "nope" in results[2].error  # type: ignore[operator]
    assert results[4].error is None and results[4].violations[0].values == {"one": 1}
    assert conn.execute("SELECT 1").fetchone() == (1,)


def test_statement_timeout_stops_a_slow_rule(conn: psycopg.Connection) -> None:
    t0 = time.perf_counter()
    slow, after = run(conn, "-- rule: slow\nSELECT pg_sleep(5) FROM doc\n-- rule: after\nSELECT 1 FROM doc",
                      timeout_ms=150)
    assert time.perf_counter() - t0 < 3
    assert slow.error is not None and slow.error.startswith("timeout") and not slow.passed
    assert after.error is None and len(after.violations) == 1
    assert conn.execute("SHOW statement_timeout").fetchone() == ("0",)   # SET LOCAL did not leak


def test_writes_are_refused_by_the_loader_and_by_the_read_only_transaction(pg_fresh_dsn: str) -> None:
    with psycopg.connect(pg_fresh_dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE target (x text)")
        conn.execute("CREATE FUNCTION sneaky() RETURNS int LANGUAGE sql AS "
                     "$$ INSERT INTO public.target VALUES ('written') RETURNING 1 $$")
        # a Rule built in code skips the loader; the runner checks it anyway
        direct = Rule("direct", "error", (), "m", "INSERT INTO target VALUES ('x')", "<code>", 1)
        # a write hidden in a function passes every text check; READ ONLY stops it
        (hidden,) = parse_rules("-- rule: hidden\nSELECT public.sneaky() FROM doc")   # search_path is pg_catalog only
        d, h = run_rules(conn, SCHEMA, RECORD, [direct, hidden], timeout_ms=2000)
        assert d.error is not None and d.error.startswith("invalid rule") and "SELECT or WITH" in d.error
        assert h.error is not None and "tried to write" in h.error and "read-only" in h.error
        assert conn.execute("SELECT count(*) FROM target").fetchone() == (0,)


def test_rules_see_their_relations_and_cannot_keep_anything(conn: psycopg.Connection) -> None:
    text = "SELECT current_setting('transaction_read_only') AS ro FROM doc"
    (r,) = run(conn, text)
    assert r.violations[0].values == {"ro": "on"}
    assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE


def test_violations_are_capped(conn: psycopg.Connection) -> None:
    (r,) = run(conn, "SELECT g FROM generate_series(1, 50) AS g", max_violations=10)
    assert len(r.violations) == 10 and r.truncated and not r.passed


def test_values_come_back_json_ready(conn: psycopg.Connection) -> None:
    (r,) = run(conn, """SELECT issue_date, now() - now() AS gap, '\\x00ff'::bytea AS raw,
        gen_random_uuid() IS NOT NULL AS has_uuid, ARRAY[net_total, tax_total] AS pair,
        jsonb_build_object('k', gross_total) AS obj, 'NaN'::numeric AS nan, 1e20::numeric AS big FROM doc""")
    values = r.violations[0].values
    assert values["issue_date"] == "2024-03-01" and values["gap"] == 0 and values["raw"] == "00ff"
    assert values["pair"] == [100, 19] and values["obj"] == {"k": 119} and values["nan"] == "NaN"
    json.dumps(values, allow_nan=False)


def test_upper_case_fields_are_quoted_names(conn: psycopg.Connection) -> None:
    schema = {"type": "object", "properties": {"InvoiceNo": {"type": "string"}}}
    (r,) = run(conn, 'SELECT "InvoiceNo" FROM doc', {"InvoiceNo": "X1"}, schema=schema)
    assert r.violations[0].values == {"InvoiceNo": "X1"}


def test_a_connection_inside_a_transaction_is_refused(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as c:      # not autocommit: the SELECT opens a transaction
        c.execute("SELECT 1")
        with pytest.raises(psycopg.ProgrammingError, match="not inside a transaction"):
            run(c, GROSS)
