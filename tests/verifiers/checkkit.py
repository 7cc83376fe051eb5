"""Material for the checks' conformance tests: the shipped invoice and receipt schemas, small
documents built from positioned text, evidence pointing at printed words, and the four cases every
check must meet (supports, contradicts, malformed input, determinism)."""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

from docassay.verifiers.checks.signal import Signal
from docassay.verifiers.context import VerifyContext
from docassay.verifiers.evidence import FieldEvidence
from tests.builders import make_doc

ROOT = Path(__file__).resolve().parents[2]
INVOICE = json.loads((ROOT / "examples" / "invoices" / "schema.json").read_text("utf-8"))
RECEIPT = json.loads((ROOT / "examples" / "receipts" / "schema.json").read_text("utf-8"))

GOOD = {
    "invoice_number": "471102", "issue_date": "2018-03-05", "due_date": "2018-04-04",
    "seller_name": "Lieferant GmbH", "seller_vat_id": "DE136695976", "buyer_name": "Kunden AG Mitte",
    "currency": "EUR", "net_total": 473.0, "tax_total": 89.87, "gross_total": 562.87,
    "line_items": [{"description": "Trennblätter A4", "quantity": 20.0, "unit_price": 9.9, "line_total": 198.0},
                   {"description": "Joghurt Banane", "quantity": 50.0, "unit_price": 5.5, "line_total": 275.0}],
}

# An invoice page: the seller's block, the buyer's block, dates, items and totals (y grows down).
PAGE = [
    (50, 60, "Rechnung Nr. 471102"),
    (50, 80, "Rechnungsdatum: 05.03.2018"),
    (50, 95, "Lieferdatum: 01.03.2018"),
    (50, 110, "Fälligkeitsdatum: 04.04.2018"),
    (50, 140, "Verkäufer:"),
    (50, 152, "Lieferant GmbH"),
    (50, 164, "Lieferantenstraße 20"),
    (50, 176, "80333 München"),
    (50, 188, "USt-IdNr.: DE136695976"),
    (50, 220, "Rechnungsempfänger:"),
    (50, 232, "Kunden AG Mitte"),
    (50, 244, "Kundenstraße 15"),
    (50, 256, "69876 Frankfurt"),
    (50, 268, "USt-IdNr.: DE123456789"),
    (50, 300, "Pos Bezeichnung Menge Preis Betrag"),
    (50, 312, "1 Trennblätter A4 20 9,90 198,00"),
    (50, 324, "2 Joghurt Banane 50 5,50 275,00"),
    (50, 350, "Nettobetrag 473,00"),
    (50, 362, "MwSt 19 % 89,87"),
    (50, 374, "Gesamtbetrag 562,87 EUR"),
    (50, 400, "IBAN DE02 1203 0000 0000 2020 51 BIC BYLADEM1001"),
    (50, 412, "Lieferant GmbH Geschäftsführer Hans Muster"),
]


def page_doc(lines: list[tuple[float, float, str]] | None = None):
    return make_doc(PAGE if lines is None else lines, source="t.pdf")


def at(doc, field: str, text: str, *, label: str | None = None, how: str = "label",
       occurrence: int = 0) -> FieldEvidence:
    """Evidence for `field` read from the printed words `text` (its `occurrence`-th appearance)."""
    for page in doc.pages:
        words = page.words
        toks = text.split()
        seen = 0
        for i in range(len(words) - len(toks) + 1):
            if [w.text for w in words[i:i + len(toks)]] == toks and len({w.line for w in words[i:i + len(toks)]}) == 1:
                if seen == occurrence:
                    box = words[i].bbox
                    for w in words[i + 1:i + len(toks)]:
                        box = box.union(w.bbox)
                    return FieldEvidence(field, how, text=text, label=label, page=page.number,
                                         bbox=(box.x0, box.y0, box.x1, box.y1))
                seen += 1
    raise AssertionError(f"{text!r} is not printed")


def ctx(record: dict, *, schema: dict | None = None, doc=None, evidence=None, extraction=None,
        history=None) -> VerifyContext:
    return VerifyContext(schema=INVOICE if schema is None else schema, record=record, document=doc,
                         evidence=evidence or {}, extraction=extraction, history=history)


def by(signals: list[Signal], field: str, check: str) -> list[str]:
    """The outcomes `check` gave `field`."""
    return [s.outcome for s in signals if s.field == field and s.check == check]


MALFORMED: list[Any] = [
    {"gross_total": "12,00", "net_total": None, "tax_total": [1], "issue_date": "05.03.2018", "due_date": 5,
     "seller_name": 7, "seller_vat_id": {"x": 1}, "currency": 42, "invoice_number": None,
     "buyer_name": "", "line_items": "none"},
    {"line_items": [1, "a", None, {"quantity": "x", "unit_price": None, "line_total": float("nan")}]},
    {"gross_total": float("inf"), "net_total": float("nan"), "tax_total": True},
    {},
]


def assert_conformant(check: Callable[[VerifyContext], list[Signal]], case: VerifyContext) -> None:
    """Malformed records never raise; the same input gives the same signals (also on a copy)."""
    for rec in MALFORMED:
        for sg in check(ctx(rec, doc=case.document, evidence=case.evidence, extraction=case.extraction,
                            history=case.history, schema=dict(case.schema))):
            assert sg.outcome in ("pass", "fail") and isinstance(sg.detail, str)
    first = check(case)
    assert check(case) == first
    assert check(copy.deepcopy(case)) == first
