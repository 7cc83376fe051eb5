"""Conformance cases of the label checks (verifiers.checks.labels) and the judging vocabulary."""
from __future__ import annotations

import pytest

from docassay.verifiers.checks import labels as L
from docassay.verifiers.checks.vocabulary import heading_meaning, is_label_text, meanings_in, tax_inclusion
from tests.verifiers.checkkit import GOOD, RECEIPT, assert_conformant, at, by, ctx, page_doc


def test_longest_phrase_wins():
    assert [m for m, *_ in meanings_in("Due date")] == ["due_date"]
    assert {m for m, *_ in meanings_in("Liefer- und Leistungsdatum:")} == {"delivery_date"}
    # a bare "date" after a date's cue completes that cue, it is no issue date of its own
    assert [(m, p) for m, p, *_ in meanings_in("Payment due date:")] == [("due_date", "payment due date")]
    assert [m for m, *_ in meanings_in("Invoice no Date")] == ["document_number", "issue_date"]


def test_headings_and_labels():
    assert heading_meaning("Käufer/Leistungsempfänger:") == "buyer"
    assert heading_meaning("Bill To") == "buyer"
    assert heading_meaning("Lieferant GmbH") is None                    # a name, not a heading
    assert is_label_text("Payment Terms") and is_label_text("Delivery address") and is_label_text("Kunde:")
    assert not is_label_text("Kunden AG Mitte")


def test_tax_inclusion():
    assert tax_inclusion("TOTAL INCL. OF GST") == "gross_total"
    assert tax_inclusion("Total sin IVA:") == "net_total"
    assert tax_inclusion("incl. GST 6 %") is None                       # the tax itself
    assert tax_inclusion("GST @6% INCLUDED IN TOTAL") == "tax_total"
    assert tax_inclusion("Summe") is None


def test_label_meaning_supports_and_contradicts():
    doc = page_doc()
    good = ctx(GOOD, doc=doc, evidence={"due_date": at(doc, "due_date", "04.04.2018"),
                                        "issue_date": at(doc, "issue_date", "05.03.2018")})
    s = L.label_meaning(good)
    assert by(s, "due_date", "label_meaning") == ["pass"] and by(s, "issue_date", "label_meaning") == ["pass"]
    wrong = ctx(dict(GOOD, due_date="2018-03-01"), doc=doc, evidence={"due_date": at(doc, "due_date", "01.03.2018")})
    assert by(L.label_meaning(wrong), "due_date", "label_meaning") == ["fail"]      # "Lieferdatum"


def test_label_meaning_veto_on_the_line():
    doc = page_doc([(50, 40, "ZUGFeRD-Version: 2.1 vom 24.03.2020"), (50, 60, "Zahlbar bis 15.03.2018 mit 2 % Skonto")])
    c = ctx(dict(GOOD, issue_date="2020-03-24", due_date="2018-03-15"), doc=doc,
            evidence={"issue_date": at(doc, "issue_date", "24.03.2020", label="vom"),
                      "due_date": at(doc, "due_date", "15.03.2018", label="Zahlbar bis")})
    s = L.label_meaning(c)
    assert by(s, "issue_date", "label_meaning") == ["fail"] and by(s, "due_date", "label_meaning") == ["fail"]


@pytest.mark.parametrize("line,outcome", [("USt-IdNr. Kunde ATU97594706", "fail"), ("N° TVA client FR55191413590", "fail"),
                                          ("USt-IdNr. ATU97594706", "pass"),
                                          ("Uw BTW-nummer: NL083265105B96", "fail"),    # addressed to the reader
                                          ("Your VAT ID: GB123456789", "fail"), ("Our VAT ID: GB123456789", "pass"),
                                          ("Kunden-USt-IdNr.: DE476078144", "fail"),   # the customer's
                                          ("Customer VAT no. GB123456789", "fail"),
                                          ("Thank you for your order. VAT no. GB123456789", "pass")])
