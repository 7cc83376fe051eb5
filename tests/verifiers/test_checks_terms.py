"""Conformance cases of the payment-terms checks (verifiers.checks.terms)."""
from __future__ import annotations

import pytest

from docassay.extractors.document import BBox
from docassay.extractors.instructions.executor import Extraction, FieldValue, Provenance
from docassay.verifiers.checks import terms as T
from tests.verifiers.checkkit import GOOD, assert_conformant, at, by, ctx, page_doc

# Dates printed as "01/11/2016" (read 1 November) and "03/11/2016" (read 3 November); month first
# they are 11 January and 11 March: 60 days apart.
READ = dict(GOOD, issue_date="2016-11-01", due_date="2016-11-03")


def _other(**alts: str) -> Extraction:
    ex = Extraction()
    for f, v in alts.items():
        ex.alternatives[f] = [FieldValue(v, Provenance(1, BBox(0, 0, 1, 1), v, "x"), "other reading")]
    return ex


def _doc(terms: str):
    return page_doc([(50, 60, "Dated: 01/11/2016"), (50, 75, "Payment due date: 03/11/2016"), (50, 300, terms)])


OTHER = _other(issue_date="2016-01-11", due_date="2016-03-11")


@pytest.mark.parametrize("line,fails", [
    ("Net 60", True),
    ("Payment terms: 60 days net", True),
    ("Zahlbar innerhalb von 60 Tagen ohne Abzug.", True),
    ("Conditions de paiement : 60 jours net", True),
    ("Pago a 60 días.", True),
    ("Betaling binnen 60 dagen na factuurdatum.", True),
    ("Net 30", False),                                   # neither reading fits: nothing said
    ("2 % Skonto innerhalb von 60 Tagen", False),        # a discount's days are no payment term
    ("Thank you for your business!", False),             # no terms printed
    ("Net Total: 2,523.35 CAD", False),                  # an amount after "Net" is no term
])
def test_terms_days(line, fails):
    s = T.terms_days(ctx(READ, doc=_doc(line), extraction=OTHER))
    want = ["fail"] if fails else []
    assert by(s, "issue_date", "terms_days") == want and by(s, "due_date", "terms_days") == want


def test_the_reading_that_fits_is_left_alone():
    right = dict(GOOD, issue_date="2016-01-11", due_date="2016-03-11")
    alts = _other(issue_date="2016-11-01", due_date="2016-11-03")
    assert T.terms_days(ctx(right, doc=_doc("Net 60"), extraction=alts)) == []


def test_only_the_date_whose_other_reading_fits_fails():
    rec = dict(GOOD, issue_date="2016-11-01", due_date="2016-03-31")     # the due date printed unambiguously
    s = T.terms_days(ctx(rec, doc=_doc("Net 80"), extraction=_other(issue_date="2016-01-11")))
    assert by(s, "issue_date", "terms_days") == ["fail"] and by(s, "due_date", "terms_days") == []


def test_no_other_reading_no_signal():
    assert T.terms_days(ctx(READ, doc=_doc("Net 60"), extraction=Extraction())) == []
    assert T.terms_days(ctx(READ, doc=None, extraction=OTHER)) == []


def test_printed_term_days():
    assert T.printed_term_days(["Terms: Net 30 days", "Please pay within 14 days.", "Netto 473,00",
                                "3% discount if paid within 10 days", "Page 1 of 2"]) == {30, 14}


@pytest.mark.parametrize("line,value,fails", [
    ("Bij betaling voor 24.09.2016 3% kredietbeperking", "24.09.2016", True),
    ("Bei Zahlung bis 24.09.2016 2% Skonto", "24.09.2016", True),
    ("Escompte de 2 % pour paiement avant le 24/09/2016", "24/09/2016", True),
    # the due date and the discount's date on one line: the due date is left alone
    ("Zahlbar innerhalb 30 Tagen netto bis 17.10.2016 ; 3% Skonto innerhalb 10 Tagen bis 27.09.2016", "17.10.2016", False),
    ("Vervaldag 17.10.2016", "17.10.2016", False),                # no discount
    ("Zahlbar bis 17.10.2016 ohne Abzug", "17.10.2016", False),    # "ohne Abzug": no percentage, no discount
])
def test_discount_date(line, value, fails):
    doc = page_doc([(50, 60, "Datum factuur 17.09.2016"), (50, 300, line)])
    iso = "-".join(reversed(value.replace("/", ".").split(".")))
    c = ctx(dict(GOOD, issue_date="2016-09-17", due_date=iso), doc=doc, evidence={"due_date": at(doc, "due_date", value)})
    assert by(T.discount_date(c), "due_date", "discount_date") == (["fail"] if fails else [])


def test_conformance():
    assert_conformant(T.terms_days, ctx(READ, doc=_doc("Net 60"), extraction=OTHER))
    doc = page_doc([(50, 300, "Bei Zahlung bis 24.09.2016 2% Skonto")])
    assert_conformant(T.discount_date, ctx(dict(GOOD, due_date="2016-09-24"), doc=doc,
                                           evidence={"due_date": at(doc, "due_date", "24.09.2016")}))


def test_terms_usual_without_printed_terms():
    # "Invoice date: 6/6/2023", "Please remit payment by 7/6/2023": read 7 June (1 day), 6 July is 30 days on
    doc = page_doc([(50, 60, "Invoice date: 6/6/2023"), (50, 300, "Please remit payment by 7/6/2023 .")])
    rec = dict(GOOD, issue_date="2023-06-06", due_date="2023-06-07")
    s = T.terms_usual(ctx(rec, doc=doc, extraction=_other(due_date="2023-07-06")))
    assert by(s, "due_date", "terms_usual") == ["fail"] and by(s, "issue_date", "terms_usual") == []
    right = dict(GOOD, issue_date="2023-06-06", due_date="2023-07-06")
    assert T.terms_usual(ctx(right, doc=doc, extraction=_other(due_date="2023-06-07"))) == []
    # an issue and a due date printed alike ("05/06/2023", due on receipt) read the same either way
    same = dict(GOOD, issue_date="2023-06-05", due_date="2023-06-05")
    assert T.terms_usual(ctx(same, doc=doc, extraction=_other(issue_date="2023-05-06", due_date="2023-05-06"))) == []
    # printed terms decide: terms_usual says nothing
    assert T.terms_usual(ctx(rec, doc=_doc("Net 30"), extraction=_other(due_date="2023-07-06"))) == []
    assert_conformant(T.terms_usual, ctx(rec, doc=doc, extraction=_other(due_date="2023-07-06")))
