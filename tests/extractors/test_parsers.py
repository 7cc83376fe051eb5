"""The parser registry and entry point: detection by content, Document identity, and every kind of
bad input ending as a `ParseError` with a kind and a readable message, quickly."""
from __future__ import annotations

import dataclasses
import hashlib
import io
import struct
import time
import zipfile
import zlib

import pytest
from reportlab.pdfgen import canvas

import docassay.extractors.parsers as parsers
from docassay.extractors.errors import ParseError
from docassay.extractors.parsers import REGISTRY, detect, parse
from docassay.extractors.parsers.jsonguard import json_depth, load_json
from docassay.extractors.parsers.words import clean_text, split_line
from docassay.infra.config import Limits, Settings


def settings(**limits: object) -> Settings:
    return Settings(limits=dataclasses.replace(Limits(), **limits))


def make_pdf(pages: list[str], size: tuple[float, float] = (300, 200), **kw: object) -> bytes:
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=size, **kw)
    for text in pages:
        c.setFont("Helvetica", 12)
        c.drawString(20, size[1] - 40, text)
        c.showPage()
    c.save()
    return buf.getvalue()


def zero_page_pdf() -> bytes:
    """A well-formed PDF whose page tree is empty, written by hand."""
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [] /Count 0 >>"]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (n, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)


