"""Conformance cases of the checks written for layouts nobody tuned for (issue 12, unseen layouts):
an identifier read in part (extent.id_extent), a label in front of a party's name
(labels.name_label_prefix), an empty field whose label is printed with a value
(printed.label_printed), and the decision that holds such a record back."""
from __future__ import annotations

import pytest

from docassay.verifiers.checks import extent as X
from docassay.verifiers.checks import labels as L
from docassay.verifiers.checks import printed as P
from docassay.verifiers.checks.vocabulary import meanings_in
from docassay.verifiers.confidence import Calibrator, ConfidencePolicy
from docassay.verifiers.confidence.calibrator import POOLED, FamilyModel
from docassay.verifiers.context import VerifyContext
from docassay.verifiers.errors import VerifyError
from docassay.verifiers.history import MemoryHistory
from docassay.verifiers.verify import verify
from tests.verifiers.checkkit import GOOD, INVOICE, PAGE, RECEIPT, assert_conformant, at, by, ctx, page_doc


def _vat_line(line: str, value: str):
    doc = page_doc([(50, 60, "Rechnung Nr. 471102"), (50, 188, line)])
    return ctx(dict(GOOD, seller_vat_id=value), doc=doc, evidence={"seller_vat_id": at(doc, "seller_vat_id", value)})


def test_id_extent_whole_code_says_nothing_and_a_part_fails():
    assert by(X.id_extent(_vat_line("USt-IdNr.: DE136695976", "DE136695976")), "seller_vat_id", "id_extent") == []
    assert by(X.id_extent(_vat_line("VAT ID: 653090237 RT0001", "RT0001")), "seller_vat_id", "id_extent") == ["fail"]
    assert by(X.id_extent(_vat_line("VAT Number: ABN 27 351 757 204", "27")), "seller_vat_id", "id_extent") == ["fail"]
    assert by(X.id_extent(_vat_line("UID-Nr.: CHE-610.132.919 MWST", "CHE-610.132.919")), "seller_vat_id",
              "id_extent") == ["fail"]


def test_id_extent_in_a_widely_set_font_and_across_a_column_gap():
    from docassay.extractors.document import BBox, Document, Page, Word

    def doc_of(xs):           # (text, x0, x1) on one line, 9 points high
        words = [Word(t, BBox(a, 100, b, 109), font_size=9) for t, a, b in xs]
        return Document(source="t.pdf", sha256="x", kind="synthetic", parser="test",
                        pages=[Page.from_words(1, 600, 800, words, source="synthetic")])
    wide = doc_of([("Umsatzsteuer-ID:", 55.7, 135.2), ("CHE-665.597.188", 142.6, 217.8), ("MWST", 224.0, 243.9)])
    apart = doc_of([("Umsatzsteuer-ID:", 55.7, 135.2), ("CHE-665.597.188", 138.0, 217.8), ("MWST", 240.0, 259.9)])
    for doc, want in ((wide, ["fail"]), (apart, [])):
        c = ctx(dict(GOOD, seller_vat_id="CHE-665.597.188"), doc=doc,
                evidence={"seller_vat_id": at(doc, "seller_vat_id", "CHE-665.597.188")})
        assert by(X.id_extent(c), "seller_vat_id", "id_extent") == want


def test_id_extent_a_suffix_wrapped_onto_the_next_line_of_its_cell():
    doc = page_doc([(50, 60, "Rechnung Nr. 471102"), (300, 188, "UID-Nr.: CHE-610.132.919"), (300, 199, "MWST")])
    c = ctx(dict(GOOD, seller_vat_id="CHE-610.132.919"), doc=doc,
            evidence={"seller_vat_id": at(doc, "seller_vat_id", "CHE-610.132.919")})
    assert by(X.id_extent(c), "seller_vat_id", "id_extent") == ["fail"]
    # the next line of another column, a longer word, or a line far below: not the code's suffix
    for lines in ([(300, 188, "UID-Nr.: CHE-610.132.919"), (50, 199, "MWST")],
                  [(300, 188, "UID-Nr.: CHE-610.132.919"), (300, 199, "MWST Konto 12")],
                  [(300, 188, "UID-Nr.: CHE-610.132.919"), (300, 199, "BANKING")],
                  [(300, 188, "UID-Nr.: CHE-610.132.919"), (300, 230, "MWST")]):
        doc = page_doc([(50, 60, "Rechnung Nr. 471102"), *lines])
        c = ctx(dict(GOOD, seller_vat_id="CHE-610.132.919"), doc=doc,
                evidence={"seller_vat_id": at(doc, "seller_vat_id", "CHE-610.132.919")})
        assert by(X.id_extent(c), "seller_vat_id", "id_extent") == [], lines


