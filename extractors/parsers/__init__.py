"""Parsers: every input file becomes one typed `Document` through `parse`.

    parse(source, data=None, *, settings=None) -> Document

The type is detected from the content (magic bytes, JSON sniffing), never from the file name
alone: each parser in `REGISTRY` is asked in order whether it recognises the bytes. The name only
adds a check: a file named `.pdf` (or `.png`, `.jpg`, `.tif`) whose content is not of that kind is
refused instead of being read as something else.

Every failure is a `ParseError` whose `kind` is one of empty | too_large | unsupported | corrupt |
encrypted | no_text | timeout | unreadable | not_a_file, with a message a person understands.

    parser       reads                                       Document.kind   Page.source
    pdf          PDF text layer (pypdfium2), OCR when none   pdf             text | ocr
    image        PNG, JPEG, TIFF (multi-page) via OCR         image           ocr
    textract     a saved Textract response {"Blocks": [...]}  textract        textract
    ocr-lines    {"lines": [{"text", "quad"}]} JSON           ocr-lines       ocr-lines
    text         plain text on a monospace grid               text            plain

With `Settings.ocr_engine == "textract"` (CLI `--parser textract`), images and PDFs with a
scanned page are read by Amazon Textract's AnalyzeDocument instead of the local OCR
(`extractors.parsers.textract.analyze`; Document.kind `textract`).
"""
from __future__ import annotations

import os
from pathlib import Path

from docassay.extractors.document import Document
from docassay.extractors.errors import ParseError
from docassay.extractors.parsers.base import Parser
from docassay.extractors.parsers.image import ImageParser
from docassay.extractors.parsers.local_file import open_regular
from docassay.extractors.parsers.ocr_lines import OcrLinesParser
from docassay.extractors.parsers.pdf import PdfParser
from docassay.extractors.parsers.text import TextParser
from docassay.extractors.parsers.textract import TextractJsonParser
from docassay.infra.config import Settings

__all__ = ["parse", "detect", "read_source", "REGISTRY", "Parser", "ParseError"]

# Order matters: most specific signature first; plain text accepts what is left if it looks like text.
REGISTRY: tuple[Parser, ...] = (PdfParser(), ImageParser(), TextractJsonParser(), OcrLinesParser(), TextParser())

