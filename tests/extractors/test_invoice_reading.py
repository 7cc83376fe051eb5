"""invoice_reading: what a document's structure says about which proposal is the value (hand-made
pages and proposals; no dev document)."""
import json
from pathlib import Path

from builders import make_doc
from docassay.extractors.document import BBox
from docassay.extractors.instructions import baseline
from docassay.extractors.instructions import invoice_reading as R
from docassay.extractors.instructions.executor import execute
from docassay.extractors.instructions.generator import detect_locale, generate, schema_fields
from docassay.extractors.instructions.language import FieldRule, Instructions, Locale, Locator, validate_instructions
from docassay.extractors.instructions.proposals import Proposal, propose
from docassay.extractors.spans import DocIndex, Span

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "examples" / "invoices" / "schema.json").read_text())


def _ranked(doc):
    ix = DocIndex(doc)
    specs, _ = schema_fields(SCHEMA)
    loc = detect_locale(ix)
    ranked = baseline.score_proposals(ix, specs, {s.name: propose(ix, s, loc) for s in specs})
    return ix, specs, ranked


# -- dates ------------------------------------------------------------------------------------------

def _version_doc():
    return make_doc([
        (40, 20, "Stylesheet-Version: 2.1 vom 24.03.2020"),
        (40, 60, "Handelsrechnung Nr. R-77 vom 05.03.2018"),
        (40, 120, "Muster GmbH"),
        (40, 300, "Gesamtbetrag"), (450, 300, "119,00 EUR"),
    ])


def test_a_version_line_date_is_no_issue_date():
    ix, specs, ranked = _ranked(_version_doc())
    assert ranked["issue_date"][0].value == "2020-03-24"           # the label alone prefers the first "vom"
    R.refine(ix, specs, ranked)
    assert ranked["issue_date"][0].value == "2018-03-05"
    assert generate(_version_doc(), SCHEMA).extraction.record["issue_date"] == "2018-03-05"


def test_version_line_words():
    assert R.version_line("ZUGFeRD-Version : 2.1 vom 24.03.2020")
    assert R.version_line("Codelisten-Version: 3.0 vom 15.11.2019")
    assert R.version_line("Form 12 (c) ACME 2019")
    assert not R.version_line("Handelsrechnung Nr. 471102 vom 05.03.2018")
    assert not R.version_line("Invoice date 05/03/2018")


def test_a_footer_with_a_page_count_is_running_but_a_repeated_title_keeps_its_date():
    page = [(40, 20, "Rechnung 4711 vom 05.03.2018"), (40, 100, "Muster GmbH"),
            (40, 780, "Seite 1 von 2 Stand 01.02.2020")]
    page2 = [(40, 20, "Rechnung 4711 vom 05.03.2018"), (40, 100, "Artikel"), (40, 780, "Seite 2 von 2 Stand 01.02.2020")]
    ix = DocIndex(make_doc(page, page2))
    running = R.running_lines(ix)
    assert (1, 0) in running and (2, 0) in running                 # the repeated title line...
    dates = [s for s in ix.spans("date") if s.page == 1]
    title, footer = sorted(dates, key=lambda s: s.line)
    assert not R._page_footer(ix, title, running)                  # ... keeps its date
    assert R._page_footer(ix, footer, running)


def test_the_discount_date_is_no_due_date():
    ix = DocIndex(make_doc([(40, 100, "Zahlbar innerhalb 30 Tagen netto bis 04.04.2013, 3% Skonto innerhalb 10 Tagen bis 15.03.2013")]))
    net, disc = sorted(ix.spans("date"), key=lambda s: s.seg_start)
    assert not R.discount_clause(ix, net)
    assert R.discount_clause(ix, disc)
    ix = DocIndex(make_doc([(40, 100, "2% discount if paid by 10/03/2021; net due by 31/03/2021")]))
    disc, net = sorted(ix.spans("date"), key=lambda s: s.seg_start)
    assert R.discount_clause(ix, disc) and not R.discount_clause(ix, net)


# -- party names ------------------------------------------------------------------------------------