def test_label_meaning_the_buyers_vat_id_is_not_the_sellers(line, outcome):
    doc = page_doc([(50, 40, "Ihr Kontakt Sabine Fischer"), (300, 40, line)])
    value = line.split()[-1]
    c = ctx(dict(GOOD, seller_vat_id=value), doc=doc, evidence={"seller_vat_id": at(doc, "seller_vat_id", value)})
    assert by(L.label_meaning(c), "seller_vat_id", "label_meaning") == [outcome]


@pytest.mark.parametrize("line,field,outcome", [
    ("Netto / Net Total   473,00", "gross_total", ["fail"]),     # the German half says net
    ("Netto / Net Total   473,00", "net_total", ["pass"]),
    ("Net Total   473,00", "gross_total", []),                   # on a receipt the final amount: no opinion
])
def test_label_meaning_of_a_bilingual_label_with_an_ambiguous_half(line, field, outcome):
    doc = page_doc([(50, 40, line)])
    c = ctx(dict(GOOD, **{field: 473.0}), doc=doc, evidence={field: at(doc, field, "473,00")})
    assert by(L.label_meaning(c), field, "label_meaning") == outcome


def test_label_meaning_from_the_anchor_label_when_nothing_is_left_of_the_value():
    doc = page_doc([(50, 40, "Cash"), (50, 52, "50.00")])
    c = ctx({"total": 50.0}, schema=RECEIPT, doc=doc, evidence={"total": at(doc, "total", "50.00", label="=CASH")})
    assert by(L.label_meaning(c), "total", "label_meaning") == ["fail"]
    c = ctx({"total": 50.0}, schema=RECEIPT, doc=doc,
            evidence={"total": at(doc, "total", "50.00", label="=TOTAL INCL. GST")})
    assert by(L.label_meaning(c), "total", "label_meaning") == ["pass"]


def test_final_total():
    doc = page_doc([(50, 40, "Subtotal 20.98"), (50, 52, "Total incl. GST 20.98"), (50, 64, "Rounding 0.02"),
                    (50, 76, "Rounded total 21.00"), (50, 88, "Cash 50.00")])
    inter = ctx({"total": 20.98}, schema=RECEIPT, doc=doc, evidence={"total": at(doc, "total", "20.98", occurrence=1)})
    assert by(L.final_total(inter), "total", "final_total") == ["fail"]
    final = ctx({"total": 21.0}, schema=RECEIPT, doc=doc, evidence={"total": at(doc, "total", "21.00")})
    assert by(L.final_total(final), "total", "final_total") == ["pass"]
    summary = page_doc([(50, 40, "Total 21.00"), (50, 52, "GST 6% Total 19.81 1.19")])     # a tax summary row
    c = ctx({"total": 21.0}, schema=RECEIPT, doc=summary, evidence={"total": at(summary, "total", "21.00")})
    assert by(L.final_total(c), "total", "final_total") == ["pass"]


def test_final_net():
    lines = [(50, 40, "ZWISCHENSUMME: 227.87"), (50, 52, "NACHLASS 3%: -6.84"),
             (50, 64, "3.8% 88.46 3.36 SUMME NETTO: 221.03"), (50, 76, "UST. GESAMT: 10.20"), (50, 88, "ENDBETRAG: 231.23")]
    doc = page_doc(lines)
    sub = ctx(dict(GOOD, net_total=227.87, tax_total=10.2, gross_total=231.23), doc=doc,
              evidence={"net_total": at(doc, "net_total", "227.87")})
    s = L.final_net(sub)
    assert by(s, "net_total", "final_net") == ["fail"] and "SUMME NETTO" in s[0].detail
    assert by(s, "tax_total", "final_net") == []                  # 221.03 + 10.20 = 231.23: the tax is not tied to it
    tied = ctx(dict(GOOD, net_total=227.87, tax_total=3.36, gross_total=231.23), doc=doc,
               evidence={"net_total": at(doc, "net_total", "227.87")})
    assert by(L.final_net(tied), "tax_total", "final_net") == ["fail"]
    net = ctx(dict(GOOD, net_total=221.03), doc=doc, evidence={"net_total": at(doc, "net_total", "221.03")})
    assert L.final_net(net) == []
    # per-rate lines below the net total ("Netto 19 %: 400,00") are no later net total
    doc = page_doc([(50, 40, "Nettobetrag 473,00"), (50, 52, "Netto 19 %: 198,00"), (50, 64, "Netto 7 %: 275,00")])
    c = ctx(dict(GOOD, net_total=473.0), doc=doc, evidence={"net_total": at(doc, "net_total", "473,00")})
    assert L.final_net(c) == []


