"""PDF text layer: word geometry against known drawing positions and rendered ink, reading order,
rotation, font size and weight, scanned pages through OCR, and a smoke test over the dev invoices."""
from __future__ import annotations

import io
from pathlib import Path
from typing import Callable

import numpy as np
import pypdfium2 as pdfium
import pytest
from PIL import Image
from reportlab.lib.utils import ImageReader
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen import canvas

from docassay.extractors.document import Document, Page, Word
from docassay.extractors.parsers import parse

INVOICES = Path("/work/shared/data/invoices")
PAGE = (600.0, 800.0)


def make_pdf(draw: Callable[[canvas.Canvas], None], size: tuple[float, float] = PAGE) -> bytes:
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=size)
    draw(c)
    c.showPage()
    c.save()
    return buf.getvalue()


def rotate(data: bytes, degrees: int) -> bytes:
    """The same PDF with /Rotate set on its first page (pypdfium2 writes it)."""
    pdf = pdfium.PdfDocument(data)
    pdf[0].set_rotation(degrees)
    buf = io.BytesIO()
    pdf.save(buf)
    pdf.close()
    return buf.getvalue()


def words_by_text(page: Page) -> dict[str, Word]:
    return {w.text: w for w in page.words}


def render_gray(data: bytes, scale: float = 2.0) -> np.ndarray:
    pdf = pdfium.PdfDocument(data)
    img = pdf[0].render(scale=scale).to_pil().convert("L")
    pdf.close()
    return np.asarray(img)


def ink_box(gray: np.ndarray, word: Word, scale: float = 2.0, grow: float = 2.0) -> tuple[float, ...]:
    """Bounding box (pt) of the dark pixels within the word's box grown by `grow` pt."""
    b = word.bbox
    x0, y0 = int((b.x0 - grow) * scale), int((b.y0 - grow) * scale)
    ys, xs = np.nonzero(gray[y0:int((b.y1 + grow) * scale), x0:int((b.x1 + grow) * scale)] < 128)
    assert xs.size, f"no ink under {word.text!r}"
    return ((x0 + xs.min()) / scale, (y0 + ys.min()) / scale,
            (x0 + xs.max() + 1) / scale, (y0 + ys.max() + 1) / scale)


def assert_box_covers_ink(data: bytes, page: Page, tol: float = 1.0) -> None:
    gray = render_gray(data)
    for w in page.words:
        ix0, iy0, ix1, iy1 = ink_box(gray, w)
        b = w.bbox
        assert b.x0 - tol <= ix0 and ix1 <= b.x1 + tol and b.y0 - tol <= iy0 and iy1 <= b.y1 + tol, \
            (w.text, b.as_list(), (ix0, iy0, ix1, iy1))


# --- geometry ------------------------------------------------------------------------------------

def test_word_comes_back_where_it_was_drawn():
    # Word boxes hug the glyph ink horizontally (checked against the rendering within 1 pt), so
    # they sit inside the drawing origin .. advance width by at most a side bearing (~0.1 em).
    x, baseline, size = 100.0, 700.0, 12.0

    def draw(c: canvas.Canvas) -> None:
        c.setFont("Helvetica", size)
        c.drawString(x, baseline, "Invoice")
        c.drawString(x + stringWidth("Invoice ", "Helvetica", size), baseline, "Total")

    data = make_pdf(draw)
    doc = parse("g.pdf", data)
    page = doc.pages[0]
    assert (page.width, page.height, page.source) == (600.0, 800.0, "text")
    w = words_by_text(page)
    base_tl = PAGE[1] - baseline                                   # baseline, origin top-left
    inv = w["Invoice"].bbox
    assert x <= inv.x0 <= x + 0.12 * size
    advance = x + stringWidth("Invoice", "Helvetica", size)
    assert advance - 0.12 * size <= inv.x1 <= advance
    assert inv.y0 < base_tl - 0.6 * size and base_tl <= inv.y1 <= base_tl + 0.35 * size
    assert w["Invoice"].font_size == pytest.approx(size)
    assert w["Total"].bbox.x0 > inv.x1 and abs(w["Total"].bbox.cy - inv.cy) < 0.5
    assert_box_covers_ink(data, page)


def test_words_split_on_gaps_without_space_characters():
    def draw(c: canvas.Canvas) -> None:
        t = c.beginText(50, 700)
        t.setFont("Helvetica", 10)
        t.textOut("Amount")
        t.moveCursor(stringWidth("Amount", "Helvetica", 10) + 20, 0)   # a 20 pt gap, no space
        t.textOut("12.50")
        c.drawText(t)
        t = c.beginText(50, 650)
        t.setFont("Helvetica", 10)
        t.setCharSpace(0.5)                                            # letter-spaced, one word
        t.textOut("Spaced")
        c.drawText(t)

    page = parse("s.pdf", make_pdf(draw)).pages[0]
    assert [w.text for w in page.words] == ["Amount", "12.50", "Spaced"]


