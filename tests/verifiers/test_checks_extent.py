"""Conformance cases of the extent, names and items-table checks (verifiers.checks.extent, .names,
.items_table): a value each supports, one each contradicts, malformed input, determinism."""
from __future__ import annotations

import pytest

from docassay.verifiers.checks import extent as X
from docassay.verifiers.checks import items_table as T
from docassay.verifiers.checks import names as N
from docassay.verifiers.evidence import FieldEvidence
from tests.verifiers.checkkit import GOOD, RECEIPT, assert_conformant, at, by, ctx, page_doc

RECEIPT_PAGE = [(50, 40, "KIKU JAPANESE RESTAURANT"), (50, 52, "TK DIVISION KITCHEN SDN BHD"),
                (50, 64, "(CO.REG : 933109-X)"), (50, 76, "3RD FLR, AEON TAMAN MALURI SC"),
                (50, 88, "JLN JEJAKA, TAMAN MALURI CHERAS,"), (50, 100, "55100 KUALA LUMPUR"),
                (50, 112, "TEL: 03-9285 6000"), (50, 150, "TOTAL 12.00")]


def _span(doc, field: str, first: int, last: int) -> FieldEvidence:
    """Evidence covering the page's lines first..last (a value printed over several lines)."""
    lines = doc.pages[0].lines
    box = lines[first].bbox
    for ln in lines[first + 1:last + 1]:
        box = box.union(ln.bbox)
    return FieldEvidence(field, "label", text=" ".join(ln.text for ln in lines[first:last + 1]), page=1,
                         bbox=(box.x0, box.y0, box.x1, box.y1))


def _receipt(record: dict, evidence: dict, doc=None):
    return ctx(record, schema=RECEIPT, doc=doc, evidence=evidence)


def test_address_extent_whole_block_passes():
    doc = page_doc(RECEIPT_PAGE)
    v = "3RD FLR, AEON TAMAN MALURI SC JLN JEJAKA, TAMAN MALURI CHERAS, 55100 KUALA LUMPUR"
    c = _receipt({"company": "TK DIVISION KITCHEN SDN BHD", "address": v},
                 {"address": _span(doc, "address", 3, 5)}, doc)
    assert by(X.address_extent(c), "address", "address_extent") == ["pass"]


def test_address_extent_cut_at_the_top_or_the_bottom_fails():
    doc = page_doc(RECEIPT_PAGE)
    top_cut = _receipt({"address": "JLN JEJAKA, TAMAN MALURI CHERAS, 55100 KUALA LUMPUR"},
                       {"address": _span(doc, "address", 4, 5)}, doc)
    s = X.address_extent(top_cut)
    assert by(s, "address", "address_extent") == ["fail"] and "above" in s[0].detail
    bottom_cut = _receipt({"address": "3RD FLR, AEON TAMAN MALURI SC JLN JEJAKA, TAMAN MALURI CHERAS,"},
                          {"address": _span(doc, "address", 3, 4)}, doc)
    s = X.address_extent(bottom_cut)
    assert by(s, "address", "address_extent") == ["fail"] and "below" in s[0].detail


def test_address_extent_under_a_building_line_fails():
    doc = page_doc([(50, 40, "RICHTER & HOFFMANN AG"), (50, 52, "SCHILLERSTR. 10"), (50, 64, "GEBÄUDE C"),
                    (50, 76, "5572 SALZBURG"), (50, 100, "TISCH 6")])
    s = X.address_extent(_receipt({"address": "5572 SALZBURG"}, {"address": _span(doc, "address", 3, 3)}, doc))
    assert by(s, "address", "address_extent") == ["fail"] and "GEBÄUDE C" in s[0].detail


def test_address_extent_that_starts_with_another_line_fails():
    doc = page_doc(RECEIPT_PAGE)
    v = "(CO.REG : 933109-X) 3RD FLR, AEON TAMAN MALURI SC JLN JEJAKA, TAMAN MALURI CHERAS, 55100 KUALA LUMPUR"
    c = _receipt({"address": v}, {"address": _span(doc, "address", 2, 5)}, doc)
    s = X.address_extent(c)
    assert by(s, "address", "address_extent") == ["fail"] and "starts with" in s[0].detail


