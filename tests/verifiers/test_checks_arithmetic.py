"""Conformance cases of the arithmetic checks (verifiers.checks.arithmetic)."""
from __future__ import annotations

import copy

import pytest

from docassay.verifiers.checks import arithmetic as A
from tests.verifiers.checkkit import GOOD, RECEIPT, assert_conformant, at, by, ctx, page_doc


def test_totals_add_up():
    s = A.totals_add_up(ctx(GOOD))
    assert {x.field for x in s} == {"net_total", "tax_total", "gross_total"} and all(x.outcome == "pass" for x in s)
    bad = A.totals_add_up(ctx(dict(GOOD, tax_total=70.0)))
    assert by(bad, "tax_total", "totals_add_up") == ["fail"]
    assert A.totals_add_up(ctx({"net_total": 1.0, "gross_total": 1.19})) == []        # tax missing: not judged


def test_items_sum():
    s = A.items_sum(ctx(GOOD))
    assert by(s, "line_items", "items_sum") == ["pass"] and by(s, "net_total", "items_sum") == ["pass"]
    rec = copy.deepcopy(GOOD)
    rec["line_items"].append({"description": "Rabatt", "quantity": 1.0, "unit_price": 321.4, "line_total": 382.47})
    assert by(A.items_sum(ctx(rec)), "line_items", "items_sum") == ["fail"]


ITEM_ROWS = [(50, 300, "Pos Bezeichnung Menge Preis Betrag"), (50, 312, "1 Trennblätter A4 20 9,90 198,00"),
             (50, 324, "2 Joghurt Banane 50 5,50 275,00")]


def test_items_sum_with_printed_allowances_and_charges():
    # items 473.00, a document-level allowance and a charge printed after the rows: net 468.27
    doc = page_doc([*ITEM_ROWS, (50, 348, "Positionssumme 473,00"), (50, 360, "Rechnungsrabatt 2 % -9,46"),
                    (50, 372, "Versandkosten 4,73"), (50, 384, "Nettobetrag 468,27")])
    rec = dict(GOOD, net_total=468.27, tax_total=88.97, gross_total=557.24)
    s = A.items_sum(ctx(rec, doc=doc))
    assert by(s, "line_items", "items_sum") == ["pass"] and "-9.46, +4.73" in s[0].detail, s
    assert by(s, "net_total", "items_sum") == ["pass"]
    # an unsigned allowance is a reduction ("Abschlag 9,46")
    doc = page_doc([*ITEM_ROWS, (50, 360, "Abschlag 9,46"), (50, 372, "Versandkosten 4,73")])
    assert by(A.items_sum(ctx(rec, doc=doc)), "line_items", "items_sum") == ["pass"]
    # no allowance printed: the gap is not explained
    doc = page_doc([*ITEM_ROWS, (50, 372, "Nettobetrag 468,27")])
    assert by(A.items_sum(ctx(rec, doc=doc)), "line_items", "items_sum") == ["fail"]
    assert by(A.items_sum(ctx(rec)), "line_items", "items_sum") == ["fail"]          # no document: no allowances
    # a discount printed inside the item rows belongs to its row, not to the document
    doc = page_doc([ITEM_ROWS[0], ITEM_ROWS[1], (50, 318, "abzgl. Rabatt -9,46"), (50, 320, "Versandkosten 4,73"),
                    ITEM_ROWS[2], (50, 372, "Nettobetrag 468,27")])
    assert by(A.items_sum(ctx(rec, doc=doc)), "line_items", "items_sum") == ["fail"]
    # a tax line is no charge
    doc = page_doc([*ITEM_ROWS, (50, 360, "Rabatt -9,46"), (50, 372, "zzgl. MwSt. Versand 4,73")])
    assert by(A.items_sum(ctx(rec, doc=doc)), "line_items", "items_sum") == ["fail"]


def test_items_sum_credit_note():
    neg = [dict(x, quantity=-x["quantity"], line_total=-x["line_total"]) for x in GOOD["line_items"]]
    rec = dict(GOOD, line_items=neg, net_total=-468.27, tax_total=-88.97, gross_total=-557.24)
    # a credit note's allowance is printed unsigned and reduces the credit: -473.00 + 4.73 = -468.27
    doc = page_doc([(50, 312, "1 Trennblätter A4 -20 9,90 -198,00"), (50, 324, "2 Joghurt Banane -50 5,50 -275,00"),
                    (50, 360, "Gesamtbetrag der Abschläge 4,73"), (50, 372, "Nettobetrag -468,27")])
    s = A.items_sum(ctx(rec, doc=doc))
    assert by(s, "line_items", "items_sum") == ["pass"] and "+4.73" in s[0].detail, s
    # positive lines on a credit note whose totals are negative: the sizes agree
    pos = dict(GOOD, net_total=-473.0, tax_total=-89.87, gross_total=-562.87)
    s = A.items_sum(ctx(pos))
    assert by(s, "line_items", "items_sum") == ["pass"] and "credit note" in s[0].detail
    assert by(A.items_sum(ctx(dict(pos, net_total=-470.0, gross_total=-559.3))), "line_items", "items_sum") == ["fail"]


