"""Inputs are bounded by what they cost, and refused before the cost is paid."""
from __future__ import annotations

import json
import zlib

import pytest

from docassay.extractors.errors import ParseError
from docassay.extractors.parsers import parse
from docassay.infra.config import Settings


def image_pdf(width: int, height: int, grey: int = 0) -> bytes:
    """A one-page PDF (no text layer) showing one grey image of width x height pixels, all of one
    shade: it compresses to almost nothing, as a decompression bomb does."""
    z = zlib.compressobj(9)
    row = bytes([grey]) * width
    stream = b"".join(z.compress(row) for _ in range(height)) + z.flush()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im0 4 0 R >> >> "
        b"/Contents 5 0 R >>",
        b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 "
        b"/Filter /FlateDecode /Length %d >>\nstream\n" % (width, height, len(stream)) + stream + b"\nendstream",
    ]
    content = b"q 612 0 0 792 0 0 cm /Im0 Do Q"
    objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_a_huge_image_inside_a_small_pdf_is_refused_before_rendering() -> None:
    data = image_pdf(9000, 9000)                      # 81 M pixels in about 80 KB
    assert len(data) < 200_000
    with pytest.raises(ParseError) as exc:
        parse("bomb.pdf", data, settings=Settings())
    assert exc.value.kind == "too_large" and "max_page_pixels" in exc.value.message and "9000x9000" in exc.value.message


def test_a_small_image_pdf_is_still_rendered() -> None:
    settings = Settings()
    with pytest.raises(ParseError) as exc:            # all white: rendered, found blank, no text
        parse("small.pdf", image_pdf(400, 500, grey=255), settings=settings)
    assert exc.value.kind == "no_text"


def _ocr_lines(n: int) -> bytes:
    line = '{"text": "x", "quad": [0, 0, 1, 0, 1, 1, 0, 1]}'
    return ('{"lines": [' + ", ".join([line] * n) + "]}").encode()


def test_an_ocr_line_file_with_a_million_lines_is_refused_unparsed() -> None:
    with pytest.raises(ParseError) as exc:
        parse("big.ocr.json", _ocr_lines(1_000_000), settings=Settings())
    assert exc.value.kind == "too_large" and "max_words_per_page" in exc.value.message


def test_a_json_input_with_millions_of_values_is_refused_unparsed() -> None:
    junk = ", ".join(["0"] * 3_000_000)
    data = ('{"lines": [{"text": "Total", "quad": [0, 0, 1, 0, 1, 1, 0, 1]}], "junk": [' + junk + "]}").encode()
    with pytest.raises(ParseError) as exc:
        parse("junk.ocr.json", data, settings=Settings())
    assert exc.value.kind == "too_large" and "max_json_values" in exc.value.message


def test_an_ordinary_ocr_line_file_still_parses() -> None:
    doc = parse("ok.ocr.json", json.dumps({"lines": [{"text": "TOTAL 9.00", "quad": [0, 0, 90, 0, 90, 10, 0, 10]}]})
                .encode(), settings=Settings())
    assert [w.text for w in doc.pages[0].words] == ["TOTAL", "9.00"]