def test_address_extent_under_the_shops_own_name_passes():
    doc = page_doc([(50, 40, "ACME TAMAN JAYA"), (50, 52, "NO 12, JALAN SS 2/4"), (50, 64, "47300 PETALING JAYA")])
    rec = {"company": "ACME TAMAN JAYA", "address": "NO 12, JALAN SS 2/4 47300 PETALING JAYA"}
    assert by(X.address_extent(_receipt(rec, {"address": _span(doc, "address", 1, 2)}, doc)),
              "address", "address_extent") == ["pass"]
    del rec["company"]               # without the name, the line above reads as an address (taman)
    assert by(X.address_extent(_receipt(rec, {"address": _span(doc, "address", 1, 2)}, doc)),
              "address", "address_extent") == ["fail"]


def test_address_extent_without_a_place_says_nothing():
    assert X.address_extent(_receipt({"address": "55100 KUALA LUMPUR"}, {})) == []


def test_name_legal_form():
    doc = page_doc(RECEIPT_PAGE)
    brand = _receipt({"company": "KIKU JAPANESE RESTAURANT"},
                     {"company": at(doc, "company", "KIKU JAPANESE RESTAURANT")}, doc)
    s = N.name_legal_form(brand)
    assert by(s, "company", "name_legal_form") == ["fail"] and "TK DIVISION" in s[0].detail
    legal = _receipt({"company": "TK DIVISION KITCHEN SDN BHD"},
                     {"company": at(doc, "company", "TK DIVISION KITCHEN SDN BHD")}, doc)
    assert by(N.name_legal_form(legal), "company", "name_legal_form") == ["pass"]
    lone = page_doc([(50, 40, "WARUNG PAK ALI"), (50, 52, "NO 3 JALAN BUNGA")])
    c = _receipt({"company": "WARUNG PAK ALI"}, {"company": at(lone, "company", "WARUNG PAK ALI")}, lone)
    assert N.name_legal_form(c) == []                       # no legal form anywhere: no evidence
    for only in ("S.L.U.", "SDN BHD", "GmbH & Co. KG"):    # a fragment: the legal form alone
        assert by(N.name_legal_form(_receipt({"company": only}, {}, doc)), "company", "name_legal_form") == ["fail"], only


def test_name_joined():
    doc = page_doc([(50, 40, "Frisch vom Bäcker"), (50, 52, "Borinova SA"), (50, 64, "Hauptstrasse 12"),
                    (50, 76, "8001 Zürich")])
    s = N.name_joined(_receipt({"company": "Frisch vom Bäcker Borinova SA"}, {"company": _span(doc, "company", 0, 1)}, doc))
    assert by(s, "company", "name_joined") == ["fail"] and "Borinova SA" in s[0].detail
    assert N.name_joined(_receipt({"company": "Borinova SA"}, {"company": at(doc, "company", "Borinova SA")}, doc)) == []
    for top, bottom in (("POPULAR BOOK", "CO. (M) SDN BHD"),          # the last line names nothing by itself
                        ("LIAN CHI PU TIAN VEGETARIAN", "RESTAURANT SDN BHD"),
                        ("PASAR RAYA MEGA MAJU", "(SEMENYIH) SDN BHD"),      # a branch in brackets
                        ("Ruiz &", "Zenendale Servicios SA"),         # a wrapped name: a connector
                        ("THE COFFEE BEAN", "& TEA LEAF (M) SDN. BHD."),
                        ("AIK HUAT HARDWARE ENTERPRISE (SETIA", "ALAM) SDN BHD"),
                        ("Kunde GmbH", "Muster AG")):                  # two forms: name_one_company's
        d = page_doc([(50, 40, top), (50, 52, bottom), (50, 64, "NO 3 JALAN BUNGA")])
        c = _receipt({"company": f"{top} {bottom}"}, {"company": _span(d, "company", 0, 1)}, d)
        assert N.name_joined(c) == [], top


