"""OCR of page images: one front door (`recognize`, `ocr_words`) over two local engines.

    rapidocr   PP-OCR models run by onnxruntime; the models ship inside the `rapidocr-onnxruntime`
               wheel, so it works offline everywhere docassay installs.
    tesseract  the `tesseract` program (a system package; extractors/parsers/ocr_tesseract.py),
               word boxes with confidences from its TSV output.
    auto       tesseract where it is installed, else rapidocr (the fast choice).

The default is rapidocr: it reads about 7 points more characters right on the dev-tune receipts and
on A4 pages (BENCHMARKS.md "Issue 15: OCR engine and settings"); tesseract takes a quarter to a half
of its time and memory. A wrong character costs a wrong value, so accuracy decides the default.

The engine is `Settings.ocr_engine` (environment `DOCASSAY_OCR_ENGINE`; CLI `--parser
rapidocr|tesseract`). RapidOCR is loaded lazily, once per process, on first use, and its calls are
serialised with a lock (one engine already uses every core it is given through onnxruntime's thread
pool). Tesseract runs one process per image, so two documents can be read at once.

RapidOCR returns text lines with quadrilaterals; `ocr_words` splits each line into words at its
character boxes (`_words_from_chars`), else proportionally (`words.split_line`). Tesseract returns
words. Coordinates are pixels of the image that was passed in.
"""
from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from docassay.extractors.document import BBox, Word
from docassay.extractors.errors import ParseError
from docassay.extractors.parsers.words import clean_text, words_from_lines
from docassay.infra.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np
    from PIL.Image import Image

__all__ = ["OcrLine", "OcrSettings", "recognize", "ocr_words", "ocr_page_words", "is_blank", "resolve_engine",
           "working_side", "env_flag", "SUPPORTED_ENGINES", "OcrEngineError"]

SUPPORTED_ENGINES = ("auto", "rapidocr", "tesseract")
BLANK_LEVEL = 200           # grey value (0 black .. 255 white) that counts as printed
# Text detection runs on the image scaled down (by docassay, before detection; boxes are mapped
# back and the lines are cut from the full image) so that its longer side is at most this many
# pixels. rapidocr-onnxruntime itself ignores `det_limit_side_len` with limit_type "max" (it picks
# 960 / 1500 / 2000 by the image's longer side), so the scaling is done here. Measured in
# bench/ocr_settings.py (BENCHMARKS.md "Issue 15: OCR engine and settings"): on dev-tune receipts and
# synthetic A4 pages 960 read as well as 1280 and better than 2000, in the least time and memory.
DET_MAX_SIDE = 960
REC_BATCH = 6               # text lines per recogniser call (rapidocr's default)
# The recogniser's input is 48 px high and at least this wide: every line is padded to it (rapidocr's
# default, 320, aligned with PaddleOCR's training shape, doubles the work for a receipt's short lines).
# Measured: 48 (no padding beyond the batch's widest line) halves recognition on a receipt, same accuracy.
REC_MIN_WIDTH = 48
REC_HEIGHT = 48             # the PP-OCR recogniser's fixed input height
DET_MIN_SIDE = 32           # below this (after scaling) detection runs through the wheel's own path
# Lines are cut from the image scaled down to this longer side (the wheel's own `max_side_len`): the
# recogniser reads 48 px high lines anyway, and a 600 dpi A4 scan (4961x7016) held full size in BGR
# took the process over 800 MB (measured, BENCHMARKS.md issue 15).
CROP_MAX_SIDE = 2000


class OcrEngineError(RuntimeError):
    """An OCR engine failed on an image (the parsers turn it into a ParseError)."""