def test_total_last():
    doc = page_doc([(50, 40, "TOTAL: 96.00 5.76 101.76"), (50, 60, "TOTAL 12.00")])
    col = ctx({"total": 96.0}, schema=RECEIPT, doc=doc, evidence={"total": at(doc, "total", "96.00")})
    assert by(L.total_last(col), "total", "total_last") == ["fail"]
    last = ctx({"total": 101.76}, schema=RECEIPT, doc=doc, evidence={"total": at(doc, "total", "101.76")})
    assert by(L.total_last(last), "total", "total_last") == []                     # last of several: no opinion
    alone = ctx({"total": 12.0}, schema=RECEIPT, doc=doc, evidence={"total": at(doc, "total", "12.00")})
    assert by(L.total_last(alone), "total", "total_last") == ["pass"]


def test_total_rival_label():
    doc = page_doc([(50, 40, "TOTAL INCL. GST@6% RM 48.10"), (50, 60, "CASH RM 50.20"), (50, 80, "CHANGE RM 2.10"),
                    (50, 100, "ROUNDING RM 48.10")])
    cash = ctx({"total": 50.2}, schema=RECEIPT, doc=doc, evidence={"total": at(doc, "total", "50.20")})
    s = L.total_rival_label(cash)
    assert by(s, "total", "total_rival_label") == ["fail"] and "48.10" in s[0].detail
    change = ctx({"total": 2.1}, schema=RECEIPT, doc=doc, evidence={"total": at(doc, "total", "2.10")})
    assert by(L.total_rival_label(change), "total", "total_rival_label") == ["fail"]
    total = ctx({"total": 48.1}, schema=RECEIPT, doc=doc, evidence={"total": at(doc, "total", "48.10")})
    assert L.total_rival_label(total) == []                                          # labelled the total
    rounded = ctx({"total": 48.1}, schema=RECEIPT, doc=doc, evidence={"total": at(doc, "total", "48.10", occurrence=1)})
    assert L.total_rival_label(rounded) == []                                        # the total's amount again
    near = page_doc([(50, 40, "TOTAL SALES (INCLUSIVE GST) RM 181.98"), (50, 60, "ROUNDING RM 182.00")])
    c = ctx({"total": 182.0}, schema=RECEIPT, doc=near, evidence={"total": at(near, "total", "182.00")})
    assert L.total_rival_label(c) == []                                              # a cash rounding
    only = page_doc([(50, 40, "SUBTOTAL 13.50"), (50, 60, "CASH 13.50")])
    c = ctx({"total": 13.5}, schema=RECEIPT, doc=only, evidence={"total": at(only, "total", "13.50")})
    assert L.total_rival_label(c) == []                                              # no total line: the subtotal is it
    row = page_doc([(50, 40, "TOTAL: 96.00 5.76"), (50, 60, "GST 5.76")])
    c = ctx({"total": 5.76}, schema=RECEIPT, doc=row, evidence={"total": at(row, "total", "5.76", occurrence=1)})
    assert L.total_rival_label(c) == []                                              # a summary row is no total line
    assert L.total_rival_label(ctx({"total": 50.2}, schema=RECEIPT)) == []            # no document
    assert_conformant(L.total_rival_label, cash)


def test_card_expiry_is_no_issue_date():
    doc = page_doc([(50, 40, "CARD EXPIRY: 30/09/18")])
    c = ctx({"date": "2018-09-30"}, schema=RECEIPT, doc=doc, evidence={"date": at(doc, "date", "30/09/18")})
    assert by(L.label_meaning(c), "date", "label_meaning") == ["fail"]


