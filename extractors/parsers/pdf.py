"""PDF parser: words from the text layer through pypdfium2; pages without one are rendered and OCR'd.

Library choice. `bench/pdf_parsers.py` compares pypdfium2 (PDFium, Apache-2.0/BSD) with pdfplumber
(pdfminer.six, MIT) on the 75 dev invoices (161 pages). Measured on 2 shared CPU cores:

    library              ms/page (median)   word edges within 1 pt of the rendered glyphs
    pypdfium2 (this)     ~15 (words), ~17 (whole parse incl. lines + tables)     86.5 %
    pdfplumber           ~105                                                     54.1 %

PDFium is C++ (pdfminer's layout engine is pure Python), so it is ~7x faster even through
per-character ctypes calls; it is also the renderer used for OCR, so text and rendering agree.
91 % of pdfplumber's words have a word here with the same text and IoU >= 0.5; most of the rest
are pdfplumber merging words set without space characters ("GesamtbetragderZuschläge") or
reversing rotated text. pdfplumber stays a dev-only comparison; PyMuPDF is AGPL and is not used.

Geometry. Each character's "loose" box (`FPDFText_GetLooseCharBox`: from the glyph origin to its
advance width, from the font's descent to its ascent) is converted from PDF user space (origin
bottom-left, y up) to the page as displayed: origin top-left, y down, in points, relative to the
crop box, with the page's /Rotate applied. Loose boxes give every word on a line the same vertical
extent (so lines group cleanly) and make adjacent glyph boxes abut, so horizontal gaps measure real
spacing. A word's box is the union of its loose char boxes, with its two ends along the writing
direction moved onto the ink of its first and last glyphs (`FPDFText_GetCharBox`), so a highlight
covers exactly the printed word. A font with broken metrics (loose box far from its size) falls back
to the tight glyph box.

Words. Characters are grouped in content order; a word ends at a whitespace character, at a gap
wider than `WORD_GAP_EM` of the font size, when the text moves backwards or to another baseline, or
when the writing direction changes. On the dev invoices letter gaps (kerning, tracking) stay below
0.11 em and word gaps start at 0.15 em, hence 0.13. The spaces and line breaks PDFium *generates*
are ignored: its heuristic splits kerned words ("Br uttosumme"); geometry decides instead. The font
size is the nominal size scaled by the character's matrix (PDFs that set 1 pt text and scale it).
Vertical text is grouped along its own direction; its words still get axis-aligned boxes. Rotated
pages (/Rotate) come out as displayed, so a landscape page reads left to right.

Thread safety: PDFium is not thread-safe, so every call into it holds `PDFIUM_LOCK`.
"""
from __future__ import annotations

import ctypes
import math
import threading

import pypdfium2 as pdfium
import pypdfium2.internal as pdfium_i
import pypdfium2.raw as pdfium_c
from PIL import Image

from docassay.extractors.document import BBox, Document, Page, Word
from docassay.extractors.errors import ParseError
from docassay.extractors.parsers.base import Budget, Parser, finish_page
from docassay.extractors.parsers.ocr import is_blank, ocr_page_words, resolve_engine
from docassay.extractors.parsers.words import clean_text
from docassay.infra.config import Settings

__all__ = ["PdfParser", "PDFIUM_LOCK", "WORD_GAP_EM", "page_words"]

PDFIUM_LOCK = threading.RLock()

WORD_GAP_EM = 0.13           # a gap wider than this share of the font size splits a word
_BASELINE_JUMP = 0.5         # a cross-direction move above this share of the char height: new word
_CHARS_PER_WORD_BOUND = 40   # chars per allowed word a page may hold (bounds hostile pages)
_MAX_FORM_DEPTH = 15         # form XObjects nested inside each other, searched for images
_FORCE_BOLD_FLAG = 1 << 18   # PDF font descriptor flag ForceBold (bit 19)
_BOLD_NAMES = ("bold", "black", "heavy", "semibold", "demi")