@dataclass(frozen=True)
class OcrSettings:
    """How RapidOCR is built and run (read once, when it is first needed). Environment overrides:
    `DOCASSAY_OCR_DET_MAX_SIDE` (pixels), `DOCASSAY_OCR_USE_CLS` (0/1: the 180-degree line
    classifier), `DOCASSAY_OCR_THREADS` (onnxruntime intra-op threads; 0: onnxruntime's default,
    every core), `DOCASSAY_OCR_REC_BATCH` (lines per recogniser call), `DOCASSAY_OCR_REC_WIDTH`
    (the recogniser's minimum input width, pixels), `DOCASSAY_OCR_SIMPLIFY` (0/1: run the models
    with their affine blocks folded into the convolutions and hard-swish as one HardSigmoid and a Mul,
    `ocr_graph.simplify`), `DOCASSAY_OCR_SPIN` (0/1: onnxruntime's worker threads spin while they wait
    for work). `bench/ocr_settings.py` measures them (time, memory, accuracy on SROIE lines)."""
    det_max_side: int = DET_MAX_SIDE
    use_cls: bool = False           # measured: no accuracy gained on upright scans, ~0.1-0.2 s per image
    threads: int = 0
    rec_batch: int = REC_BATCH
    rec_width: int = REC_MIN_WIDTH
    simplify: bool = True           # measured: same words, recognition ~1.5x faster (BENCHMARKS.md)
    spin: bool = True

    @classmethod
    def from_env(cls) -> "OcrSettings":
        env = os.environ
        try:
            s = cls(det_max_side=int(env.get("DOCASSAY_OCR_DET_MAX_SIDE", cls.det_max_side)),
                    use_cls=env_flag("DOCASSAY_OCR_USE_CLS", cls.use_cls),
                    threads=int(env.get("DOCASSAY_OCR_THREADS", cls.threads)),
                    rec_batch=int(env.get("DOCASSAY_OCR_REC_BATCH", cls.rec_batch)),
                    rec_width=int(env.get("DOCASSAY_OCR_REC_WIDTH", cls.rec_width)),
                    simplify=env_flag("DOCASSAY_OCR_SIMPLIFY", cls.simplify),
                    spin=env_flag("DOCASSAY_OCR_SPIN", cls.spin))
        except ValueError as exc:
            raise ConfigError(f"bad OCR setting in the environment: {exc}", setting="ocr") from exc
        if s.det_max_side < 64 or s.rec_batch < 1 or s.threads < 0 or s.rec_width < 8:
            raise ConfigError(f"OCR settings out of range: det max side {s.det_max_side} (>= 64), rec batch "
                              f"{s.rec_batch} (>= 1), threads {s.threads} (>= 0), rec width {s.rec_width} (>= 8)",
                              setting="ocr")
        return s

    def engine_kwargs(self) -> dict:
        kw: dict = {"det_limit_type": "max", "det_limit_side_len": self.det_max_side, "use_cls": self.use_cls,
                    "rec_batch_num": self.rec_batch, "rec_img_shape": [3, REC_HEIGHT, self.rec_width]}
        if self.threads > 0:
            kw["intra_op_num_threads"] = self.threads
        return kw


def env_flag(name: str, default: bool) -> bool:
    """The 0/1 (false/true, no/yes, off/on) environment setting `name`, `default` when unset."""
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() not in ("0", "false", "no", "off")


def _session_options(s: OcrSettings) -> object:
    """onnxruntime session options as the wheel sets them (no memory arena, every graph
    optimisation), with docassay's thread count and spinning."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 4
    so.enable_cpu_mem_arena = False
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if s.threads > 0:
        so.intra_op_num_threads = s.threads
    if not s.spin:
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return so


def _rebuild_sessions(eng: object, s: OcrSettings) -> None:
    """Replace the engine's onnxruntime sessions (detector, classifier, recogniser) by ones built
    from the simplified graphs (`ocr_graph.simplify`, when `s.simplify`) with `_session_options(s)`.
    A model that cannot be read or rewritten keeps the wheel's session."""
    import onnxruntime as ort

    from docassay.extractors.parsers import ocr_graph
    for part, attr in (("text_det", "infer"), ("text_cls", "session"), ("text_rec", "session")):
        holder = getattr(getattr(eng, part, None), attr, None)
        old = getattr(holder, "session", None)
        path = getattr(old, "_model_path", None)
        if holder is None or not isinstance(path, str):
            continue
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
            model = (ocr_graph.simplify(raw) if s.simplify else None) or raw
            holder.session = ort.InferenceSession(model, sess_options=_session_options(s),
                                                  providers=["CPUExecutionProvider"])
        except Exception:                               # noqa: BLE001 - the wheel's session still works
            holder.session = old


_lock = threading.Lock()
_engine: object | None = None
_settings: OcrSettings | None = None