def test_item_descriptions():
    assert by(L.item_descriptions(ctx(GOOD)), "line_items", "item_descriptions") == ["pass"]
    for bad in ("Abrechnungskreis 1 Beschreibung", "GTIN Art-Nr Lieferant Zitronensäure", "R33954 Large coffee beans",
                "8,10 3,00"):
        rec = dict(GOOD, line_items=[{"description": bad, "line_total": 1.0}])
        assert by(L.item_descriptions(ctx(rec)), "line_items", "item_descriptions") == ["fail"], bad


def test_value_not_label():
    assert by(L.value_not_label(ctx(GOOD)), "buyer_name", "value_not_label") == ["pass"]
    assert by(L.value_not_label(ctx(dict(GOOD, buyer_name="Payment Terms"))), "buyer_name", "value_not_label") == ["fail"]
    assert by(L.value_not_label(ctx(dict(GOOD, buyer_name="Lieferadresse:"))), "buyer_name", "value_not_label") == ["fail"]


@pytest.mark.parametrize("name,check", L.CHECKS)
def test_conformance(name, check):
    doc = page_doc()
    assert_conformant(check, ctx(GOOD, doc=doc, evidence={"due_date": at(doc, "due_date", "04.04.2018")}))


def test_other_document_names_a_referenced_invoice_order_or_version():
    doc = page_doc([(50, 40, "Gutschrift Nr. G-100 vom 11.12.2018"),
                    (50, 60, "Ursprungsrechnung R-51740 vom 29.09.2018"),
                    (50, 80, "Ref. factura RG7226 del 24/08/2019"),
                    (50, 100, "Auftrag 88655 vom 30.11.2018"),
                    (50, 120, "Version 2.1 vom 24.03.2020"),
                    (50, 140, "avoir sur facture FA-77")])
    own = ctx(dict(GOOD, invoice_number="G-100", issue_date="2018-12-11"), doc=doc,
              evidence={"invoice_number": at(doc, "invoice_number", "G-100"),
                        "issue_date": at(doc, "issue_date", "11.12.2018")})
    assert by(L.other_document(own), "invoice_number", "other_document") == []
    assert by(L.other_document(own), "issue_date", "other_document") == []
    for number, date in (("R-51740", "29.09.2018"), ("RG7226", "24/08/2019"), ("FA-77", None),
                         (None, "30.11.2018"), (None, "24.03.2020")):
        ev = {}
        if number:
            ev["invoice_number"] = at(doc, "invoice_number", number)
        if date:
            ev["issue_date"] = at(doc, "issue_date", date)
        s = L.other_document(ctx(dict(GOOD, invoice_number=number or "x", issue_date="2018-01-01"), doc=doc,
                                 evidence=ev))
        if number:
            assert by(s, "invoice_number", "other_document") == ["fail"], number
        if date:
            assert by(s, "issue_date", "other_document") == ["fail"], date


def test_other_document_from_the_anchor_label_and_the_column_heading():
    doc = page_doc([(50, 20, "FACTURA RECTIFICATIVA RG4890"), (50, 40, "RG7226"), (50, 60, "Bestelldatum"),
                    (50, 72, "03.10.2019")])
    c = ctx(dict(GOOD, invoice_number="RG7226", issue_date="2019-10-03"), doc=doc,
            evidence={"invoice_number": at(doc, "invoice_number", "RG7226", label="Ref. factura"),
                      "issue_date": at(doc, "issue_date", "03.10.2019", how="position")})
    s = L.other_document(c)
    assert by(s, "invoice_number", "other_document") == ["fail"] and by(s, "issue_date", "other_document") == ["fail"]
    ok = ctx(dict(GOOD, invoice_number="RG7226"), doc=doc,
             evidence={"invoice_number": at(doc, "invoice_number", "RG7226", label="Rechnungsnummer")})
    assert by(L.other_document(ok), "invoice_number", "other_document") == []