def test_name_extent():
    wrapped = page_doc([(50, 40, "RESTAURANT JIAWEI"), (50, 52, "JIAWEI HOUSE"), (50, 64, "NO 3 JALAN BUNGA"),
                        (50, 76, "55100 KUALA LUMPUR")])
    s = N.name_extent(_receipt({"company": "RESTAURANT JIAWEI"}, {"company": at(wrapped, "company", "RESTAURANT JIAWEI")},
                               wrapped))
    assert by(s, "company", "name_extent") == ["fail"] and "JIAWEI HOUSE" in s[0].detail
    whole = _receipt({"company": "RESTAURANT JIAWEI JIAWEI HOUSE"}, {"company": _span(wrapped, "company", 0, 1)}, wrapped)
    assert N.name_extent(whole) == []                         # the block ends at the address
    doc = page_doc(RECEIPT_PAGE)                              # a legal form ends the name; a line above is left alone
    legal = _receipt({"company": "TK DIVISION KITCHEN SDN BHD"},
                     {"company": at(doc, "company", "TK DIVISION KITCHEN SDN BHD")}, doc)
    assert N.name_extent(legal) == []
    for under in ("(CO.REG : 933109-X)", "TEL: 03-9285 6000", "z. Hd. Katrin Neumann", "CAWANGAN SERI", "TAX INVOICE",
                  "THANK YOU PLEASE COME AGAIN"):
        d = page_doc([(50, 40, "WARUNG PAK ALI"), (50, 52, under)])
        c = _receipt({"company": "WARUNG PAK ALI"}, {"company": at(d, "company", "WARUNG PAK ALI")}, d)
        assert N.name_extent(c) == [], under                  # a number, contact, attention, branch, title, sentence


@pytest.mark.parametrize("name,fails", [
    ("PRALOTECH SERVICIOS SL PRANOTEX SA", True),             # a brand line joined to the company
    ("Prae S.L.U. Durixvis SA", True),
    ("Muster GmbH & Co. KG", False), ("Beispiel AG & Co. KGaA", False),   # one company, two forms
    ("TK DIVISION KITCHEN SDN BHD", False), ("KEDAI MAJU S/B", False), ("WARUNG PAK ALI", False),
])
def test_name_one_company(name, fails):
    s = N.name_one_company(_receipt({"company": name}, {}))
    assert by(s, "company", "name_one_company") == (["fail"] if fails else [])


@pytest.mark.parametrize("text,want", [("Lieferant GmbH", True), ("ACME S/B", True), ("Foo B.V.", True),
                                       ("MR. D.I.Y. (M) SDN BHD", True), ("Kunden AG Mitte", True),
                                       ("KIKU JAPANESE RESTAURANT", False), ("AS WATSONS", False), ("Pranotex S.L.", True),
                                       ("Deutschland", False)])
def test_has_legal_form(text, want):
    assert N.has_legal_form(text) is want


def test_item_quantity_read():
    assert T.item_quantity_read(ctx(GOOD)) == []               # every item holds its quantity
    unread = dict(GOOD, line_items=[{"description": "A", "unit_price": 9.9, "line_total": 198.0},
                                    {"description": "B", "unit_price": 5.5, "line_total": 5.5}])
    s = T.item_quantity_read(ctx(unread))
    assert by(s, "line_items", "item_quantity_read") == ["fail"] and "20.0 ×" in s[0].detail
    ones = dict(GOOD, line_items=[{"description": "A", "unit_price": 9.9, "line_total": 9.9}])
    assert T.item_quantity_read(ctx(ones)) == []               # an unprinted 1 or a missed one: no evidence


def test_item_description_lines():
    doc = page_doc()
    assert by(T.item_description_lines(ctx(GOOD, doc=doc)), "line_items", "item_description_lines") == ["pass"]
    two_rows = "Trennblätter A4 20 9,90 198,00 2 Joghurt"
    spread = dict(GOOD, line_items=[dict(GOOD["line_items"][0], description=two_rows)])
    s = T.item_description_lines(ctx(spread, doc=doc))
    assert by(s, "line_items", "item_description_lines") == ["fail"] and "several lines" in s[0].detail
    assert T.item_description_lines(ctx(GOOD)) == []           # no document: not judged


def test_item_description_clean():
    assert by(T.item_description_clean(ctx(GOOD)), "line_items", "item_description_clean") == ["pass"]
    for d in ("Joghurt Banane USt. Netto 7% (excl. USt.)", "Trennblätter GTIN: 4012345001235 A4", "Pfand 3,10 EUR"):
        bad = dict(GOOD, line_items=[dict(GOOD["line_items"][0], description=d)])
        assert by(T.item_description_clean(ctx(bad)), "line_items", "item_description_clean") == ["fail"], d
    ok = dict(GOOD, line_items=[dict(GOOD["line_items"][0], description="Leergutpfand 20 x 0,5l")])
    assert by(T.item_description_clean(ctx(ok)), "line_items", "item_description_clean") == ["pass"]


