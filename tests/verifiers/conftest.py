"""Shared material for the verifier conformance tests: an invoice-like schema with x-docassay
keywords, a record that passes every gate, and small Document / evidence builders."""
from __future__ import annotations

import copy

import pytest

from docassay.extractors.document import BBox, Document, Page, Word
from docassay.verifiers.context import VerifyContext
from docassay.verifiers.evidence import FieldEvidence

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["invoice_number", "issue_date", "seller_name", "gross_total"],
    "properties": {
        "invoice_number": {"type": "string", "minLength": 1,
                           "x-docassay": {"kind": "identifier", "unique": {"per": ["seller_name"]}, "weight": 2}},
        "issue_date": {"type": "string", "format": "date", "x-docassay": {"stale": "previous"}},
        "seller_name": {"type": "string", "minLength": 1},
        "buyer_name": {"type": "string", "minLength": 1},
        "net_total": {"type": "number"},
        "tax_total": {"type": "number"},
        "gross_total": {"type": "number", "x-docassay": {"tolerance": {"abs": 0.01, "rel": 0.001}, "weight": 2}},
        "line_items": {
            "type": "array",
            "items": {"type": "object", "additionalProperties": False,
                      "properties": {"description": {"type": "string"}, "line_total": {"type": "number"}}},
            "x-docassay": {"items": {"sum": "line_total", "totals": ["net_total", "gross_total"]}},
        },
    },
}

GOOD = {
    "invoice_number": "RE-2024-001", "issue_date": "2024-03-05", "seller_name": "Lieferant GmbH",
    "buyer_name": "Kunden AG", "net_total": 100.0, "tax_total": 19.0, "gross_total": 119.0,
    "line_items": [{"description": "Trennblätter A4", "line_total": 60.0},
                   {"description": "Joghurt Banane", "line_total": 40.0}],
}


def document(n_pages: int = 1, *, empty: tuple[int, ...] = ()) -> Document:
    pages = []
    for n in range(1, n_pages + 1):
        words = [] if n in empty else [Word("Rechnung", BBox(50, 50, 120, 62)), Word("Nr", BBox(125, 50, 140, 62))]
        pages.append(Page.from_words(n, 595.0, 842.0, words))
    return Document(source="t.pdf", sha256="0" * 64, kind="synthetic", pages=pages)


def labelled(record: dict) -> dict[str, FieldEvidence]:
    """Strong evidence for every scalar field: each read beside its own label, in its own place."""
    out = {}
    for i, (k, v) in enumerate(record.items()):
        if isinstance(v, list):
            out[k] = FieldEvidence(k, "table")
        else:
            out[k] = FieldEvidence(k, "label", text=str(v), label=k, page=1, bbox=(300.0, 20.0 * i, 400.0, 20.0 * i + 10))
    return out


@pytest.fixture
def good() -> dict:
    return copy.deepcopy(GOOD)


def ctx(record, **kw) -> VerifyContext:
    kw.setdefault("evidence", labelled(record) if isinstance(record, dict) else {})
    kw.setdefault("document", document())
    kw.setdefault("schema", SCHEMA)
    return VerifyContext(record=record, **kw)
