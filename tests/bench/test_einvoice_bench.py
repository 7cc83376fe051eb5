"""bench.einvoice's document surgery on project-made hybrids: strip, read back, swap attachments."""
from __future__ import annotations

from bench.einvoice import _replace_xml, _strip, _xml_of
from docassay.extractors.einvoice import read_pdf
from docassay.extractors.synth import make_document, make_format, to_pdf
from docassay.extractors.synth.einvoice import embed_xml, to_cii


def test_strip_and_swap_attachments() -> None:
    fmt = make_format(1393423301, "invoice")
    a, b = make_document(fmt, 1), make_document(fmt, 2)
    ha = embed_xml(to_pdf(a), to_cii(a.truth))
    hb = embed_xml(to_pdf(b), to_cii(b.truth), "zugferd-invoice.xml")
    assert read_pdf(_strip(ha), "a.pdf") is None
    name, xml = _xml_of(hb, "b.pdf")
    assert name == "zugferd-invoice.xml"
    swapped = read_pdf(_replace_xml(ha, xml, name), "a-with-b.pdf")
    assert swapped is not None and swapped.terms["BT-1"] == b.truth["invoice_number"] != a.truth["invoice_number"]