class PdfParser(Parser):
    name = "pdf"
    kind = "pdf"

    def sniff(self, data: bytes, source: str) -> bool:
        # The header may follow some junk bytes; readers accept it within the first 1024.
        return b"%PDF-" in data[:1024]

    def parse(self, data: bytes, source: str, settings: Settings) -> Document:
        budget = Budget.for_settings(settings, source)
        with PDFIUM_LOCK:
            pdf = _open(data, source)
            n_pages = len(pdf)
        pages: list[Page] = []
        ocr_pages: list[int] = []
        try:
            budget.check_pages(n_pages)
            for i in range(n_pages):
                budget.check_time(f"page {i + 1} of {n_pages}")
                with PDFIUM_LOCK:
                    page, image = _read_page(pdf, i, budget, settings)
                if image is not None:                   # OCR runs without holding PDFium's lock
                    words = ocr_page_words(image, settings.ocr_engine, source, i + 1)
                    page = finish_page(i + 1, float(image.width), float(image.height), words, "ocr", budget)
                    ocr_pages.append(i + 1)
                assert page is not None                 # _read_page gives the page or the image to OCR
                pages.append(page)
        finally:
            with PDFIUM_LOCK:
                pdf.close()
        meta: dict[str, object] = {"n_pages": n_pages, "ocr_pages": ocr_pages}
        if ocr_pages:
            meta["ocr_engine"] = resolve_engine(settings.ocr_engine)
        if b"%%EOF" not in data[-2048:]:
            meta["warnings"] = ["no %%EOF marker at the end: the file may be truncated"]
        return self.document(data, source, pages, **meta)


def _open(data: bytes, source: str) -> pdfium.PdfDocument:
    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        code = exc.err_code
        if code == pdfium_c.FPDF_ERR_PASSWORD:
            raise ParseError("the PDF is encrypted and needs a password to open",
                             kind="encrypted", source=source) from exc
        if code == pdfium_c.FPDF_ERR_SECURITY:
            raise ParseError("the PDF is protected by an unsupported security handler",
                             kind="encrypted", source=source) from exc
        if code == pdfium_c.FPDF_ERR_SUCCESS:        # opened, but the page count is zero
            if b"%%EOF" not in data[-2048:]:
                raise ParseError("the PDF is truncated (no %%EOF marker) and has no readable pages",
                                 kind="corrupt", source=source) from exc
            raise ParseError("the PDF has no pages", kind="empty", source=source) from exc
        reason = pdfium_i.ErrorToStr.get(code, "unknown error") if code is not None else str(exc)
        if b"%%EOF" not in data[-2048:]:
            raise ParseError(f"the PDF is truncated (it does not end with %%EOF) and cannot be opened "
                             f"(PDFium: {reason})", kind="corrupt", source=source) from exc
        raise ParseError(f"the PDF is damaged and cannot be opened (PDFium: {reason})",
                         kind="corrupt", source=source) from exc


def _read_page(pdf: pdfium.PdfDocument, index: int, budget: Budget,
               settings: Settings) -> tuple[Page, None] | tuple[None, "Image.Image"]:
    """The page from its text layer, or, when it has none, its rendering to be OCR'd.

    A page without text whose rendering is blank comes back as an empty page in points.
    """
    number = index + 1
    try:
        page = pdf[index]
    except pdfium.PdfiumError as exc:
        raise ParseError(f"page {number} of the PDF is damaged and cannot be loaded",
                         kind="corrupt", source=budget.source, page=number) from exc
    try:
        view = _View.of(page)
        if view.width <= 0 or view.height <= 0:
            raise ParseError(f"page {number} of the PDF has an empty page box",
                             kind="corrupt", source=budget.source, page=number)
        textpage = page.get_textpage()
        try:
            words = page_words(textpage, view, budget, number)
        finally:
            textpage.close()
        if words:
            return finish_page(number, view.width, view.height, words, "text", budget), None
        _check_images(page, budget, number)            # rendering decodes every image at full size
        image = _render(page, view, budget, settings)
        if is_blank(image):
            return finish_page(number, view.width, view.height, [], "text", budget), None
        return None, image
    finally:
        page.close()