def test_id_extent_a_date_or_a_label_after_the_number_is_not_more_of_it():
    doc = page_doc([(50, 60, "Rechnung Nr. 471102 vom 05.03.2018"), (50, 80, "Invoice No. 471102 05.03.2018")])
    for occ in (0, 1):
        c = ctx(GOOD, doc=doc, evidence={"invoice_number": at(doc, "invoice_number", "471102", occurrence=occ)})
        assert by(X.id_extent(c), "invoice_number", "id_extent") == []


def test_name_label_prefix():
    assert by(L.name_label_prefix(ctx(GOOD)), "seller_name", "name_label_prefix") == []
    bad = ctx(dict(GOOD, seller_name="ACCOUNT HOLDER Smith & Lewis Ltd.", buyer_name="Ihre Bestellung"))
    assert by(L.name_label_prefix(bad), "seller_name", "name_label_prefix") == ["fail"]
    assert by(L.name_label_prefix(bad), "buyer_name", "name_label_prefix") == ["fail"]
    # one word naming an account's or a payment's holder is a label
    for name in ("Beneficiario Zeno-Instalaciones S.A.", "Titulaire Dupont SARL", "Zahlungsempfänger Müller GmbH"):
        assert by(L.name_label_prefix(ctx(dict(GOOD, seller_name=name))), "seller_name", "name_label_prefix") == \
            ["fail"], name
    # a one-word cue at the start is a name often enough ("Bank of Scotland plc")
    assert by(L.name_label_prefix(ctx(dict(GOOD, seller_name="Bank of Scotland plc"))), "seller_name",
              "name_label_prefix") == []


def test_name_label_prefix_the_heading_line_joined_to_the_name():
    doc = page_doc([(400, 40, "Van"), (400, 52, "Xanraberg Advies N.V."), (400, 64, "Julianaplein 106"),
                    (50, 100, "van Leeuwen & de Boer SRL"), (50, 112, "Industriekade 70")])
    joined = ctx(dict(GOOD, seller_name="Van Xanraberg Advies N.V."), doc=doc,
                 evidence={"seller_name": at(doc, "seller_name", "Xanraberg Advies N.V.")})
    s = L.name_label_prefix(joined)
    assert by(s, "seller_name", "name_label_prefix") == ["fail"] and "'Van'" in s[0].detail
    # the name alone, or a name that begins with "van" on its own line: no fail
    for name, printed in (("Xanraberg Advies N.V.", "Xanraberg Advies N.V."),
                          ("van Leeuwen & de Boer SRL", "van Leeuwen & de Boer SRL")):
        c = ctx(dict(GOOD, seller_name=name), doc=doc, evidence={"seller_name": at(doc, "seller_name", printed)})
        assert by(L.name_label_prefix(c), "seller_name", "name_label_prefix") == [], name
    # a name printed over two lines, its first line ending in a connector
    split = page_doc([(50, 40, "Ruiz &"), (50, 52, "Zenendale Servicios SA")])
    c = ctx(dict(GOOD, seller_name="Ruiz & Zenendale Servicios SA"), doc=split,
            evidence={"seller_name": at(split, "seller_name", "Zenendale Servicios SA")})
    assert by(L.name_label_prefix(c), "seller_name", "name_label_prefix") == []


def test_vocabulary_knows_the_delivery_and_due_cues():
    assert meanings_in("LIVRÉ À:")[0][0] == "delivery"
    assert meanings_in("Payable on or before 06/01/18")[0][0] == "due_date"
    for heading in ("Verzendadres:", "Leveradres", "Entregar en:", "Dirección de envío"):
        assert meanings_in(heading)[0][0] == "delivery", heading
    assert meanings_in("Grondslag:")[0][0] == "net_total"           # the tax base: the net total
    for cue in ("Vervaldag:", "Uiterlijk te voldoen op", "Payable le", "Vence:", "Fecha límite de pago:"):
        assert meanings_in(cue)[0][0] == "due_date", cue