# Formats we recognise but do not read, so the error can name them.
_KNOWN_UNSUPPORTED: tuple[tuple[bytes, str], ...] = (
    (b"PK\x03\x04", "a ZIP archive (or an Office document: docx/xlsx/odt)"),
    (b"PK\x05\x06", "an empty ZIP archive"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "a legacy Microsoft Office document (doc/xls/msg)"),
    (b"MZ", "a Windows executable"),
    (b"\x7fELF", "an ELF executable"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!", "a RAR archive"),
    (b"GIF8", "a GIF image"),
    (b"BM", "a BMP image"),
    (b"RIFF", "a RIFF file (e.g. WebP image or WAV audio)"),
    (b"%!PS", "a PostScript file"),
    (b"{\\rtf", "an RTF document"),
)
_CLAIMED_KIND = {".pdf": "pdf", ".png": "image", ".jpg": "image", ".jpeg": "image",
                 ".tif": "image", ".tiff": "image"}


def detect(data: bytes, source: str = "") -> Parser:
    """The parser that reads `data`, judged by content; raises `ParseError` when none does.

    Raises `kind="empty"` for no bytes and `kind="unsupported"` for content no parser reads, or
    content that contradicts a `.pdf`/image file name.
    """
    if not data:
        raise ParseError(f"{_name(source)} is empty (0 bytes)", kind="empty", source=source)
    parser = next((p for p in REGISTRY if p.sniff(data, source)), None)
    claimed = _CLAIMED_KIND.get(os.path.splitext(source)[1].lower())
    if claimed is not None and (parser is None or parser.kind != claimed):
        label = "a PDF" if claimed == "pdf" else "an image"
        raise ParseError(f"{_name(source)} is named like {label} but its content is "
                         f"{_describe(data, parser)}", kind="unsupported", source=source)
    if parser is None:
        what = _describe(data, None)
        hint = ("; an e-invoice XML (CII, UBL) is read by the e-invoice step unless --einvoice ignore"
                if what == "an XML/markup document" else "")
        raise ParseError(f"{_name(source)} is {what}, which is not a supported "
                         f"document type (PDF, PNG/JPEG/TIFF, OCR line JSON, Textract JSON, plain text){hint}",
                         kind="unsupported", source=source)
    return parser


def parse(source: str | Path, data: bytes | None = None, *,
          settings: Settings | None = None) -> Document:
    """Read one document into a `Document`.

    `source` names the document (`Document.source` is `str(source)`); when `data` is None the
    bytes are read from `source` as a local path. `Document.sha256` is the SHA-256 of the bytes.
    Raises `ParseError` (see the module docstring for the kinds); never returns a Document
    without text.
    """
    settings = settings or Settings.load()
    src = str(source)
    if data is None:
        data = read_source(src, settings.limits.max_bytes, follow_links=settings.follow_links)
    if len(data) > settings.limits.max_bytes:
        raise ParseError(f"{_name(src)} is {len(data):,} bytes, more than the limit of "
                         f"{settings.limits.max_bytes:,} (max_bytes)", kind="too_large", source=src)
    parser = detect(data, src)
    if settings.ocr_engine == "textract":
        from docassay.extractors.parsers import textract
        if textract.needs_textract(parser.kind, data):
            return textract.analyze(data, src, settings, parser_kind=parser.kind)
    return parser.parse(data, src, settings)


def read_source(path: str, max_bytes: int, *, follow_links: bool = False) -> bytes:
    """The bytes of local file `path` (or of the object at `s3://bucket/key`), refusing files
    over `max_bytes` before reading them, and anything but a regular file (a symbolic link too,
    unless `follow_links`: extractors.parsers.local_file)."""
    if path.startswith("s3://"):
        return _read_s3(path, max_bytes)
    fd = open_regular(path, follow_links=follow_links)
    try:
        with os.fdopen(fd, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > max_bytes:
                raise ParseError(f"{_name(path)} is {size:,} bytes, more than the limit of "
                                 f"{max_bytes:,} (max_bytes)", kind="too_large", source=path)
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise ParseError(f"cannot read {path}: {exc.strerror or exc}", kind="unreadable",
                         source=path) from exc
    return data


def _read_s3(url: str, max_bytes: int) -> bytes:
    from docassay.infra.errors import DocassayError
    from docassay.infra.s3 import read_url  # boto3 only when an S3 source is read
    try:
        return read_url(url, max_bytes)
    except KeyError as exc:
        raise ParseError(f"cannot read {url}: no such object", kind="unreadable", source=url) from exc
    except DocassayError as exc:
        kind = "too_large" if exc.kind == "too_large" else "unreadable"
        raise ParseError(exc.message, kind=kind, source=url) from exc


def _name(source: str) -> str:
    return f"'{source}'" if source else "the document"


def _describe(data: bytes, parser: Parser | None) -> str:
    """A short human description of what the bytes look like."""
    if parser is not None:
        return {"pdf": "a PDF", "image": "an image", "ocr-lines": "an OCR line JSON file",
                "textract": "a Textract JSON file", "text": "plain text"}.get(parser.kind, parser.kind)
    for magic, what in _KNOWN_UNSUPPORTED:
        if data.startswith(magic):
            return what
    head = data[:512].lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html")):
        return "an HTML page"
    if head.startswith(b"<?xml") or head.startswith(b"<"):
        return "an XML/markup document"
    if head[:1] in (b"{", b"["):
        return "JSON that is not an OCR line file ({\"lines\": [...]})"
    return f"unrecognised binary data (starts with {data[:8].hex(' ')})"
