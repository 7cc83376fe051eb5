"""Images through OCR (PNG, JPEG, multi-page TIFF), pre-OCR'd line files, and the SROIE receipts."""
from __future__ import annotations

import io
import json
import re
import statistics
import time
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from PIL import Image
from reportlab.pdfgen import canvas

from docassay.extractors.document import Document
from docassay.extractors.errors import ParseError
from docassay.extractors.parsers import parse

RECEIPTS = Path("/work/shared/data/receipts")


def text_image(lines: list[str], size: tuple[float, float] = (320, 110), scale: float = 200 / 72) -> Image.Image:
    """An RGB image of `lines` in Helvetica 16 pt rendered by PDFium: a clean synthetic scan.

    Words of a line are set 30 pt apart: the PP-OCR recogniser tends to drop normal-width spaces.
    """
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=size)
    c.setFont("Helvetica", 16)
    for i, line in enumerate(lines):
        x = 20.0
        for word in line.split():
            c.drawString(x, size[1] - 35 - 28 * i, word)
            x += c.stringWidth(word, "Helvetica", 16) + 30
    c.showPage()
    c.save()
    pdf = pdfium.PdfDocument(buf.getvalue())
    img = pdf[0].render(scale=scale).to_pil().convert("RGB")
    pdf.close()
    return img


def encode(img: Image.Image, fmt: str, **kw: object) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format=fmt, **kw)
    return buf.getvalue()


# --- images --------------------------------------------------------------------------------------

def test_png_is_ocrd_into_words_in_pixels():
    img = text_image(["RECEIPT 2024-05-01", "TOTAL 12.50"], size=(360, 110))
    t = time.perf_counter()
    doc = parse("r.png", encode(img, "PNG"))
    assert time.perf_counter() - t < 60          # bounded (engine load included), not a speed target
    assert (doc.kind, doc.parser, len(doc.pages)) == ("image", "image", 1)
    page = doc.pages[0]
    assert (page.width, page.height, page.source) == (img.width, img.height, "ocr")
    assert [ln.text.split() for ln in page.lines] == [["RECEIPT", "2024-05-01"], ["TOTAL", "12.50"]]
    total, amount = page.words[2], page.words[3]
    # "TOTAL" was drawn at x = 20 pt = 56 px; character boxes keep it near there.
    assert abs(total.bbox.x0 - 20 * 200 / 72) < 12
    assert total.bbox.x1 < amount.bbox.x0
    assert all(0 <= w.bbox.x0 < w.bbox.x1 <= page.width + 2 for w in page.words)


def test_jpeg_exif_orientation_is_applied():
    img = text_image(["TOTAL 7.00"])
    exif = Image.Exif()
    exif[0x0112] = 6                                   # stored rotated: display = rotate 90 cw
    data = encode(img.transpose(Image.Transpose.ROTATE_90), "JPEG", quality=95, exif=exif)
    page = parse("r.jpg", data).pages[0]
    assert (page.width, page.height) == (img.width, img.height)
    assert page.text.split() == ["TOTAL", "7.00"]


def test_multipage_tiff_gives_one_page_per_frame():
    frames = [text_image(["PAGE ONE"]), text_image(["PAGE TWO"]).convert("L")]
    data = encode(frames[0], "TIFF", save_all=True, append_images=frames[1:], compression="tiff_lzw")
    doc = parse("scan.tif", data)
    assert [p.number for p in doc.pages] == [1, 2]
    assert [p.text.split() for p in doc.pages] == [["PAGE", "ONE"], ["PAGE", "TWO"]]
    assert doc.meta["format"] == "TIFF"


def test_transparent_png_reads_as_on_white():
    img = text_image(["TOTAL 3.10"]).convert("L")
    rgba = Image.new("RGBA", img.size, (0, 0, 0, 0))                 # black, fully transparent
    rgba.putalpha(img.point(lambda v: 255 - v))                      # ink only where text is
    assert parse("t.png", encode(rgba, "PNG")).pages[0].text.split() == ["TOTAL", "3.10"]


