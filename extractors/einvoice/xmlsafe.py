"""Parse untrusted XML safely: no DTD, no entities, no network, bounded size.

    parse_xml(data, source, max_bytes=MAX_XML_BYTES) -> lxml root element

E-invoice syntaxes (CII, UBL) never need a DTD, so any document that declares one (`<!DOCTYPE`,
`<!ENTITY`) is refused before parsing: that closes entity expansion ("billion laughs"), external
entities (XXE to a file or a URL) and parameter-entity tricks at once. The parser itself is set
up the defensive way as a second wall (lxml: `resolve_entities=False`, `no_network=True`,
`load_dtd=False`, `huge_tree=False`), and the byte size and element count are capped.

Every refusal is a `ParseError` with a kind and a message a person understands:

    too_large    more than `max_bytes` bytes, or more than `MAX_XML_ELEMENTS` elements
    unsafe       a DTD or an entity declaration (refused, never expanded or fetched)
    corrupt      not well-formed XML (the parser's message, with line and column)
"""
from __future__ import annotations

import codecs
import re

from lxml import etree

from docassay.extractors.errors import ParseError

__all__ = ["parse_xml", "looks_like_xml", "MAX_XML_BYTES", "MAX_XML_ELEMENTS"]

MAX_XML_BYTES = 16 * 1024 * 1024        # an e-invoice with hundreds of lines is well under 1 MB
MAX_XML_ELEMENTS = 500_000              # elements per document (bounds the work of the mapping)
_DTD_RE = re.compile(rb"<!\s*(DOCTYPE|ENTITY|ELEMENT|ATTLIST|NOTATION)", re.IGNORECASE)
_SNIFF = 1024


def _parser() -> etree.XMLParser:
    # A parser per call: lxml parsers are not thread-safe.
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False,
                           huge_tree=False, remove_pis=True, remove_comments=True, recover=False)


def _as_utf8(data: bytes) -> bytes:
    """UTF-16/32 documents re-encoded to UTF-8 for the DTD scan (the parser gets the original)."""
    for bom, enc in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                     (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            try:
                return data.decode(enc).encode("utf-8")
            except UnicodeDecodeError:
                return data
    return data


def looks_like_xml(data: bytes) -> bool:
    """True when the bytes start like an XML document (after a BOM and white space)."""
    head = _as_utf8(data[:_SNIFF * 4])[:_SNIFF].lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"<?xml") or (head.startswith(b"<") and not head[:9].lower().startswith(b"<!doctype")
                                         and not head[:5].lower().startswith(b"<html"))


def parse_xml(data: bytes, source: str = "", max_bytes: int = MAX_XML_BYTES) -> etree._Element:
    """The root element of `data`, or ParseError (too_large | unsafe | corrupt); never fetches anything."""
    where = f"'{source}'" if source else "the XML"
    if len(data) > max_bytes:
        raise ParseError(f"{where} is {len(data):,} bytes of XML, more than the limit of {max_bytes:,} "
                         f"(max_xml_bytes)", kind="too_large", source=source)
    m = _DTD_RE.search(_as_utf8(data))
    if m is not None:
        raise ParseError(f"{where} declares a DTD ({m.group(0).decode('ascii', 'replace')}...): refused, because "
                         f"entity declarations can expand without bound or read files and URLs; an e-invoice "
                         f"never needs one", kind="unsafe", source=source)
    try:
        root = etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as exc:
        line, col = getattr(exc, "position", (None, None)) or (None, None)
        raise ParseError(f"{where} is not well-formed XML (line {line}, column {col}): {exc.msg}",
                         kind="corrupt", source=source) from exc
    except ValueError as exc:          # e.g. a unicode string with an encoding declaration
        raise ParseError(f"{where} cannot be read as XML: {exc}", kind="corrupt", source=source) from exc
    if root is None:
        raise ParseError(f"{where} has no root element", kind="corrupt", source=source)
    if root.getroottree().docinfo.doctype:
        raise ParseError(f"{where} declares a DTD: refused", kind="unsafe", source=source)
    n = 0
    for el in root.iter():
        if isinstance(el, etree._Entity):
            raise ParseError(f"{where} uses an entity reference: refused", kind="unsafe", source=source)
        n += 1
        if n > MAX_XML_ELEMENTS:
            raise ParseError(f"{where} has more than {MAX_XML_ELEMENTS:,} elements (max_xml_elements)",
                             kind="too_large", source=source)
    return root