def test_label_printed_on_the_line_and_on_the_next_line():
    rec = {k: v for k, v in GOOD.items() if k not in ("due_date", "tax_total")}
    s = P.label_printed(ctx(rec, doc=page_doc()))
    assert by(s, "due_date", "label_printed") == ["fail"] and by(s, "tax_total", "label_printed") == ["fail"]
    doc = page_doc([(50, 60, "Rechnung Nr. 471102"), (50, 80, "Sales Tax 20% on"), (50, 92, "GBP 242.62"),
                    (50, 120, "Due Date:"), (50, 132, "06/01/18")])
    s = P.label_printed(ctx(rec, doc=doc))
    assert by(s, "tax_total", "label_printed") == ["fail"] and by(s, "due_date", "label_printed") == ["fail"]


def test_label_printed_a_column_heading_over_its_value():
    rec = {k: v for k, v in GOOD.items() if k != "due_date"}
    table = [(50, 700, "Zahlungsbedingungen"), (50, 712, "Beschreibung"), (400, 712, "Fälligkeit"),
             (500, 712, "Teilzahlung"), (400, 724, "05.03.2019")]
    s = P.label_printed(ctx(rec, doc=page_doc(table)))
    assert by(s, "due_date", "label_printed") == ["fail"] and "05.03.2019" in s[0].detail
    # the heading over another kind of value, or over a value among others in its column: nothing
    assert P.label_printed(ctx(rec, doc=page_doc(table[:4] + [(400, 724, "siehe AGB")]))) == []
    assert P.label_printed(ctx(rec, doc=page_doc(table[:4] + [(380, 724, "05.03.2019 und 05.04.2019")]))) == []
    # an amount under a heading is an item's or a rate's column as often as the total: not judged
    items = [(50, 300, "Artikel"), (300, 300, "Menge"), (400, 300, "MwSt."), (50, 312, "Joghurt"), (300, 312, "5"),
             (400, 312, "14,91")]
    assert list(P._label_over_value(page_doc(items), "tax_total")) == []
    assert list(P._label_over_value(page_doc(table), "due_date")) == [(1, 1, "Fälligkeit", "05.03.2019")]


def test_label_printed_a_due_date_in_the_payment_sentence():
    rec = {k: v for k, v in GOOD.items() if k != "due_date"}
    doc = page_doc([(50, 60, "Rechnung Nr. 471102"), (50, 80, "Bitte überweisen Sie den Betrag bis zum 31. Mai 2017 .")])
    assert by(P.label_printed(ctx(rec, doc=doc)), "due_date", "label_printed") == ["fail"]


@pytest.mark.parametrize("lines", [
    [(400, 120, "Vervaldag:"), (400, 132, "14.11.2025")],                     # a short label over its value
    [(50, 300, "Uiterlijk te voldoen op 7-5-2023")],                           # the payment sentence
    [(50, 300, "Graag betaling voor 7-5-2023 o.v.v. het factuurnummer.")],
    [(50, 300, "Paiement attendu au plus tard le 07/05/2023.")],
    [(50, 300, "Se ruega el pago antes del 07/05/2023.")],
    [(50, 300, "Fecha límite de pago: 07/05/2023")],
    [(50, 300, "Please remit payment by 05/07/2023.")],
])
def test_label_printed_a_due_date_under_other_words_of_the_languages(lines):
    rec = {k: v for k, v in GOOD.items() if k != "due_date"}
    doc = page_doc([(50, 60, "Rechnung Nr. 471102")] + lines)
    assert by(P.label_printed(ctx(rec, doc=doc)), "due_date", "label_printed") == ["fail"]
    # the same words before no date say nothing
    doc = page_doc([(50, 60, "Rechnung Nr. 471102")] + [(x, y, t.split(" 0")[0].split(" 7-")[0].split(" 14.")[0])
                                                          for x, y, t in lines if not t[:2].isdigit()])
    assert by(P.label_printed(ctx(rec, doc=doc)), "due_date", "label_printed") == []


def test_label_printed_says_nothing_when_the_value_is_there_or_the_label_is_not():
    assert P.label_printed(ctx(GOOD, doc=page_doc())) == []
    rec = {k: v for k, v in GOOD.items() if k != "due_date"}
    doc = page_doc([line for line in PAGE if "Fälligkeit" not in line[2]])
    assert by(P.label_printed(ctx(rec, doc=doc)), "due_date", "label_printed") == []
    # a label with no value after it (a column header, a heading) is not a missed value
    doc = page_doc([(50, 60, "Due date"), (50, 72, "Description Qty Price")])
    assert by(P.label_printed(ctx(rec, doc=doc)), "due_date", "label_printed") == []


