"""Rule packs: headers, one read-only statement per rule, clear errors with file and line."""
from __future__ import annotations

from pathlib import Path

import pytest

from docassay.rules import Rule, RuleError, check_statement, load_rules, parse_rules

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

CONTRACT_EXAMPLE = """\
-- rule: gross_equals_net_plus_tax
-- severity: error            (error | warning)
-- fields: gross_total, net_total, tax_total
-- message: gross total must equal net total plus tax
SELECT gross_total, net_total + tax_total AS expected
FROM doc
WHERE abs(gross_total - (net_total + tax_total)) > 0.01;
"""


def test_the_contract_example_parses() -> None:
    (rule,) = parse_rules(CONTRACT_EXAMPLE, source_file="totals.sql")
    assert rule == Rule(
        name="gross_equals_net_plus_tax", severity="error", fields=("gross_total", "net_total", "tax_total"),
        message="gross total must equal net total plus tax",
        sql="SELECT gross_total, net_total + tax_total AS expected\nFROM doc\n"
            "WHERE abs(gross_total - (net_total + tax_total)) > 0.01",
        source_file="totals.sql", line=1)


def test_several_rules_per_file_with_their_lines() -> None:
    text = """-- Pack comment: free text, and a file header.
-- author: someone

-- rule: a
-- severity: warning
SELECT 1 FROM doc WHERE false;

-- rule: b
-- A note that is not a header line.
SELECT ';' AS semi, $$ ; $$ AS dollar, 'it''s' AS q -- trailing; comment
FROM doc /* ; */ WHERE false
-- rule: c
WITH x AS (SELECT 1 AS one) SELECT one FROM x WHERE one = 2
"""
    rules = parse_rules(text, source_file="p.sql")
    assert [(r.name, r.severity, r.line) for r in rules] == [("a", "warning", 4), ("b", "error", 8), ("c", "error", 12)]
    assert rules[1].sql.endswith("WHERE false")
    assert rules[0].message == "rule a is violated" and rules[0].fields == ()


def test_a_statement_before_any_rule_header_is_named_after_the_file() -> None:
    (rule,) = parse_rules("-- severity: warning\nSELECT 1 FROM doc WHERE false", source_file="/x/checks.sql")
    assert (rule.name, rule.severity, rule.line) == ("checks", "warning", 2)


@pytest.mark.parametrize("sql, fragment, line", [
    ("SELECT 1;\nSELECT 2;", "only one statement", 2),
    ("SELECT 1; DROP TABLE documents", "only one statement", 1),
    ("INSERT INTO doc VALUES (1)", "SELECT or WITH", 1),
    ("UPDATE documents SET status = 'x'", "SELECT or WITH", 1),
    ("DELETE FROM documents", "SELECT or WITH", 1),
    ("CREATE TABLE x (a int)", "SELECT or WITH", 1),
    ("COPY documents TO '/tmp/x'", "SELECT or WITH", 1),
    ("SET statement_timeout = 0", "SELECT or WITH", 1),
    ("VALUES (1)", "SELECT or WITH", 1),
    ("WITH gone AS (DELETE FROM documents RETURNING 1)\nSELECT * FROM gone", "DELETE is not allowed", 1),
    ("WITH x AS (SELECT 1)\n  SELECT * FROM x;\n  UPDATE documents SET status = 'x'", "only one statement", 3),
    ("SELECT *\nINTO stolen FROM doc", "INTO is not allowed", 2),
    ("SELECT * FROM documents FOR UPDATE", "UPDATE is not allowed", 1),
    ("SELECT set_config('statement_timeout', '0', false)", "set_config", 1),
    ("SELECT pg_catalog.\"set_config\"('search_path', 'x', false)", "set_config", 1),
    ("SELECT pg_advisory_lock(1)", "pg_advisory_lock", 1),
    ("SELECT pg_read_file('/etc/passwd')", "pg_read_file", 1),
    ("SELECT lo_import('/etc/passwd')", "lo_import", 1),
    ("SELECT 'open", "unterminated string", 1),
    ("-- only a comment", "empty statement", 1),
])
def test_anything_but_one_read_only_query_is_refused(sql: str, fragment: str, line: int) -> None:
    with pytest.raises(RuleError) as err:
        check_statement(sql, file="r.sql", line=1)
    assert fragment in str(err.value)
    assert err.value.file == "r.sql" and err.value.line == line
    assert str(err.value).startswith(f"r.sql:{line}: ")


