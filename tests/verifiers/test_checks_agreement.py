"""Conformance cases of the agreement checks (verifiers.checks.agreement)."""
from __future__ import annotations

import pytest

from docassay.extractors.document import BBox
from docassay.extractors.instructions.executor import Extraction, FieldValue, Provenance
from docassay.verifiers.checks import agreement as G
from docassay.verifiers.history import MemoryHistory
from tests.verifiers.checkkit import GOOD, INVOICE, RECEIPT, assert_conformant, at, by, ctx, page_doc


def test_value_printed():
    doc = page_doc()
    s = G.value_printed(ctx(GOOD, doc=doc))
    for f in ("invoice_number", "issue_date", "seller_name", "gross_total", "net_total", "seller_vat_id"):
        assert by(s, f, "value_printed") == ["pass"], f
    s = G.value_printed(ctx(dict(GOOD, gross_total=529.87, buyer_name="Kunden AG Nord"), doc=doc))
    assert by(s, "gross_total", "value_printed") == ["fail"] and by(s, "buyer_name", "value_printed") == ["fail"]
    assert G.value_printed(ctx(GOOD)) == []                              # no document


def test_value_printed_reads_dates_in_other_forms():
    doc = page_doc([(50, 50, "Date: 5 March 2018"), (50, 70, "Due 04/04/18")])
    s = G.value_printed(ctx(GOOD, doc=doc))
    assert by(s, "issue_date", "value_printed") == ["pass"] and by(s, "due_date", "value_printed") == ["pass"]


def test_value_printed_after_a_sign_and_in_spanish():
    doc = page_doc([(50, 50, "Total Fr.81.21"), (50, 70, "Fecha: 31 de mayo de 2016")])
    s = G.value_printed(ctx({"total": 81.21, "date": "2016-05-31"}, schema=RECEIPT, doc=doc))
    assert by(s, "total", "value_printed") == ["pass"] and by(s, "date", "value_printed") == ["pass"]


def test_printed_twice():
    s = G.printed_twice(ctx(GOOD, doc=page_doc()))
    assert by(s, "seller_name", "printed_twice") == ["pass"]             # letterhead block and footer
    assert by(s, "buyer_name", "printed_twice") == []                    # once: no signal


def _alts(field, *values, how="nearby span"):
    ex = Extraction()
    ex.alternatives[field] = [FieldValue(v, Provenance(1, BBox(0, 0, 1, 1), str(v), "x"), how) for v in values]
    return ex


def test_alternative_agrees():
    assert by(G.alternative_agrees(ctx(GOOD, extraction=_alts("seller_name", "LIEFERANT GMBH"))),
              "seller_name", "alternative_agrees") == ["pass"]
    assert by(G.alternative_agrees(ctx(GOOD, extraction=_alts("seller_name", "Lieferantenstraße 20"))),
              "seller_name", "alternative_agrees") == ["fail"]
    assert G.alternative_agrees(ctx(GOOD, extraction=_alts("seller_name", "x", how="other reading"))) == []


def test_reading_ambiguous():
    doc = page_doc()
    ev = {"issue_date": at(doc, "issue_date", "05.03.2018")}
    amb = ctx(GOOD, doc=doc, evidence=ev, extraction=_alts("issue_date", "2018-05-03", how="other reading"))
    assert by(G.reading_ambiguous(amb), "issue_date", "reading_ambiguous") == ["fail"]
    one = ctx(GOOD, doc=doc, evidence=ev, extraction=Extraction())
    assert by(G.reading_ambiguous(one), "issue_date", "reading_ambiguous") == ["pass"]


def test_date_order():
    doc = page_doc([(50, 40, "Datum 05.03.2018"), (50, 52, "Stand 24.03.2020")])        # 24.03: day first
    ev = {"issue_date": at(doc, "issue_date", "05.03.2018")}
    assert by(G.date_order(ctx(GOOD, doc=doc, evidence=ev)), "issue_date", "date_order") == ["pass"]
    assert by(G.date_order(ctx(dict(GOOD, issue_date="2018-05-03"), doc=doc, evidence=ev)),
              "issue_date", "date_order") == ["fail"]
    plain = page_doc([(50, 40, "Datum 05.03.2018")])                                      # no unambiguous date
    assert G.date_order(ctx(GOOD, doc=plain, evidence={"issue_date": at(plain, "issue_date", "05.03.2018")})) == []