_UNCAPTIONED = [(50, 40, "Smith Design LLP"), (50, 52, "9 Church Drive"), (50, 64, "Manchester"),
                (50, 100, "Juniatex Trading LLP"), (50, 112, "182 Queen Road"), (50, 124, "Manchester"),
                (300, 100, "Invoice No. F-848"), (300, 140, "Payable to Royal Bank Ltd"), (300, 152, "IBAN GB24 OCET 0628")]


def test_party_printed_a_buyer_block_without_a_caption():
    rec = {k: v for k, v in dict(GOOD, seller_name="Smith Design LLP").items() if k != "buyer_name"}
    s = P.party_printed(ctx(rec, doc=page_doc(_UNCAPTIONED)))
    assert by(s, "buyer_name", "party_printed") == ["fail"]
    assert "Juniatex" in s[0].detail
    other = [line if line[2] != "182 Queen Road" else (50, 112, "36 Chapel Close") for line in _UNCAPTIONED]
    assert by(P.party_printed(ctx(rec, doc=page_doc(other))), "buyer_name", "party_printed") == ["fail"]
    comma = [line if line[2] != "182 Queen Road" else (50, 112, "39, chemin de la Forge") for line in _UNCAPTIONED]
    assert by(P.party_printed(ctx(rec, doc=page_doc(comma))), "buyer_name", "party_printed") == ["fail"]


def test_party_printed_a_buyer_block_beside_another_column_with_an_attention_line():
    # the buyer's name shares its line with the invoice details' column; an attention line, then
    # the street before its number ("Industriekade 70")
    rec = {k: v for k, v in dict(GOOD, seller_name="de Groot & van den Berg SA").items() if k != "buyer_name"}
    doc = page_doc([(50, 40, "de Groot & van den Berg SA"), (50, 52, "Nieuwegracht 58"), (50, 64, "2078 Namur"),
                    (50, 100, "FACTUURADRES"), (330, 100, "NUMMER INV9371085"),
                    (50, 112, "van Leeuwen & de Boer SRL"), (330, 112, "DATUM FACTUUR 22-6-2020"),
                    (50, 124, "T.a.v. Anouk Bos"), (330, 124, "KLANTNUMMER D-20-2946"),
                    (50, 136, "Industriekade 70"), (50, 148, "7457 Gent")])
    s = P.party_printed(ctx(rec, doc=doc))
    assert by(s, "buyer_name", "party_printed") == ["fail"] and "van Leeuwen" in s[0].detail


def test_address_printed_an_empty_address_under_the_shops_name():
    lines = [(50, 20, "DE GROOT & VOS BV"), (50, 32, "VERS VAN DE MARKT"), (50, 44, "FILIAAL UTRECHT"),
             (50, 56, "KERKWEG 116 9075 PJ UTRECHT"), (50, 68, "BTW NUMMER NL031384400B76"), (50, 90, "DATUM 30-07-2017")]
    rec = {"company": "DE GROOT & VOS BV", "date": "2017-07-30", "total": 22.06}
    s = P.address_printed(ctx(rec, schema=RECEIPT, doc=page_doc(lines)))
    assert by(s, "address", "address_printed") == ["fail"] and "KERKWEG 116" in s[0].detail
    # the address read, no address line under the name, or the name not printed: nothing
    assert P.address_printed(ctx(dict(rec, address="KERKWEG 116 9075 PJ UTRECHT"), schema=RECEIPT,
                                 doc=page_doc(lines))) == []
    assert P.address_printed(ctx(rec, schema=RECEIPT, doc=page_doc(lines[:3] + lines[5:]))) == []
    assert P.address_printed(ctx(dict(rec, company="ACME SDN BHD"), schema=RECEIPT, doc=page_doc(lines))) == []
    # the shop's name wrapped over two lines
    wrapped = [(50, 20, "HELEVIS MUTIARA MINI MARKET SDN"), (50, 32, "BHD"), (50, 44, "(495688-A)"),
               (50, 56, "Branch: BAHAGIA"), (50, 68, "NO. 134, JALAN JAYA"), (50, 80, "23, TAMAN BAHAGIA, 96864"),
               (50, 92, "GEORGETOWN, PULAU PINANG.")]
    shop = {"company": "HELEVIS MUTIARA MINI MARKET SDN BHD", "date": "2018-07-30", "total": 114.2}
    assert by(P.address_printed(ctx(shop, schema=RECEIPT, doc=page_doc(wrapped))), "address", "address_printed") == ["fail"]
    # the house number first, no postcode ("206, boulevard du Château Bâtiment A Rennes")
    french = [(50, 20, "Fournitures Moreau SASU"), (50, 32, "Succursale: Château"),
              (50, 44, "206, boulevard du Château Bâtiment A Rennes"), (50, 56, "N° TVA: FR69438292792")]
    shop = {"company": "Fournitures Moreau SASU", "date": "2020-11-23", "total": 19.93}
    assert by(P.address_printed(ctx(shop, schema=RECEIPT, doc=page_doc(french))), "address", "address_printed") == ["fail"]


