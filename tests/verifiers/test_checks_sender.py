"""Conformance cases of the sender's return line (verifiers.checks.sender)."""
from __future__ import annotations

import pytest

from docassay.verifiers.checks import sender as S
from tests.verifiers.checkkit import GOOD, assert_conformant, at, by, ctx, page_doc

RETURN = "Alumton Sàrl · 157, boulevard de la Liberté · CH-9888 Luzern"
# A window envelope's field: the sender's return line over the recipient's address, the invoice's
# fields in a column of their own on the right.
WINDOW = [
    (50, 60, "FACTURE"),
    (50, 100, RETURN),
    (420, 100, "N° facture 8089"),
    (50, 116, "Fenenlux Bâtiment AG"),
    (420, 116, "Date 2016-12-19"),
    (50, 128, "142, place Victor Hugo"),
    (50, 140, "3022 Lausanne"),
    (50, 700, "Alumton Sàrl   IBAN DE58 2110 8944 7188 9113 29"),
]


def _case(seller: str, buyer: str, seller_text: str | None = None, buyer_text: str | None = None):
    doc = page_doc(WINDOW)
    rec = dict(GOOD, seller_name=seller, buyer_name=buyer)
    ev = {"seller_name": at(doc, "seller_name", seller_text or seller),
          "buyer_name": at(doc, "buyer_name", buyer_text or buyer)}
    return ctx(rec, doc=doc, evidence=ev)


def test_a_seller_read_under_a_return_line_naming_another_party_fails():
    c = _case("Fenenlux Bâtiment AG", "Alumton Sàrl", buyer_text="Alumton Sàrl ·")
    s = S.sender_line(c)
    assert by(s, "seller_name", "sender_line") == ["fail"]
    assert by(s, "buyer_name", "sender_line") == ["fail"]      # the return line names the sender
    assert_conformant(S.sender_line, c)


def test_the_right_parties_pass():
    c = _case("Alumton Sàrl", "Fenenlux Bâtiment AG", seller_text="Alumton Sàrl ·")
    s = S.sender_line(c)
    assert by(s, "seller_name", "sender_line") == ["pass"] and by(s, "buyer_name", "sender_line") == ["pass"]


def test_a_seller_read_elsewhere_is_not_judged():
    c = _case("Alumton Sàrl", "Fenenlux Bâtiment AG", seller_text="Alumton Sàrl IBAN")
    assert by(S.sender_line(c), "seller_name", "sender_line") == []


@pytest.mark.parametrize("cell,name", [
    (RETURN, "Alumton Sàrl"),
    ("Muster GmbH • Hauptstr. 1 • 12345 Berlin", "Muster GmbH"),
    ("Muster GmbH | Hauptstr. 1 | 12345 Berlin", "Muster GmbH"),
    ("Muster GmbH · Hauptstr. 1", None),                       # two parts: no return line
    ("Tel. 030 1234 · Fax 030 1235 · info@muster.de", None),   # contact details start with no name
    ("Muster GmbH · Geschäftsführer · Hans Muster", None),     # no house number, no postcode
    ("Seite 1 · Stand 2020 · Version 2.1", None),
])
def test_return_name(cell, name):
    assert S.return_name(cell) == name


def test_no_return_line_no_signal():
    doc = page_doc()
    rec = dict(GOOD)
    c = ctx(rec, doc=doc, evidence={"seller_name": at(doc, "seller_name", "Lieferant GmbH")})
    assert S.sender_line(c) == []


def test_names_under_return_lines():
    doc = page_doc(WINDOW)
    assert [t for _, t in S.names_under_return_lines(doc.pages[0])] == ["Fenenlux Bâtiment AG"]
    attn = [line if line[2] != "Fenenlux Bâtiment AG" else (50, 116, "z. Hd. Stefan Krüger") for line in WINDOW]
    attn.insert(4, (50, 122, "Telidale Holzbau AG"))
    attn = sorted(attn, key=lambda t: t[1])
    names = [t for _, t in S.names_under_return_lines(page_doc(attn).pages[0])]
    assert names == ["Telidale Holzbau AG"]          # an attention line is skipped


def test_an_empty_buyer_under_a_return_line_is_printed():
    from docassay.verifiers.checks import printed as P
    rec = {k: v for k, v in dict(GOOD, seller_name="Alumton Sàrl").items() if k != "buyer_name"}
    # a name without a legal form, in capitals: no company's and no person's block; the return line says it
    window = [line if line[2] != "Fenenlux Bâtiment AG" else (50, 116, "FENENLUX BÂTIMENT") for line in WINDOW]
    s = P.party_printed(ctx(rec, doc=page_doc(window)))
    assert by(s, "buyer_name", "party_printed") == ["fail"] and "return line" in s[0].detail
    rec = dict(rec, buyer_name="FENENLUX BÂTIMENT")
    assert P.party_printed(ctx(rec, doc=page_doc(window))) == []
