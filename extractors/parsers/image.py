"""Image parser: PNG, JPEG and TIFF (multi-page TIFF = one page per frame), read by OCR.

Pillow reads only the header on `Image.open`, so the pixel count of each frame is checked against
`max_page_pixels` before any pixel is decoded (decompression bombs never get decoded). JPEG EXIF
orientation is applied, so coordinates are pixels of the image as displayed.
"""
from __future__ import annotations

import io
import warnings

from PIL import Image, ImageOps, UnidentifiedImageError

from docassay.extractors.document import Document, Page
from docassay.extractors.errors import ParseError
from docassay.extractors.parsers.base import Budget, Parser, finish_page
from docassay.extractors.parsers.ocr import ocr_page_words, resolve_engine
from docassay.infra.config import Settings

__all__ = ["ImageParser", "IMAGE_MAGIC"]

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
            frame = img.copy()                      # decodes this frame only (size already checked)
            frame = ImageOps.exif_transpose(frame) or frame
            frame = _flatten(frame)
        except (OSError, SyntaxError, ValueError) as exc:
            raise ParseError(f"the {fmt} image data is truncated or damaged (page {number}: {exc})",
                             kind="corrupt", source=budget.source, page=number) from exc
        words = ocr_page_words(frame, settings.ocr_engine, budget.source, number)
        return finish_page(number, float(frame.width), float(frame.height), words, "ocr", budget)


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