def test_party_printed_says_nothing_for_the_other_partys_block_a_bank_line_or_a_present_name():
    rec = {k: v for k, v in dict(GOOD, seller_name="Smith Design LLP").items() if k != "buyer_name"}
    only_seller = [line for line in _UNCAPTIONED if "Juniatex" not in line[2]]
    assert P.party_printed(ctx(rec, doc=page_doc(only_seller))) == []
    bank = only_seller + [(300, 200, "Kontoinhaber: Smith Holding Ltd"), (300, 212, "12 Bank Street")]
    assert P.party_printed(ctx(rec, doc=page_doc(bank))) == []
    assert P.party_printed(ctx(dict(GOOD, seller_name="Smith Design LLP"), doc=page_doc(_UNCAPTIONED))) == []


_DELIVERED = [(50, 40, "Software Meijer B.V."), (50, 52, "Havenweg 210"), (50, 64, "9791 HZ Utrecht"),
              (50, 100, "Femke Bakker"), (50, 112, "Stationsstraat 78"), (50, 124, "5980 ZS Almere"),
              (50, 160, "AFLEVERADRES / DELIVER TO:"), (50, 172, "Femke Bakker"), (50, 184, "Herengracht 91"),
              (50, 196, "2300 MF Eindhoven"), (50, 240, "Description Qty Price")]


def test_party_printed_the_delivery_name_over_the_buyers_own_address():
    rec = {k: v for k, v in dict(GOOD, seller_name="Software Meijer B.V.").items() if k != "buyer_name"}
    s = P.party_printed(ctx(rec, doc=page_doc(_DELIVERED)))
    assert by(s, "buyer_name", "party_printed") == ["fail"]
    assert "Femke Bakker" in s[0].detail and "Stationsstraat" in s[0].detail


def test_party_printed_the_delivery_name_beside_the_buyers_own_block():
    # the buyer's window and the delivery block side by side, one line each: the same person
    rec = {k: v for k, v in dict(GOOD, seller_name="Juno Metallbau GmbH & Co. KG").items() if k != "buyer_name"}
    doc = page_doc([(50, 40, "Juno Metallbau GmbH & Co. KG"), (400, 40, "Lieferadresse:"),
                    (50, 52, "Lukas Hartmann"), (400, 52, "Lukas Hartmann"),
                    (50, 64, "Eichenallee 68"), (400, 64, "Birkenweg 14"),
                    (50, 76, "5718 Bern"), (400, 76, "6916 Luzern"), (50, 120, "Faktura")])
    s = P.party_printed(ctx(rec, doc=doc))
    assert by(s, "buyer_name", "party_printed") == ["fail"] and "Eichenallee" in s[0].detail
    # the delivery block alone: nothing
    alone = page_doc([(50, 40, "Juno Metallbau GmbH & Co. KG"), (400, 40, "Lieferadresse:"),
                      (400, 52, "Lukas Hartmann"), (400, 64, "Birkenweg 14"), (400, 76, "6916 Luzern")])
    assert P.party_printed(ctx(rec, doc=alone)) == []


def test_party_printed_says_nothing_for_a_delivery_name_printed_once_or_not_over_an_address():
    rec = {k: v for k, v in dict(GOOD, seller_name="Software Meijer B.V.").items() if k != "buyer_name"}
    once = [line for line in _DELIVERED if line[1] not in (100, 112, 124)]
    assert P.party_printed(ctx(rec, doc=page_doc(once))) == []
    # the name again, but over no address (a contact line), or in the seller's or the bank's block
    no_address = [line if line[1] != 112 else (50, 112, "Tel. 020 123 4567") for line in _DELIVERED if line[1] != 124]
    assert P.party_printed(ctx(rec, doc=page_doc(no_address))) == []
    banked = [line for line in once] + [(300, 88, "Bank / Rekeninghouder:"), (300, 100, "Femke Bakker"),
                                        (300, 112, "Stationsstraat 78")]
    assert P.party_printed(ctx(rec, doc=page_doc(banked))) == []
    # the seller's own name under the delivery heading, or a buyer that is read
    seller = [line if line[1] != 172 else (50, 172, "Software Meijer B.V.") for line in _DELIVERED]
    assert not [s for s in P.party_printed(ctx(rec, doc=page_doc(seller))) if "delivery block's name" in s.detail]
    assert P.party_printed(ctx(dict(rec, buyer_name="Femke Bakker"), doc=page_doc(_DELIVERED))) == []