def test_blank_and_truncated_images():
    white = Image.new("RGB", (200, 100), "white")
    with pytest.raises(ParseError) as info:
        parse("w.png", encode(white, "PNG"))
    assert info.value.kind == "no_text"
    data = encode(text_image(["TOTAL 1.00"]), "JPEG")
    with pytest.raises(ParseError) as info:
        parse("cut.jpg", data[: len(data) // 2])
    assert info.value.kind == "corrupt" and "truncated" in info.value.message


def test_tiff_with_too_many_frames_is_refused():
    import dataclasses

    from docassay.infra.config import Limits, Settings
    frames = [Image.new("L", (20, 20), "white") for _ in range(4)]
    data = encode(frames[0], "TIFF", save_all=True, append_images=frames[1:])
    cfg = Settings(limits=dataclasses.replace(Limits(), max_pages=3))
    with pytest.raises(ParseError) as info:
        parse("many.tif", data, settings=cfg)
    assert info.value.kind == "too_large" and "max_pages" in info.value.message


# --- pre-OCR'd line files ------------------------------------------------------------------------

def test_ocr_line_file_rebuilds_lines_in_reading_order():
    lines = [  # as SROIE lists them: an amount far from its label, columns as separate boxes
        {"text": "SHOP SDN BHD", "quad": [50, 10, 250, 10, 250, 40, 50, 40]},
        {"text": "TOTAL:", "quad": [40, 200, 110, 200, 110, 220, 40, 220]},
        {"text": "CASH", "quad": [40, 240, 90, 240, 90, 260, 40, 260]},
        {"text": "10.00", "quad": [300, 241, 350, 241, 350, 259, 300, 259]},
        {"text": "DATE: 01/02/2019", "quad": [40, 100, 240, 100, 240, 120, 40, 120]},
        {"text": "9.00", "quad": [300, 199, 340, 199, 340, 221, 300, 221]},
    ]
    doc = parse("x.ocr.json", json.dumps({"lines": lines}).encode())
    assert (doc.kind, doc.parser) == ("ocr-lines", "ocr-lines")
    page = doc.pages[0]
    assert (page.width, page.height, page.source) == (350, 260, "ocr-lines")
    assert [ln.text.split() for ln in page.lines] == [
        ["SHOP", "SDN", "BHD"], ["DATE:", "01/02/2019"], ["TOTAL:", "9.00"], ["CASH", "10.00"]]
    date = next(w for w in page.words if w.text == "DATE:")
    assert date.bbox.as_list() == [40, 100, 40 + 200 * 5 / 16, 120]          # 5 of 16 characters


def _receipt_line_files(step: int) -> list[Path]:
    return sorted(RECEIPTS.glob("*.ocr.json"))[::step] if RECEIPTS.is_dir() else []


def _total_on_total_line(doc: Document, total: float) -> bool:
    for line in doc.pages[0].lines:
        if "TOTAL" in line.text.upper():
            for m in re.finditer(r"\d[\d,]*\.\d{2}", line.text):
                if abs(float(m.group().replace(",", "")) - total) < 0.005:
                    return True
    return False


@pytest.mark.skipif(not _receipt_line_files(1), reason="SROIE receipts not present")
def test_sroie_line_files_parse_and_read_total_with_its_label():
    files = _receipt_line_files(20)                     # ~32 of 626
    hits = n = 0
    for path in files:
        doc = parse(path)
        assert doc.pages[0].words and doc.pages[0].source == "ocr-lines", path.name
        truth = json.loads(path.with_name(path.name.replace(".ocr.json", ".json")).read_text())
        if isinstance(truth.get("total"), (int, float)):
            n += 1
            hits += _total_on_total_line(doc, float(truth["total"]))
    assert n >= 20 and hits / n >= 0.85, (hits, n)


# --- receipt scans through OCR -------------------------------------------------------------------

def _scans() -> list[Path]:
    return sorted(RECEIPTS.glob("*.jpg")) if RECEIPTS.is_dir() else []


def _bag(text: str) -> str:
    return " ".join(sorted(text.upper().split()))


@pytest.mark.slow
@pytest.mark.skipif(not _scans(), reason="SROIE receipt scans not present")
def test_sroie_receipt_scans_through_ocr():
    import difflib

    from docassay.extractors.parsers.ocr_lines import read_lines
    sims, secs = [], []
    for path in _scans()[::5]:                          # 10 of 48, ~4 s each on 2 cores
        t = time.perf_counter()
        doc = parse(path)
        secs.append(time.perf_counter() - t)
        page = doc.pages[0]
        assert page.source == "ocr" and len(page.lines) >= 5, path.name
        with Image.open(path) as im:
            assert (page.width, page.height) == im.size
        ref = " ".join(t for t, _ in read_lines(json.loads(path.with_name(
            path.name.replace(".jpg", ".ocr.json")).read_bytes())))
        sims.append(difflib.SequenceMatcher(None, _bag(ref), _bag(page.text), autojunk=False).ratio())
    assert statistics.median(sims) >= 0.6, sims
    assert statistics.median(secs) < 30, secs


def test_words_from_character_boxes_restore_dropped_spaces_and_keep_amounts_whole():
    from docassay.extractors.parsers.ocr import OcrLine, _words_from_chars

    def chars(spec):
        out, x = [], 10.0
        for c in spec:
            if c == "_":            # a gap the recogniser did not print as a space
                x += 9
                continue
            out.append((c, x, x + 8))
            x += 9
        return tuple(out)

    quad = (10.0, 5.0, 300.0, 5.0, 300.0, 20.0, 10.0, 20.0)
    line = OcrLine("KAREXVISGROOTHANDEL", quad, 0.99, chars("KAREXVIS__GROOTHANDEL"))
    assert [w.text for w in _words_from_chars(line)] == ["KAREXVIS", "GROOTHANDEL"]
    amount = OcrLine("TOTAL 1. 48", quad, 0.99, chars("TOTAL 1. 48"))
    words = _words_from_chars(amount)
    assert [w.text for w in words] == ["TOTAL", "1.48"]
    assert words[0].bbox.x1 < words[1].bbox.x0
