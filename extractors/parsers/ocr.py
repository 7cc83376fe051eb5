"""OCR of page images with RapidOCR (PP-OCR models run by onnxruntime; the models ship inside the
`rapidocr-onnxruntime` wheel, so this works offline).

The engine is loaded lazily, once per process, on first use (about 0.7 s), and calls are
serialised with a lock: one engine already uses every core through onnxruntime's thread pool.

The engine returns text lines with quadrilaterals; `ocr_words` splits each line into words with
x positions proportional to character counts (`words.split_line`). Coordinates are pixels of the
image that was passed in.
"""
from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from docassay.extractors.document import BBox, Word
from docassay.extractors.parsers.words import clean_text, words_from_lines
from docassay.infra.errors import ConfigError

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = ["OcrLine", "OcrSettings", "recognize", "ocr_words", "is_blank", "SUPPORTED_ENGINES"]

SUPPORTED_ENGINES = ("rapidocr",)
BLANK_LEVEL = 200           # grey value (0 black .. 255 white) that counts as printed
# Text detection runs on the image scaled so that its longer side is at most this many pixels.
# (RapidOCR's default instead scales the *shorter* side up to 736 px, which makes a wide, short
# image - a cropped line, a banner, a small page - 2-5x larger and detection that much slower.)
# Measured (bench/ocr_settings.py, BENCHMARKS.md issue 15): rapidocr-onnxruntime 1.3 ignores the
# number for limit_type "max" and picks 960 / 1500 / 2000 by the image's longer side, so changing
# it changes nothing; recognition, not detection, takes most of a receipt's time.
DET_MAX_SIDE = 2000


@dataclass(frozen=True)
class OcrSettings:
    """How the engine is built (read once, when it is first needed). Environment overrides:
    `DOCASSAY_OCR_DET_MAX_SIDE` (pixels), `DOCASSAY_OCR_USE_CLS` (0/1: the 180-degree line
    classifier), `DOCASSAY_OCR_THREADS` (onnxruntime intra-op threads; 0: onnxruntime's default,
    every core). `bench/ocr_settings.py` measures them (time, memory, accuracy on SROIE lines)."""
    det_max_side: int = DET_MAX_SIDE
    use_cls: bool = True
    threads: int = 0

    @classmethod
    def from_env(cls) -> "OcrSettings":
        env = os.environ
        try:
            return cls(det_max_side=int(env.get("DOCASSAY_OCR_DET_MAX_SIDE", cls.det_max_side)),
                       use_cls=env.get("DOCASSAY_OCR_USE_CLS", "1").strip().lower() not in ("0", "false", "no"),
                       threads=int(env.get("DOCASSAY_OCR_THREADS", cls.threads)))
        except ValueError as exc:
            raise ConfigError(f"bad OCR setting in the environment: {exc}", setting="ocr") from exc

    def engine_kwargs(self) -> dict:
        kw: dict = {"det_limit_type": "max", "det_limit_side_len": self.det_max_side, "use_cls": self.use_cls}
        if self.threads > 0:
            kw["intra_op_num_threads"] = self.threads
        return kw


_lock = threading.Lock()
_engine: object | None = None


@dataclass(frozen=True, slots=True)
class OcrLine:
    text: str
    quad: tuple[float, float, float, float, float, float, float, float]   # clockwise from top-left
    score: float
    chars: tuple[tuple[str, float, float], ...] = ()   # (character, x0, x1) where the engine gives them


def _get_engine(name: str) -> object:
    global _engine
    if name not in SUPPORTED_ENGINES:
        raise ConfigError(f"unknown OCR engine {name!r}; supported: {', '.join(SUPPORTED_ENGINES)}",
                          setting="ocr_engine")
    if _engine is None:
        from rapidocr_onnxruntime import RapidOCR  # heavy import: only when OCR is needed
        _engine = RapidOCR(**OcrSettings.from_env().engine_kwargs())
    return _engine