def test_party_printed_a_private_buyer_over_an_address():
    # a person's name over a street and town, without a caption, under the seller's name
    rec = {k: v for k, v in dict(GOOD, seller_name="Baker Software Pty Ltd").items() if k != "buyer_name"}
    lines = [(50, 40, "Baker Software Pty Ltd"), (330, 46, "Commercial Invoice"), (50, 64, "Emma Smith"),
             (330, 64, "Invoice ID:"), (50, 76, "240 Victoria Drive"), (330, 76, "FAC-72983836"),
             (50, 88, "Sydney NSW 9857"), (50, 160, "Description Qty Price"), (50, 300, "Total 131.22")]
    s = P.party_printed(ctx(rec, doc=page_doc(lines)))
    assert by(s, "buyer_name", "party_printed") == ["fail"] and "Emma Smith" in s[0].detail
    # the seller's own name, a contact line, a person under a bank heading, in the page's lower half, or no address
    for change in ({64: (50, 64, "Baker Software")}, {64: (50, 64, "Tel. 020 123 4567")},
                   {52: (50, 52, "Bank account:")}, {76: (50, 76, "Training session"), 88: (50, 88, "2 hrs 60.86")}):
        other = sorted([ln for ln in lines if ln[1] not in change] + list(change.values()), key=lambda ln: (ln[1], ln[0]))
        if 52 in change:
            other = [ln for ln in other if ln[1] != 40]
        assert by(P.party_printed(ctx(rec, doc=page_doc(other))), "buyer_name", "party_printed") == [], change
    low = [ln if ln[1] not in (64, 76, 88) else (ln[0], ln[1] + 200, ln[2]) for ln in lines] + [(50, 400, "Page 1/1")]
    assert by(P.party_printed(ctx(rec, doc=page_doc(sorted(low, key=lambda ln: (ln[1], ln[0]))))), "buyer_name",
              "party_printed") == []
    assert P.party_printed(ctx(dict(rec, buyer_name="Emma Smith"), doc=page_doc(lines))) == []


@pytest.mark.parametrize("check", [X.id_extent, L.name_label_prefix, P.label_printed, P.party_printed, P.address_printed])
def test_conformance(check):
    doc = page_doc()
    assert_conformant(check, ctx(GOOD, doc=doc, evidence={"seller_vat_id": at(doc, "seller_vat_id", "DE136695976")}))


def _verify(record: dict, verify_block: dict | None = None, history=None):
    schema = dict(INVOICE, **({"x-docassay": {"verify": verify_block}} if verify_block else {}))
    cal = Calibrator({POOLED: FamilyModel(["bias"], [5.0])})       # every value verified
    return verify(VerifyContext(schema=schema, record=record, document=page_doc(), calibrator=cal,
                                min_confidence=0.9, history=history))


def test_a_missing_optional_value_whose_label_is_printed_is_shown_and_holds_back_on_request():
    rec = {k: v for k, v in GOOD.items() if k != "due_date"}
    v = _verify(rec, {"missing_printed": "review"})
    f = v.fields["due_date"]
    assert f.status == "missing" and f.required and "due_date" in v.doubtful
    assert [s.check for s in f.checks] == ["label_printed"]
    assert "label_printed" in f.to_json()["checks"][0]["check"]
    rep = _verify(rec, {"missing_printed": "report"})
    assert "due_date" not in rep.doubtful and rep.fields["due_date"].checks        # shown, not holding back
    assert rep.fields["due_date"].checks[0].check == "label_printed"
    with pytest.raises(VerifyError, match="missing_printed"):
        ConfidencePolicy.from_schema(dict(INVOICE, **{"x-docassay": {"verify": {"missing_printed": "x"}}}))


