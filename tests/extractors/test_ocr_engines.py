"""The OCR engine is a named setting (rapidocr | tesseract | auto), honoured by the image and PDF
parsers; Tesseract's TSV becomes words with boxes and the spaces between them; `auto` falls back to
RapidOCR where Tesseract is not installed; detection on a scaled-down image maps boxes back."""
from __future__ import annotations

import io
import shutil

import pytest
from PIL import Image, ImageDraw, ImageFont

from docassay.extractors.errors import ParseError
from docassay.extractors.parsers import ocr, ocr_tesseract, parse
from docassay.infra.config import Settings
from docassay.infra.errors import ConfigError

needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract is not installed")


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for name in ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "LiberationSans-Regular.ttf"):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default(size=size)


def text_png(lines: list[str], size: tuple[int, int] = (520, 150)) -> bytes:
    """A clean synthetic scan: `lines` at normal word spacing, 28 px type, black on white."""
    img = Image.new("L", size, 255)
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        draw.text((20, 20 + 50 * i), line, fill=0, font=_font(28))
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def _no_tesseract(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.delenv(ocr_tesseract.BINARY_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))                       # an empty folder: no tesseract on PATH


# --- the setting ---------------------------------------------------------------------------------

def test_engine_setting_comes_from_the_environment_and_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCASSAY_OCR_ENGINE", "tesseract")
    assert Settings.load().ocr_engine == "tesseract"
    monkeypatch.delenv("DOCASSAY_OCR_ENGINE")
    assert Settings.load().ocr_engine == "rapidocr"       # the default: the more accurate engine
    assert ocr.resolve_engine("rapidocr") == "rapidocr"
    assert ocr.resolve_engine("tesseract") == "tesseract"
    with pytest.raises(ConfigError, match="unknown OCR engine 'easyocr'"):
        ocr.resolve_engine("easyocr")
    with pytest.raises(ConfigError):
        parse("x.png", text_png(["TOTAL 1.00"]), settings=Settings.load(ocr_engine="easyocr"))


