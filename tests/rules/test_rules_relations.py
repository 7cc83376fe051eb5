"""Mapping a JSON Schema to relations and a record to bound parameters (no database needed)."""
from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from docassay.rules import Column, SchemaMappingError, relation_schema
from docassay.rules.relations import bind_record, wrap_rule

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "$defs": {"Item": {"type": "object", "properties": {
        "sku": {"type": "string"}, "qty": {"type": "integer"}, "price": {"type": "number"},
        "meta": {"type": "object"}}}},
    "properties": {
        "number": {"type": "string"},
        "issued": {"type": "string", "format": "date"},
        "amount": {"type": ["number", "null"]},
        "count": {"type": "integer"},
        "paid": {"type": "boolean"},
        "kind": {"enum": ["invoice", "credit_note"]},
        "address": {"type": "object", "properties": {"city": {"type": "string"}}},
        "tags": {"type": "array", "items": {"type": "string"}},
        "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
    },
}


def test_scalar_fields_become_typed_doc_columns_and_arrays_relations() -> None:
    rs = relation_schema(SCHEMA)
    assert rs.doc.columns == (Column("number", "text"), Column("issued", "date"), Column("amount", "numeric"),
                              Column("count", "bigint"), Column("paid", "boolean"), Column("kind", "text"))
    (items,) = rs.arrays
    assert items.name == "items"
    assert items.columns == (Column("idx", "bigint"), Column("sku", "text"), Column("qty", "bigint"),
                             Column("price", "numeric"))
    assert set(rs.skipped) == {"address", "tags", "items[].meta"}


def test_invoice_example_schema_maps_as_the_contract_says() -> None:
    rs = relation_schema(json.loads((EXAMPLES / "invoices" / "schema.json").read_text()))
    types = {c.name: c.sql_type for c in rs.doc.columns}
    assert types["issue_date"] == types["due_date"] == "date"
    assert types["gross_total"] == "numeric" and types["currency"] == "text"
    assert [c.name for c in rs.relation("line_items").columns] == [  # type: ignore[union-attr]
        "idx", "description", "quantity", "unit_price", "line_total"]


@pytest.mark.parametrize("schema, fragment", [
    ({"type": "object", "properties": {"bad-name": {"type": "string"}}}, "bad-name"),
    ({"type": "object", "properties": {"x; DROP TABLE y": {"type": "string"}}}, "DROP"),
    ({"type": "object", "properties": {"1st": {"type": "string"}}}, "1st"),
    ({"type": "object", "properties": {"doc": {"type": "array", "items": {
        "type": "object", "properties": {"a": {"type": "string"}}}}}}, "may not be called 'doc'"),
    ({"type": "object", "properties": {"rows": {"type": "array", "items": {
        "type": "object", "properties": {"idx": {"type": "integer"}}}}}}, "reserved"),
    ({"type": "object", "properties": {"rows": {"type": "array", "items": {
        "type": "object", "properties": {"a b": {"type": "integer"}}}}}}, "rows[].a b"),
    ({"type": "array"}, "object"),
])
def test_unmappable_schemas_are_refused(schema: dict[str, Any], fragment: str) -> None:
    with pytest.raises(SchemaMappingError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        relation_schema(schema)


def _bind(record: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    bound = bind_record(relation_schema(SCHEMA), record)
    doc_names = [c.name for c in relation_schema(SCHEMA).doc.columns]
    return dict(zip(doc_names, bound.params)), {c.path: c.reason for c in bound.coercions}


def test_fitting_values_bind_as_their_python_types() -> None:
    values, notes = _bind({"number": "A-1", "issued": "2020-02-29", "amount": 0.1, "count": 3.0,
                           "paid": True, "kind": "invoice"})
    assert values == {"number": "A-1", "issued": dt.date(2020, 2, 29), "amount": Decimal("0.1"), "count": 3,
                      "paid": True, "kind": "invoice"}
    assert notes == {}


@pytest.mark.parametrize("field, value, reason", [
    ("issued", "31.02.2020", "not a date written YYYY-MM-DD"),
    ("issued", "2020-02-30", "not a calendar date"),
    ("issued", 20200101, "not a date written YYYY-MM-DD"),
    ("amount", "12,50 EUR", "expected a number, got a string"),
    ("amount", True, "expected a number, got a boolean"),
    ("amount", float("nan"), "not a finite number"),
    ("count", 2.5, "not an integer"),
    ("count", 2 ** 70, "out of range for bigint"),
    ("paid", "yes", "expected true or false"),
    ("number", 42, "expected a string, got an integer"),
])
def test_values_that_do_not_fit_bind_as_null_and_are_reported(field: str, value: Any, reason: str) -> None:
    values, notes = _bind({field: value})
    assert values[field] is None
    assert reason in notes[field] and notes[field].endswith("bound as NULL")


def test_text_is_made_storable() -> None:
    values, notes = _bind({"number": "a\x00b", "kind": "x\ud800y"})
    assert values["number"] == "ab" and "NUL" in notes["number"]
    assert values["kind"] == "x\ufffdy" and "surrogate" in notes["kind"]


def test_array_rows_carry_their_position_and_bad_items_are_reported() -> None:
    rs = relation_schema(SCHEMA)
    bound = bind_record(rs, {"items": [{"sku": "a", "qty": 1}, "junk", {"price": "free"}]})
    n_doc = len(rs.doc.columns)
    rows = [bound.params[n_doc + 4 * k: n_doc + 4 * (k + 1)] for k in range(3)]
    assert rows == [(0, "a", 1, None), (1, None, None, None), (2, None, None, None)]
    notes = {c.path: c.reason for c in bound.coercions}
    assert "expected an object" in notes["items[1]"] and "expected a number" in notes["items[2].price"]
    assert "expected an array" in {c.path: c.reason for c in bind_record(rs, {"items": {"a": 1}}).coercions}["items"]


def test_values_never_reach_the_sql_text() -> None:
    hostile = "'; DROP TABLE documents; --"
    rs = relation_schema(SCHEMA)
    bound = bind_record(rs, {"number": hostile, "items": [{"sku": hostile}]})
    query = wrap_rule(bound, "SELECT number FROM doc").as_string(None)
    assert hostile not in query and "DROP" not in query
    assert query.count("%s") == len(bound.params)
    assert 'WITH "doc"("number", "issued"' in query and '"items"("idx", "sku", "qty", "price") AS (VALUES' in query


def test_empty_array_is_a_typed_relation_without_rows() -> None:
    bound = bind_record(relation_schema(SCHEMA), {"items": []})
    query = wrap_rule(bound, "SELECT 1").as_string(None)
    assert ('"items"("idx", "sku", "qty", "price") AS (SELECT NULL::bigint, NULL::text, NULL::bigint, '
            'NULL::numeric WHERE false)') in query