def test_font_size_includes_the_text_matrix_and_bold_is_reported():
    def draw(c: canvas.Canvas) -> None:
        c.setFont("Helvetica-Bold", 14)
        c.drawString(50, 700, "Heading")
        c.saveState()
        c.scale(2, 2)
        c.setFont("Helvetica", 5)                                      # 5 pt x 2 = 10 pt
        c.drawString(25, 300, "body")
        c.restoreState()

    w = words_by_text(parse("f.pdf", make_pdf(draw)).pages[0])
    assert w["Heading"].font_size == pytest.approx(14) and w["Heading"].bold is True
    assert w["body"].font_size == pytest.approx(10) and w["body"].bold is False


def test_reading_order_ignores_content_stream_order():
    def draw(c: canvas.Canvas) -> None:
        c.setFont("Helvetica", 11)
        c.drawString(300, 600, "Total")                # drawn first, lowest line, right
        c.drawString(50, 600, "Net")
        c.drawString(300, 700, "Invoice")
        c.drawString(50, 700, "ACME")
        c.drawString(50, 650, "Date:")
        c.drawString(100, 650, "2024-01-31")

    page = parse("o.pdf", make_pdf(draw)).pages[0]
    assert [ln.text.split() for ln in page.lines] == [["ACME", "Invoice"], ["Date:", "2024-01-31"],
                                                       ["Net", "Total"]]
    assert [w.text for w in page.words] == ["ACME", "Invoice", "Date:", "2024-01-31", "Net", "Total"]
    assert all(page.words[i].line == li for li, ln in enumerate(page.lines) for i in ln.word_ids)


def test_crop_box_offset_is_removed():
    def draw(c: canvas.Canvas) -> None:
        c.setCropBox((100, 100, 500, 700))
        c.setFont("Helvetica", 12)
        c.drawString(150, 600, "Cropped")

    page = parse("c.pdf", make_pdf(draw)).pages[0]
    assert (page.width, page.height) == (400, 600)
    w = page.words[0]
    assert abs(w.bbox.x0 - 50) <= 1 and 700 - 600 - 12 <= w.bbox.y0 <= 700 - 600


@pytest.mark.parametrize("degrees", [90, 180, 270])
def test_rotated_page_uses_displayed_orientation(degrees):
    def draw(c: canvas.Canvas) -> None:
        c.setFont("Helvetica", 12)
        c.drawString(100, 700, "Hello World")

    data = rotate(make_pdf(draw), degrees)
    page = parse("r.pdf", data).pages[0]
    assert (page.width, page.height) == ((800, 600) if degrees in (90, 270) else (600, 800))
    assert sorted(w.text for w in page.words) == ["Hello", "World"]
    assert_box_covers_ink(data, page)


def test_landscape_content_on_rotated_page_reads_upright():
    def draw(c: canvas.Canvas) -> None:                 # content turned 90 deg, page /Rotate 90
        c.translate(600, 0)
        c.rotate(90)
        c.setFont("Helvetica", 12)
        c.drawString(50, 500, "Line one")
        c.drawString(50, 480, "Line two")

    data = rotate(make_pdf(draw), 90)
    page = parse("l.pdf", data).pages[0]
    assert page.text == "Line one\nLine two"
    assert_box_covers_ink(data, page)


def test_vertical_text_does_not_break_the_page():
    def draw(c: canvas.Canvas) -> None:
        c.setFont("Helvetica", 12)
        c.drawString(100, 700, "Horizontal")
        c.saveState()
        c.translate(40, 300)
        c.rotate(90)
        c.drawString(0, 0, "Sideways")
        c.restoreState()

    page = parse("v.pdf", make_pdf(draw)).pages[0]
    assert {w.text for w in page.words} == {"Horizontal", "Sideways"}
    side = words_by_text(page)["Sideways"].bbox
    assert side.height > 3 * side.width                 # tall and thin, as displayed


def test_multi_page_pdf_numbers_pages():
    def draw(c: canvas.Canvas) -> None:
        for n in (1, 2, 3):
            c.setFont("Helvetica", 12)
            c.drawString(50, 700, f"Page {n}")
            if n < 3:
                c.showPage()

    doc = parse("m.pdf", make_pdf(draw))
    assert [p.number for p in doc.pages] == [1, 2, 3]
    assert [p.text for p in doc.pages] == ["Page 1", "Page 2", "Page 3"]
    assert doc.meta["ocr_pages"] == []


