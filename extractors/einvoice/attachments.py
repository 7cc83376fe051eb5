"""The XML invoice inside a PDF: PDF/A-3 associated files (`/AF`) and `/EmbeddedFiles`, any name.

    embedded_xml(data, source, max_bytes) -> [(name, bytes)]    every XML-looking attachment

Factur-X names its file `factur-x.xml`, ZUGFeRD 2 `zugferd-invoice.xml`, ZUGFeRD 1
`ZUGFeRD-invoice.xml`, XRechnung hybrids `xrechnung.xml`; other producers use other names, and a
PDF may carry other attachments too (an additional-data XML, a PDF of a receipt). So every
attachment is looked at, and `extractors.einvoice.read_pdf` keeps the first one whose root element
is an invoice syntax. An attachment larger than `max_bytes` is skipped (named in the result's
`skipped`), never decompressed past the limit.
"""
from __future__ import annotations

import io
import logging
from dataclasses import dataclass, field

from docassay.extractors.einvoice.xmlsafe import looks_like_xml

__all__ = ["Attachments", "embedded_xml"]

logging.getLogger("pypdf").setLevel(logging.ERROR)
_MAX_ATTACHMENTS = 64


@dataclass
class Attachments:
    xml: list[tuple[str, bytes]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)        # "name (why)"


def _resolve(obj):
    return obj.get_object() if hasattr(obj, "get_object") else obj


def _file_spec_data(spec, max_bytes: int) -> tuple[str, bytes | None, str | None]:
    """(name, bytes or None, why skipped) of one file specification dictionary."""
    spec = _resolve(spec)
    name = str(spec.get("/UF") or spec.get("/F") or "")
    ef = _resolve(spec.get("/EF"))
    if not ef:
        return name, None, "no embedded stream"
    stream = _resolve(ef.get("/UF") or ef.get("/F"))
    if stream is None:
        return name, None, "no embedded stream"
    params = _resolve(stream.get("/Params")) or {}
    declared = params.get("/Size") if hasattr(params, "get") else None
    if isinstance(declared, int) and declared > max_bytes:
        return name, None, f"{declared:,} bytes > max_xml_bytes"
    raw = stream.get("/Length")
    if isinstance(raw, int) and raw > max_bytes:
        return name, None, f"{raw:,} compressed bytes > max_xml_bytes"
    data = stream.get_data()
    if len(data) > max_bytes:
        return name, None, f"{len(data):,} bytes > max_xml_bytes"
    return name, data, None


def _specs(reader) -> list:
    """File specifications of the document: the catalog's /AF first, then the /EmbeddedFiles name tree."""
    root = _resolve(reader.trailer["/Root"])
    out: list = []
    for spec in _resolve(root.get("/AF")) or []:
        out.append(spec)
    names = _resolve(root.get("/Names"))
    tree = _resolve(names.get("/EmbeddedFiles")) if names else None
    stack = [tree] if tree is not None else []
    while stack and len(out) < 4 * _MAX_ATTACHMENTS:
        node = _resolve(stack.pop())
        arr = _resolve(node.get("/Names")) or []
        out.extend(arr[i + 1] for i in range(0, len(arr) - 1, 2))
        stack.extend(_resolve(node.get("/Kids")) or [])
    return out


def embedded_xml(data: bytes, source: str, max_bytes: int) -> Attachments:
    """The XML attachments of a PDF (catalog /AF and /EmbeddedFiles), each once."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    out = Attachments()
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            return out                         # the PDF parser reports encryption for the whole document
        specs = _specs(reader)
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        # Attachments are a bonus: a PDF whose catalog pypdf cannot walk is still read from its
        # print (and a truly corrupt one is reported by the PDF parser), so this is no row error.
        out.skipped.append(f"? (attachments unreadable: {exc})")
        return out
    seen: set[int] = set()
    for spec in specs[:4 * _MAX_ATTACHMENTS]:
        key = getattr(spec, "idnum", None) or id(spec)
        if key in seen:
            continue
        seen.add(key)
        try:
            name, blob, why = _file_spec_data(spec, max_bytes)
        except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
            out.skipped.append(f"? (unreadable: {exc})")
            continue
        if blob is None:
            out.skipped.append(f"{name} ({why})")
            continue
        if looks_like_xml(blob) and not any(n == name and b == blob for n, b in out.xml):
            out.xml.append((name, blob))
        if len(out.xml) >= _MAX_ATTACHMENTS:
            break
    return out
