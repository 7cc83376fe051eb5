"""Conformance cases of the payee check (verifiers.checks.payee)."""
from __future__ import annotations

import pytest

from docassay.verifiers.checks import payee as Y
from tests.verifiers.checkkit import GOOD, assert_conformant, by, ctx, page_doc

# The buyer's block without a caption at the top; the payment details name the seller.
PAGE = [
    (50, 40, "Falvasys Gastro SA"), (50, 52, "Schulstr. 146"), (50, 64, "4683 Lausanne"),
    (50, 400, "Gesamtsumme (CHF): 5.36"),
    (50, 700, "Kontoinhaber: Metallbau Wolf SA"), (300, 700, "IBAN CH93 4875 1984 8835 2616 2"),
]


@pytest.mark.parametrize("seller,outcome", [("Metallbau Wolf SA", "pass"), ("Falvasys Gastro SA", "fail")])
def test_seller_is_payee(seller, outcome):
    c = ctx(dict(GOOD, seller_name=seller), doc=page_doc(PAGE))
    assert by(Y.seller_is_payee(c), "seller_name", "seller_is_payee") == [outcome]
    assert_conformant(Y.seller_is_payee, c)


@pytest.mark.parametrize("lines", [
    [(50, 700, "Bénéficiaire"), (50, 712, "Metallbau Wolf SA")],                   # the caption alone, the name under it
    [(50, 700, "Account holder: Metallbau Wolf SA")],
    [(50, 700, "TITULAIRE Metallbau Wolf SA")],
])
def test_payee_captions(lines):
    assert list(Y.payees(page_doc(lines))) == ["Metallbau Wolf SA"]


def test_a_person_or_no_payee_says_nothing():
    person = page_doc([(50, 700, "Kontoinhaber: Hans Muster")])
    assert Y.seller_is_payee(ctx(dict(GOOD, seller_name="Metallbau Wolf SA"), doc=person)) == []
    assert Y.seller_is_payee(ctx(GOOD, doc=page_doc([(50, 40, "Rechnung 471102")]))) == []