# --- scanned pages -------------------------------------------------------------------------------

def text_image(lines: list[str], size: tuple[float, float] = (320, 120), scale: float = 200 / 72) -> Image.Image:
    """An RGB image of `lines` set in Helvetica 16 pt, rendered by PDFium (a clean 'scan')."""
    def draw(c: canvas.Canvas) -> None:
        c.setFont("Helvetica", 16)
        for i, line in enumerate(lines):
            c.drawString(20, size[1] - 35 - 28 * i, line)

    pdf = pdfium.PdfDocument(make_pdf(draw, size))
    img = pdf[0].render(scale=scale).to_pil().convert("RGB")
    pdf.close()
    return img


def test_page_without_text_layer_is_ocrd():
    img = text_image(["INVOICE 4711", "TOTAL 99.50"])

    def draw(c: canvas.Canvas) -> None:
        c.setFont("Helvetica", 12)
        c.drawString(20, 150, "Cover page")
        c.showPage()
        c.drawImage(ImageReader(img), 0, 0, width=320, height=120)   # page 2: image only

    doc = parse("scan.pdf", make_pdf(draw, (320, 200)))
    assert doc.meta["ocr_pages"] == [2]
    assert [p.source for p in doc.pages] == ["text", "ocr"]
    scanned = doc.pages[1]
    assert scanned.width > 320                                      # pixels at 200 dpi, not points
    assert "INVOICE 4711" in scanned.text and "TOTAL 99.50" in scanned.text
    total = words_by_text(scanned)["TOTAL"].bbox
    assert total.x0 < words_by_text(scanned)["99.50"].bbox.x0
    assert total.y0 > words_by_text(scanned)["INVOICE"].bbox.y1 - 5


def test_blank_pdf_has_no_text():
    def draw(c: canvas.Canvas) -> None:
        c.rect(10, 10, 50, 50)                                      # a drawing, no text at all

    from docassay.extractors.errors import ParseError
    with pytest.raises(ParseError) as info:
        parse("blank.pdf", make_pdf(draw, (200, 200)))
    assert info.value.kind == "no_text"


# --- the dev invoices ----------------------------------------------------------------------------

def _invoices() -> list[Path]:
    return sorted(INVOICES.glob("*.pdf")) if INVOICES.is_dir() else []


@pytest.mark.skipif(not _invoices(), reason="dev invoices not present")
def test_every_dev_invoice_parses_with_text():
    for path in _invoices():
        doc: Document = parse(path)
        assert doc.kind == "pdf" and doc.pages, path.name
        assert sum(1 for p in doc.pages if p.words) >= len(doc.pages) - 1, path.name
        for page in doc.pages:
            assert page.source == "text" or not page.words, (path.name, page.number)
            assert 0 < page.width < 1000 and 0 < page.height < 1000
            for w in page.words:
                assert w.text and not any(ch.isspace() for ch in w.text)
                assert -1 <= w.bbox.x0 <= w.bbox.x1 <= page.width + 1, (path.name, w)
                assert -1 <= w.bbox.y0 <= w.bbox.y1 <= page.height + 1, (path.name, w)
        assert len(doc.text) > 200, path.name


@pytest.mark.skipif(not (INVOICES / "zugferd-fx22-en16931-einfach.pdf").exists(), reason="dev data absent")
def test_known_invoice_reads_in_order():
    doc = parse(INVOICES / "zugferd-fx22-en16931-einfach.pdf")
    texts = [ln.text for ln in doc.pages[1].lines]
    assert any(t.split() == ["Bruttosumme", "529,87"] for t in texts), texts
    assert texts.index(next(t for t in texts if t.startswith("Positionssumme"))) < \
        texts.index(next(t for t in texts if t.startswith("Zahlbetrag")))


def test_huge_page_is_rendered_within_the_pixel_limit():
    import dataclasses

    from docassay.extractors.parsers.base import Budget
    from docassay.extractors.parsers.pdf import _render, _View
    from docassay.infra.config import Limits, Settings

    def draw(c: canvas.Canvas) -> None:
        c.rect(100, 100, 1000, 1000, fill=1)

    cfg = Settings(limits=dataclasses.replace(Limits(), max_page_pixels=1_000_000))
    pdf = pdfium.PdfDocument(make_pdf(draw, (14_400, 14_400)))       # 200 x 200 inch
    page = pdf[0]
    img = _render(page, _View.of(page), Budget.for_settings(cfg, "huge.pdf"), cfg)
    assert img.width * img.height <= 1_000_000 and img.width > 900
    pdf.close()