class _View:
    """Maps PDF user space to the displayed page: crop box origin, y down, /Rotate applied."""
    __slots__ = ("left", "bottom", "right", "top", "rotation", "width", "height")

    def __init__(self, left: float, bottom: float, right: float, top: float, rotation: int) -> None:
        self.left, self.bottom, self.right, self.top = left, bottom, right, top
        self.rotation = rotation
        w, h = right - left, top - bottom
        self.width, self.height = (h, w) if rotation in (90, 270) else (w, h)

    @classmethod
    def of(cls, page: pdfium.PdfPage) -> "_View":
        left, bottom, right, top = page.get_bbox()
        rotation = page.get_rotation() % 360
        return cls(min(left, right), min(bottom, top), max(left, right), max(bottom, top),
                   rotation if rotation in (0, 90, 180, 270) else 0)

    def point(self, x: float, y: float) -> tuple[float, float]:
        r = self.rotation
        if r == 0:
            return x - self.left, self.top - y
        if r == 90:
            return y - self.bottom, x - self.left
        if r == 180:
            return self.right - x, y - self.bottom
        return self.top - y, self.right - x

    def box(self, left: float, bottom: float, right: float, top: float) -> tuple[float, float, float, float]:
        ax, ay = self.point(left, bottom)
        bx, by = self.point(right, top)
        return min(ax, bx), min(ay, by), max(ax, bx), max(ay, by)


def _check_images(page: pdfium.PdfPage, budget: Budget, number: int) -> None:
    """Refuse a page whose embedded images hold more than `max_page_pixels` pixels in all.

    PDFium decodes each image at its own size before scaling it to the rendering, so a 1 MB page
    holding a 20000x20000 image would cost over a gigabyte however small it is rendered; the sizes
    are read from the image objects (inside forms too) without decoding anything.
    """
    total = 0
    for obj in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=_MAX_FORM_DEPTH):
        try:
            w, h = obj.get_px_size()
        except pdfium.PdfiumError:
            continue                                   # an image PDFium cannot size, it will not decode either
        total += max(0, int(w)) * max(0, int(h))
        if total > budget.limits.max_page_pixels:
            raise ParseError(
                f"page {number} embeds images of more than {budget.limits.max_page_pixels:,} pixels "
                f"(the last one {w}x{h}; max_page_pixels); refusing to render it",
                kind="too_large", source=budget.source, page=number, pixels=total)


def _render(page: pdfium.PdfPage, view: _View, budget: Budget, settings: Settings) -> "Image.Image":
    """Render the page in grey for OCR at `ocr_render_dpi`, scaled down to stay within
    `max_page_pixels` (a huge page is read at a lower resolution rather than refused)."""
    scale = settings.limits.ocr_render_dpi / 72.0
    area = view.width * view.height
    if area * scale * scale > budget.limits.max_page_pixels:
        scale = math.sqrt(budget.limits.max_page_pixels / area) * 0.999
    bitmap = page.render(scale=scale, grayscale=True)   # 1 byte per pixel: a quarter of BGRA
    try:
        return bitmap.to_pil().convert("L")
    finally:
        bitmap.close()


