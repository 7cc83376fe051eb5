"""CII (ZUGFeRD 1 and 2.x / Factur-X) and UBL 2.1 readers, and PDF attachments, on project-made XML."""
from __future__ import annotations

import pytest

from docassay.extractors.einvoice import read_pdf, read_xml
from docassay.extractors.errors import ParseError
from docassay.extractors.synth import make_document, make_format, to_pdf
from docassay.extractors.synth.einvoice import embed_xml, strip_attachments, to_cii, to_ubl
from tests.extractors.einvoice_fixtures import TRUTH

# A ZUGFeRD 1.0 invoice in the old vocabulary (CrossIndustryDocument, ApplicableSupplyChainTrade*).
ZUGFERD1 = """<?xml version="1.0" encoding="UTF-8"?>
<rsm:CrossIndustryDocument xmlns:rsm="urn:ferd:CrossIndustryDocument:invoice:1p0"
  xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:12"
  xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:15">
 <rsm:SpecifiedExchangedDocumentContext><ram:GuidelineSpecifiedDocumentContextParameter>
  <ram:ID>urn:ferd:CrossIndustryDocument:invoice:1p0:comfort</ram:ID></ram:GuidelineSpecifiedDocumentContextParameter>
 </rsm:SpecifiedExchangedDocumentContext>
 <rsm:HeaderExchangedDocument><ram:ID>471102</ram:ID><ram:TypeCode>380</ram:TypeCode>
  <ram:IssueDateTime><udt:DateTimeString format="102">20130305</udt:DateTimeString></ram:IssueDateTime>
 </rsm:HeaderExchangedDocument>
 <rsm:SpecifiedSupplyChainTradeTransaction>
  <ram:ApplicableSupplyChainTradeAgreement>
   <ram:SellerTradeParty><ram:Name>GLN 4333741000005
Lief-Nr: 549910
MUSTERLIEFERANT GMBH</ram:Name>
    <ram:SpecifiedTaxRegistration><ram:ID schemeID="FC">201/113/40209</ram:ID></ram:SpecifiedTaxRegistration>
    <ram:SpecifiedTaxRegistration><ram:ID schemeID="VA">DE123456789</ram:ID></ram:SpecifiedTaxRegistration>
   </ram:SellerTradeParty>
   <ram:BuyerTradeParty><ram:Name>Kunden AG Mitte</ram:Name></ram:BuyerTradeParty>
  </ram:ApplicableSupplyChainTradeAgreement>
  <ram:ApplicableSupplyChainTradeSettlement>
   <ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>
   <ram:SpecifiedTradePaymentTerms><ram:DueDateDateTime><udt:DateTimeString format="102">20130404</udt:DateTimeString></ram:DueDateDateTime></ram:SpecifiedTradePaymentTerms>
   <ram:SpecifiedTradeSettlementMonetarySummation>
    <ram:LineTotalAmount currencyID="EUR">-8.00</ram:LineTotalAmount>
    <ram:TaxBasisTotalAmount currencyID="EUR">-8.00</ram:TaxBasisTotalAmount>
    <ram:TaxTotalAmount currencyID="EUR">-0.79</ram:TaxTotalAmount>
    <ram:GrandTotalAmount currencyID="EUR">-8.79</ram:GrandTotalAmount>
   </ram:SpecifiedTradeSettlementMonetarySummation>
  </ram:ApplicableSupplyChainTradeSettlement>
  <ram:IncludedSupplyChainTradeLineItem>
   <ram:SpecifiedSupplyChainTradeAgreement><ram:NetPriceProductTradePrice><ram:ChargeAmount>-4.0000</ram:ChargeAmount></ram:NetPriceProductTradePrice></ram:SpecifiedSupplyChainTradeAgreement>
   <ram:SpecifiedSupplyChainTradeDelivery><ram:BilledQuantity unitCode="C62">2.0000</ram:BilledQuantity></ram:SpecifiedSupplyChainTradeDelivery>
   <ram:SpecifiedSupplyChainTradeSettlement><ram:SpecifiedTradeSettlementMonetarySummation><ram:LineTotalAmount>-8.00</ram:LineTotalAmount></ram:SpecifiedTradeSettlementMonetarySummation></ram:SpecifiedSupplyChainTradeSettlement>
   <ram:SpecifiedTradeProduct><ram:Name>GTIN 4012345001235
Kunstrasen grün 3m breit</ram:Name></ram:SpecifiedTradeProduct>
  </ram:IncludedSupplyChainTradeLineItem>
 </rsm:SpecifiedSupplyChainTradeTransaction>
</rsm:CrossIndustryDocument>""".encode("utf-8")