@dataclass(frozen=True, slots=True)
class OcrLine:
    text: str
    quad: tuple[float, float, float, float, float, float, float, float]   # clockwise from top-left
    score: float
    chars: tuple[tuple[str, float, float], ...] = ()   # (character, x0, x1) where the engine gives them


def resolve_engine(name: str) -> str:
    """The engine that `name` runs: `auto` is tesseract where it is installed, else rapidocr."""
    if name not in SUPPORTED_ENGINES:
        raise ConfigError(f"unknown OCR engine {name!r}; supported: {', '.join(SUPPORTED_ENGINES)}",
                          setting="ocr_engine")
    if name == "auto":
        from docassay.extractors.parsers import ocr_tesseract
        return "tesseract" if ocr_tesseract.available() else "rapidocr"
    return name


def _get_engine(name: str = "rapidocr") -> object:
    """The RapidOCR engine (built on first use). `name` is checked like `resolve_engine`'s."""
    global _engine, _settings
    resolve_engine(name)
    if _engine is None:
        from rapidocr_onnxruntime import RapidOCR  # heavy import: only when OCR is needed
        _settings = OcrSettings.from_env()
        engine = RapidOCR(**_settings.engine_kwargs())
        if _settings.simplify or not _settings.spin:
            _rebuild_sessions(engine, _settings)
        _engine = engine
    return _engine


def working_side(engine: str) -> int:
    """The longest side, in pixels, of the image that `engine` reads lines from: a larger image is
    scaled down to it first (RapidOCR: `CROP_MAX_SIDE`; Tesseract: `TesseractSettings.max_side`), so
    a decoder may deliver an image this large instead of the full one (the image parser does, for JPEG)."""
    if resolve_engine(engine) == "tesseract":
        from docassay.extractors.parsers import ocr_tesseract
        return ocr_tesseract.TesseractSettings.from_env().max_side
    return CROP_MAX_SIDE


def is_blank(image: "Image") -> bool:
    """True when no pixel is darker than `BLANK_LEVEL` (an empty page or a white scan)."""
    darkest, _ = image.convert("L").getextrema()
    assert isinstance(darkest, (int, float))           # one band ("L"): (min, max) of numbers
    return darkest > BLANK_LEVEL


def recognize(image: "Image", engine: str = "auto") -> list[OcrLine]:
    """Text lines found in `image` (any PIL mode), in the engine's order; [] when there is none.
    Raises ConfigError for an unknown engine, OcrEngineError when the engine fails."""
    which = resolve_engine(engine)
    if image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    if is_blank(image):
        return []                                       # nothing printed: skip seconds of OCR
    if which == "tesseract":
        return _tesseract_lines(image)
    with _lock:
        eng = _get_engine(which)
        result = _rapid_run(eng, image, _settings or OcrSettings.from_env())
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


def _rapid_run(eng: object, image: "Image", s: OcrSettings) -> list:
    """RapidOCR's result items `[quad, text, score, char quads, chars, ...]` for `image` (in its
    pixels): lines cut from the image at most `CROP_MAX_SIDE` large, detection run on it scaled to
    `s.det_max_side`."""
    import cv2
    import numpy as np
    back = 1.0                                          # from the image lines are cut from to `image`
    if max(image.size) > CROP_MAX_SIDE:
        back = max(image.size) / CROP_MAX_SIDE
        image = image.resize((max(1, round(image.width / back)), max(1, round(image.height / back))),
                             reducing_gap=2.0)
    arr = cv2.cvtColor(np.asarray(image.convert("RGB")), cv2.COLOR_RGB2BGR)    # BGR, as the wheel reads
    items = _rapid_items(eng, arr, s)
    if back != 1.0:
        for item in items:
            item[0] = [[float(x) * back, float(y) * back] for x, y in item[0]]
            if len(item) >= 4 and item[3]:
                item[3] = [[[float(x) * back, float(y) * back] for x, y in q] for q in item[3]]
    return items


