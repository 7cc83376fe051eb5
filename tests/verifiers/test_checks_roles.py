"""Conformance cases of the role-and-place checks (verifiers.checks.roles) and of field roles."""
from __future__ import annotations

import pytest

from docassay.extractors.document import BBox
from docassay.extractors.instructions.executor import Extraction, Provenance
from docassay.verifiers.checks import roles as R
from docassay.verifiers.checks.fields import roles_of
from tests.verifiers.checkkit import GOOD, INVOICE, RECEIPT, assert_conformant, at, by, ctx, page_doc


def test_roles_from_the_shipped_schemas():
    inv = roles_of(INVOICE)
    assert inv.role("seller_vat_id") == "seller_vat_id" and inv.role("invoice_number") == "document_number"
    assert inv.role("net_total") == "net_total" and inv.role("tax_total") == "tax_total"
    assert inv.items["line_items"] == {"description": "description", "quantity": "quantity",
                                       "unit_price": "unit_price", "line_total": "line_total"}
    rec = roles_of(RECEIPT)
    assert rec.role("company") == "seller_name" and rec.role("date") == "issue_date"
    assert rec.role("total") == "gross_total" and rec.role("address") == "seller_address"


def test_roles_from_other_names():
    schema = {"type": "object", "properties": {
        "vendorName": {"type": "string"}, "customer_vat_number": {"type": "string"},
        "payment_due": {"type": "string", "format": "date"}, "total_incl_tax": {"type": "number"},
        "amount_untaxed": {"type": "number"}, "notes": {"type": "string"}, "discount_total": {"type": "number"},
        "cash_paid": {"type": "number"}}}
    r = roles_of(schema)
    assert r.role("vendorName") == "seller_name" and r.role("customer_vat_number") == "buyer_vat_id"
    assert r.role("payment_due") == "due_date" and r.role("total_incl_tax") == "gross_total"
    assert r.role("amount_untaxed") == "net_total" and r.role("notes") is None
    assert r.role("discount_total") is None and r.role("cash_paid") is None
    assert roles_of({"type": "object", "properties": "nope"}).by_field == {}


def test_unknown_role_is_logged_and_inferred(caplog):
    schema = {"type": "object", "properties": {"seller_vat_id": {"type": "string", "x-docassay": {"role": "vatt"}}}}
    with caplog.at_level("WARNING"):
        assert roles_of(schema).role("seller_vat_id") == "seller_vat_id"
    assert "unknown x-docassay role 'vatt'" in caplog.text


def _party_ctx(vat_text: str, vat: str):
    doc = page_doc()
    return ctx(dict(GOOD, seller_vat_id=vat), doc=doc, evidence={
        "seller_name": at(doc, "seller_name", "Lieferant GmbH"),
        "seller_vat_id": at(doc, "seller_vat_id", vat_text),
        "buyer_name": at(doc, "buyer_name", "Kunden AG Mitte")})


def test_party_block():
    s = R.party_block(_party_ctx("DE136695976", "DE136695976"))
    assert by(s, "seller_vat_id", "party_block") == ["pass"] and by(s, "buyer_name", "party_block") == ["pass"]
    s = R.party_block(_party_ctx("DE123456789", "DE123456789"))          # the buyer's VAT ID
    assert by(s, "seller_vat_id", "party_block") == ["fail"]


def test_seller_one_block():
    assert by(R.seller_one_block(_party_ctx("DE136695976", "DE136695976")), "seller_vat_id", "seller_one_block") == ["pass"]
    assert by(R.seller_one_block(_party_ctx("DE123456789", "DE123456789")), "seller_vat_id", "seller_one_block") == ["fail"]


def test_not_table_row():
    doc = page_doc()
    good = ctx(GOOD, doc=doc, evidence={"buyer_name": at(doc, "buyer_name", "Kunden AG Mitte")})
    assert by(R.not_table_row(good), "buyer_name", "not_table_row") == ["pass"]
    bad = ctx(dict(GOOD, buyer_name="Joghurt Banane"), doc=doc,
              evidence={"buyer_name": at(doc, "buyer_name", "Joghurt Banane")})
    assert by(R.not_table_row(bad), "buyer_name", "not_table_row") == ["fail"]