def test_items_sum_rounding_per_line():
    # gross line totals, each rounded to the cent: 40 lines may differ from the gross by up to 20 cents
    rows = [{"description": f"Artikel {i}", "quantity": 1.0, "unit_price": 1.19, "line_total": 1.19} for i in range(40)]
    rec = {"net_total": 40.0, "tax_total": 7.35, "gross_total": 47.35, "line_items": rows}       # 40 × 1.19 = 47.60
    assert by(A.items_sum(ctx(rec)), "line_items", "items_sum") == ["fail"]                    # 25 cents: over half a cent a line
    rec = dict(rec, tax_total=7.45, gross_total=47.45)                                        # 15 cents: rounding
    assert by(A.items_sum(ctx(rec)), "line_items", "items_sum") == ["pass"]
    two = dict(rec, line_items=rows[:2], net_total=2.0, tax_total=0.23, gross_total=2.23)      # 2 × 1.19 = 2.38
    assert by(A.items_sum(ctx(two)), "line_items", "items_sum") == ["fail"]


def test_items_sum_conformant():
    doc = page_doc([*ITEM_ROWS, (50, 360, "Rabatt -9,46"), (50, 372, "Versandkosten 4,73")])
    assert_conformant(A.items_sum, ctx(dict(GOOD, net_total=468.27, tax_total=88.97, gross_total=557.24), doc=doc))


def test_line_arithmetic():
    assert by(A.line_arithmetic(ctx(GOOD)), "line_items", "line_arithmetic") == ["pass"]
    rec = copy.deepcopy(GOOD)
    rec["line_items"][1]["unit_price"] = 0.9
    assert by(A.line_arithmetic(ctx(rec)), "line_items", "line_arithmetic") == ["fail"]
    rec["line_items"] = [{"description": "x", "line_total": 3.0}]
    assert A.line_arithmetic(ctx(rec)) == []                                              # nothing to multiply


def test_tax_rate_uses_printed_rates():
    doc = page_doc()                                                    # prints "MwSt 19 %"
    assert by(A.tax_rate(ctx(GOOD, doc=doc)), "tax_total", "tax_rate") == ["pass"]
    assert by(A.tax_rate(ctx(dict(GOOD, tax_total=61.07), doc=doc)), "tax_total", "tax_rate") == ["fail"]
    assert A.tax_rate(ctx(GOOD)) == []                                  # no document: no printed rate
    assert A.tax_rate(ctx(dict(GOOD, tax_total=0.0), doc=doc)) == []     # zero-rated: not judged


def test_tax_rate_mix_of_rates_is_not_judged():
    doc = page_doc([(50, 50, "7 % 19 %"), (50, 70, "Summe 100,00")])
    rec = dict(GOOD, net_total=100.0, tax_total=13.0, gross_total=113.0)
    assert A.tax_rate(ctx(rec, doc=doc)) == []


def test_signs_agree():
    assert set(by(A.signs_agree(ctx(GOOD)), "gross_total", "signs_agree")) == {"pass"}
    credit = dict(GOOD, net_total=-7.67, tax_total=-1.12, gross_total=-8.79)
    assert by(A.signs_agree(ctx(credit)), "tax_total", "signs_agree") == ["pass"]
    mixed = dict(credit, tax_total=0.05)
    assert by(A.signs_agree(ctx(mixed)), "tax_total", "signs_agree") == ["fail"]


def test_sign_printed():
    doc = page_doc([(50, 50, "Steuer -0,15"), (50, 70, "Steuer 0,15")])
    ev_neg = at(doc, "tax_total", "-0,15")
    ev_pos = at(doc, "tax_total", "0,15")
    assert by(A.sign_printed(ctx(dict(GOOD, tax_total=-0.15), doc=doc, evidence={"tax_total": ev_neg})),
              "tax_total", "sign_printed") == ["pass"]
    assert by(A.sign_printed(ctx(dict(GOOD, tax_total=-0.15), doc=doc, evidence={"tax_total": ev_pos})),
              "tax_total", "sign_printed") == ["fail"]


@pytest.mark.parametrize("name,check", A.CHECKS)
def test_conformance(name, check):
    doc = page_doc()
    assert_conformant(check, ctx(GOOD, doc=doc, evidence={"gross_total": at(doc, "gross_total", "562,87")}))


