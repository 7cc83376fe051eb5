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


def test_total_covers_tax_on_an_invoice_page():
    doc = page_doc()                                                    # prints "MwSt 19 % 89,87"
    assert A.total_covers_tax(ctx(GOOD, doc=doc)) == []
    assert by(A.total_covers_tax(ctx(dict(GOOD, gross_total=19.0), doc=doc)), "gross_total", "total_covers_tax") == ["fail"]
