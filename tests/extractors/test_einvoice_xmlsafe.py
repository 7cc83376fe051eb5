"""Hostile XML is refused before anything expands or is fetched: billion laughs, XXE to a file and
to a URL, parameter entities, huge documents, not well-formed input; and in a PDF attachment too."""
from __future__ import annotations

import pytest

from docassay.extractors.einvoice import read_pdf, read_xml
from docassay.extractors.einvoice.xmlsafe import parse_xml
from docassay.extractors.errors import ParseError
from docassay.extractors.synth import make_document, make_format, to_pdf
from docassay.extractors.synth.einvoice import embed_xml

LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
<!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">]>
<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100">&lol4;</rsm:CrossIndustryInvoice>"""
XXE_FILE = b"""<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><ID>&x;</ID></Invoice>"""
XXE_HTTP = b"""<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "http://127.0.0.1:9/secret">]>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><ID>&x;</ID></Invoice>"""
PARAM = b"""<?xml version="1.0"?><!DOCTYPE r [<!ENTITY % p SYSTEM "http://127.0.0.1:9/evil.dtd"> %p;]><r/>"""
UTF16_DTD = '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE r [<!ENTITY x "y">]><r>&x;</r>'.encode("utf-16")


@pytest.mark.parametrize("data,what", [(LAUGHS, "billion laughs"), (XXE_FILE, "XXE file"), (XXE_HTTP, "XXE http"),
                                       (PARAM, "parameter entity"), (UTF16_DTD, "UTF-16 DTD")])
def test_dtds_and_entities_are_refused(data: bytes, what: str) -> None:
    with pytest.raises(ParseError) as e:
        read_xml(data, "bad.xml")
    assert e.value.kind == "unsafe", what
    assert "DTD" in e.value.message and "bad.xml" in e.value.message
    assert "root:" not in e.value.message, "nothing of /etc/passwd leaks into the message"


def test_not_well_formed_says_where() -> None:
    with pytest.raises(ParseError) as e:
        read_xml(b"<?xml version='1.0'?><Invoice><ID>1</Invoice>", "broken.xml")
    assert e.value.kind == "corrupt" and "line 1" in e.value.message


def test_huge_is_refused_before_parsing() -> None:
    big = b"<?xml version='1.0'?><r>" + b"<a>x</a>" * 2000 + b"</r>"
    with pytest.raises(ParseError) as e:
        parse_xml(big, "big.xml", max_bytes=1000)
    assert e.value.kind == "too_large" and "max_xml_bytes" in e.value.message


def test_deep_nesting_is_refused() -> None:
    deep = b"<r>" + b"<a>" * 5000 + b"</a>" * 5000 + b"</r>"
    with pytest.raises(ParseError) as e:
        parse_xml(deep, "deep.xml")
    assert e.value.kind == "corrupt"


def test_hostile_attachment_refused_in_a_pdf() -> None:
    sd = make_document(make_format(1393423301, "invoice"), 7)
    pdf = embed_xml(to_pdf(sd), XXE_FILE, "factur-x.xml")
    with pytest.raises(ParseError) as e:
        read_pdf(pdf, "h.pdf")
    assert e.value.kind == "unsafe" and "factur-x.xml" in e.value.message