def page_words(textpage: pdfium.PdfTextPage, view: _View, budget: Budget, number: int) -> list[Word]:
    """Words of one text page, in content order, with boxes in displayed-page points.

    Raises `ParseError(kind="too_large")` when the page has more words than the limit allows.
    """
    n_chars = textpage.count_chars()
    max_words = budget.limits.max_words_per_page
    if n_chars > max_words * _CHARS_PER_WORD_BOUND:
        budget.check_words(max_words + 1, number)
    get_unicode = pdfium_c.FPDFText_GetUnicode
    get_loose = pdfium_c.FPDFText_GetLooseCharBox
    get_matrix = pdfium_c.FPDFText_GetMatrix
    get_size = pdfium_c.FPDFText_GetFontSize
    is_generated = pdfium_c.FPDFText_IsGenerated
    rect = pdfium_c.FS_RECTF()
    matrix = pdfium_c.FS_MATRIX()
    raw = textpage.raw

    words: list[Word] = []
    chars: list[str] = []
    box: list[float] = []            # running word box x0, y0, x1, y1
    prev: tuple[float, float, float, float] | None = None
    axis = 0                         # writing direction in display space: 0, 90, 180, 270 (clockwise)
    size = 0.0

    def flush() -> None:
        nonlocal prev
        if chars:
            _tighten(textpage, view, box, axis, first, last)
            words.append(Word("".join(chars), BBox(*box), round(size, 2) if size > 0 else None,
                              _is_bold(raw, first)))
            if len(words) > max_words:
                budget.check_words(len(words), number)
            chars.clear()
        prev = None

    first = last = 0
    for i in range(n_chars):
        cp = get_unicode(raw, i)
        if cp == 2 and pdfium_c.FPDFText_IsHyphen(raw, i):
            cp = 0x2D                                   # PDFium marks a soft line-end hyphen as \x02
        if cp <= 0 or cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF or is_generated(raw, i):
            continue                                    # PDFium's guessed spaces: geometry decides
        ch = chr(cp)
        if ch.isspace():
            flush()
            continue
        ch = clean_text(ch)
        if not ch:
            continue
        if not get_loose(raw, i, rect):
            continue
        # The char's matrix (text matrix x CTM) scales the nominal font size and gives the
        # writing direction (a, b) in user space; y flips for display, then /Rotate adds.
        c_size = get_size(raw, i)
        if get_matrix(raw, i, matrix):
            c_size *= math.hypot(matrix.c, matrix.d)
            angle = math.degrees(math.atan2(-matrix.b, matrix.a))
        else:
            angle = 0.0
        c_axis = (round(angle / 90.0) * 90 + view.rotation) % 360
        cb = view.box(rect.left, rect.bottom, rect.right, rect.top)
        cross = cb[3] - cb[1] if c_axis in (0, 180) else cb[2] - cb[0]
        if c_size > 0 and not 0.3 * c_size <= cross <= 2.5 * c_size:
            cb = view.box(*textpage.get_charbox(i))     # broken font metrics: use the glyph box
        if prev is not None and (c_axis != axis or _breaks(prev, cb, axis, size or c_size)):
            flush()
        if prev is None:
            axis, size, first = c_axis, c_size, i
            box[:] = cb
        else:
            box[0], box[1] = min(box[0], cb[0]), min(box[1], cb[1])
            box[2], box[3] = max(box[2], cb[2]), max(box[3], cb[3])
        chars.append(ch)
        prev, last = cb, i
    flush()
    return words


def _tighten(textpage: pdfium.PdfTextPage, view: _View, box: list[float], axis: int,
             first: int, last: int) -> None:
    """Move the word box's ends along the writing direction onto the glyph ink of its first and
    last characters (the loose boxes include side bearings); keep the loose cross extent."""
    try:
        a = view.box(*textpage.get_charbox(first))
        b = a if last == first else view.box(*textpage.get_charbox(last))
    except pdfium.PdfiumError:
        return
    lo, hi = (0, 2) if axis in (0, 180) else (1, 3)
    start, end = min(a[lo], b[lo]), max(a[hi], b[hi])
    if box[lo] - 0.5 <= start < end <= box[hi] + 0.5:   # only a plausible glyph box replaces
        box[lo], box[hi] = start, end


def _breaks(p: tuple[float, float, float, float], c: tuple[float, float, float, float],
            axis: int, size: float) -> bool:
    """True when char box `c` does not continue the word whose last char box is `p`."""
    em = size if size > 0 else max(p[3] - p[1], p[2] - p[0], 1.0)
    if axis in (0, 180):
        gap = c[0] - p[2] if axis == 0 else p[0] - c[2]
        cross = abs((c[1] + c[3]) - (p[1] + p[3])) / 2
        extent = max(p[3] - p[1], c[3] - c[1], 1e-6)
    else:
        gap = c[1] - p[3] if axis == 90 else p[1] - c[3]
        cross = abs((c[0] + c[2]) - (p[0] + p[2])) / 2
        extent = max(p[2] - p[0], c[2] - c[0], 1e-6)
    return gap > WORD_GAP_EM * em or gap < -0.5 * em or cross > _BASELINE_JUMP * extent


_name_buf = ctypes.create_string_buffer(256)
_flags = ctypes.c_int()


def _is_bold(raw: object, index: int) -> bool | None:
    """Bold from the font weight, the ForceBold flag or the font name; None when unknown."""
    weight = pdfium_c.FPDFText_GetFontWeight(raw, index)
    if weight >= 600:
        return True
    n = pdfium_c.FPDFText_GetFontInfo(raw, index, _name_buf, len(_name_buf), ctypes.byref(_flags))
    if n <= 0:
        return None if weight <= 0 else False
    if _flags.value & _FORCE_BOLD_FLAG:
        return True
    name = _name_buf.value.decode("latin-1").lower()
    return any(key in name for key in _BOLD_NAMES)