@pytest.mark.parametrize("name,check", X.CHECKS + N.CHECKS + T.CHECKS)
def test_conformance(name, check):
    doc = page_doc(RECEIPT_PAGE)
    c = _receipt({"company": "KIKU JAPANESE RESTAURANT", "address": "JLN JEJAKA, TAMAN MALURI CHERAS,"},
                 {"company": at(doc, "company", "KIKU JAPANESE RESTAURANT"), "address": _span(doc, "address", 4, 4)},
                 doc)
    assert_conformant(check, c)
    inv = page_doc()
    assert_conformant(check, ctx(GOOD, doc=inv, evidence={"seller_name": at(inv, "seller_name", "Lieferant GmbH")}))


def test_cash_rounding():
    from docassay.verifiers.checks import rounding as Rd
    doc = page_doc([(50, 40, "SUBTOTAL 7.72"), (50, 52, "ROUNDING ADJ -0.02"), (50, 64, "TOTAL 7.70"),
                    (50, 76, "CASH 10.00")])
    before = ctx({"total": 7.72}, schema=RECEIPT, doc=doc)
    s = Rd.cash_rounding(before)
    assert by(s, "total", "cash_rounding") == ["fail"] and "7.7" in s[0].detail
    assert Rd.cash_rounding(ctx({"total": 7.70}, schema=RECEIPT, doc=doc)) == []     # already rounded: nothing to tell
    plain = page_doc([(50, 40, "TOTAL 7.72"), (50, 52, "CASH 10.00")])
    assert Rd.cash_rounding(ctx({"total": 7.72}, schema=RECEIPT, doc=plain)) == []      # no rounding: no evidence
    assert Rd.cash_rounding(ctx({"total": 7.72}, schema=RECEIPT)) == []               # no document
    assert_conformant(Rd.cash_rounding, before)


def test_item_row_numbers():
    doc = page_doc()
    s = T.item_row_numbers(ctx(GOOD, doc=doc))
    assert by(s, "line_items", "item_row_numbers") == ["pass"], s
    no_total = dict(GOOD, line_items=[{k: v for k, v in x.items() if k != "line_total"} for x in GOOD["line_items"]])
    s = T.item_row_numbers(ctx(no_total, doc=doc))                 # a column printed and not read
    assert by(s, "line_items", "item_row_numbers") == ["fail"] and "prints 3 numbers" in s[0].detail
    paper = page_doc([(50, 312, "1 Kopierpapier 500 Blatt 20 9,90 198,00"), (50, 324, "2 Joghurt Banane 50 5,50 275,00")])
    cut = dict(GOOD, line_items=[dict(GOOD["line_items"][0], description="Kopierpapier"), GOOD["line_items"][1]])
    s = T.item_row_numbers(ctx(cut, doc=paper))                    # "500 Blatt" left out: one number more
    assert by(s, "line_items", "item_row_numbers") == ["fail"] and s[0].detail.startswith("1 of 2 rows")
    whole = dict(GOOD, line_items=[dict(GOOD["line_items"][0], description="Kopierpapier 500 Blatt"),
                                   GOOD["line_items"][1]])
    assert by(T.item_row_numbers(ctx(whole, doc=paper)), "line_items", "item_row_numbers") == ["pass"]
    other = dict(GOOD, line_items=[dict(GOOD["line_items"][0], unit_price=5.5), GOOD["line_items"][1]])
    s = T.item_row_numbers(ctx(other, doc=doc))                    # a price from another row
    assert by(s, "line_items", "item_row_numbers") == ["fail"] and "5.5 is not printed" in s[0].detail
    assert T.item_row_numbers(ctx(GOOD)) == []                     # no document: not judged