def test_address_and_code_lines_are_not_names():
    for t in ("DE 69876 Frankfurt", "69876 Frankfurt", "F-75001 Paris", "Kundenstraße 15", "12 Rue de la Paix",
              "221B Baker Street"):
        assert R.address_line(t), t
    for t in ("Kunden AG Mitte", "Lieferant GmbH", "Dupont SARL", "Acme Street Foods Ltd"):
        assert not R.address_line(t), t
    assert R.code_like("GE2020211") and R.code_like("GLN 4304171000002")
    assert not R.code_like("Muster AG 2")
    assert R.street_label("Lieferantenstraße") and not R.street_label("Rechnungsempfänger")


def _party_doc():
    return make_doc([
        (40, 20, "Rechnung Nr. 4711"), (400, 20, "Datum: 05.03.2018"),
        (40, 100, "Verkäufer:"),
        (40, 112, "Globale Nummer: 4000001123452 (GTIN)"),
        (40, 124, "Lieferant GmbH"),
        (40, 136, "Lieferantenstraße 20"),
        (40, 148, "DE 80333 München"),
        (40, 200, "Käufer/Leistungsempfänger:"),
        (40, 212, "Nummer"), (130, 212, ": GE2020211"),
        (40, 224, "Globale Nummer: 4000001987658 (GTIN)"),
        (40, 236, "Kunden AG Mitte"),
        (40, 248, "Kundenstraße 15"),
        (40, 260, "DE 69876 Frankfurt"),
        (40, 400, "Gesamtbetrag"), (450, 400, "119,00 EUR"),
    ])


def test_a_party_name_is_the_first_line_of_its_block():
    ix, specs, ranked = _ranked(_party_doc())
    R.refine(ix, specs, ranked)
    assert ranked["seller_name"][0].value == "Lieferant GmbH"
    assert ranked["buyer_name"][0].value == "Kunden AG Mitte"
    rec = generate(_party_doc(), SCHEMA).extraction.record
    assert rec["seller_name"] == "Lieferant GmbH" and rec["buyer_name"] == "Kunden AG Mitte"


def test_key_value_lines():
    ix = DocIndex(_party_doc())
    line = {ix.page(1).segments_by_line[i][0].text: i for i in range(len(ix.page(1).segments_by_line))}
    assert R.key_value_line(ix, 1, line["Nummer"])
    assert R.key_value_line(ix, 1, line["Globale Nummer: 4000001987658 (GTIN)"])
    assert not R.key_value_line(ix, 1, line["Kunden AG Mitte"])
    assert not R.key_value_line(ix, 1, line["Käufer/Leistungsempfänger:"])     # a caption alone
    ix = DocIndex(make_doc([(40, 100, "Bill To:"), (300, 100, "Ship To:")]))
    assert not R.key_value_line(ix, 1, 0)                                      # two captions


def test_a_below_text_anchor_reads_three_lettered_lines():
    ix = DocIndex(_party_doc())
    loc = Locator(by="anchor", label="Käufer/Leistungsempfänger:", relation="below")
    from docassay.extractors.instructions.executor import candidates_for
    texts = [s.text for s in candidates_for(ix, loc, FieldRule("text", loc))]
    assert texts[:3] == ["Nummer", ": GE2020211", "Globale Nummer: 4000001987658 (GTIN)"]   # as before
    assert "Kunden AG Mitte" in texts


# -- totals -----------------------------------------------------------------------------------------

def _prop(field, value, score, line, text=None):
    text = text or f"{value:.2f}"
    span = Span("amount", text, value, 1, line, 0, 0, len(text), BBox(400, 10 * line, 450, 10 * line + 8))
    return Proposal(field, span, Locator(by="anchor", label="x", relation="below", skip=line), value, "x", "below",
                    score=score)


def _totals_specs():
    specs, _ = schema_fields(SCHEMA)
    return [s for s in specs if s.name in ("net_total", "tax_total", "gross_total")]