def _history(record):
    h = MemoryHistory()
    h.accept("a" * 64, record, {})
    return h


def test_history_agrees_and_repeats():
    prev = dict(GOOD, invoice_number="471101", issue_date="2018-02-05", gross_total=100.0)
    s = G.history_agrees(ctx(GOOD, history=_history(prev))) + G.history_repeats(ctx(GOOD, history=_history(prev)))
    assert by(s, "seller_name", "history_agrees") == ["pass"] and by(s, "currency", "history_agrees") == ["pass"]
    assert by(s, "invoice_number", "history_repeats") == ["pass"]
    changed = dict(GOOD, seller_name="Kunden AG Mitte")
    assert by(G.history_agrees(ctx(changed, history=_history(prev))), "seller_name", "history_agrees") == ["fail"]
    assert by(G.history_repeats(ctx(GOOD, history=_history(GOOD))), "invoice_number", "history_repeats") == ["fail"]
    assert G.history_agrees(ctx(GOOD, history=MemoryHistory())) == []   # no previous document


def test_history_agrees_is_silent_for_another_issuer_in_the_same_layout():
    other = dict(GOOD, seller_name="Andere GmbH", seller_vat_id="DE123456789")
    s = G.history_agrees(ctx(other, history=_history(GOOD)))
    assert by(s, "seller_name", "history_agrees") == [] and by(s, "seller_vat_id", "history_agrees") == []
    assert by(s, "currency", "history_agrees") == ["pass"]


def test_history_agrees_follows_per_format_keyword():
    schema = {"type": "object", "properties": {"shop": {"type": "string", "x-docassay": {"per_format": "same"}}}}
    s = G.history_agrees(ctx({"shop": "A"}, schema=schema, history=_history({"shop": "B"})))
    assert by(s, "shop", "history_agrees") == ["fail"]


def test_currency_printed():
    doc = page_doc()
    assert by(G.currency_printed(ctx(GOOD, doc=doc)), "currency", "currency_printed") == ["pass"]
    assert by(G.currency_printed(ctx(dict(GOOD, currency="USD"), doc=doc)), "currency", "currency_printed") == ["fail"]
    signs = page_doc([(50, 50, "Total RM 45.00")])
    assert by(G.currency_printed(ctx(dict(GOOD, currency="MYR"), doc=signs)), "currency", "currency_printed") == ["pass"]


def test_currency_of_total():
    # The share capital in euros in the footer; the amounts in Swiss francs.
    doc = page_doc([(50, 50, "Net à payer: Fr. 562.87"), (50, 700, "SAS au capital de 1 000 €")])
    rec = dict(GOOD, currency="EUR")
    assert by(G.currency_of_total(ctx(rec, doc=doc)), "currency", "currency_of_total") == ["fail"]
    assert by(G.currency_printed(ctx(rec, doc=doc)), "currency", "currency_printed") == ["pass"]   # printed, elsewhere
    assert by(G.currency_of_total(ctx(dict(GOOD, currency="CHF"), doc=doc)), "currency", "currency_of_total") == ["pass"]
    assert by(G.currency_of_total(ctx(GOOD, doc=page_doc())), "currency", "currency_of_total") == ["pass"]


def test_currency_of_total_without_a_sign_beside_the_total_says_nothing():
    doc = page_doc([(50, 50, "Total 562,87"), (50, 700, "Capital 1 000 €")])
    assert G.currency_of_total(ctx(dict(GOOD, currency="CHF"), doc=doc)) == []


@pytest.mark.parametrize("name,check", G.CHECKS)
def test_conformance(name, check):
    doc = page_doc()
    assert_conformant(check, ctx(GOOD, schema=INVOICE, doc=doc, history=_history(GOOD),
                                 extraction=_alts("seller_name", "Lieferantenstraße 20"),
                                 evidence={"issue_date": at(doc, "issue_date", "05.03.2018")}))
