"""From business terms to the schema: default names, descriptions, the x-docassay keyword, XPaths,
item names without identifier lines, the XML's sign, and where a value is printed."""
from __future__ import annotations

from docassay.extractors.einvoice import read_pdf, read_xml
from docassay.extractors.einvoice.mapping import field_map, map_record
from docassay.extractors.einvoice.printed import find_printed
from docassay.extractors.parsers import parse
from docassay.extractors.spans import DocIndex
from docassay.extractors.synth import make_document, make_format, to_pdf
from docassay.extractors.synth.einvoice import embed_xml, to_cii, to_ubl
from tests.extractors.einvoice_fixtures import SCHEMA, TRUTH
from tests.extractors.test_einvoice_parsers import ZUGFERD1


def test_example_schema_names_map_to_the_truth() -> None:
    rec = map_record(read_xml(to_cii(TRUTH)), SCHEMA).record
    assert rec == TRUTH
    assert map_record(read_xml(to_ubl(TRUTH)), SCHEMA).record == TRUTH


def test_other_names_descriptions_keyword_and_xpath() -> None:
    schema = {"type": "object", "properties": {
        "InvoiceNo": {"type": "string"},
        "Total": {"type": "number"},
        "when": {"type": "string", "format": "date", "description": "The date the invoice was issued."},
        "pay_until": {"type": "string", "description": "The due date of the payment."},
        "vendor": {"type": "string"},
        "iban_field": {"type": "string", "x-docassay": {"einvoice": "BT-112"}},
        "profile": {"type": "string", "x-docassay": {"einvoice": {"xpath": "//*[local-name()='GuidelineSpecifiedDocumentContextParameter']/*[local-name()='ID']"}}},
        "notes": {"type": "string", "x-docassay": {"einvoice": False}},
        "items": {"type": "array", "items": {"type": "object", "properties": {
            "qty": {"type": "integer"}, "name": {"type": "string"},
            "vat": {"type": "number", "x-docassay": {"einvoice": {"xpath": "string(.//*[local-name()='LineID'])"}}}}}},
    }}
    m = map_record(read_xml(to_cii(TRUTH)), schema)
    r = m.record
    assert r["InvoiceNo"] == "RE-2024-0815" and r["Total"] == 529.87 and r["vendor"] == "Lieferant GmbH"
    assert r["when"] == "2024-03-05" and r["pay_until"] == "2024-04-04"
    assert r["iban_field"] == "529.87", "the keyword wins over the name; the schema's type wins over the term's"
    assert r["profile"] == "urn:cen.eu:en16931:2017"
    assert "notes" not in r and "notes" in m.unmapped
    assert r["items"] == [{"qty": 20, "name": "Trennblätter A4", "vat": 1.0}, {"qty": 50, "name": "Joghurt Banane", "vat": 2.0}]
    assert m.fields["when"].how == "description" and m.fields["InvoiceNo"].how == "name"


def test_identifier_lines_leave_names() -> None:
    rec = map_record(read_xml(ZUGFERD1), SCHEMA).record
    assert rec["seller_name"] == "MUSTERLIEFERANT GMBH"
    assert rec["line_items"][0]["description"] == "Kunstrasen grün 3m breit"
    assert rec["gross_total"] == -8.79 and rec["line_items"][0]["unit_price"] == -4.0
    assert field_map("description", {"type": "string"}, line=True).term == "BT-153"


def test_printed_values_are_found_with_their_place() -> None:
    sd = make_document(make_format(1393423301, "invoice"), 9)
    pdf = embed_xml(to_pdf(sd), to_cii(sd.truth))
    ix = DocIndex(parse("h.pdf", pdf))
    rec = map_record(read_pdf(pdf, "h.pdf"), SCHEMA).record
    p = find_printed(ix, rec["gross_total"], "amount")
    assert p is not None and p.page == 1 and len(p.bbox.as_list()) == 4
    assert find_printed(ix, rec["invoice_number"], "identifier").text.replace(" ", "") == rec["invoice_number"]
    assert find_printed(ix, rec["issue_date"], "date") is not None
    assert find_printed(ix, 98765.43, "amount") is None
    assert find_printed(ix, "NOT-ON-THE-PAGE-77", "identifier") is None


def test_a_bad_xpath_is_a_config_error_naming_the_field() -> None:
    import pytest

    from docassay.infra.errors import ConfigError
    schema = {"type": "object", "properties": {"x": {"type": "string", "x-docassay": {"einvoice": {"xpath": "//*[("}}}}}
    with pytest.raises(ConfigError) as e:
        map_record(read_xml(to_cii(TRUTH)), schema)
    assert "'x'" in e.value.message and "XPath" in e.value.message


def test_credit_note_amounts_as_written_or_negative() -> None:
    import pytest

    from docassay.infra.errors import ConfigError
    cn = read_xml(to_ubl(TRUTH, credit_note=True))
    assert map_record(cn, SCHEMA).record["gross_total"] == 529.87, "as the XML writes it (default)"
    neg = {**SCHEMA, "x-docassay": {"einvoice": {"credit_note_amounts": "negative"}}}
    rec = map_record(cn, neg).record
    assert (rec["net_total"], rec["tax_total"], rec["gross_total"]) == (-473.0, -56.87, -529.87)
    assert [(i["quantity"], i["unit_price"], i["line_total"]) for i in rec["line_items"]] == [(20.0, 9.9, -198.0), (50.0, 5.5, -275.0)]
    assert map_record(read_xml(to_ubl(TRUTH)), neg).record["gross_total"] == 529.87, "an invoice is not negated"
    assert map_record(read_xml(ZUGFERD1), neg).record["gross_total"] == -8.79
    with pytest.raises(ConfigError):
        map_record(cn, {**SCHEMA, "x-docassay": {"einvoice": {"credit_note_amounts": "flip"}}})


def test_printed_values_are_read_once_per_document_and_found_as_before() -> None:
    """The printed amounts and the folded segment texts are kept in `ix.memo` for all the XML's
    values; a later search on the same index finds what a fresh index finds."""
    from builders import make_doc
    from docassay.extractors.einvoice.printed import find_printed
    from docassay.extractors.spans import DocIndex
    doc = make_doc([(40, 20, "Muster GmbH"), (40, 100, "Netto"), (400, 100, "1.000,00 EUR"),
                    (40, 112, "Gutschrift"), (400, 112, "-190,00"), (40, 124, "Rechnung Nr. RE-4711")])
    ix = DocIndex(doc)
    asks = [(1000.0, "amount"), (190.0, "amount"), (-190.0, "amount"), (12.5, "amount"),
            ("RE-4711", "identifier"), ("muster gmbh", "text"), ("Nobody", "text")]
    shared = [find_printed(ix, v, k) for v, k in asks]
    assert ("printed_amounts",) in ix.memo and ("printed_squashed",) in ix.memo
    assert shared == [find_printed(DocIndex(doc), v, k) for v, k in asks]
    assert [p is not None for p in shared] == [True, True, True, False, True, True, False]
    assert shared[1] == shared[2] and shared[1].text == "-190,00", "a credit printed with its sign, found either way"