def test_governing_label():
    assert L.governing_label("Ursprungsrechnung R-51740 vom") == "Ursprungsrechnung R-51740 vom"
    assert L.governing_label("Rechnung Nr. 12 Bestellnummer:") == "Bestellnummer:"
    assert L.governing_label("Datum:") == "Datum:"
    assert L.governing_label("Factura original IN-2019-6914 de fecha") == "Factura original IN-2019-6914 de fecha"
    assert L.governing_label("Invoice No. 123 Date") == "Date"          # a date word alone is the date's own label


@pytest.mark.parametrize("case", [ctx(m) for m in __import__("tests.verifiers.checkkit", fromlist=["MALFORMED"]).MALFORMED])
def test_other_document_conformance(case):
    assert_conformant(L.other_document, case)


def test_other_document_a_referenced_invoice_only_on_a_credit_note():
    doc = page_doc([(50, 20, "FACTURE"), (50, 40, "Réf. facture: FAC/2021/7038256")])
    own = ctx(dict(GOOD, invoice_number="FAC/2021/7038256"), doc=doc,
              evidence={"invoice_number": at(doc, "invoice_number", "FAC/2021/7038256")})
    assert by(L.other_document(own), "invoice_number", "other_document") == []
    credit = ctx(dict(GOOD, invoice_number="FAC/2021/7038256", gross_total=-562.87), doc=doc,
                 evidence={"invoice_number": at(doc, "invoice_number", "FAC/2021/7038256")})
    assert by(L.other_document(credit), "invoice_number", "other_document") == ["fail"]
    assert L.credit_note(credit) and not L.credit_note(own)


def test_other_document_a_credit_notes_sentence_about_the_credited_invoice():
    # "Se rapporte à la facture F17554 du 27-09-2017" on a credit note: the date is the credited invoice's
    for line, date, iso in (("Se rapporte à la facture F17554 du 27-09-2017", "27-09-2017", "2017-09-27"),
                            ("Relates to invoice F514 dated 2019-03-02", "2019-03-02", "2019-03-02"),
                            ("Factura original IN-2019-6914 de fecha 17/02/2019", "17/02/2019", "2019-02-17"),
                            ("Facture initiale F-88 en date du 17/02/2019", "17/02/2019", "2019-02-17")):
        doc = page_doc([(50, 20, "AVOIR"), (50, 40, line)])
        c = ctx(dict(GOOD, issue_date=iso, gross_total=-562.87), doc=doc,
                evidence={"issue_date": at(doc, "issue_date", date)})
        assert by(L.other_document(c), "issue_date", "other_document") == ["fail"], line


def test_label_meaning_a_referenced_invoice_label_on_an_invoice_is_its_own_number():
    doc = page_doc([(50, 20, "FACTURE"), (50, 40, "Réf. facture: FAC/2021/7038256")])
    ev = {"invoice_number": at(doc, "invoice_number", "FAC/2021/7038256")}
    own = ctx(dict(GOOD, invoice_number="FAC/2021/7038256"), doc=doc, evidence=ev)
    assert by(L.label_meaning(own), "invoice_number", "label_meaning") == []
    credit = ctx(dict(GOOD, invoice_number="FAC/2021/7038256", gross_total=-562.87), doc=doc, evidence=ev)
    assert by(L.label_meaning(credit), "invoice_number", "label_meaning") == ["fail"]


def test_label_meaning_the_readers_vat_label_found_by_the_anchor():
    # nothing that labels the value stands left of it on its line: the label it was found by decides
    doc = page_doc([(50, 40, "Uw BTW-nummer:"), (50, 52, "Ref NL187575459B99")])
    c = ctx(dict(GOOD, seller_vat_id="NL187575459B99"), doc=doc,
            evidence={"seller_vat_id": at(doc, "seller_vat_id", "NL187575459B99", label="=Uw BTW-nummer:")})
    assert by(L.label_meaning(c), "seller_vat_id", "label_meaning") == ["fail"]
