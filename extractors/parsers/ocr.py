"""OCR of page images with RapidOCR (PP-OCR models run by onnxruntime; the models ship inside the
`rapidocr-onnxruntime` wheel, so this works offline).

The engine is loaded lazily, once per process, on first use (about 0.7 s), and calls are
serialised with a lock: one engine already uses every core through onnxruntime's thread pool.

The engine returns text lines with quadrilaterals; `ocr_words` splits each line into words with
x positions proportional to character counts (`words.split_line`). Coordinates are pixels of the
image that was passed in.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from extractors.document import Word
from extractors.parsers.words import clean_text, words_from_lines
from infra.errors import ConfigError

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = ["OcrLine", "recognize", "ocr_words", "is_blank", "SUPPORTED_ENGINES"]

SUPPORTED_ENGINES = ("rapidocr",)
BLANK_LEVEL = 200           # grey value (0 black .. 255 white) that counts as printed
# Text detection runs on the image scaled so that its longer side is at most this many pixels.
# (RapidOCR's default instead scales the *shorter* side up to 736 px, which makes a wide, short
# image - a cropped line, a banner, a small page - 2-5x larger and detection that much slower.)
DET_MAX_SIDE = 2000

_lock = threading.Lock()
_engine: object | None = None


@dataclass(frozen=True, slots=True)
class OcrLine:
    text: str
    quad: tuple[float, float, float, float, float, float, float, float]   # clockwise from top-left
    score: float


def _get_engine(name: str) -> object:
    global _engine
    if name not in SUPPORTED_ENGINES:
        raise ConfigError(f"unknown OCR engine {name!r}; supported: {', '.join(SUPPORTED_ENGINES)}",
                          setting="ocr_engine")
    if _engine is None:
        from rapidocr_onnxruntime import RapidOCR       # heavy import: only when OCR is needed
        _engine = RapidOCR(det_limit_type="max", det_limit_side_len=DET_MAX_SIDE)
    return _engine


def is_blank(image: "Image") -> bool:
    """True when no pixel is darker than `BLANK_LEVEL` (an empty page or a white scan)."""
    darkest, _ = image.convert("L").getextrema()
    return darkest > BLANK_LEVEL


def recognize(image: "Image", engine: str = "rapidocr") -> list[OcrLine]:
    """Text lines found in `image` (any PIL mode), in the engine's order; [] when there is none."""
    if image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    if is_blank(image):
        return []                                       # nothing printed: skip seconds of OCR
    with _lock:
        eng = _get_engine(engine)
        result, _elapsed = eng(image)                   # type: ignore[operator]
    lines: list[OcrLine] = []
    for box, text, score in result or ():
        quad = tuple(float(v) for pt in box for v in pt)
        text = clean_text(str(text))
        if len(quad) == 8 and text.strip():
            lines.append(OcrLine(text, quad, float(score)))  # type: ignore[arg-type]
    return lines


def ocr_words(image: "Image", engine: str = "rapidocr") -> list[Word]:
    """Words of `image` via `recognize`, each line split proportionally into words (pixels)."""
    return words_from_lines((ln.text, ln.quad) for ln in recognize(image, engine))
