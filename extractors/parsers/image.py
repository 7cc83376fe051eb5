"""Image parser: PNG, JPEG and TIFF (multi-page TIFF = one page per frame), read by OCR.

Pillow reads only the header on `Image.open`, so the pixel count of each frame is checked against
`max_page_pixels` before any pixel is decoded (decompression bombs never get decoded). JPEG EXIF
orientation is applied, so coordinates are pixels of the image as displayed.

A JPEG larger than the OCR engine reads (`ocr.working_side`: RapidOCR scales lines down to 2000 px,
Tesseract to 3600) is decoded reduced by the JPEG decoder itself (`Image.draft`: 1/2, 1/4 or 1/8,
never below that side), and the words' boxes are scaled back to the full image's pixels: a 600 dpi
A4 scan (4961x7016, 104 MB decoded in RGB, held two or three times while it was copied and turned)
is decoded at 2481x3508 for RapidOCR (BENCHMARKS.md "Issue 15: RapidOCR on an A4 page").
`DOCASSAY_OCR_JPEG_DRAFT=0` decodes every JPEG in full.
"""
from __future__ import annotations

import io
import warnings

from PIL import Image, ImageOps, UnidentifiedImageError

from docassay.extractors.document import BBox, Document, Page, Word
from docassay.extractors.errors import ParseError
from docassay.extractors.parsers.base import Budget, Parser, finish_page
from docassay.extractors.parsers.ocr import env_flag, ocr_page_words, resolve_engine, working_side
from docassay.infra.config import Settings

__all__ = ["ImageParser", "IMAGE_MAGIC", "ocr_frame"]

IMAGE_MAGIC: dict[bytes, str] = {
    b"\x89PNG\r\n\x1a\n": "PNG",
    b"\xff\xd8\xff": "JPEG",
    b"II*\x00": "TIFF",
    b"MM\x00*": "TIFF",
    b"II+\x00": "TIFF",          # BigTIFF
    b"MM\x00+": "TIFF",
}
_FORMATS = ("PNG", "JPEG", "TIFF", "MPO")    # MPO: multi-picture JPEG from cameras; frame 1 is read


class ImageParser(Parser):
    name = "image"
    kind = "image"

    def sniff(self, data: bytes, source: str) -> bool:
        return any(data.startswith(m) for m in IMAGE_MAGIC)

    def parse(self, data: bytes, source: str, settings: Settings) -> Document:
        budget = Budget.for_settings(settings, source)
        fmt = next(name for magic, name in IMAGE_MAGIC.items() if data.startswith(magic))
        try:
            with warnings.catch_warnings():
                # Our own max_page_pixels check runs below, before decoding; Pillow's warning is noise.
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                img = Image.open(io.BytesIO(data), formats=_FORMATS)
        except Image.DecompressionBombError as exc:
            raise ParseError(f"the {fmt} image is too large to decode ({exc})",
                             kind="too_large", source=source) from exc
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
            raise ParseError(f"the {fmt} image is damaged and cannot be read ({exc})",
                             kind="corrupt", source=source) from exc
        pages: list[Page] = []
        with img:
            index = 0
            while True:
                budget.check_pages(index + 1)
                budget.check_time(f"image frame {index + 1}")
                budget.check_pixels(img.width, img.height, index + 1)
                pages.append(self._frame_page(img, index + 1, fmt, budget, settings))
                if fmt != "TIFF":
                    break
                index += 1
                try:
                    img.seek(index)
                except EOFError:
                    break
                except (OSError, SyntaxError, ValueError) as exc:
                    raise ParseError(f"frame {index + 1} of the TIFF image is damaged ({exc})",
                                     kind="corrupt", source=source, page=index + 1) from exc
        return self.document(data, source, pages, format=fmt, n_pages=len(pages),
                             ocr_engine=resolve_engine(settings.ocr_engine))

    def _frame_page(self, img: Image.Image, number: int, fmt: str, budget: Budget,
                    settings: Settings) -> Page:
        try:
            frame, (width, height) = ocr_frame(img, settings.ocr_engine)
        except (OSError, SyntaxError, ValueError) as exc:
            raise ParseError(f"the {fmt} image data is truncated or damaged (page {number}: {exc})",
                             kind="corrupt", source=budget.source, page=number) from exc
        words = scale_words(ocr_page_words(frame, settings.ocr_engine, budget.source, number),
                            width / frame.width, height / frame.height)
        return finish_page(number, float(width), float(height), words, "ocr", budget)


def ocr_frame(img: Image.Image, engine: str) -> tuple[Image.Image, tuple[int, int]]:
    """The current frame of `img` (opened, not yet decoded) as OCR reads it: decoded (reduced for
    a large JPEG, see the module's docstring), turned upright by its EXIF orientation, RGB or L;
    and the size of the full frame, upright (the page's pixels)."""
    width, height = img.size
    side = working_side(engine)
    if env_flag("DOCASSAY_OCR_JPEG_DRAFT", True) and img.format in ("JPEG", "MPO") and max(width, height) > side:
        ratio = side / max(width, height)
        img.draft(img.mode if img.mode in ("RGB", "L") else "RGB",
                  (max(1, -(-width * side // max(width, height))), max(1, round(height * ratio))))
    frame = img.copy()                      # decodes this frame only (size already checked)
    if img.getexif().get(0x0112, 1) in (5, 6, 7, 8):        # EXIF orientation: a quarter turn
        width, height = height, width
    frame = ImageOps.exif_transpose(frame) or frame
    return _flatten(frame), (width, height)


def scale_words(words: list[Word], sx: float, sy: float) -> list[Word]:
    """`words` with their boxes scaled by (sx, sy) (from a reduced decode to the full frame)."""
    if sx == 1.0 and sy == 1.0:
        return words
    return [Word(w.text, BBox(w.bbox.x0 * sx, w.bbox.y0 * sy, w.bbox.x1 * sx, w.bbox.y1 * sy),
                 w.font_size, w.bold, w.line) for w in words]


def _flatten(img: Image.Image) -> Image.Image:
    """RGB or L; transparency composited onto white (transparent pixels are often black)."""
    if img.mode in ("RGB", "L"):
        return img
    if img.mode in ("RGBA", "LA", "PA") or "transparency" in img.info:
        rgba = img.convert("RGBA")
        background = Image.new("RGB", rgba.size, (255, 255, 255))
        background.paste(rgba, mask=rgba.getchannel("A"))
        return background
    return img.convert("RGB")