def png_header_only(width: int, height: int) -> bytes:
    """A PNG whose header claims width x height pixels, with one tiny (wrong-sized) data chunk."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00" * 16))
            + chunk(b"IEND", b""))


def expect(kind: str, source: str, data: bytes | None, cfg: Settings | None = None,
           words: tuple[str, ...] = ()) -> ParseError:
    """parse() must raise ParseError(kind) within 5 s, with a message containing `words`."""
    t = time.perf_counter()
    with pytest.raises(ParseError) as info:
        parse(source, data, settings=cfg or Settings())
    assert time.perf_counter() - t < 5
    err = info.value
    assert err.kind == kind, err.message
    for w in words:
        assert w.lower() in err.message.lower(), err.message
    assert err.as_row() == {"kind": kind, "message": err.message}
    return err


# --- registry and identity ---------------------------------------------------------------------

def test_registry_is_explicit_and_public_api_pinned():
    assert [p.name for p in REGISTRY] == ["pdf", "image", "textract", "ocr-lines", "text"]
    assert set(parsers.__all__) == {"parse", "detect", "read_source", "REGISTRY", "Parser", "ParseError"}


def test_document_identity_sha256_and_source(tmp_path):
    data = make_pdf(["Invoice 42"])
    path = tmp_path / "a.pdf"
    path.write_bytes(data)
    from_path = parse(path)
    from_bytes = parse("s3://bucket/key.pdf", data)
    assert from_path.source == str(path) and from_bytes.source == "s3://bucket/key.pdf"
    assert from_path.sha256 == from_bytes.sha256 == hashlib.sha256(data).hexdigest()
    assert from_path.kind == "pdf" and from_path.parser == "pdf"
    assert "Invoice 42" in from_path.text


def test_type_is_detected_by_content_not_extension():
    pdf = make_pdf(["Hello"])
    assert detect(pdf, "scan.txt").name == "pdf"            # content wins over a text name
    assert detect(pdf, "").name == "pdf"
    assert detect(b"   \n%PDF-1.7 junk before header" + pdf, "x").name == "pdf"
    assert detect(b'{"lines": []}', "x.json").name == "ocr-lines"
    assert detect(b"Total 12.00\n", "x.dat").name == "text"
    assert detect(png_header_only(10, 10), "x.bin").name == "image"


# --- bad input ---------------------------------------------------------------------------------

def test_empty_input(tmp_path):
    expect("empty", "a.pdf", b"", words=("empty", "0 bytes"))
    (tmp_path / "e.txt").write_bytes(b"")
    expect("empty", str(tmp_path / "e.txt"), None)


def test_missing_file_is_unreadable(tmp_path):
    expect("unreadable", str(tmp_path / "nope.pdf"), None, words=("cannot read",))


def test_zero_page_pdf():
    expect("empty", "z.pdf", zero_page_pdf(), words=("no pages",))


def test_corrupt_pdf():
    expect("corrupt", "c.pdf", b"%PDF-1.4\n" + bytes(range(256)) * 20 + b"\n%%EOF\n",
           words=("damaged",))


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9])
def test_truncated_pdf(fraction):
    data = make_pdf(["one", "two", "three"])
    expect("corrupt", "t.pdf", data[: int(len(data) * fraction)], words=("truncated",))


def test_encrypted_pdf_needs_password():
    data = make_pdf(["secret figures"], encrypt="open-sesame")
    assert b"/Encrypt" in data
    expect("encrypted", "e.pdf", data, words=("encrypted", "password"))


def test_pdf_with_owner_password_only_is_read():
    from reportlab.lib.pdfencrypt import StandardEncryption
    data = make_pdf(["restricted but readable"],
                    encrypt=StandardEncryption("", ownerPassword="owner", canPrint=0, canCopy=0))
    assert b"/Encrypt" in data
    assert "restricted but readable" in parse("o.pdf", data).text


@pytest.mark.parametrize("data, what", [
    (b"Just some text pretending to be a PDF.\n", "plain text"),
    (b"<html><body>hi</body></html>", "html"),
    (png_header_only(4, 4), "image"),
])
def test_non_pdf_named_pdf_is_refused(data, what):
    expect("unsupported", "invoice.pdf", data, words=("named like a pdf", what))


def test_non_image_named_image_is_refused():
    expect("unsupported", "scan.jpg", b"hello there\n", words=("named like an image",))


def _zip_bytes() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("word/document.xml", "<w/>")
    return buf.getvalue()


@pytest.mark.parametrize("data, what", [
    (_zip_bytes(), "zip archive"),
    (b"MZ\x90\x00\x03" + b"\x00" * 200, "windows executable"),
    (b"\x7fELF\x02\x01\x01" + b"\x00" * 200, "elf executable"),
    (b"\x00\x01\x02\x03" * 100, "unrecognised binary"),
    (b'{"invoice": {"total": 3}}', "json"),
    (b'<?xml version="1.0"?><Invoice/>', "xml"),
])
def test_unsupported_types_are_named(data, what):
    expect("unsupported", "upload.bin", data, words=("not a supported", what))


def test_oversized_bytes(tmp_path):
    data = make_pdf(["x"])
    cfg = settings(max_bytes=len(data) - 1)
    expect("too_large", "big.pdf", data, cfg, words=("max_bytes",))
    path = tmp_path / "big.pdf"
    path.write_bytes(data)
    expect("too_large", str(path), None, cfg, words=("max_bytes",))   # refused before reading


def test_too_many_pages():
    expect("too_large", "p.pdf", make_pdf(["a", "b", "c"]), settings(max_pages=2),
           words=("3 pages", "max_pages"))
    expect("too_large", "p.txt", b"a\fb\fc\n", settings(max_pages=2), words=("max_pages",))


def test_decompression_bomb_is_refused_before_decoding():
    # 100k x 100k pixels claimed by a 100-byte file: must fail fast, without allocating 30 GB.
    expect("too_large", "bomb.png", png_header_only(100_000, 100_000))
    err = expect("too_large", "big.png", png_header_only(3000, 3000), settings(max_page_pixels=1_000_000),
                 words=("9,000,000 pixels", "max_page_pixels"))
    assert err.context["page"] == 1


def test_json_nested_too_deep_is_refused_before_parsing():
    depth = 200_000                                   # would blow the recursion limit in json.loads
    data = b'{"lines": ' + b"[" * depth + b"]" * depth + b"}"
    expect("too_large", "deep.ocr.json", data, words=("nested", "max_json_depth"))
    assert json_depth(b'{"a": "[[[[[[", "b": [[1]]}') == 3   # brackets inside strings do not count


def test_json_nan_and_malformed_are_corrupt():
    expect("corrupt", "n.json", b'{"lines": [{"text": "a", "quad": [NaN,0,1,0,1,1,0,1]}]}')
    expect("corrupt", "m.json", b'{"lines": [{"text": "a", "quad": [0,0,1]}]}', words=("lines[0].quad",))
    expect("corrupt", "t.json", b'{"lines": [{"text": "a", "quad": [0,0,1,0,1,1,0,1]}, ', words=("not valid json",))
    with pytest.raises(ParseError):
        load_json(b"[1e99999999999999999999", max_depth=4, what="x")


def test_too_many_words_per_page():
    expect("too_large", "w.txt", b"word " * 500, settings(max_words_per_page=100),
           words=("max_words_per_page",))
    expect("too_large", "w.pdf", make_pdf([" ".join(["w"] * 60)], size=(2000, 200)),
           settings(max_words_per_page=50), words=("max_words_per_page",))


def test_timeout_between_pages():
    expect("timeout", "slow.pdf", make_pdf(["a", "b"]), settings(parse_timeout_s=0.0),
           words=("parse_timeout_s",))


def test_whitespace_only_has_no_text():
    expect("no_text", "blank.txt", b" \n\t\n\f  \n", words=("no text",))
    expect("no_text", "blank.json", b'{"lines": [{"text": "  ", "quad": [0,0,1,0,1,1,0,1]}]}')


# --- hostile text --------------------------------------------------------------------------------

def test_clean_text_strips_controls_nuls_bidi_and_surrogates():
    assert clean_text("To\x00tal\x1b\u202e\u200b\ufeff\ud800") == "Total"
    assert clean_text("Straße 12,50 €") == "Straße 12,50 €"
    assert clean_text("\ue000") == "\ue000"                  # private use is kept


def test_hostile_text_in_text_and_ocr_lines_inputs():
    doc = parse("h.txt", "Total\x00 1\x072,00 \u202eEUR\x1b\n".encode())
    assert [w.text for w in doc.pages[0].words] == ["Total", "12,00", "EUR"]
    doc = parse("h.json", b'{"lines": [{"text": "Amount\\u0000 \\u0007\\u202e9.99", '
                          b'"quad": [0,0,100,0,100,10,0,10]}]}')
    assert [w.text for w in doc.pages[0].words] == ["Amount", "9.99"]
    for w in doc.pages[0].words:
        w.text.encode("utf-8")                              # always encodable


def test_split_line_is_proportional_along_the_quad():
    words = split_line("ab cd", [0, 0, 50, 0, 50, 10, 0, 10])
    assert [w.text for w in words] == ["ab", "cd"]
    assert words[0].bbox.as_list() == [0, 0, 20, 10] and words[1].bbox.as_list() == [30, 0, 50, 10]
    slanted = split_line("ab cd", [0, 0, 50, 10, 50, 20, 0, 10])     # rising line
    assert slanted[1].bbox.y0 > slanted[0].bbox.y0
