"""An invoice's number and dates are its own, not those of an order, a delivery, an account or the
invoice a credit note corrects (extractors/instructions/reference_priors.py; hand-written pages)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from docassay.extractors.instructions import generator as G
from docassay.extractors.instructions.reference_priors import governing_words, names_other_document
from docassay.extractors.spans import DocIndex
from tests.builders import make_doc

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "examples" / "invoices" / "schema.json").read_text())


@pytest.mark.parametrize("left,want", [
    ("Ursprungsrechnung R-51740 vom", "Ursprungsrechnung R-51740 vom"),   # over the connective and its number
    ("Rechnung Nr. 123 vom", "Rechnung Nr. 123 vom"),
    ("Kunde 4711 Datum:", "Datum:"),
    ("6. OKTOBER 2015 1. AUGUST 2015 -", ""),                              # a period's dash: no word
    ("", ""),
])
def test_governing_words(left, want):
    assert governing_words(left) == want


@pytest.mark.parametrize("label,concept,credit,other", [
    ("Ursprungsrechnung R-51740 vom", "issue_date", False, True),
    ("Orderdatum:", "issue_date", False, True),
    ("Date de prestation", "issue_date", False, True),
    ("Leistungszeitraum", "issue_date", False, True),
    ("TC Breda Order nr.", "invoice_number", False, True),
    ("Account No.:", "invoice_number", False, True),
    ("Oorspronkelijke factuur", "invoice_number", False, True),
    ("Ref. factura", "invoice_number", True, True),        # on a credit note: the invoice it corrects
    ("Ref. factura", "invoice_number", False, False),      # on an invoice: its own number
    ("Réf. facture", "invoice_number", False, False),
    ("Account:", "issue_date", False, False),              # an account has a number, not this date
    ("Rechnung Nr. 123 vom", "issue_date", False, False),
    ("Invoice No.", "invoice_number", False, False),
    ("Datum", "issue_date", False, False),
    ("Payable on or before", "due_date", False, False),
])
def test_names_other_document(label, concept, credit, other):
    assert names_other_document(label, concept, credit) is other


def _read(rows, which: str, prior: bool, monkeypatch) -> dict:
    from docassay.extractors.instructions.model_scorer import model_scorer
    if not prior:
        monkeypatch.setattr(G, "reference_priors", lambda ix, specs, ranked: ranked)
    scorer = None if which == "baseline" else model_scorer()
    return G.generate(DocIndex(make_doc(rows)), SCHEMA, scorer=scorer).extraction.record


_ACCOUNT = [(40, 40, "Smith Design LLP"), (40, 52, "9 Church Drive"), (40, 80, "Account No.: KD-6440984"),
            (300, 80, "INV/2023/153"), (40, 104, "Date: 12/03/2023"), (40, 200, "Total due"), (300, 200, "GBP 120.00")]
_ORDER = [(40, 40, "Smith Design LLP"), (40, 52, "9 Church Drive"), (40, 80, "Order No.: SO532"),
          (40, 92, "IN48777723"), (40, 104, "Date: 12/03/2023"), (40, 200, "Total due"), (300, 200, "GBP 120.00")]
_CREDIT = [(40, 40, "Telummark GmbH"), (40, 52, "Hafenallee 96"), (40, 64, "92928 München"), (40, 90, "GUTSCHRIFT"),
           (40, 100, "Ursprungsrechnung R-21619 vom 16.07.2015"), (40, 112, "Gutschrift Nr. R-30288"),
           (40, 124, "06.09.2015"), (40, 200, "Gesamtbetrag"), (300, 200, "-120,00 EUR")]


@pytest.mark.parametrize("rows,field,want,without", [
    (_ACCOUNT, "invoice_number", "INV/2023/153", "KD-6440984"),
    (_ORDER, "invoice_number", "IN48777723", "SO532"),
    (_CREDIT, "issue_date", "2015-09-06", "2015-07-16"),
])
def test_another_documents_number_or_date_is_not_read(rows, field, want, without, monkeypatch):
    assert _read(rows, "baseline", True, monkeypatch)[field] == want
    assert _read(rows, "baseline", False, monkeypatch)[field] == without     # the case fails without the prior


def test_the_ranker_reads_the_credit_notes_own_date(monkeypatch):
    assert _read(_CREDIT, "ranker", True, monkeypatch)["issue_date"] == "2015-09-06"


def test_nothing_moves_when_every_reading_names_another_document(monkeypatch):
    rows = [(40, 40, "Smith Design LLP"), (40, 52, "9 Church Drive"), (40, 80, "Order No.: SO532"),
            (40, 104, "Date: 12/03/2023"), (40, 200, "Total due"), (300, 200, "GBP 120.00")]
    assert _read(rows, "baseline", True, monkeypatch)["invoice_number"] == _read(rows, "baseline", False, monkeypatch)["invoice_number"]