def _rapid_items(eng: object, arr: "np.ndarray", s: OcrSettings) -> list:
    import cv2
    import numpy as np
    h, w = arr.shape[:2]
    ratio = min(1.0, s.det_max_side / max(h, w))
    staged = all(hasattr(eng, a) for a in ("auto_text_det", "get_crop_img_list", "text_cls", "text_rec",
                                           "cal_rec_boxes", "text_score"))
    if not staged or min(h, w) * ratio < DET_MIN_SIDE or w / h > getattr(eng, "width_height_ratio", 8):
        result, _elapsed = eng(arr, return_word_box=True)   # type: ignore[operator]
        return [list(item) for item in result or ()]
    small = arr if ratio == 1.0 else cv2.resize(arr, (max(1, round(w * ratio)), max(1, round(h * ratio))),
                                                interpolation=cv2.INTER_AREA)
    boxes, _ = eng.auto_text_det(small)                                         # type: ignore[attr-defined]
    if boxes is None or len(boxes) == 0:
        return []
    sy, sx = h / small.shape[0], w / small.shape[1]
    full = []
    for b in boxes:
        q = np.array(b, dtype=np.float32).copy()
        q[:, 0] = np.clip(q[:, 0] * sx, 0, w)
        q[:, 1] = np.clip(q[:, 1] * sy, 0, h)
        full.append(q)
    crops = eng.get_crop_img_list(arr, full)                                    # type: ignore[attr-defined]
    if s.use_cls:
        crops, _, _ = eng.text_cls(crops)                                       # type: ignore[attr-defined]
    rec, _ = eng.text_rec(crops, True)                                          # type: ignore[attr-defined]
    rec = eng.cal_rec_boxes(crops, full, rec)                                   # type: ignore[attr-defined]
    return [[q.tolist(), *r] for q, r in zip(full, rec)
            if float(r[1]) >= eng.text_score]                                   # type: ignore[attr-defined]


def _tesseract_lines(image: "Image") -> list[OcrLine]:
    from docassay.extractors.parsers import ocr_tesseract
    try:
        words = ocr_tesseract.recognize_words(image)
    except ocr_tesseract.TesseractError as exc:
        raise OcrEngineError(str(exc)) from exc
    lines: list[OcrLine] = []
    group: list = []
    for tw in [*words, None]:
        if group and (tw is None or tw.line != group[0].line):
            x0, y0 = min(g.x0 for g in group), min(g.y0 for g in group)
            x1, y1 = max(g.x1 for g in group), max(g.y1 for g in group)
            lines.append(OcrLine(" ".join(g.text for g in group), (x0, y0, x1, y0, x1, y1, x0, y1),
                                 sum(g.conf for g in group) / len(group) / 100.0))
            group = []
        if tw is not None:
            group.append(tw)
    return lines


SPACE_GAP = 1.6     # centre-to-centre distance over the line's typical character step that marks a space


def ocr_words(image: "Image", engine: str = "auto") -> list[Word]:
    """Words of `image` (pixels). Tesseract's words are taken as they are, with their boxes. For
    RapidOCR lines: split at spaces and, where the engine gives character boxes, also where two
    characters' centres are more than `SPACE_GAP` typical steps apart; other lines are split
    proportionally along their quadrilateral."""
    if resolve_engine(engine) == "tesseract":
        if image.mode not in ("RGB", "L"):
            image = image.convert("RGB")
        if is_blank(image):
            return []
        from docassay.extractors.parsers import ocr_tesseract
        try:
            found = ocr_tesseract.recognize_words(image)
        except ocr_tesseract.TesseractError as exc:
            raise OcrEngineError(str(exc)) from exc
        return [Word(t.text, BBox(t.x0, t.y0, t.x1, t.y1)) for t in found]
    words: list[Word] = []
    for ln in recognize(image, engine):
        words.extend(_words_from_chars(ln) if ln.chars else words_from_lines([(ln.text, ln.quad)]))
    return words


def ocr_page_words(image: "Image", engine: str, source: str, page: int) -> list[Word]:
    """`ocr_words` for page `page` of document `source`; an engine failure becomes that document's
    ParseError (kind `unreadable`), an unknown engine stays a ConfigError."""
    try:
        return ocr_words(image, engine)
    except OcrEngineError as exc:
        raise ParseError(f"OCR ({resolve_engine(engine)}) could not read page {page}: {exc}",
                         kind="unreadable", source=source, page=page) from exc


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
