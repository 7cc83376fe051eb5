"""What the review station and the report show of a row, without a database: per-field
confidence when the row carries it (the calibrated `fields` block), the verification's
violations when it does not; line-item outlines; typed values read as printed."""
from __future__ import annotations

from docassay.extractors.instructions.language import Locale
from docassay.flows.review_actions import corrections_from, parse_value
from docassay.flows.review_view import doubtful, field_views, item_boxes, reasons, tone_for

SCHEMA = {"type": "object", "required": ["invoice_number", "gross_total"],
          "properties": {"invoice_number": {"type": "string"}, "issue_date": {"type": "string", "format": "date"},
                         "gross_total": {"type": "number"}, "buyer_name": {"type": "string"},
                         "line_items": {"type": "array", "items": {"type": "object"}}}}
ROW = {"record": {"invoice_number": "A-1", "gross_total": 10.0, "line_items": [{"a": 1}, {"a": 2}]},
       "provenance": {"invoice_number": {"page": 1, "bbox": [1, 2, 3, 4], "text": "A-1", "anchor": "Nr. -> right"},
                      "line_items/0/a": {"page": 1, "bbox": [0, 10, 5, 12]}, "line_items/0/b": {"page": 1, "bbox": [6, 9, 9, 12]},
                      "line_items/1/a": {"page": 2, "bbox": [0, 1, 5, 2]}},
       "verification": {"violations": [
           {"gate": "rules", "rule": "gross", "field": "gross_total, net_total", "severity": "error", "message": "m",
            "alternatives": [{"field": "gross_total", "value": 12.0, "text": "12,00"}, {"field": "gross_total", "value": 10.0}]},
           {"gate": "evidence", "rule": "position_only", "field": "buyer_name", "severity": "warning", "message": "w"}]}}


def test_without_confidence_violations_colour_the_fields() -> None:
    views = {v.name: v for v in field_views(ROW, SCHEMA)}
    assert views["invoice_number"].tone == "ok" and views["invoice_number"].anchor == "Nr. -> right"
    assert views["gross_total"].status == "failing" and views["gross_total"].tone == "bad"
    assert [a["value"] for a in views["gross_total"].alternatives] == [12.0]      # not the current value
    assert "issue_date" not in views                                              # optional, absent, unnamed
    assert views["line_items"].is_table and views["line_items"].display == "2 rows"
    assert reasons(ROW) == ["rules/gross"] and doubtful(ROW) == ["buyer_name", "gross_total", "net_total"]


def test_calibrated_confidence_wins_when_present() -> None:
    row = dict(ROW, fields={"invoice_number": {"value": "A-1", "confidence": 0.97, "status": "verified"},
                            "gross_total": {"value": 10.0, "confidence": 0.42, "status": "doubtful",
                                            "checks": [{"check": "sum", "outcome": "fail", "detail": "sum differs"},
                                                       {"check": "label", "outcome": "pass"}]},
                            "issue_date": {"value": None, "confidence": None, "status": "missing"}})
    views = {v.name: v for v in field_views(row, SCHEMA)}
    assert (views["invoice_number"].tone, views["gross_total"].tone, views["issue_date"].tone) == ("ok", "bad", "missing")
    assert views["gross_total"].confidence == 0.42
    assert [m for m in views["gross_total"].messages if m.startswith("check")] == ["check sum: sum differs"]
    assert doubtful(row) == ["gross_total", "issue_date"]
    kept = dict(ROW, verification={**ROW["verification"], "fields": row["fields"], "doubtful": ["gross_total"]})
    assert doubtful(kept) == ["gross_total"] and field_views(kept, SCHEMA)[2].confidence == 0.42
    assert tone_for(0.75, "verified") == "doubt"


def test_line_item_rows_are_outlined_per_page() -> None:
    boxes = [(b.table, b.index, b.page, b.bbox) for b in item_boxes(ROW)]
    assert boxes == [("line_items", 0, 1, [0.0, 9.0, 9.0, 12.0]), ("line_items", 1, 2, [0.0, 1.0, 5.0, 2.0])]


def test_values_read_as_printed() -> None:
    assert parse_value("CHF 15'454.00", None, {"type": "number"}) == 15454.0
    assert parse_value("1.234,56", None, {"type": "number"}, Locale(",", "DMY")) == 1234.56
    assert parse_value("1. November 2019", None, {"type": "string", "format": "date"}) == "2019-11-01"
    assert parse_value("03/04/2020", None, {"type": "string", "format": "date"}, Locale(".", "MDY")) == "2020-03-04"
    assert parse_value("007", None, {"type": "string"}) == "007"
    assert parse_value("lots", None, {"type": "number"}) == "lots"                 # the schema gate refuses it
    assert corrections_from({"a": "x", "b": 1.0}, {"a": "x", "b": "2"}, ["c"], {"properties": {"b": {"type": "number"}}}) \
        == {"b": {"from": 1.0, "to": 2}}