def test_the_document_total_over_a_per_rate_line():
    # A tax summary: one agreeing line per rate, then the total line (largest).
    ranked = {
        "net_total": [_prop("net_total", 321.40, 0.99, 1), _prop("net_total", 127.59, 0.99, 2), _prop("net_total", 448.99, 0.98, 3)],
        "tax_total": [_prop("tax_total", 61.07, 0.73, 1), _prop("tax_total", 19.0, 0.67, 4), _prop("tax_total", 8.93, 0.59, 2),
                      _prop("tax_total", 70.0, 0.40, 3)],
        "gross_total": [_prop("gross_total", 382.47, 1.0, 1), _prop("gross_total", 136.52, 0.98, 2), _prop("gross_total", 518.99, 0.94, 3)],
    }
    R._totals(_totals_specs(), ranked)
    assert [ranked[f][0].value for f in ("net_total", "tax_total", "gross_total")] == [448.99, 70.0, 518.99]


def test_no_agreeing_triple_moves_nothing():
    ranked = {"net_total": [_prop("net_total", 100.0, 0.9, 1)], "tax_total": [_prop("tax_total", 7.0, 0.9, 2)],
              "gross_total": [_prop("gross_total", 120.0, 0.9, 3), _prop("gross_total", 99.0, 0.5, 4)]}
    R._totals(_totals_specs(), ranked)
    assert [ranked[f][0].value for f in ("net_total", "tax_total", "gross_total")] == [100.0, 7.0, 120.0]


def test_a_credit_notes_unsigned_tax_takes_the_gross_sign():
    ranked = {"net_total": [_prop("net_total", -7.67, 0.99, 1)],
              "tax_total": [_prop("tax_total", 0.10, 0.99, 5), _prop("tax_total", 1.12, 0.5, 2)],
              "gross_total": [_prop("gross_total", -8.79, 0.99, 3)]}
    R._totals(_totals_specs(), ranked)
    tax = ranked["tax_total"][0]
    assert tax.value == -1.12 and tax.normalize == {"sign_of": "gross_total"}
    spec = next(s for s in _totals_specs() if s.name == "tax_total")
    assert tax.rule(spec).normalize == {"sign_of": "gross_total"}


def test_sign_of_is_replayed_by_the_executor():
    doc = make_doc([(40, 100, "Steuerbetrag"), (450, 100, "1,12"), (40, 120, "Bruttosumme"), (450, 120, "-8,79")])
    rule = lambda label, **kw: FieldRule("amount", Locator(by="anchor", label=label, relation="right"), **kw)  # noqa: E731
    ins = Instructions(locale=Locale(decimal=",", date_order="DMY", currency="EUR"),
                       fields={"tax_total": rule("Steuerbetrag", normalize={"sign_of": "gross_total"}),
                               "gross_total": rule("Bruttosumme")})
    assert validate_instructions(ins.to_json()) == []
    assert execute(ins, doc).record == {"tax_total": -1.12, "gross_total": -8.79}
    doc = make_doc([(40, 100, "Steuerbetrag"), (450, 100, "1,12"), (40, 120, "Bruttosumme"), (450, 120, "8,79")])
    assert execute(ins, doc).record == {"tax_total": 1.12, "gross_total": 8.79}


# -- seller VAT ID ----------------------------------------------------------------------------------

def test_the_seller_vat_id_is_not_in_the_buyers_block():
    def p(field, value, section, line, score=0.9):
        span = Span("text", value, value, 1, line, 0, 0, len(value), BBox(40, 10 * line, 200, 10 * line + 8))
        return Proposal(field, span, Locator(by="anchor", label="x", relation="right"), value, "x", "right",
                        section=section, score=score)
    specs, _ = schema_fields(SCHEMA)
    ranked = {"seller_vat_id": [p("seller_vat_id", "DE136695976", "Kunden AG Mitte", 5, 0.98),
                                p("seller_vat_id", "DE123456789", "Lieferant GmbH", 2, 0.97)],
              "seller_name": [p("seller_name", "Lieferant GmbH", "Verkäufer", 1)],
              "buyer_name": [p("buyer_name", "Kunden AG Mitte", "Käufer", 4)]}
    R._seller_vat_block(specs, ranked)
    assert ranked["seller_vat_id"][0].value == "DE123456789"


