"""Rendering a synthetic document: born-digital PDF, page images, and SROIE-style OCR lines.

The PDF draws every run of the layout with reportlab at exactly the layout's position (standard
fonts, no kerning), so a PDF text layer gives back the same words. `invariant=1` makes the bytes a
function of the document alone. Images are the PDF rendered by pdfium; `augment=True` adds a small
seeded rotation and noise (for the OCR path), and `to_ocr_lines(..., augment=True)` rotates its
quads the same way.
"""
from __future__ import annotations

import io
import math
import random

import numpy as np
import pypdfium2 as pdfium
from PIL import Image
from reportlab.pdfgen import canvas as rl_canvas

from docassay.extractors.synth.canvas import ascent_descent
from docassay.extractors.synth.types import SynthDoc

__all__ = ["to_pdf", "to_png", "to_ocr_lines", "DEFAULT_DPI"]

DEFAULT_DPI = 150


def to_pdf(doc: SynthDoc) -> bytes:
    """The document as a born-digital PDF (same seed and format: byte-identical output)."""
    buf = io.BytesIO()
    pages = doc.layout.pages
    c = rl_canvas.Canvas(buf, pagesize=(pages[0].width, pages[0].height), invariant=1, pageCompression=1)
    c.setTitle(doc.doc_id)
    c.setCreator("docassay synth")
    c.setAuthor("docassay synth")
    for pl in pages:
        H = pl.height
        c.setPageSize((pl.width, H))
        for sh in pl.shapes:
            if sh.fill is not None:
                c.setFillColorRGB(*sh.fill)
            if sh.stroke is not None:
                c.setStrokeColorRGB(*sh.stroke)
                c.setLineWidth(sh.line_width)
            if sh.kind == "rect":
                c.rect(sh.x0, H - sh.y1, sh.x1 - sh.x0, sh.y1 - sh.y0, stroke=int(sh.stroke is not None),
                       fill=int(sh.fill is not None))
            else:
                c.line(sh.x0, H - sh.y0, sh.x1, H - sh.y1)
        font = None
        color = None
        for r in pl.runs:
            if (r.font, r.size) != font:
                c.setFont(r.font, r.size)
                font = (r.font, r.size)
            if r.color != color:
                c.setFillColorRGB(*r.color)
                color = r.color
            c.drawString(r.x, H - r.y, r.text)
        c.showPage()
    c.save()
    return buf.getvalue()


def _augment_params(doc: SynthDoc, page: int) -> tuple[float, int]:
    rng = random.Random(f"{doc.doc_id}/augment/{page}")
    return rng.uniform(-1.5, 1.5), rng.randrange(2 ** 31)


def _rotate_point(x: float, y: float, cx: float, cy: float, degrees: float) -> tuple[float, float]:
    """Where PIL's `Image.rotate(degrees)` (counter-clockwise, about the centre) moves pixel (x, y)."""
    t = math.radians(degrees)
    dx, dy = x - cx, y - cy
    return cx + dx * math.cos(t) + dy * math.sin(t), cy - dx * math.sin(t) + dy * math.cos(t)


def to_png(doc: SynthDoc, dpi: int = DEFAULT_DPI, augment: bool = False) -> list[bytes]:
    """One PNG per page, rendered from the PDF at `dpi`; with `augment`, rotated (<= 1.5 deg) and noisy."""
    pdf = pdfium.PdfDocument(to_pdf(doc))
    out: list[bytes] = []
    try:
        for i in range(len(pdf)):
            page = pdf[i]
            img = page.render(scale=dpi / 72.0).to_pil().convert("RGB")
            page.close()
            if augment:
                angle, seed = _augment_params(doc, i + 1)
                img = img.rotate(angle, resample=Image.Resampling.BICUBIC, fillcolor=(255, 255, 255))
                arr = np.asarray(img, dtype=np.int16)
                noise = np.random.default_rng(seed).normal(0, 8, arr.shape[:2])[..., None]
                img = Image.fromarray(np.clip(arr + noise, 0, 255).astype(np.uint8))
            buf = io.BytesIO()
            img.save(buf, format="PNG", compress_level=1)
            out.append(buf.getvalue())
    finally:
        pdf.close()
    return out


def to_ocr_lines(doc: SynthDoc, dpi: int = DEFAULT_DPI, augment: bool = False) -> dict[str, list[dict]]:
    """`{"lines": [{"text", "quad"}]}` as SROIE prints them: one line per run, corners clockwise from
    top-left, in pixels of `to_png(doc, dpi, augment)`. Multi-page documents add `"page"` per line."""
    scale = dpi / 72.0
    lines: list[dict] = []
    multi = len(doc.layout.pages) > 1
    for pno, pl in enumerate(doc.layout.pages, start=1):
        w_px, h_px = round(pl.width * scale), round(pl.height * scale)
        angle = _augment_params(doc, pno)[0] if augment else 0.0
        for r in sorted(pl.runs, key=lambda r: (round(r.y, 1), r.x)):
            asc, desc = ascent_descent(r.font, r.size)
            x0, x1 = r.x * scale, r.x1 * scale
            y0, y1 = (r.y - asc) * scale, (r.y - desc) * scale
            corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
            if angle:
                corners = [_rotate_point(x, y, w_px / 2, h_px / 2, angle) for x, y in corners]
            line: dict[str, object] = {"text": r.text, "quad": [int(round(c)) for xy in corners for c in xy]}
            if multi:
                line["page"] = pno
            lines.append(line)
    return {"lines": lines}