def test_total_covers_tax():
    doc = page_doc([(50, 50, "TOTAL EV : 2.10"), (50, 70, "AMT EXCL. GST : RM73.87"), (50, 90, "GST AMT : RM4.43"),
                    (50, 110, "AMT PAID INCL. GST : RM78.30")])
    rec = {"company": "ECO SDN BHD", "date": "2016-07-29", "total": 2.1}
    fails = A.total_covers_tax(ctx(rec, schema=RECEIPT, doc=doc))
    assert by(fails, "total", "total_covers_tax") == ["fail"] and "4.43" in fails[0].detail
    assert A.total_covers_tax(ctx(dict(rec, total=78.3), schema=RECEIPT, doc=doc)) == []    # covers its tax
    assert A.total_covers_tax(ctx(dict(rec, total=4.43), schema=RECEIPT, doc=doc)) == []    # equal: not judged
    assert A.total_covers_tax(ctx(dict(rec, total=-2.1), schema=RECEIPT, doc=doc)) == []    # a refund: not judged
    sub = page_doc([(50, 50, "SUB-TOTAL (GST) 12.19"), (50, 70, "GST 6% -0.84"), (50, 90, "TOTAL 12.15")])
    assert A.total_covers_tax(ctx(dict(rec, total=12.15), schema=RECEIPT, doc=sub)) == []   # no pure tax line
    assert A.total_covers_tax(ctx(rec, schema=RECEIPT)) == []                               # no document
    big = page_doc([(50, 50, "TAX 60.01"), (50, 70, "ADJ -0.01"), (50, 90, "TOTAL 60.00")])
    assert A.total_covers_tax(ctx(dict(rec, total=60.0), schema=RECEIPT, doc=big)) == []    # no share of anything
    no_tax = page_doc([(50, 50, "TOTAL 2.10"), (50, 70, "CASH 5.00")])
    assert A.total_covers_tax(ctx(rec, schema=RECEIPT, doc=no_tax)) == []                   # no tax printed
    # a total said to include tax is no tax line; a savings line is no tax either
    incl = page_doc([(50, 50, "TOTAL INCL. GST 9.90"), (50, 70, "AHORRO TOTAL 0,93")])
    assert A.total_covers_tax(ctx(dict(rec, total=0.93), schema=RECEIPT, doc=incl)) == []


def test_total_covers_subtotal():
    doc = page_doc([(50, 50, "YELLOW LAKSA RM11.60"), (50, 70, "CENDOL RM5.30"), (50, 90, "SUBTOTAL RM53.60"),
                    (50, 110, "CASH RM100.00"), (50, 130, "CHANGE RM46.40"), (50, 150, "TAXABLE AMOUNT RM50.57")])
    rec = {"company": "LITTLE CRAVINGS SDN BHD", "date": "2018-03-18", "total": 11.6}
    fails = A.total_covers_subtotal(ctx(rec, schema=RECEIPT, doc=doc))
    assert by(fails, "total", "total_covers_subtotal") == ["fail"] and "53.60" in fails[0].detail
    assert A.total_covers_subtotal(ctx(dict(rec, total=46.4), schema=RECEIPT, doc=doc))[0].outcome == "fail"  # the change
    assert A.total_covers_subtotal(ctx(dict(rec, total=53.6), schema=RECEIPT, doc=doc)) == []   # the subtotal itself
    assert A.total_covers_subtotal(ctx(dict(rec, total=100.0), schema=RECEIPT, doc=doc)) == []  # only fails
    assert A.total_covers_subtotal(ctx(dict(rec, total=53.55), schema=RECEIPT, doc=doc)) == []  # a cash rounding
    assert A.total_covers_subtotal(ctx(dict(rec, total=-11.6), schema=RECEIPT, doc=doc)) == []  # a refund: not judged
    assert A.total_covers_subtotal(ctx(rec, schema=RECEIPT)) == []                              # no document
    # what is taken off a subtotal: a discount, a promotion, a voucher, a negative amount
    for off in ("DISCOUNT 34.00", "CASH PROMOTION 34.00", "VOUCHER 10.00", "ITEM VOID -5.00", "LESS (5.00)"):
        taken = page_doc([(50, 50, "SUBTOTAL: 251.00"), (50, 70, off), (50, 90, "TOTAL INCLUSIVE GST: 217.00")])
        assert A.total_covers_subtotal(ctx(dict(rec, total=217.0), schema=RECEIPT, doc=taken)) == [], off
    # a total label, a tax line and a summary row are no subtotal
    rows = page_doc([(50, 50, "TOTAL 12.88"), (50, 70, "GST 6% 0.77"), (50, 90, "6% 12.88 0.77 13.65")])
    assert A.total_covers_subtotal(ctx(dict(rec, total=0.77), schema=RECEIPT, doc=rows)) == []
    assert_conformant(A.total_covers_subtotal, ctx(rec, schema=RECEIPT, doc=doc))


def test_total_covers_subtotal_on_an_invoice_page():
    doc = page_doc()                                                    # prints "Nettobetrag 473,00"
    assert A.total_covers_subtotal(ctx(GOOD, doc=doc)) == []
    s = A.total_covers_subtotal(ctx(dict(GOOD, gross_total=89.87), doc=doc))
    assert by(s, "gross_total", "total_covers_subtotal") == ["fail"]


def test_total_covers_tax_on_an_invoice_page():
    doc = page_doc()                                                    # prints "MwSt 19 % 89,87"
    assert A.total_covers_tax(ctx(GOOD, doc=doc)) == []
    assert by(A.total_covers_tax(ctx(dict(GOOD, gross_total=19.0), doc=doc)), "gross_total", "total_covers_tax") == ["fail"]