def test_the_default_holds_an_empty_printed_field_until_a_persons_decision_on_the_format_confirms_it():
    rec = {k: v for k, v in GOOD.items() if k != "due_date"}
    assert ConfidencePolicy.from_schema(INVOICE).missing_printed == "confirm"
    assert "due_date" in _verify(rec).doubtful                                     # no history: held
    h = MemoryHistory(exclude_sha256="new")
    h.accept("auto", rec, {})                                                      # auto-accepted: not trusted
    assert "due_date" in _verify(rec, history=h).doubtful
    h.accept("filled", GOOD, {}, person=True)                                      # a person filled it in
    assert "due_date" in _verify(rec, history=h).doubtful
    h.accept("seen", dict(rec, buyer_name="Corrected GmbH"), {}, person=True)     # corrected others, left it empty
    v = _verify(rec, history=h)
    assert "due_date" not in v.doubtful and v.fields["due_date"].checks[0].check == "label_printed"
    assert not v.fields["due_date"].required
    assert "due_date" in _verify(rec, {"missing_printed": "review"}, history=h).doubtful    # review: always held
    h.accept("filled-again", GOOD, {}, person=True)                                # the last decision counts
    assert "due_date" in _verify(rec, history=h).doubtful
    own = MemoryHistory(exclude_sha256="seen")                                     # its own review is not evidence
    own.accept("seen", rec, {}, person=True)
    assert "due_date" in _verify(rec, history=own).doubtful


def test_a_failing_check_the_family_never_learned_counts_at_the_family_prior():
    cal = Calibrator({POOLED: FamilyModel(["bias", "a:fail"], [2.0, -1.0]),
                      "name": FamilyModel(["bias", "b:fail", "c:fail", "d:pass"], [2.0, -2.0, -4.0, 1.0])})
    assert cal.fail_prior("name") == pytest.approx(-3.0)
    base = cal.predict("name", {"bias": 1.0})
    # pooled knows a:fail weaker than the prior -> the prior; nobody knows z:fail -> the prior
    assert cal.unseen_fails("name", {"bias": 1.0, "a:fail": 1.0, "z:fail": 1.0, "y:pass": 1.0}) == \
        {"a:fail": -3.0, "z:fail": -3.0}
    # pooled learned it stronger than the prior -> the pooled weight
    strong = Calibrator({POOLED: FamilyModel(["bias", "a:fail"], [2.0, -5.0]), "name": cal.families["name"]})
    assert strong.unseen_fails("name", {"bias": 1.0, "a:fail": 1.0}) == {"a:fail": -5.0}
    assert cal.predict("name", {"bias": 1.0, "z:fail": 1.0}) < base
    cal.meta["unseen_fail"] = "ignore"
    assert cal.predict("name", {"bias": 1.0, "z:fail": 1.0}) == base
    with pytest.raises(ValueError, match="unseen_fail"):
        Calibrator.fit([], unseen_fail="x") if False else Calibrator.fit(
            [__import__("docassay.verifiers.confidence", fromlist=["Example"]).Example("id", {"bias": 1.0}, True)],
            unseen_fail="x")


def test_id_extent_a_value_in_the_next_column_is_not_more_of_the_code():
    doc = page_doc([(50, 60, "Rechnung Nr.: 471102"), (400, 60, "P7627415")])
    c = ctx(GOOD, doc=doc, evidence={"invoice_number": at(doc, "invoice_number", "471102")})
    assert by(X.id_extent(c), "invoice_number", "id_extent") == []


def test_a_name_in_the_delivery_block_that_the_buyer_block_prints_too_is_no_rival():
    from docassay.verifiers.checks import roles as R
    lines = [(50, 60, "Rechnung Nr. 471102"), (50, 100, "Rechnungsempfänger:"), (50, 112, "Kunden AG Mitte"),
             (300, 100, "Lieferanschrift:"), (300, 112, "Kunden AG Mitte")]
    doc = page_doc(lines)
    in_delivery = at(doc, "buyer_name", "Kunden AG Mitte", occurrence=1)
    c = ctx(GOOD, doc=doc, evidence={"buyer_name": in_delivery})
    assert by(R.party_block(c), "buyer_name", "party_block") == ["pass"]
    doc = page_doc([line for line in lines if line[0] == 300 or line[1] == 60])
    c = ctx(GOOD, doc=doc, evidence={"buyer_name": at(doc, "buyer_name", "Kunden AG Mitte")})
    assert by(R.party_block(c), "buyer_name", "party_block") == ["fail"]


def test_a_since_year_slogan_is_no_address_and_haftungsbeschraenkt_is_a_legal_form():
    from docassay.verifiers.checks.plausibility import address_verdict
    from docassay.verifiers.checks.vocabulary import is_legal_line
    assert address_verdict("Seit 1987 für Sie da")[0] == "fail" and address_verdict("SINDS 1964")[0] == "fail"
    assert address_verdict("Goethegasse 122 82292 Hannover")[0] == "pass"
    assert is_legal_line("(HAFTUNGSBESCHRÄNKT)") and not is_legal_line("Hannover")