def is_blank(image: "Image") -> bool:
    """True when no pixel is darker than `BLANK_LEVEL` (an empty page or a white scan)."""
    darkest, _ = image.convert("L").getextrema()
    assert isinstance(darkest, (int, float))           # one band ("L"): (min, max) of numbers
    return darkest > BLANK_LEVEL


def recognize(image: "Image", engine: str = "rapidocr") -> list[OcrLine]:
    """Text lines found in `image` (any PIL mode), in the engine's order; [] when there is none."""
    if image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    if is_blank(image):
        return []                                       # nothing printed: skip seconds of OCR
    with _lock:
        eng = _get_engine(engine)
        # Per-character boxes let us put back the spaces the recogniser drops in small print.
        result, _elapsed = eng(image, return_word_box=True)   # type: ignore[operator]
    lines: list[OcrLine] = []
    for item in result or ():
        box, text, score = item[0], item[1], item[2]
        quad = tuple(float(v) for pt in box for v in pt)
        raw = str(text)
        text = clean_text(raw)
        chars: tuple[tuple[str, float, float], ...] = ()
        if len(item) >= 5 and text == raw and len(item[3]) == len(item[4]) == len(raw):
            try:
                chars = tuple((str(c), float(min(p[0] for p in q)), float(max(p[0] for p in q)))
                              for c, q in zip(item[4], item[3]))
            except (TypeError, ValueError, IndexError):
                chars = ()
        if len(quad) == 8 and text.strip():
            lines.append(OcrLine(text, quad, float(score), chars))
    return lines


SPACE_GAP = 1.6     # centre-to-centre distance over the line's typical character step that marks a space


def ocr_words(image: "Image", engine: str = "rapidocr") -> list[Word]:
    """Words of `image` via `recognize` (pixels): split at spaces and, where the engine gives
    character boxes, also where two characters' centres are more than `SPACE_GAP` typical steps
    apart; other lines are split proportionally along their quadrilateral."""
    words: list[Word] = []
    for ln in recognize(image, engine):
        words.extend(_words_from_chars(ln) if ln.chars else words_from_lines([(ln.text, ln.quad)]))
    return words


def _words_from_chars(ln: OcrLine) -> list[Word]:
    ys = ln.quad[1::2]
    y0, y1 = min(ys), max(ys)
    centres = [(x0 + x1) / 2 for c, x0, x1 in ln.chars if not c.isspace()]
    steps = sorted(b - a for a, b in zip(centres, centres[1:]) if b > a)
    if not steps:
        return words_from_lines([(ln.text, ln.quad)])
    step = steps[len(steps) // 2]
    out: list[Word] = []
    cur: list[tuple[str, float, float]] = []

    def flush() -> None:
        if cur:
            out.append(Word("".join(c for c, _, _ in cur), BBox(cur[0][1], y0, cur[-1][2], y1)))
            cur.clear()

    for ch in ln.chars:
        c, x0, x1 = ch
        if c.isspace():
            flush()
            continue
        if cur and c.isalpha() and cur[-1][0].isalpha() and \
                (x0 + x1) / 2 - (cur[-1][1] + cur[-1][2]) / 2 > SPACE_GAP * step:
            flush()                                  # a space dropped between two words
        cur.append(ch)
    flush()
    return _join_split_numbers(out)


_NUM_HEAD = re.compile(r"^[-(]?\d[\d.,]*[.,]$")
_NUM_TAIL = re.compile(r"^\d{1,3}(?:[^\w]|$)")


def _join_split_numbers(words: list[Word]) -> list[Word]:
    """Undo a space the recogniser put inside an amount ("1. 48" -> "1.48")."""
    out: list[Word] = []
    for w in words:
        if out and _NUM_HEAD.match(out[-1].text) and _NUM_TAIL.match(w.text):
            prev = out.pop()
            w = Word(prev.text + w.text, prev.bbox.union(w.bbox))
        out.append(w)
    return out
