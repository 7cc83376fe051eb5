"""E-invoices: the machine-readable invoice (CII or UBL) inside a hybrid PDF or as a bare XML file.

    read_xml(data, source)          -> EInvoice            a standalone .xml (ParseError when not one)
    read_pdf(data, source)          -> EInvoice | None     the invoice XML attached to a PDF, if any
    map_record(einv, schema)        -> Mapped              the record in the user's schema (mapping.py)
    find_printed(ix, value, kind)   -> Provenance | None   where a value is printed (printed.py)

    syntax     root element                         module
    CII        CrossIndustryInvoice (D16B)          cii.py    ZUGFeRD 2.x, Factur-X, XRechnung CII
               CrossIndustryDocument                cii.py    ZUGFeRD 1.0
    UBL        Invoice, CreditNote (UBL 2.1)        ubl.py    XRechnung UBL, Peppol BIS

All XML is parsed by `xmlsafe.parse_xml`: no DTD, no entity, no network, bounded size.
"""
from __future__ import annotations

from lxml import etree

from docassay.extractors.einvoice import cii, ubl
from docassay.extractors.einvoice.attachments import embedded_xml
from docassay.extractors.einvoice.model import EInvoice
from docassay.extractors.einvoice.xmlsafe import MAX_XML_BYTES, looks_like_xml, parse_xml
from docassay.extractors.errors import ParseError

__all__ = ["EInvoice", "read_xml", "read_pdf", "syntax_of", "looks_like_xml", "MAX_XML_BYTES"]

_READERS = {**{name: cii.read for name in cii.ROOTS}, **{name: ubl.read for name in ubl.ROOTS}}


def syntax_of(root: etree._Element) -> str | None:
    """The reader's key for an invoice root element, or None when the root is not an invoice."""
    name = etree.QName(root).localname
    return name if name in _READERS else None


def read_root(root: etree._Element) -> EInvoice | None:
    key = syntax_of(root)
    return _READERS[key](root) if key is not None else None


def read_xml(data: bytes, source: str = "", max_bytes: int = MAX_XML_BYTES) -> EInvoice:
    """A standalone e-invoice; ParseError (unsafe | corrupt | too_large | unsupported) otherwise."""
    root = parse_xml(data, source, max_bytes)
    inv = read_root(root)
    if inv is None:
        raise ParseError(f"'{source}' is XML with root element <{etree.QName(root).localname}>, which is not an "
                         f"e-invoice (UN/CEFACT CII CrossIndustryInvoice/CrossIndustryDocument, or UBL 2.1 "
                         f"Invoice/CreditNote)", kind="unsupported", source=source)
    return inv


def read_pdf(data: bytes, source: str = "", max_bytes: int = MAX_XML_BYTES) -> EInvoice | None:
    """The first attachment of the PDF that is an e-invoice, or None. A hostile or broken invoice
    attachment raises ParseError; other XML attachments that are not invoices are passed over."""
    found = embedded_xml(data, source, max_bytes)
    for name, blob in found.xml:
        root = parse_xml(blob, f"{source}#{name}", max_bytes)
        inv = read_root(root)
        if inv is not None:
            inv.attachment = name
            return inv
    return None
