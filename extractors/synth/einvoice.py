"""E-invoice XML for synthetic invoices: CII (Factur-X / ZUGFeRD 2.x, EN 16931 profile) and UBL 2.1
Invoice or CreditNote, written from a ground-truth record; and hybrids (the CII embedded in the PDF
as a PDF/A-3 associated file, the way Factur-X does).

    xml = to_cii(truth)                       # bytes, CrossIndustryInvoice
    xml = to_ubl(truth, credit_note=True)     # bytes, UBL CreditNote (amounts positive, type 381)
    pdf = embed_xml(to_pdf(doc), xml)         # factur-x.xml in /EmbeddedFiles and the catalog's /AF

The record's keys are the canonical ground-truth ones (invoice_number, issue_date, due_date,
seller_name, seller_vat_id, buyer_name, currency, net_total, tax_total, gross_total, line_items
with description, quantity, unit_price, line_total); absent keys are left out of the XML.
"""
from __future__ import annotations

import io
from typing import Any, Mapping

from lxml import etree

__all__ = ["to_cii", "to_ubl", "embed_xml", "strip_attachments", "CII_NS", "UBL_NS"]

CII_NS = {"rsm": "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100",
          "ram": "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100",
          "udt": "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100"}
UBL_NS = {"cac": "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
          "cbc": "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"}
_UBL_ROOT = {False: ("Invoice", "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"),
             True: ("CreditNote", "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2")}
FACTURX_PROFILE = "urn:cen.eu:en16931:2017"
PEPPOL_PROFILE = "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0"


def _q(ns: Mapping[str, str], tag: str) -> str:
    prefix, local = tag.split(":")
    return f"{{{ns[prefix]}}}{local}"


def _sub(parent: etree._Element, ns: Mapping[str, str], tag: str, text: object = None, **attrs: str) -> etree._Element:
    el = etree.SubElement(parent, _q(ns, tag), **attrs)
    if text is not None:
        el.text = str(text)
    return el


def _amount(v: object) -> str:
    return f"{float(v):.2f}"  # type: ignore[arg-type]


def _ymd(iso: str) -> str:
    return iso.replace("-", "")


