"""What a person looks at: a document's pages as images, and the words on them, cached.

    PageCache(root).pages(sha256, key, data, settings) -> list[PageView]
    PageCache(root).image(sha256, key, data, page, width) -> bytes (PNG)

PDFs are rendered with pypdfium2; images (PNG, JPEG, TIFF frames) are the scan itself, EXIF
orientation applied as the parser does; documents without a picture (plain text, OCR line files,
Textract JSON) have no image and are drawn from their words. Every box is in the parser's page
coordinates (`Page.width` x `Page.height`), so an overlay with that viewBox sits on the image
whatever its pixel size. The parsed words (OCR for scans: slow) and every rendered size are
cached under the root (`<home>/cache/pages/<sha256>/`), so a page renders once.
"""
from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docassay.extractors.document import Document
from docassay.extractors.parsers import parse
from docassay.infra.config import Settings
from docassay.infra.objects import LocalObjectStore

__all__ = ["PageView", "PageCache", "VIEW_WIDTH", "REPORT_WIDTH", "MAX_WIDTH", "has_image", "page_views", "cache_for",
           "load_bytes"]

VIEW_WIDTH = 1100          # pixels across a page in the review station
REPORT_WIDTH = 760         # pixels across a page in the batch report (embedded, so smaller)
MAX_WIDTH = 2400           # the largest width anyone may ask for
PNG_COMPRESSION = 3        # zlib level of cached page images: fast to write, a little larger
_IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"II*\x00", b"MM\x00*")
_CACHE_VERSION = 1


@dataclass
class PageView:
    number: int
    width: float                      # the parser's page extent (boxes are in these units)
    height: float
    words: list[dict]                 # {"text", "bbox": [x0, y0, x1, y1], "line"}

    def to_json(self) -> dict:
        return {"number": self.number, "width": self.width, "height": self.height, "words": self.words}


def page_views(doc: Document) -> list[PageView]:
    return [PageView(p.number, float(p.width), float(p.height),
                     [{"text": w.text, "bbox": w.bbox.as_list(), "line": w.line} for w in p.words])
            for p in doc.pages]


def has_image(data: bytes) -> bool:
    return data.startswith(b"%PDF") or data[:1024].lstrip().startswith(b"%PDF") or data.startswith(_IMAGE_MAGIC)


def _render(data: bytes, page: int, width: int) -> bytes | None:
    """PNG of page `page` (1-based), `width` pixels wide; None when the document has no picture."""
    from PIL import Image, ImageOps
    if data.startswith(_IMAGE_MAGIC):
        with Image.open(io.BytesIO(data)) as img:
            img.seek(page - 1)
            frame = ImageOps.exif_transpose(img.convert("RGB")) if page == 1 else img.convert("RGB")
            if frame.width > width:
                frame = frame.resize((width, max(1, round(frame.height * width / frame.width))), Image.Resampling.LANCZOS)
            out = io.BytesIO()
            frame.save(out, "PNG", compress_level=PNG_COMPRESSION)
            return out.getvalue()
    if not has_image(data):
        return None
    import pypdfium2 as pdfium
    pdf = pdfium.PdfDocument(data)
    try:
        if not 1 <= page <= len(pdf):
            return None
        p = pdf[page - 1]
        scale = width / max(1.0, p.get_width())
        pil = p.render(scale=scale).to_pil().convert("RGB")
        out = io.BytesIO()
        pil.save(out, "PNG", compress_level=PNG_COMPRESSION)
        return out.getvalue()
    finally:
        pdf.close()


class PageCache:
    """Parsed words and rendered pages of documents, under `root` (one folder per document)."""

    def __init__(self, root: Path) -> None:
        self.store = LocalObjectStore(Path(root))

    def pages(self, sha256: str, key: str, data: bytes, settings: Settings) -> list[PageView]:
        ck = f"{sha256}/words-v{_CACHE_VERSION}.json"
        if self.store.exists(ck):
            raw = json.loads(self.store.get(ck))
            return [PageView(**p) for p in raw]
        views = page_views(parse(key, data, settings=settings))
        self.store.put(ck, json.dumps([v.to_json() for v in views], ensure_ascii=False).encode())
        return views

    def image(self, sha256: str, data: bytes, page: int, width: int = VIEW_WIDTH) -> bytes | None:
        width = max(64, min(int(width), MAX_WIDTH))
        ck = f"{sha256}/page-{int(page)}-{width}.png"
        if self.store.exists(ck):
            return self.store.get(ck)
        if not has_image(data):
            return None
        png = _render(data, page, width)
        if png is not None:
            self.store.put(ck, png)
        return png


def cache_for(settings: Settings) -> PageCache:
    return PageCache(Path(settings.home) / "cache" / "pages")


def load_bytes(objects: Any, key: str | None, source: str | None = None) -> tuple[bytes | None, str]:
    """A document's bytes: from object storage by key, else from its source path when it is a
    readable local file; (None, why) when neither."""
    if key:
        try:
            return objects.get(key), key
        except KeyError:
            pass
    if source and not str(source).startswith("s3://"):
        p = Path(source)
        try:
            if p.is_file():
                return p.read_bytes(), str(p)
        except OSError:
            pass
    return None, "the document's bytes were not kept" if not key else f"the document's bytes are gone ({key})"