def test_a_number_caption_heads_no_party_block_and_a_neighbour_column_does_not_make_a_caption_a_key():
    doc = make_doc([
        (40, 20, "Acme Trading Ltd"),
        (40, 60, "Billed to:"), (330, 60, "Invoice #: RE-7111"),
        (40, 72, "Peters & Visser BV"), (330, 72, "Invoice date: 17.07.2020"),
        (40, 84, "Oudeplein 96"),
        (40, 96, "3733 MA Haarlem"),
        (330, 120, "Customer No:"), (330, 132, "D8814"), (330, 144, "Deliver to:"), (330, 156, "Servicios Ruiz SA"),
        (40, 400, "Total"), (450, 400, "119.00 EUR"),
    ])
    ix = DocIndex(doc)
    assert not R.key_value_segment(ix, 1, 1, 0)           # "Billed to:" beside another column's "Invoice #: ..."
    ix, specs, ranked = _ranked(doc)
    R.refine(ix, specs, ranked)
    assert ranked["buyer_name"][0].value == "Peters & Visser BV"
    spec = next(s for s in specs if s.name == "buyer_name")
    first = R.block_first_line(ix, spec, ranked["buyer_name"])
    assert first is not None and first.value == "Peters & Visser BV"


def test_the_net_date_of_payment_terms_is_the_due_date():
    doc = make_doc([
        (40, 20, "Rechnung Nr. 4711"), (400, 20, "Rechnungsdatum: 05.03.2013"),
        (40, 300, "Zahlbar innerhalb 30 Tagen netto bis 04.04.2013, 3% Skonto innerhalb 10 Tagen bis 15.03.2013"),
        (40, 400, "Gesamtbetrag"), (450, 400, "119,00 EUR"),
    ])
    ix, specs, ranked = _ranked(doc)
    for p in ranked["due_date"]:                  # as a scorer sure of the terms but not of which date
        p.score = 0.9 if p.value == "2013-03-15" else 0.1
    ranked["due_date"].sort(key=lambda p: -p.score)
    R.refine(ix, specs, ranked)
    assert ranked["due_date"][0].value == "2013-04-04" and ranked["due_date"][0].score == 0.9


def test_the_start_of_an_iban_is_no_vat_id():
    ix = DocIndex(make_doc([(40, 100, "IBAN NL82 9402 1510 6037 37"), (40, 120, "Btw nummer NL182591679B72")]))
    seg_iban = ix.segment(1, 0, 0)
    start = seg_iban.text.index("NL82")
    iban = Span("identifier", "NL82", "NL82", 1, 0, 0, start, start + 4, seg_iban.bbox)
    seg_vat = ix.segment(1, 1, 0)
    vs = seg_vat.text.index("NL18")
    vat = Span("identifier", "NL182591679B72", "NL182591679B72", 1, 1, 0, vs, len(seg_vat.text), seg_vat.bbox)
    assert R.iban_start(ix, iban) and not R.iban_start(ix, vat)


def test_an_agreeing_tax_is_kept_even_when_its_scorer_doubted_it():
    ranked = {"net_total": [_prop("net_total", 6230.40, 0.95, 1)],
              "tax_total": [_prop("tax_total", 21252.0, 0.12, 5), _prop("tax_total", 1308.38, 0.04, 2)],
              "gross_total": [_prop("gross_total", 7538.78, 0.97, 3)]}
    R._totals(_totals_specs(), ranked)
    assert ranked["tax_total"][0].value == 1308.38 and ranked["tax_total"][0].score == 0.95


def test_a_tax_larger_than_the_net_is_a_swap_not_a_triple():
    ranked = {"net_total": [_prop("net_total", 330.13, 0.9, 1), _prop("net_total", 468.40, 0.85, 2)],
              "tax_total": [_prop("tax_total", 3133.22, 0.8, 3), _prop("tax_total", 468.40, 0.7, 2)],
              "gross_total": [_prop("gross_total", 3601.62, 0.95, 4)]}
    R._totals(_totals_specs(), ranked)
    assert ranked["net_total"][0].value == 330.13 and ranked["tax_total"][0].value == 3133.22   # unchanged