def test_auto_falls_back_to_rapidocr_without_tesseract(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    _no_tesseract(monkeypatch, tmp_path)
    assert not ocr_tesseract.available()
    assert ocr.resolve_engine("auto") == "rapidocr"
    doc = parse("r.png", text_png(["TOTAL 12.50"]), settings=Settings.load(ocr_engine="auto"))
    assert doc.meta["ocr_engine"] == "rapidocr"
    assert "TOTAL" in doc.pages[0].text and "12.50" in doc.pages[0].text


def test_tesseract_asked_for_but_absent_is_that_documents_error(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    _no_tesseract(monkeypatch, tmp_path)
    with pytest.raises(ParseError) as info:
        parse("r.png", text_png(["TOTAL 12.50"]), settings=Settings.load(ocr_engine="tesseract"))
    assert info.value.kind == "unreadable"
    assert "tesseract" in info.value.message and "not installed" in info.value.message


def test_a_configured_binary_that_is_missing_counts_as_absent(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv(ocr_tesseract.BINARY_ENV, str(tmp_path / "no-such-tesseract"))
    assert ocr_tesseract.binary() is None and ocr.resolve_engine("auto") == "rapidocr"


def test_tesseract_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("PSM", "MAX_SIDE", "THREADS", "MIN_CONF", "JUNK_CONF", "LANG"):
        monkeypatch.delenv(f"DOCASSAY_OCR_TESSERACT_{k}", raising=False)
    assert ocr_tesseract.TesseractSettings.from_env() == ocr_tesseract.TesseractSettings()
    monkeypatch.setenv("DOCASSAY_OCR_TESSERACT_PSM", "11")
    monkeypatch.setenv("DOCASSAY_OCR_TESSERACT_THREADS", "2")
    s = ocr_tesseract.TesseractSettings.from_env()
    assert (s.psm, s.threads) == (11, 2)
    monkeypatch.setenv("DOCASSAY_OCR_TESSERACT_PSM", "42")
    with pytest.raises(ConfigError, match="psm 42"):
        ocr_tesseract.TesseractSettings.from_env()


# --- Tesseract's output --------------------------------------------------------------------------

TSV = "\n".join([
    "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext",
    "1\t1\t0\t0\t0\t0\t0\t0\t800\t600\t-1\t",
    "4\t1\t1\t1\t1\t0\t40\t20\t300\t30\t-1\t",
    "5\t1\t1\t1\t1\t1\t40\t20\t120\t30\t96.5\tTOTAL",
    "5\t1\t1\t1\t1\t2\t200\t22\t140\t28\t91.0\tRM12.50",
    "5\t1\t1\t1\t2\t1\t40\t80\t60\t30\t12.0\t~",
    "5\t1\t1\t1\t2\t2\t120\t80\t60\t30\t88.0\t \t",
    "5\t1\t2\t1\t1\t1\t40\t140\t100\t30\t90.0\tCASH",
]) + "\n"


def test_tsv_rows_become_words_with_boxes_in_the_images_pixels() -> None:
    words = ocr_tesseract.parse_tsv(TSV, scale=0.5, junk_conf=-1)
    assert [w.text for w in words] == ["TOTAL", "RM12.50", "~", "CASH"]       # the blank row is dropped
    assert [w.text for w in ocr_tesseract.parse_tsv(TSV)] == ["TOTAL", "RM12.50", "CASH"]   # a mark, unsure
    total = words[0]
    assert (total.x0, total.y0, total.x1, total.y1) == (80.0, 40.0, 320.0, 100.0)   # divided by the scale
    assert total.conf == 96.5 and words[0].line == words[1].line != words[3].line
    assert [w.text for w in ocr_tesseract.parse_tsv(TSV, min_conf=50)] == ["TOTAL", "RM12.50", "CASH"]
    assert ocr_tesseract.parse_tsv("") == []
    with pytest.raises(ocr_tesseract.TesseractError, match="header"):
        ocr_tesseract.parse_tsv("something else\n1\t2\n")
    with pytest.raises(ocr_tesseract.TesseractError, match="unreadable Tesseract TSV row"):
        ocr_tesseract.parse_tsv(TSV.splitlines()[0] + "\n5\t1\t1\t1\t1\t1\tx\t20\t120\t30\t96.5\tTOTAL\n")


@needs_tesseract
def test_tesseract_reads_words_with_boxes_and_keeps_the_spaces(monkeypatch: pytest.MonkeyPatch) -> None:
    data = text_png(["PAID BY CARD", "TOTAL 12.50"])
    doc = parse("t.png", data, settings=Settings.load(ocr_engine="tesseract"))
    assert doc.meta["ocr_engine"] == "tesseract"
    page = doc.pages[0]
    assert page.source == "ocr" and (page.width, page.height) == (520, 150)
    assert [ln.text for ln in page.lines] == ["PAID BY CARD", "TOTAL 12.50"]    # normal spacing, spaces kept
    paid, by, card = page.words[:3]
    assert paid.bbox.x1 < by.bbox.x0 < by.bbox.x1 < card.bbox.x0
    assert abs(paid.bbox.x0 - 20) < 6 and 15 < paid.bbox.y0 < 35
    assert all(0 <= w.bbox.x0 < w.bbox.x1 <= page.width for w in page.words)
    lines = ocr.recognize(Image.open(io.BytesIO(data)), "tesseract")
    assert [ln.text for ln in lines] == ["PAID BY CARD", "TOTAL 12.50"] and all(0 < ln.score <= 1 for ln in lines)


@needs_tesseract
def test_tesseract_scales_a_large_image_down_and_maps_boxes_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCASSAY_OCR_TESSERACT_MAX_SIDE", "400")             # the 1040 px image is halved
    img = Image.open(io.BytesIO(text_png(["TOTAL 12.50"]))).resize((1040, 300))
    words = ocr.ocr_words(img, "tesseract")
    assert [w.text for w in words] == ["TOTAL", "12.50"]
    assert abs(words[0].bbox.x0 - 40) < 14 and words[1].bbox.x1 > 520 * 0.5 * 2 * 0.3


@needs_tesseract
def test_pdf_scanned_page_names_its_engine() -> None:
    import pypdfium2 as pdfium
    from reportlab.pdfgen import canvas
    img = Image.open(io.BytesIO(text_png(["INVOICE 2024-05-01", "TOTAL 12.50"])))
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=(img.width * 72 / 200, img.height * 72 / 200))
    from reportlab.lib.utils import ImageReader
    c.drawImage(ImageReader(img), 0, 0, img.width * 72 / 200, img.height * 72 / 200)
    c.showPage()
    c.save()
    assert len(pdfium.PdfDocument(buf.getvalue())) == 1
    doc = parse("scan.pdf", buf.getvalue(), settings=Settings.load(ocr_engine="tesseract"))
    assert doc.meta["ocr_pages"] == [1] and doc.meta["ocr_engine"] == "tesseract"
    assert doc.pages[0].text.split() == ["INVOICE", "2024-05-01", "TOTAL", "12.50"]


# --- RapidOCR's detection on a scaled-down image -------------------------------------------------

def test_rapidocr_detection_scaled_down_maps_boxes_to_the_full_image(monkeypatch: pytest.MonkeyPatch) -> None:
    img = Image.open(io.BytesIO(text_png(["TOTAL 12.50"]))).convert("RGB")
    monkeypatch.setattr(ocr, "_engine", None)              # a fresh engine with the settings below
    monkeypatch.setattr(ocr, "_settings", None)
    monkeypatch.setenv("DOCASSAY_OCR_DET_MAX_SIDE", "260")  # half of the image's 520 px
    monkeypatch.setattr(ocr, "CROP_MAX_SIDE", 312)          # lines cut from the image at 0.6 of its size
    small = ocr.ocr_words(img, "rapidocr")
    assert ocr._settings is not None and ocr._settings.det_max_side == 260
    assert [w.text for w in small] == ["TOTAL", "12.50"]
    assert abs(small[0].bbox.x0 - 20) < 10 and 10 < small[0].bbox.y0 < 35     # full-image pixels
    assert 180 < small[1].bbox.x1 <= 520 and small[1].bbox.x0 > small[0].bbox.x1     # not 0.6 of that


@needs_tesseract
def test_tesseract_marks_without_a_letter_or_digit_are_no_text() -> None:
    img = Image.new("L", (300, 300), 255)
    ImageDraw.Draw(img).rectangle((40, 40, 200, 200), outline=0, width=3)   # a frame Tesseract reads as "|"
    assert ocr.ocr_words(img, "tesseract") == []
