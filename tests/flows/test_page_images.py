"""Page images for the review station and the report: PDFs rendered with pypdfium2, scans as
themselves (every TIFF frame), no picture for text; rendered once, then served from the cache."""
from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from docassay.extractors.synth import to_pdf
from docassay.extractors.synth.generator import make_document, make_format
from docassay.flows.page_images import PageCache, has_image
from docassay.infra.config import Settings
from tests.flows.test_lifecycle import FORMAT_SEED


def size(png: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(png)) as im:
        return im.size


def test_pdf_scan_and_text_pages(tmp_path: Path) -> None:
    cache = PageCache(tmp_path / "cache")
    pdf = to_pdf(make_document(make_format(FORMAT_SEED), 0))
    png = cache.image("a" * 64, pdf, 1, 600)
    assert png.startswith(b"\x89PNG") and size(png)[0] == 600
    assert (tmp_path / "cache" / ("a" * 64) / "page-1-600.png").read_bytes() == png
    assert cache.image("a" * 64, b"not used: cached", 1, 600) == png
    assert cache.image("a" * 64, pdf, 5, 600) is None                   # no such page
    pages = cache.pages("a" * 64, "doc.pdf", pdf, Settings.load(home=tmp_path / "home"))
    assert pages[0].width > 0 and any(w["text"] for w in pages[0].words)

    frames = [Image.new("RGB", (1600, 2000), c) for c in ("white", "gray")]
    buf = io.BytesIO()
    frames[0].save(buf, "TIFF", save_all=True, append_images=frames[1:])
    tiff = buf.getvalue()
    assert size(cache.image("b" * 64, tiff, 2, 800)) == (800, 1000)     # the second frame, downscaled
    small = io.BytesIO()
    Image.new("RGB", (300, 200), "white").save(small, "PNG")
    assert size(cache.image("c" * 64, small.getvalue(), 1, 1100)) == (300, 200)   # never upscaled
    assert not has_image(b"Rechnung Nr. 1\n") and cache.image("d" * 64, b"Rechnung Nr. 1\n", 1) is None