def _items_extraction():
    ex = Extraction()
    ex.provenance["line_items/0/description"] = Provenance(1, BBox(60, 312, 160, 322), "Trennblätter A4", "table")
    ex.provenance["line_items/1/line_total"] = Provenance(1, BBox(200, 324, 240, 334), "275,00", "table")
    return ex


def test_outside_items():
    doc = page_doc()
    ok = ctx(GOOD, doc=doc, extraction=_items_extraction(),
             evidence={"seller_name": at(doc, "seller_name", "Lieferant GmbH")})
    assert by(R.outside_items(ok), "seller_name", "outside_items") == ["pass"]
    bad = ctx(dict(GOOD, seller_name="Trennblätter A4"), doc=doc, extraction=_items_extraction(),
              evidence={"seller_name": at(doc, "seller_name", "Joghurt Banane")})
    assert by(R.outside_items(bad), "seller_name", "outside_items") == ["fail"]
    assert R.outside_items(ctx(GOOD, doc=doc)) == []                    # no items provenance


def test_parties_distinct():
    assert by(R.parties_distinct(ctx(GOOD)), "buyer_name", "parties_distinct") == ["pass"]
    s = R.parties_distinct(ctx(dict(GOOD, buyer_name="LIEFERANT  GmbH")))
    assert by(s, "buyer_name", "parties_distinct") == ["fail"] and by(s, "seller_name", "parties_distinct") == ["fail"]


def test_address_whole():
    doc = page_doc([(50, 40, "ACME SDN BHD"), (50, 52, "NO 12, JALAN SS 2/4"), (50, 64, "47300 PETALING JAYA"),
                    (50, 100, "TOTAL 12.00")])
    cut = ctx({"address": "47300 PETALING JAYA"}, schema=RECEIPT, doc=doc,
              evidence={"address": at(doc, "address", "47300 PETALING JAYA")})
    assert by(R.address_whole(cut), "address", "address_whole") == ["fail"]
    short = ctx({"address": "NO 12, JALAN SS 2/4"}, schema=RECEIPT, doc=doc,
                evidence={"address": at(doc, "address", "NO 12, JALAN SS 2/4")})
    assert by(R.address_whole(short), "address", "address_whole") == ["fail"]
    whole = doc.pages[0].lines
    box = whole[1].bbox.union(whole[2].bbox)
    from docassay.verifiers.evidence import FieldEvidence
    ev = FieldEvidence("address", "label", text="NO 12, JALAN SS 2/4 47300 PETALING JAYA", page=1,
                       bbox=(box.x0, box.y0, box.x1, box.y1))
    ok = ctx({"address": "NO 12, JALAN SS 2/4 47300 PETALING JAYA"}, schema=RECEIPT, doc=doc, evidence={"address": ev})
    assert by(R.address_whole(ok), "address", "address_whole") == ["pass"]


def test_address_whole_a_saints_town_is_no_street():
    doc = page_doc([(50, 28, "HILL AG"), (50, 40, "Sonnenring 201"), (50, 52, "3213 St. Gallen"), (50, 100, "TOTAL 9.00")])
    c = ctx({"address": "3213 St. Gallen"}, schema=RECEIPT, doc=doc,
            evidence={"address": at(doc, "address", "3213 St. Gallen")})
    assert by(R.address_whole(c), "address", "address_whole") == ["fail"]


def test_address_whole_below_a_line_that_runs_on():
    doc = page_doc([(50, 40, "GROUND FLOOR, WISMA UOA II,"), (50, 52, "NO 21, JALAN PINANG, 50450 KUALA LUMPUR")])
    c = ctx({"address": "NO 21, JALAN PINANG, 50450 KUALA LUMPUR"}, schema=RECEIPT, doc=doc,
            evidence={"address": at(doc, "address", "NO 21, JALAN PINANG, 50450 KUALA LUMPUR")})
    assert by(R.address_whole(c), "address", "address_whole") == ["fail"]


