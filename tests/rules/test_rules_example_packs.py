"""The example schemas and rule packs: valid schemas, and rules that let correct real documents through.

Reads the development ground truth from /work/shared/data (skipped when absent). A correct record
must never violate an error-severity rule: if one does, the rule or its tolerance is wrong.
"""
from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any, Iterator

import jsonschema
import psycopg
import pytest

from docassay.rules import load_rules, relation_schema, run_rules

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DATA = Path(os.environ.get("DOCASSAY_DEV_DATA", "/work/shared/data"))
SETS = ("invoices", "receipts")


def _schema(kind: str) -> dict[str, Any]:
    return json.loads((EXAMPLES / kind / "schema.json").read_text())


def _ground_truth(kind: str) -> list[tuple[str, dict[str, Any]]]:
    folder = DATA / kind
    if not folder.is_dir():
        pytest.skip(f"no development data at {folder}")
    files = sorted(p for p in folder.glob("*.json") if not p.name.endswith(".ocr.json"))
    return [(p.stem, json.loads(p.read_text())) for p in files]


@pytest.fixture(scope="module")
def conn(pg_dsn: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        yield c


@pytest.mark.parametrize("kind", SETS)
def test_schemas_are_valid_and_describe_every_field(kind: str) -> None:
    schema = _schema(kind)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    fields = dict(schema["properties"])
    for item_name, item in list(fields.items()):
        if item.get("type") == "array":
            fields.update({f"{item_name}[].{k}": v for k, v in item["items"]["properties"].items()})
    for name, sub in fields.items():
        assert len(sub.get("description", "")) > 20, f"{kind}: {name} needs a description"


def test_schema_fields_and_required_as_the_data_readme_says() -> None:
    inv, rec = _schema("invoices"), _schema("receipts")
    assert list(inv["properties"]) == ["invoice_number", "issue_date", "due_date", "seller_name", "seller_vat_id",
                                       "buyer_name", "currency", "net_total", "tax_total", "gross_total", "line_items"]
    assert set(inv["required"]) == {"invoice_number", "issue_date", "seller_name", "gross_total", "currency"}
    assert list(inv["properties"]["line_items"]["items"]["properties"]) == [
        "description", "quantity", "unit_price", "line_total"]
    assert list(rec["properties"]) == ["company", "date", "address", "total"]
    assert set(rec["required"]) == {"company", "date", "total"}


@pytest.mark.parametrize("kind", SETS)
def test_ground_truth_fits_the_schema_apart_from_unannotated_keys(kind: str) -> None:
    schema = _schema(kind)
    schema.pop("required")               # ground truth leaves out what was not annotated
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    bad = {doc: [e.message for e in validator.iter_errors(rec)] for doc, rec in _ground_truth(kind)}
    assert {doc: errs for doc, errs in bad.items() if errs} == {}


@pytest.mark.parametrize("kind", SETS)
def test_correct_real_documents_pass_every_error_rule(conn: psycopg.Connection, kind: str) -> None:
    rs = relation_schema(_schema(kind))
    rules = load_rules(EXAMPLES / kind / "rules")
    blocked: dict[str, list[str]] = {}
    for doc, record in _ground_truth(kind):
        for r in run_rules(conn, rs, record, rules, timeout_ms=5000):
            assert r.error is None, f"{doc}: {r.rule}: {r.error}"
            assert r.coercions == (), f"{doc}: {r.coercions}"
            if r.blocking:
                blocked.setdefault(doc, []).append(f"{r.rule}: {[v.values for v in r.violations]}")
    assert blocked == {}


# A made-up, internally consistent invoice; each mistake below must trip its rule.
INVOICE: dict[str, Any] = {
    "invoice_number": "2024-0042", "issue_date": "2024-05-02", "due_date": "2024-06-01",
    "seller_name": "Example Supplies Ltd", "currency": "EUR",
    "net_total": 250.00, "tax_total": 47.50, "gross_total": 297.50,
    "line_items": [
        {"description": "Paper", "quantity": 10, "unit_price": 5.00, "line_total": 50.00},
        {"description": "Toner", "quantity": 2, "unit_price": 100.00, "line_total": 200.00},
    ],
}


def _failed(conn: psycopg.Connection, record: dict[str, Any]) -> dict[str, str]:
    rules = load_rules(EXAMPLES / "invoices" / "rules")
    results = run_rules(conn, _schema("invoices"), record, rules, timeout_ms=5000)
    assert all(r.error is None for r in results)
    return {r.rule: r.severity for r in results if not r.passed}


def _mutated(**changes: Any) -> dict[str, Any]:
    rec = copy.deepcopy(INVOICE)
    for key, value in changes.items():
        if value is None:
            rec.pop(key)
        else:
            rec[key] = value
    return rec


def test_a_consistent_invoice_passes_everything(conn: psycopg.Connection) -> None:
    assert _failed(conn, INVOICE) == {}
    assert _failed(conn, _mutated(gross_total=297.51, tax_total=47.49)) == {}   # cent rounding is fine


@pytest.mark.parametrize("changes, rule, severity", [
    ({"gross_total": 279.50}, "gross_equals_net_plus_tax", "error"),            # transposed digits
    ({"line_items": INVOICE["line_items"][1:]}, "line_items_sum_to_net_total", "error"),   # a missed line
    ({"line_items": INVOICE["line_items"] + INVOICE["line_items"][1:]}, "line_items_sum_to_net_total", "error"),
    ({"net_total": 245.00, "tax_total": 52.50}, "line_items_reconcile_with_net_total", "warning"),  # allowance
    ({"line_items": [{**INVOICE["line_items"][0], "line_total": 55.0}, INVOICE["line_items"][1]],
      "net_total": 255.0, "gross_total": 302.5}, "line_total_is_quantity_times_unit_price", "warning"),
    ({"due_date": "2024-04-01"}, "due_date_not_before_issue_date", "warning"),
    ({"issue_date": "1924-05-02"}, "issue_date_plausible", "warning"),
    ({"issue_date": "2999-05-02", "due_date": None}, "issue_date_plausible", "warning"),
    ({"tax_total": 147.50, "gross_total": 397.50}, "tax_rate_plausible", "warning"),
])
def test_each_rule_catches_its_mistake(conn: psycopg.Connection, changes: dict[str, Any],
                                       rule: str, severity: str) -> None:
    assert _failed(conn, _mutated(**changes)).get(rule) == severity


def test_a_credit_note_only_warns(conn: psycopg.Connection) -> None:
    credit = _mutated(net_total=-250.0, tax_total=-47.5, gross_total=-297.5,
                      line_items=[{**i, "quantity": -i["quantity"], "line_total": -i["line_total"]}
                                  for i in INVOICE["line_items"]])
    assert _failed(conn, credit) == {"negative_totals": "warning"}


def test_receipt_rules_warn_only(conn: psycopg.Connection) -> None:
    rules = load_rules(EXAMPLES / "receipts" / "rules")
    refund = {"company": "Shop", "date": "2018-01-01", "total": -1.73}
    results = run_rules(conn, _schema("receipts"), refund, rules, timeout_ms=5000)
    assert {r.rule for r in results if not r.passed} == {"total_positive"}
    assert not any(r.blocking for r in results)