def test_cii_d16b_terms_and_lines() -> None:
    inv = read_xml(to_cii(TRUTH), "x.xml")
    assert inv.syntax == "CII" and inv.profile == "urn:cen.eu:en16931:2017"
    t = inv.terms
    assert (t["BT-1"], t["BT-2"], t["BT-9"], t["BT-5"]) == ("RE-2024-0815", "2024-03-05", "2024-04-04", "EUR")
    assert (t["BT-27"], t["BT-31"], t["BT-44"]) == ("Lieferant GmbH", "DE123456789", "Kunden AG Mitte")
    assert (t["BT-109"], t["BT-110"], t["BT-112"]) == (473.0, 56.87, 529.87)
    assert [ln["BT-153"] for ln in inv.lines] == ["Trennblätter A4", "Joghurt Banane"]
    assert [(ln["BT-129"], ln["BT-146"], ln["BT-131"]) for ln in inv.lines] == [(20.0, 9.9, 198.0), (50.0, 5.5, 275.0)]
    assert not inv.is_credit_note


def test_zugferd1_old_vocabulary_keeps_the_xml_sign() -> None:
    inv = read_xml(ZUGFERD1, "z1.xml")
    assert inv.version == "ZUGFeRD 1.0"
    assert inv.terms["BT-1"] == "471102" and inv.terms["BT-2"] == "2013-03-05" and inv.terms["BT-9"] == "2013-04-04"
    assert inv.terms["BT-31"] == "DE123456789", "the VAT id is the VA registration, not the FC one"
    assert inv.terms["BT-32"] == "201/113/40209"
    assert (inv.terms["BT-109"], inv.terms["BT-112"]) == (-8.0, -8.79)
    assert inv.lines[0]["BT-146"] == -4.0 and inv.lines[0]["BT-129"] == 2.0


def test_ubl_invoice_and_credit_note() -> None:
    inv = read_xml(to_ubl(TRUTH), "u.xml")
    assert inv.syntax == "UBL" and inv.version == "UBL 2.1 Invoice" and not inv.is_credit_note
    assert (inv.terms["BT-1"], inv.terms["BT-9"], inv.terms["BT-31"]) == ("RE-2024-0815", "2024-04-04", "DE123456789")
    assert (inv.terms["BT-109"], inv.terms["BT-110"], inv.terms["BT-112"]) == (473.0, 56.87, 529.87)
    cn = read_xml(to_ubl(TRUTH, credit_note=True), "c.xml")
    assert cn.version == "UBL 2.1 CreditNote" and cn.is_credit_note and cn.terms["BT-3"] == "381"
    assert cn.terms["BT-9"] == "2024-04-04", "a credit note's due date is in PaymentMeans"
    assert [ln["BT-129"] for ln in cn.lines] == [20.0, 50.0], "CreditedQuantity"


def test_pdf_attachment_any_name_and_stripped() -> None:
    sd = make_document(make_format(1393423301, "invoice"), 5)
    pdf = to_pdf(sd)
    assert read_pdf(pdf, "plain.pdf") is None
    for name in ("factur-x.xml", "ZUGFeRD-invoice.xml", "rechnung-beliebig.xml"):
        inv = read_pdf(embed_xml(pdf, to_cii(sd.truth), name), "h.pdf")
        assert inv is not None and inv.attachment == name and inv.terms["BT-1"] == sd.truth["invoice_number"]
    hybrid = embed_xml(pdf, to_cii(sd.truth))
    assert read_pdf(strip_attachments(hybrid), "s.pdf") is None


def test_non_invoice_xml_attachment_is_passed_over() -> None:
    sd = make_document(make_format(1393423301, "invoice"), 6)
    other = b"<?xml version='1.0'?><additionalData><x>1</x></additionalData>"
    pdf = embed_xml(to_pdf(sd), other, "additional_data.xml")
    assert read_pdf(pdf, "o.pdf") is None
    with pytest.raises(ParseError) as e:
        read_xml(other, "o.xml")
    assert e.value.kind == "unsupported" and "additionalData" in e.value.message


def test_ubl_attached_to_a_pdf_is_read_too() -> None:
    sd = make_document(make_format(1393423301, "invoice"), 8)
    inv = read_pdf(embed_xml(to_pdf(sd), to_ubl(sd.truth), "xrechnung.xml"), "u.pdf")
    assert inv is not None and inv.syntax == "UBL" and inv.attachment == "xrechnung.xml"
    assert inv.terms["BT-112"] == sd.truth["gross_total"]


def test_a_pdf_whose_attachments_cannot_be_walked_is_no_e_invoice_and_no_error() -> None:
    """The print still decides: attachments pypdf cannot read are skipped, not a row error."""
    from docassay.extractors.einvoice.attachments import embedded_xml
    found = embedded_xml(b"%PDF-1.4\nthis is not a PDF body at all", "odd.pdf", 1 << 20)
    assert found.xml == [] and found.skipped and "unreadable" in found.skipped[0]