def to_cii(truth: Mapping[str, Any]) -> bytes:
    """A CII D16B CrossIndustryInvoice (Factur-X EN 16931 profile) of the record."""
    ns = CII_NS
    root = etree.Element(_q(ns, "rsm:CrossIndustryInvoice"), nsmap=ns)
    ctx = _sub(root, ns, "rsm:ExchangedDocumentContext")
    _sub(_sub(ctx, ns, "ram:GuidelineSpecifiedDocumentContextParameter"), ns, "ram:ID", FACTURX_PROFILE)
    doc = _sub(root, ns, "rsm:ExchangedDocument")
    _sub(doc, ns, "ram:ID", truth.get("invoice_number", ""))
    _sub(doc, ns, "ram:TypeCode", "381" if float(truth.get("gross_total") or 0) < 0 else "380")
    if truth.get("issue_date"):
        _sub(_sub(doc, ns, "ram:IssueDateTime"), ns, "udt:DateTimeString", _ymd(truth["issue_date"]), format="102")
    tx = _sub(root, ns, "rsm:SupplyChainTradeTransaction")
    cur = truth.get("currency", "EUR")
    for i, item in enumerate(truth.get("line_items") or [], 1):
        li = _sub(tx, ns, "ram:IncludedSupplyChainTradeLineItem")
        _sub(_sub(li, ns, "ram:AssociatedDocumentLineDocument"), ns, "ram:LineID", i)
        _sub(_sub(li, ns, "ram:SpecifiedTradeProduct"), ns, "ram:Name", item.get("description", ""))
        agr = _sub(li, ns, "ram:SpecifiedLineTradeAgreement")
        if "unit_price" in item:
            _sub(_sub(agr, ns, "ram:NetPriceProductTradePrice"), ns, "ram:ChargeAmount", _amount(item["unit_price"]))
        if "quantity" in item:
            _sub(_sub(li, ns, "ram:SpecifiedLineTradeDelivery"), ns, "ram:BilledQuantity", f"{float(item['quantity']):g}",
                 unitCode="C62")
        st = _sub(li, ns, "ram:SpecifiedLineTradeSettlement")
        if "line_total" in item:
            _sub(_sub(st, ns, "ram:SpecifiedTradeSettlementLineMonetarySummation"), ns, "ram:LineTotalAmount",
                 _amount(item["line_total"]))
    agr = _sub(tx, ns, "ram:ApplicableHeaderTradeAgreement")
    seller = _sub(agr, ns, "ram:SellerTradeParty")
    _sub(seller, ns, "ram:Name", truth.get("seller_name", ""))
    if truth.get("seller_vat_id"):
        _sub(_sub(seller, ns, "ram:SpecifiedTaxRegistration"), ns, "ram:ID", truth["seller_vat_id"], schemeID="VA")
    buyer = _sub(agr, ns, "ram:BuyerTradeParty")
    _sub(buyer, ns, "ram:Name", truth.get("buyer_name", ""))
    _sub(tx, ns, "ram:ApplicableHeaderTradeDelivery")
    st = _sub(tx, ns, "ram:ApplicableHeaderTradeSettlement")
    _sub(st, ns, "ram:InvoiceCurrencyCode", cur)
    if truth.get("due_date"):
        terms = _sub(st, ns, "ram:SpecifiedTradePaymentTerms")
        _sub(_sub(terms, ns, "ram:DueDateDateTime"), ns, "udt:DateTimeString", _ymd(truth["due_date"]), format="102")
    summ = _sub(st, ns, "ram:SpecifiedTradeSettlementHeaderMonetarySummation")
    items = truth.get("line_items") or []
    if items and all("line_total" in it for it in items):
        _sub(summ, ns, "ram:LineTotalAmount", _amount(sum(float(it["line_total"]) for it in items)))
    if "net_total" in truth:
        _sub(summ, ns, "ram:TaxBasisTotalAmount", _amount(truth["net_total"]))
    if "tax_total" in truth:
        _sub(summ, ns, "ram:TaxTotalAmount", _amount(truth["tax_total"]), currencyID=cur)
    if "gross_total" in truth:
        _sub(summ, ns, "ram:GrandTotalAmount", _amount(truth["gross_total"]))
        _sub(summ, ns, "ram:DuePayableAmount", _amount(truth["gross_total"]))
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def to_ubl(truth: Mapping[str, Any], *, credit_note: bool = False) -> bytes:
    """A UBL 2.1 Invoice, or a CreditNote (type 381; amounts as in the record, which a UBL credit
    note states as positive numbers)."""
    name, uri = _UBL_ROOT[credit_note]
    ns: dict[str | None, str] = {None: uri}
    ns.update(UBL_NS.items())
    q = dict(UBL_NS)
    root = etree.Element(f"{{{uri}}}{name}", nsmap=ns)
    cur = truth.get("currency", "EUR")
    _sub(root, q, "cbc:CustomizationID", PEPPOL_PROFILE)
    _sub(root, q, "cbc:ID", truth.get("invoice_number", ""))
    if truth.get("issue_date"):
        _sub(root, q, "cbc:IssueDate", truth["issue_date"])
    if truth.get("due_date") and not credit_note:
        _sub(root, q, "cbc:DueDate", truth["due_date"])
    _sub(root, q, "cbc:CreditNoteTypeCode" if credit_note else "cbc:InvoiceTypeCode", "381" if credit_note else "380")
    _sub(root, q, "cbc:DocumentCurrencyCode", cur)
    for role, key, vat in (("cac:AccountingSupplierParty", "seller_name", "seller_vat_id"),
                           ("cac:AccountingCustomerParty", "buyer_name", None)):
        party = _sub(_sub(root, q, role), q, "cac:Party")
        if vat and truth.get(vat):
            pts = _sub(party, q, "cac:PartyTaxScheme")
            _sub(pts, q, "cbc:CompanyID", truth[vat])
            _sub(_sub(pts, q, "cac:TaxScheme"), q, "cbc:ID", "VAT")
        _sub(_sub(party, q, "cac:PartyLegalEntity"), q, "cbc:RegistrationName", truth.get(key, ""))
    if credit_note and truth.get("due_date"):
        pm = _sub(root, q, "cac:PaymentMeans")
        _sub(pm, q, "cbc:PaymentMeansCode", "30")
        _sub(pm, q, "cbc:PaymentDueDate", truth["due_date"])
    if "tax_total" in truth:
        _sub(_sub(root, q, "cac:TaxTotal"), q, "cbc:TaxAmount", _amount(truth["tax_total"]), currencyID=cur)
    tot = _sub(root, q, "cac:LegalMonetaryTotal")
    items = truth.get("line_items") or []
    if items and all("line_total" in it for it in items):
        _sub(tot, q, "cbc:LineExtensionAmount", _amount(sum(float(it["line_total"]) for it in items)), currencyID=cur)
    if "net_total" in truth:
        _sub(tot, q, "cbc:TaxExclusiveAmount", _amount(truth["net_total"]), currencyID=cur)
    if "gross_total" in truth:
        _sub(tot, q, "cbc:TaxInclusiveAmount", _amount(truth["gross_total"]), currencyID=cur)
        _sub(tot, q, "cbc:PayableAmount", _amount(truth["gross_total"]), currencyID=cur)
    for i, item in enumerate(items, 1):
        line = _sub(root, q, "cac:CreditNoteLine" if credit_note else "cac:InvoiceLine")
        _sub(line, q, "cbc:ID", i)
        if "quantity" in item:
            _sub(line, q, "cbc:CreditedQuantity" if credit_note else "cbc:InvoicedQuantity",
                 f"{float(item['quantity']):g}", unitCode="C62")
        if "line_total" in item:
            _sub(line, q, "cbc:LineExtensionAmount", _amount(item["line_total"]), currencyID=cur)
        _sub(_sub(line, q, "cac:Item"), q, "cbc:Name", item.get("description", ""))
        if "unit_price" in item:
            _sub(_sub(line, q, "cac:Price"), q, "cbc:PriceAmount", _amount(item["unit_price"]), currencyID=cur)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def embed_xml(pdf: bytes, xml: bytes, name: str = "factur-x.xml") -> bytes:
    """The PDF with `xml` attached as a PDF/A-3 associated file (`/EmbeddedFiles` and the catalog's
    `/AF`, relationship Data), as a Factur-X hybrid carries it."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import ArrayObject, NameObject

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    spec = writer.add_attachment(name, xml)
    spec.associated_file_relationship = NameObject("/Data")
    writer._root_object[NameObject("/AF")] = ArrayObject([spec.pdf_object.indirect_reference])
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def strip_attachments(pdf: bytes) -> bytes:
    """The PDF without its attachments (`/EmbeddedFiles`, `/AF`): the print alone."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import NameObject

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    root = writer._root_object
    if NameObject("/AF") in root:
        del root[NameObject("/AF")]
    names = root.get("/Names")
    if names is not None:
        names = names.get_object()
        if NameObject("/EmbeddedFiles") in names:
            del names[NameObject("/EmbeddedFiles")]
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def write_examples(folder: str, *, format_seed: int = 1393423301, doc_seed: int = 11000035) -> list[str]:
    """The bundled e-invoice examples: a Factur-X hybrid PDF and a UBL invoice of one synthetic
    format, each with its ground truth beside it (`python -m docassay.extractors.synth.einvoice DIR`)."""
    import json
    from pathlib import Path

    from docassay.extractors.synth import make_document, make_format, to_pdf

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    sd = make_document(make_format(format_seed, "invoice"), doc_seed)
    hybrid = out / f"synth-{sd.doc_id}-facturx.pdf"
    hybrid.write_bytes(embed_xml(to_pdf(sd), to_cii(sd.truth)))
    sd2 = make_document(make_format(format_seed, "invoice"), doc_seed + 1)
    ubl = out / f"synth-{sd2.doc_id}-ubl.xml"
    ubl.write_bytes(to_ubl(sd2.truth))
    for path, truth in ((hybrid, sd.truth), (ubl, sd2.truth)):
        path.with_suffix(".json").write_text(json.dumps(truth, ensure_ascii=False, indent=1) + "\n", "utf-8")
    return [str(hybrid), str(ubl)]


if __name__ == "__main__":
    import sys
    for p in write_examples(sys.argv[1] if len(sys.argv) > 1 else "examples/invoices/documents"):
        print(p)