def test_address_whole_under_its_house_number():
    # A narrow receipt wraps "14 Green Road Boise, ID 74328" over three lines; read without the first.
    from docassay.verifiers.evidence import FieldEvidence
    doc = page_doc([(50, 28, "MERORVIS CORP."), (50, 40, "14 Green"), (50, 52, "Road Boise,"), (50, 64, "ID 74328"),
                    (50, 100, "TOTAL 69.19")])
    lines = doc.pages[0].lines

    def read(first: int, value: str):
        box = lines[first].bbox.union(lines[3].bbox)
        ev = FieldEvidence("address", "label", text=value, page=1, bbox=(box.x0, box.y0, box.x1, box.y1))
        return ctx({"address": value}, schema=RECEIPT, doc=doc, evidence={"address": ev})

    assert by(R.address_whole(read(2, "Road Boise, ID 74328")), "address", "address_whole") == ["fail"]
    assert by(R.address_whole(read(1, "14 Green Road Boise, ID 74328")), "address", "address_whole") == ["pass"]


def test_name_whole():
    doc = page_doc([(50, 40, "FALUM BAHAGIA BAKERY"), (50, 52, "ENTERPRISE"), (50, 64, "(CO.REG : 933109-X)"),
                    (50, 100, "ACME GMBH"), (50, 112, "(CO.REG : 933109-X)")])
    cut = ctx({"company": "FALUM BAHAGIA BAKERY"}, schema=RECEIPT, doc=doc,
              evidence={"company": at(doc, "company", "FALUM BAHAGIA BAKERY")})
    assert by(R.name_whole(cut), "company", "name_whole") == ["fail"]
    whole = ctx({"company": "ACME GMBH"}, schema=RECEIPT, doc=doc, evidence={"company": at(doc, "company", "ACME GMBH")})
    assert by(R.name_whole(whole), "company", "name_whole") == ["pass"]          # a registration line follows


def test_items_complete():
    assert by(R.items_complete(ctx(GOOD)), "line_items", "items_complete") == ["pass"]
    rec = dict(GOOD, line_items=[{"description": "A", "quantity": 1.0, "line_total": 2.0},
                                 {"quantity": 2.0, "line_total": 4.0}])
    assert by(R.items_complete(ctx(rec)), "line_items", "items_complete") == ["fail"]


@pytest.mark.parametrize("name,check", R.CHECKS)
def test_conformance(name, check):
    c = _party_ctx("DE123456789", "DE123456789")
    c.extraction = _items_extraction()
    assert_conformant(check, c)


# Uncaptioned party blocks: the buyer's window on the left, the seller's letterhead on the right
# (interleaved rows), an info column on the right printing the seller's VAT ID, and a footer (the
# bottom quarter of the 800-point page) naming the seller beside its VAT ID in another column.
UNCAPTIONED = [
    (50, 60, "Kunden AG Mitte"), (400, 60, "Lieferant GmbH"),
    (50, 72, "Kundenstraße 15"), (400, 72, "Lieferantenstraße 20"),
    (50, 84, "69876 Frankfurt"), (400, 84, "80333 München"),
    (400, 96, "USt-IdNr.: DE136695976"),
    (50, 300, "Nettobetrag 473,00"),
    (50, 700, "Lieferant GmbH"), (250, 700, "IBAN DE02 1203 0000 0000 2020 51"),
    (50, 712, "Lieferantenstraße 20"), (250, 712, "USt-IdNr. DE946598041"),
]


def _vat_ctx(seller: str, buyer: str, vat: str, lines=UNCAPTIONED):
    from tests.builders import make_doc
    doc = make_doc(lines, source="t.pdf")
    return ctx(dict(GOOD, seller_name=seller, buyer_name=buyer, seller_vat_id=vat), doc=doc,
               evidence={"seller_name": at(doc, "seller_name", seller), "buyer_name": at(doc, "buyer_name", buyer),
                         "seller_vat_id": at(doc, "seller_vat_id", vat)})