def test_item_row_numbers_reads_rows_as_printed():
    doc = page_doc([(50, 300, "Pos Article Qty Price VAT Amount"), (50, 312, "1 Web hosting 1.00 day A$90.99 10 % A$90.99"),
                    (50, 324, "2 Web hosting"), (50, 336, "2,00 7,90 15,80-"), (50, 348, "3 Service 01.03.2018 1 5.00 5.00"),
                    (50, 360, "4 ARNR2 Joghurt 9,9000 20 Stk 19"), (50, 372, "4012345001235 198,00"), (50, 400, "MwSt 19 %")])
    items = [{"description": "Web hosting", "quantity": 1.0, "unit_price": 90.99, "line_total": 90.99},
             {"description": "Web hosting", "quantity": 2.0, "unit_price": 7.9, "line_total": -15.8},
             {"description": "Service", "quantity": 1.0, "unit_price": 5.0, "line_total": 5.0},
             {"description": "Joghurt", "quantity": 20.0, "unit_price": 9.9, "line_total": 198.0}]
    s = T.item_row_numbers(ctx(dict(GOOD, line_items=items), doc=doc))
    assert by(s, "line_items", "item_row_numbers") == ["pass"], s    # rates, dates, codes, signs, the line below


def test_item_rows_printed():
    lines = [(50, 300, "Pos Bezeichnung Menge Preis Betrag"), (50, 312, "1 Trennblätter A4 20 9,90 198,00"),
             (50, 324, "Lieferung 37204 vom 01.03.2018"), (50, 336, "2 Kopierpapier 500 Blatt 10 4,50 45,00"),
             (50, 348, "3 Joghurt Banane 50 5,50 275,00"), (50, 372, "Zwischensumme 518,00")]
    doc = page_doc(lines)
    both = dict(GOOD, line_items=[*GOOD["line_items"], {"description": "Kopierpapier 500 Blatt", "quantity": 10.0,
                                                        "unit_price": 4.5, "line_total": 45.0}])
    assert by(T.item_rows_printed(ctx(both, doc=doc)), "line_items", "item_rows_printed") == ["pass"]
    s = T.item_rows_printed(ctx(GOOD, doc=doc))                    # the middle row was skipped
    assert by(s, "line_items", "item_rows_printed") == ["fail"] and "Kopierpapier" in s[0].detail
    one = dict(GOOD, line_items=GOOD["line_items"][:1])
    assert T.item_rows_printed(ctx(one, doc=doc)) == []            # one item: no span to judge
    assert T.item_rows_printed(ctx(GOOD)) == []                    # no document: not judged


def test_item_sum_printed():
    rows = [(50, 300, "Pos Bezeichnung Menge Preis Betrag"), (50, 312, "1 Trennblätter A4 20 9,90 198,00"),
            (50, 324, "2 Joghurt Banane 50 5,50 275,00")]
    doc = page_doc([*rows, (50, 348, "Positionssumme 473,00"), (50, 360, "Rabatt -9,46"),
                    (50, 372, "Nettobetrag 463,54")])
    s = T.item_sum_printed(ctx(GOOD, doc=doc))
    assert by(s, "line_items", "item_sum_printed") == ["pass"] and "Positionssumme" in s[0].detail, s
    # a total line whose values stand on the line below (a header row over its values), sum ungrouped
    big = dict(GOOD, line_items=[dict(GOOD["line_items"][0], quantity=2000.0, line_total=19800.0),
                                 GOOD["line_items"][1]])
    table = page_doc([(50, 300, "1 Trennblätter A4 2000 9,90 19800,00"), (50, 312, "2 Joghurt Banane 50 5,50 275,00"),
                      (50, 348, "Warenwert   Steuer   Endbetrag"), (50, 360, "20075,00   3814,25   23889,25")])
    assert by(T.item_sum_printed(ctx(big, doc=table)), "line_items", "item_sum_printed") == ["pass"]
    # a line total misread: the printed subtotal is not the items' sum
    wrong = dict(GOOD, line_items=[dict(GOOD["line_items"][0], line_total=200.0), GOOD["line_items"][1]])
    s = T.item_sum_printed(ctx(wrong, doc=doc))
    assert by(s, "line_items", "item_sum_printed") == ["fail"] and "475" in s[0].detail, s
    # an item's own row printing the sum is no total line; no total line at all: no signal
    plain = page_doc([*rows, (50, 348, "Zahlbar bis 04.04.2018")])
    assert T.item_sum_printed(ctx(GOOD, doc=plain)) == []
    assert T.item_sum_printed(ctx(GOOD)) == []                     # no document: not judged
    assert_conformant(T.item_sum_printed, ctx(GOOD, doc=doc))
