"""Reading receipts: names and addresses delimited, registration and phone numbers kept out, the
total chosen by the role of its label and the arithmetic of the other amounts (hand-written text)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from docassay.extractors import normalize as norm
from docassay.extractors.errors import InstructionError
from docassay.extractors.instructions import delimit as D
from docassay.extractors.instructions import values as V
from docassay.extractors.instructions.amount_roles import amount_role, arithmetic_bonus, below_tax
from docassay.extractors.instructions.executor import execute
from docassay.extractors.instructions.generator import generate
from docassay.extractors.instructions.language import Instructions, Locale
from docassay.extractors.spans import DocIndex
from tests.builders import make_doc

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "examples" / "receipts" / "schema.json").read_text())


@pytest.mark.parametrize("text,want", [
    ("KEDAI MAJU S/B (123456-X)", "KEDAI MAJU S/B"),
    ("ACME TRADING SDN BHD(7654321-M)", "ACME TRADING SDN BHD"),
    ("NORTHWIND (KL) SDN BHD (204311 K)", "NORTHWIND (KL) SDN BHD"),
    ("Muster GmbH (HRB 123456)", "Muster GmbH"),
    ("BLUE CO. (M) SDN BHD", "BLUE CO. (M) SDN BHD"),       # (M) is part of the name
    ("Cafe (2019)", "Cafe (2019)"),                          # a year is not a registration number
    ("(123456-X)", "(123456-X)"),                            # nothing but the number: left as printed
])
def test_clean_name(text, want):
    assert norm.clean_name(text) == want


@pytest.mark.parametrize("text,want", [
    ("REG NO.: (112233-A) NO 7, JALAN MAWAR 2, 40000 SHAH ALAM", "NO 7, JALAN MAWAR 2, 40000 SHAH ALAM"),
    ("12 HIGH STREET, 10115 BERLIN 030-12345678", "12 HIGH STREET, 10115 BERLIN"),
    ("5 RUE VERTE 75001 PARIS TEL: +33 1-4455 6677", "5 RUE VERTE 75001 PARIS"),
    ("LOT 3, JALAN 4/2 47301", "LOT 3, JALAN 4/2 47301"),        # a postcode is not a phone number
    ("UNIT 2 (NORTH WING)", "UNIT 2 (NORTH WING)"),
])
def test_clean_address(text, want):
    assert norm.clean_address(text) == want


def test_values_clean_override_and_schema():
    loc = Locale()
    assert V.normalize("KEDAI MAJU S/B (123456-X)", "text", loc, {"clean": "name"}) == "KEDAI MAJU S/B"
    assert V.normalize("KEDAI MAJU S/B (123456-X)", "text", loc, {}) == "KEDAI MAJU S/B (123456-X)"
    assert V.normalize("1 MAIN ST 03-12345678", "text", loc, {"clean": "address"}) == "1 MAIN ST"
    doc = {"docassay_instructions": 1, "locale": {"decimal": ".", "date_order": "DMY"},
           "fields": {"company": {"type": "text", "locator": {"by": "region", "bbox": [0, 0, 1, 0.1]},
                                  "normalize": {"clean": "name"}, "lines": 2}}}
    assert Instructions.from_json(doc).fields["company"].normalize == {"clean": "name"}
    doc["fields"]["company"]["normalize"] = {"clean": "phone"}
    with pytest.raises(InstructionError):
        Instructions.from_json(doc)


@pytest.mark.parametrize("label,role", [
    ("TOTAL", "total"), ("ROUNDED TOTAL (RM)", "final"), ("TOTAL INCL. GST 6%", "final"),
    ("AMOUNT DUE", "final"), ("SUB-TOTAL", "subtotal"), ("TOTAL EXCL. GST", "subtotal"),
    ("GST 6% INCLUDED IN TOTAL", "tax"), ("TAX TOTAL:", "tax"), ("MwSt 19%", "tax"),
    ("CHANGE", "change"), ("Rückgeld", "change"), ("CASH", "tendered"), ("VISA CARD", "tendered"),
    ("ROUNDING ADJ", "rounding"), ("TOTAL QTY", "count"), ("ITEM(S)", "count"), ("DISCOUNT", "discount"),
    ("THANK YOU", ""), ("AMT PAID INCL. GST :", "total"), ("PAID INCL. GST", "total"), ("Total IVA incluido", "total"),
    ("IVA incluido 21%", "tax"), ("JUMLAH SEBELUM CUKAI:", "subtotal"), ("PELARASAN:", "rounding"), ("AHORRO TOTAL", "discount"), ("Ersparnis", "discount"),
])
def test_amount_role(label, role):
    assert amount_role(label) == role


def test_arithmetic_bonus():
    roles = {"tendered": [50.0], "change": [7.1], "subtotal": [40.0], "tax": [2.4], "rounding": [0.0]}
    assert arithmetic_bonus(42.9, roles) > 0                  # 50.00 - 7.10
    assert arithmetic_bonus(42.4, roles) > 0                  # 40.00 + 2.40
    assert arithmetic_bonus(2.4, roles) == 0
    assert arithmetic_bonus(50.0, roles) == 0                 # tendered, with change given back


def test_below_tax():
    roles = {"tax": [4.43, 0.0], "printed_tax": [4.43, 0.0], "subtotal": [73.87], "total": [2.1]}
    assert below_tax(2.1, roles) < 0                          # "TOTAL EV 2.10" under "GST AMT 4.43"
    assert below_tax(78.3, roles) == 0 and below_tax(4.43, roles) == 0
    assert below_tax(2.1, {"total": [2.1], "tax": [6771.0]}) == 0   # no tax printed with cents, last on its line


@pytest.mark.parametrize("line,street", [("MARKTPLATZ 184", True), ("SCHILLERSTR. 10", True), ("Gartenallee 24", True),
                                         ("ORANJESINGEL 119", True), ("GEBÄUDE C", True), ("TISCH 6", False),
                                         ("EVVAFORMELEKTRO UG", False), ("SPRING 2", False)])
def test_address_evidence_of_compound_streets_and_buildings(line, street):
    assert (D.address_evidence(line) >= D.MIN_ADDRESS_EVIDENCE) is street


def test_generate_reads_a_compound_street_above_the_town():
    ix = DocIndex(make_doc([(40, 100, "RICHTER & HOFFMANN AG"), (40, 112, "SCHILLERSTR. 10"), (40, 124, "GEBÄUDE C"),
                            (40, 136, "5572 SALZBURG"), (40, 148, "TEL. : +43 662 1234"), (40, 170, "KASSENBON"),
                            (40, 182, "BROT"), (300, 182, "4.90"), (40, 194, "SUMME"), (300, 194, "4.90")]))
    assert generate(ix, SCHEMA).extraction.record["address"] == "SCHILLERSTR. 10 GEBÄUDE C 5572 SALZBURG"


def test_name_and_address_line_tests():
    assert D.name_continues_above("CO. (M) SDN BHD")
    assert D.name_continues_above("GARDEN) SDN BHD")
    assert not D.name_continues_above("NORTHWIND TRADERS")
    assert D.name_continues_below("NORTHWIND HARDWARE &", "ELECTRICAL")
    assert D.name_continues_below("NORTHWIND TRADERS", "SDN BHD")
    assert D.name_continues_below("YORILUX SENTOSA AUTO", "PARTS TRADING")      # one word and a trade word
    assert not D.name_continues_below("YORILUX TRADING", "PARTS TRADING")       # the name has ended
    assert not D.name_continues_below("NORTHWIND TRADERS SDN BHD", "(123456-X)")
    assert not D.name_continues_below("ACME COMPANY", "COMPANY REG. NO. : 725186-V")
    assert D.not_address("TEL: 03-1234 5678") == "phone"
    assert D.not_address("(GST ID NO: 000123456789)") == "registration"
    assert D.not_address("TAX INVOICE") == "title"
    assert D.not_address("12/03/2018 10:15") == "date"
    assert D.not_address("NO 7, JALAN MAWAR 2,") == ""


def _receipt():
    """A till receipt: a two-line name with its registration number, a three-line address with the
    first line above a pre-printed branch line, a phone, a title, items and the total block."""
    rows = [
        (200, "NORTHWIND HARDWARE &"),
        (230, "ELECTRICAL SDN BHD"),
        (240, "(123456-X)"),
        (150, "LEVEL 2, BLOCK C, GREEN PLAZA"),
        (150, "NO 7, JALAN MAWAR 2,"),
        (150, "40000 SHAH ALAM, SELANGOR"),
        (200, "TEL: 03-1234 5678"),
        (220, "TAX INVOICE"),
        (40, "DATE: 12/03/2018 10:15"),
        (40, "WIDGET SET"), (40, "CABLE TIES"),
    ]
    items = [(x, 100 + 12 * i, t) for i, (x, t) in enumerate(rows)]
    y = 100 + 12 * len(rows)
    items += [(440, y - 24, "21.20"), (440, y - 12, "18.80")]
    totals = [("SUB-TOTAL", "40.00"), ("GST 6%", "2.40"), ("TOTAL INCL. GST", "42.40"), ("CASH", "50.00"),
              ("CHANGE", "7.60"), ("GST 6% INCLUDED IN TOTAL", "2.40"), ("ITEM(S)", "2")]
    for i, (label, amount) in enumerate(totals):
        items += [(40, y + 12 * i, label), (440, y + 12 * i, amount)]
    return make_doc(items)


@pytest.mark.parametrize("which", ["baseline", "ranker"])
def test_generate_reads_the_receipt(which):
    from docassay.extractors.instructions.model_scorer import model_scorer
    ix = DocIndex(_receipt())
    g = generate(ix, SCHEMA, scorer=None if which == "baseline" else model_scorer())
    rec = g.extraction.record
    assert rec["company"] == "NORTHWIND HARDWARE & ELECTRICAL SDN BHD"
    assert rec["address"] == "LEVEL 2, BLOCK C, GREEN PLAZA NO 7, JALAN MAWAR 2, 40000 SHAH ALAM, SELANGOR"
    assert rec["total"] == 42.40
    # The instructions are plain data: replayed from their JSON, without any scorer, they read the same.
    again = execute(Instructions.from_json(json.loads(json.dumps(g.instructions.to_json()))), ix)
    assert again.record == rec
    assert again.provenance["company"].text.startswith("NORTHWIND HARDWARE &")


def test_address_keys_and_shape_priors():
    from docassay.extractors.instructions.amount_roles import shape_prior
    assert D.not_address("NO: 12, JALAN MAWAR 2,") == ""          # "NO:" keys a house number
    assert D.not_address("CASHIER: ALI") == "key-value"
    ix = DocIndex(make_doc([(40, 100, "RETURNS WITHIN 7 DAYS"), (40, 112, "TOTAL"), (300, 112, "12.50"),
                            (40, 124, "CASH"), (300, 124, "20.00")]))
    seven = next(s for s in ix.spans("amount") if s.text == "7")
    total = next(s for s in ix.spans("amount") if s.text == "12.50")
    assert shape_prior(ix, seven, with_cents=True) < 0
    assert shape_prior(ix, total, with_cents=True) == 0


def test_company_priors_prefer_the_name_line():
    from docassay.extractors.instructions.name_priors import first_address_line, first_name_line, header_end_line
    ix = DocIndex(_receipt())
    assert first_name_line(ix) == 0
    assert first_address_line(ix) == 3
    assert header_end_line(ix) == 8                                # the DATE line ends the header


def test_name_line_shapes():
    from docassay.extractors.instructions.name_priors import has_legal_form, is_code, is_sentence
    assert is_sentence("GOODS SOLD ARE NOT RETURNABLE")
    assert is_sentence("Vielen Dank für Ihren Besuch")
    assert not is_sentence("THE BLUE BAKERY")
    assert is_code("T/D #11") and is_code("(POS 3)") and not is_code("NORTHWIND")
    assert has_legal_form("KEDAI MAJU S/B") and has_legal_form("Muster GmbH") and not has_legal_form("BLUE BAKERY")
    assert D.name_continues_below("LOTUS VEGETARIAN", "RESTAURANT SDN BHD")
    assert not D.name_continues_below("LOTUS SDN BHD", "RESTAURANT SDN BHD")


def test_registered_name_under_a_brand():
    assert D.legal_name_below("BLUE LOTUS CAFE", "LOTUS FOOD SERVICES SDN BHD")
    assert not D.legal_name_below("BLUE LOTUS CAFE", "SDN BHD")
    assert norm.clean_name("KEDAI MAJU S/B 273500-U (KJ1)") == "KEDAI MAJU S/B"


def test_roles_read_through_ocr_and_a_lone_subtotal():
    assert amount_role("TOTAL SALES (INCLUSLVE OF GST)") == "total"
    assert amount_role("TOTAL SALES (EXCLUDING GST)") == "subtotal"
    # A receipt that prints only a subtotal and the cash paid: the subtotal is the total.
    ix = DocIndex(make_doc([(40, 100, "NORTHWIND BAKERY"), (40, 112, "BREAD"), (300, 112, "4.90"),
                            (40, 124, "BUNS"), (300, 124, "8.60"), (40, 136, "SUBTOTAL"), (300, 136, "13.50"),
                            (40, 148, "CASH"), (300, 148, "13.50")]))
    assert generate(ix, SCHEMA).extraction.record["total"] == 13.50


def test_address_priors_pass_over_id_and_code_lines():
    from docassay.extractors.instructions.address_priors import _prior
    from docassay.extractors.instructions.proposals import Proposal
    ix = DocIndex(_receipt())

    def prop(line: int) -> Proposal:
        seg = ix.page(1).segments_by_line[line][0]
        span = next(s for s in ix.spans("text") if (s.line, s.segment) == (line, seg.index))
        return Proposal("address", span, None, span.text, "", "region")  # type: ignore[arg-type]

    street, date, phone, title = prop(4), prop(8), prop(6), prop(7)
    assert _prior(street, 8) > _prior(date, 8)
    assert _prior(street, 8) > _prior(phone, 8)
    assert _prior(street, 8) > _prior(title, 8)


def test_address_takes_in_a_middle_line_without_a_number():
    rows = ["NORTHWIND TRADERS SDN BHD", "LOT 12, JALAN MAWAR,", "TAMAN SERI INDAH", "40000 SHAH ALAM, SELANGOR",
            "TEL: 03-1234 5678", "DATE: 12/03/2018"]
    ix = DocIndex(make_doc([(100, 100 + 12 * i, t) for i, t in enumerate(rows)] +
                           [(40, 180, "TOTAL"), (300, 180, "9.90")]))
    rec = generate(ix, SCHEMA).extraction.record
    assert rec["address"] == "LOT 12, JALAN MAWAR, TAMAN SERI INDAH 40000 SHAH ALAM, SELANGOR"
    assert rec["company"] == "NORTHWIND TRADERS SDN BHD"


def test_a_legal_form_without_a_name_continues_the_line_above():
    assert D.name_continues_above("CP. (M) SDN BHD")              # an OCR-damaged "CO. (M) SDN BHD"
    assert D.name_continues_above("& TEA LEAF (M) SDN. BHD.")
    assert not D.name_continues_above("TRENDYMAX (M) SDN. BHD.")
    assert not D.name_continues_above("MR D.I.Y. (M) SDN BHD")
    assert not D.name_continues_above("GST 6%")


def test_line_gap_scales_with_large_print():
    from docassay.extractors.document import BBox
    from docassay.extractors.instructions.executor import line_gap_limit
    big_a, big_b = BBox(0, 67, 400, 121), BBox(0, 175, 500, 238)   # 54 and 63 high on a page of 31.5
    assert big_b.y0 - big_a.y1 <= line_gap_limit(31.5, big_a, big_b)
    small_a, small_b = BBox(0, 336, 300, 369), BBox(0, 413, 300, 446)  # 33 high on a page of 28: as before
    assert small_b.y0 - small_a.y1 > line_gap_limit(28.0, small_a, small_b)


def test_a_two_line_name_in_large_print_is_read_whole():
    # The shop's name in a big font over two lines, the gap between them wider than 1.5 text heights
    # of the small print below, but under one of its own.
    from docassay.extractors.document import BBox, Document, Page, Word
    from tests.builders import make_page
    small = make_page([(40, 300 + 12 * i, t) for i, t in enumerate(
        ["NO 7, JALAN MAWAR 2,", "40000 SHAH ALAM", "TAX INVOICE", "DATE: 12/03/2018", "BREAD", "TOTAL 4.90"])]).words
    big = [Word("NORTHWIND", BBox(100, 200, 280, 230), font_size=30), Word("BOOK", BBox(290, 200, 370, 230), font_size=30),
           Word("CP.", BBox(60, 262, 110, 292), font_size=30), Word("(M)", BBox(120, 262, 170, 292), font_size=30),
           Word("SDN", BBox(180, 262, 240, 292), font_size=30), Word("BHD", BBox(250, 262, 310, 292), font_size=30)]
    page = Page.from_words(1, 600.0, 800.0, big + list(small), source="synthetic")
    doc = Document(source="t", sha256="1" * 64, kind="synthetic", pages=[page], parser="test")
    g = generate(DocIndex(doc), SCHEMA)
    assert g.extraction.record["company"] == "NORTHWIND BOOK CP. (M) SDN BHD"


def test_arithmetic_all_taxes_added_and_cash_rounded():
    # "GROSS AMT 47.80", "SVR TAX 2.87", "GST (6%) 2.86", "NET AMT 53.55": both labels read as a total.
    roles = {"total": [47.80, 53.55], "tax": [2.87, 2.86]}
    assert arithmetic_bonus(53.55, roles) > 0                 # 47.80 + 5.73 = 53.53, rounded to 53.55
    assert arithmetic_bonus(47.80, roles) == 0
    assert arithmetic_bonus(53.53, {"total": [47.80], "tax": [2.87, 2.86]}) > 0     # exact, no rounding
    assert arithmetic_bonus(53.55, {"total": [47.80], "tax": [5.73]}) == 0           # one tax: the old rule only
    ix = DocIndex(make_doc([(40, 100, "NORTHWIND BAKERY"), (40, 112, "BREAD"), (300, 112, "47.80"),
                            (40, 124, "GROSS AMT :"), (300, 124, "47.80"), (40, 136, "SVR TAX :"), (300, 136, "2.87"),
                            (40, 148, "GST (6%) :"), (300, 148, "2.86"), (40, 160, "NET AMT :"), (300, 160, "53.55")]))
    assert generate(ix, SCHEMA).extraction.record["total"] == 53.55


@pytest.mark.parametrize("label,expiry", [
    ("CARD EXPIRY:", True), ("EXP DATE", True), ("Exp.", True), ("VALID THRU", True), ("Gültig bis", True),
    ("geldig tot", True), ("Date d'expiration", True), ("DATE:", False), ("TIME", False), ("EXPRESS DATE", False),
    ("", False),
])
def test_means_expiry(label, expiry):
    from docassay.extractors.instructions.date_priors import means_expiry
    assert means_expiry(label) is expiry


@pytest.mark.parametrize("which", ["baseline", "ranker"])
def test_a_card_expiry_date_is_no_receipt_date(which):
    from docassay.extractors.instructions.model_scorer import model_scorer
    rows = [(40, 100, "NORTHWIND BAKERY SDN BHD"), (40, 112, "NO 7, JALAN MAWAR 2, 40000 SHAH ALAM"),
            (40, 124, "01/03/18 19:14"), (40, 136, "BREAD"), (300, 136, "4.90"), (40, 148, "TOTAL"),
            (300, 148, "4.90"), (40, 160, "VISA CARD"), (300, 160, "4.90"), (40, 172, "CARD EXPIRY: 30/09/18")]
    ix = DocIndex(make_doc(rows))
    rec = generate(ix, SCHEMA, scorer=None if which == "baseline" else model_scorer()).extraction.record
    assert rec["date"] == "2018-03-01"