@pytest.mark.parametrize("sql", [
    "SELECT \"update\", \"into\" FROM doc",                      # quoted names are names
    "SELECT 'INSERT INTO x; DROP TABLE y' AS text FROM doc",     # so are strings
    "(SELECT 1 FROM doc) UNION (SELECT 2 FROM doc)",
    "select lower(seller_name) from doc where seller_name like '%; drop%'",
    "SELECT updated, insertion_point, copy_count FROM doc",      # words that merely contain keywords
])
def test_read_only_queries_pass(sql: str) -> None:
    assert check_statement(sql + ";") == sql


def test_errors_point_into_the_file(tmp_path: Path) -> None:
    f = tmp_path / "pack.sql"
    f.write_text("-- rule: fine\nSELECT 1 FROM doc WHERE false;\n\n-- rule: bad\n-- severity: warning\n"
                 "SELECT 1\nFROM doc;\nDELETE FROM documents;\n")
    with pytest.raises(RuleError) as err:
        load_rules(f)
    assert (err.value.file, err.value.line, err.value.rule) == (str(f), 8, "bad")


@pytest.mark.parametrize("text, fragment, line", [
    ("-- rule: r\n-- severity: fatal\nSELECT 1", "severity must be error or warning", 2),
    ("-- rule: r\n-- severty: warning\nSELECT 1", "unknown header key 'severty'", 2),
    ("-- rule: r\n-- message: a\n-- message: b\nSELECT 1", "given twice", 3),
    ("-- rule: r\n-- fields: net_total, 1bad\nSELECT 1", "1bad", 2),
    ("-- rule: bad name!\nSELECT 1", "rule name", 1),
    ("-- rule: r\n-- severity: warning\n", "has no SELECT or WITH statement", 1),
    ("-- rule: r\nSELECT 1\n-- rule: r\nSELECT 2", "duplicate rule name", 3),
])
def test_malformed_headers_are_refused(text: str, fragment: str, line: int) -> None:
    with pytest.raises(RuleError) as err:
        parse_rules(text, source_file="h.sql")
    assert fragment in str(err.value) and err.value.line == line


def test_a_folder_loads_sorted_and_rejects_duplicates_across_files(tmp_path: Path) -> None:
    (tmp_path / "b.sql").write_text("-- rule: second\nSELECT 1 FROM doc WHERE false")
    (tmp_path / "a.sql").write_text("-- rule: first\nSELECT 1 FROM doc WHERE false")
    (tmp_path / "notes.txt").write_text("not a rule")
    assert [r.name for r in load_rules(tmp_path)] == ["first", "second"]
    (tmp_path / "c.sql").write_text("\n-- rule: first\nSELECT 2")
    with pytest.raises(RuleError, match="duplicate rule name 'first'") as err:
        load_rules(tmp_path)
    assert err.value.file == str(tmp_path / "c.sql") and err.value.line == 2


def test_missing_or_empty_packs_are_errors(tmp_path: Path) -> None:
    with pytest.raises(RuleError, match="no .sql files"):
        load_rules(tmp_path)
    with pytest.raises(RuleError, match="no such rule file"):
        load_rules(tmp_path / "nope.sql")
    (tmp_path / "bad.sql").write_bytes(b"-- rule: r\nSELECT '\xff'")
    with pytest.raises(RuleError, match="cannot read"):
        load_rules(tmp_path / "bad.sql")


def test_example_packs_load() -> None:
    invoices = load_rules(EXAMPLES / "invoices" / "rules")
    receipts = load_rules(EXAMPLES / "receipts" / "rules")
    assert {r.name for r in invoices if r.severity == "error"} == {
        "gross_equals_net_plus_tax", "line_items_sum_to_net_total", "tax_below_gross_total", "seller_is_not_buyer"}
    assert len(invoices) >= 7 and all(r.fields and r.message for r in invoices + receipts)
    assert {r.severity for r in receipts} == {"warning"}