def test_label_printed_finds_the_value_after_its_own_label_on_a_busy_line():
    rec = {k: v for k, v in GOOD.items() if k != "seller_vat_id"}
    doc = page_doc([(50, 60, "Rechnung Nr. 471102"), (50, 80, "Tel. 02.30.69.34.17 · Numéro de TVA FR61134924979")])
    assert by(P.label_printed(ctx(rec, doc=doc)), "seller_vat_id", "label_printed") == ["fail"]


def test_the_invoice_a_credit_note_refers_to_is_another_number():
    from docassay.verifiers.checks.labels import nearest_meanings
    assert nearest_meanings("Réf. facture")[0] == {"other_number"}
    assert nearest_meanings("N° de facture")[0] == {"document_number"}


# The buyer's block printed without a caption, a delivery block under it (a layout nobody tuned for).
_DELIVERY_BELOW = [(50, 40, "Lieferant GmbH · Lieferantenstraße 20 · 80333 München"),
                   (50, 60, "Reinigung Hoffmann SA"), (50, 72, "Schulring 85"), (50, 84, "7853 Luzern"),
                   (50, 120, "Lieferanschrift"), (50, 132, "Müller Systeme SA"), (50, 144, "Bergweg 51"),
                   (50, 156, "8084 Lausanne"), (400, 60, "Rechnung Nr. 471102")]


def test_buyer_elsewhere_the_delivery_recipient_read_for_the_buyer():
    doc = page_doc(_DELIVERY_BELOW)
    rec = dict(GOOD, buyer_name="Müller Systeme SA")
    c = ctx(rec, doc=doc, evidence={"buyer_name": at(doc, "buyer_name", "Müller Systeme SA", how="position")})
    s = P.buyer_elsewhere(c)
    assert by(s, "buyer_name", "buyer_elsewhere") == ["fail"] and "Reinigung Hoffmann SA" in s[0].detail, s
    assert_conformant(P.buyer_elsewhere, c)


def test_buyer_elsewhere_says_nothing_for_the_buyers_own_block_or_one_company():
    doc = page_doc(_DELIVERY_BELOW)
    rec = dict(GOOD, buyer_name="Reinigung Hoffmann SA")                         # the right block: no heading above
    assert P.buyer_elsewhere(ctx(rec, doc=doc, evidence={"buyer_name": at(doc, "buyer_name", "Reinigung Hoffmann SA")})) == []
    # delivery to the buyer itself: the same name in both blocks
    same = [line if line[2] != "Müller Systeme SA" else (50, 132, "Reinigung Hoffmann SA") for line in _DELIVERY_BELOW]
    doc = page_doc(same)
    ev = {"buyer_name": at(doc, "buyer_name", "Reinigung Hoffmann SA", occurrence=1)}
    assert P.buyer_elsewhere(ctx(dict(GOOD, buyer_name="Reinigung Hoffmann SA"), doc=doc, evidence=ev)) == []
    # no other company block on the page (only the seller's, or a bank holder's)
    alone = [line for line in _DELIVERY_BELOW if line[1] not in (60, 72, 84)] + [
        (400, 200, "Lieferant GmbH"), (400, 212, "Lieferantenstraße 20"),
        (400, 240, "Kontoinhaber: Hoffmann Holding AG"), (400, 252, "Bankstraße 2")]
    doc = page_doc(alone)
    ev = {"buyer_name": at(doc, "buyer_name", "Müller Systeme SA")}
    assert P.buyer_elsewhere(ctx(dict(GOOD, buyer_name="Müller Systeme SA"), doc=doc, evidence=ev)) == []
    # a buyer's name under the buyer's own heading is not judged
    doc = page_doc(PAGE)
    assert P.buyer_elsewhere(ctx(GOOD, doc=doc, evidence={"buyer_name": at(doc, "buyer_name", "Kunden AG Mitte")})) == []


def test_buyer_elsewhere_a_share_capital_notice_is_no_company_block():
    lines = [line for line in _DELIVERY_BELOW if line[1] not in (60, 72, 84)] + [
        (50, 300, "SAS au capital de 1 000 €"), (50, 312, "12 Rue de la Paix"), (50, 324, "75002 Paris")]
    doc = page_doc(lines)
    ev = {"buyer_name": at(doc, "buyer_name", "Müller Systeme SA")}
    assert P.buyer_elsewhere(ctx(dict(GOOD, buyer_name="Müller Systeme SA"), doc=doc, evidence=ev)) == []