def test_seller_with_vat_supports_the_seller_named_in_the_vat_ids_block():
    for vat in ("DE136695976", "DE946598041"):              # the letterhead's column; the footer's whole width
        s = R.seller_with_vat(_vat_ctx("Lieferant GmbH", "Kunden AG Mitte", vat))
        assert by(s, "seller_name", "seller_with_vat") == ["pass"], vat
        assert by(s, "seller_vat_id", "seller_with_vat") == ["pass"], vat


def test_seller_with_vat_fails_swapped_parties():
    for vat in ("DE136695976", "DE946598041"):
        s = R.seller_with_vat(_vat_ctx("Kunden AG Mitte", "Lieferant GmbH", vat))
        assert by(s, "seller_name", "seller_with_vat") == ["fail"], vat
        assert by(s, "seller_vat_id", "seller_with_vat") == ["fail"], vat
        assert "Lieferant GmbH" in s[0].detail


def test_seller_with_vat_fails_a_block_naming_another_company():
    # the footer names the issuer, neither the seller nor the buyer read (the delivery block's name
    # was read for the buyer, the buyer's for the seller)
    lines = UNCAPTIONED[:7] + [(50, 700, "Mulder Groothandel N.V."), (250, 700, "Telefoon 051 0267927"),
                               (50, 712, "Oudekade 32"), (250, 712, "BTW-nr NL511973426B94")]
    s = R.seller_with_vat(_vat_ctx("Kunden AG Mitte", "Lieferant GmbH", "NL511973426B94", lines))
    assert by(s, "seller_name", "seller_with_vat") == ["fail"] and "Mulder Groothandel" in s[0].detail
    # a legal form alone, or a part of the seller's own name, names no other company
    for first, run in (("Mulder", "N.V."), ("Handel", "Groothandel N.V.")):
        lines = [(50, 60, "Kunden AG Mitte"), (400, 60, "Mulder Groothandel N.V."), (50, 300, "Nettobetrag 473,00"),
                 (50, 700, first), (250, 700, run), (50, 712, "Oudekade 32"), (250, 712, "BTW-nr NL511973426B94")]
        assert R.seller_with_vat(_vat_ctx("Mulder Groothandel N.V.", "Kunden AG Mitte", "NL511973426B94", lines)) == [], run


def test_seller_with_vat_says_nothing_without_a_party_in_its_block():
    # the info column beside the buyer's window, above the page's last quarter: the buyer's block is
    # another column, so the VAT ID's block names nobody
    lines = [(50, 60, "Kunden AG Mitte"), (400, 60, "Rechnung Nr. 471102"),
             (50, 72, "Kundenstraße 15"), (400, 72, "USt-IdNr.: DE136695976"),
             (50, 200, "Lieferant GmbH"), (50, 300, "Nettobetrag 473,00")]
    assert R.seller_with_vat(_vat_ctx("Lieferant GmbH", "Kunden AG Mitte", "DE136695976", lines)) == []
    # both parties in the block (a footer naming both): no signal
    lines = [(50, 60, "Lieferant GmbH"), (50, 100, "Kunden AG Mitte"),
             (50, 700, "Lieferant GmbH für Kunden AG Mitte"), (50, 712, "USt-IdNr. DE946598041")]
    assert R.seller_with_vat(_vat_ctx("Lieferant GmbH", "Kunden AG Mitte", "DE946598041", lines)) == []
    # a stacked info column whose next block, under its own heading, is the delivery address
    lines = [(50, 60, "Lieferant GmbH"), (400, 100, "USt-IdNr."), (400, 112, "DE136695976"),
             (400, 124, "Ihr Zeichen"), (400, 136, "5344854"), (400, 148, "Lieferanschrift:"),
             (400, 160, "Kunden AG Mitte"), (50, 300, "Nettobetrag 473,00")]
    assert R.seller_with_vat(_vat_ctx("Lieferant GmbH", "Kunden AG Mitte", "DE136695976", lines)) == []
    # no VAT ID, no buyer, a receipt schema: nothing
    assert R.seller_with_vat(ctx(dict(GOOD, seller_vat_id=None))) == []
    assert R.seller_with_vat(ctx({"company": "ACME"}, schema=RECEIPT)) == []
