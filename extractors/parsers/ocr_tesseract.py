"""OCR of page images with Tesseract (the `tesseract` program, a system package: Debian/Ubuntu
`apt-get install tesseract-ocr`, macOS `brew install tesseract`), called as a subprocess with TSV
output: one row per word with its box and confidence, so the spaces between words are Tesseract's
own and every word has a real box (no proportional splitting of a line).

    available() -> bool                         the program is on PATH (or at $DOCASSAY_OCR_TESSERACT)
    recognize_words(image) -> list[TessWord]    words in Tesseract's reading order, pixels of `image`

The image is sent on stdin as uncompressed PNM (no encoding cost worth measuring), scaled down first
when its longer side exceeds `TesseractSettings.max_side` (boxes are mapped back). Each call is one
process (~50 MB); with `OMP_THREAD_LIMIT=1` (the default `threads`) it uses one core, so two
documents can be read at once on two cores. `bench/ocr_settings.py` measured the settings
(BENCHMARKS.md "Issue 15: OCR engine and settings").
"""
from __future__ import annotations

import io
import os
import shutil
import subprocess
from dataclasses import dataclass
from typing import TYPE_CHECKING

from docassay.extractors.parsers.words import clean_text
from docassay.infra.errors import ConfigError

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = ["TessWord", "TesseractSettings", "TesseractError", "available", "binary", "recognize_words",
           "parse_tsv"]

BINARY_ENV = "DOCASSAY_OCR_TESSERACT"     # path of the program when it is not `tesseract` on PATH
PSM = 6             # page segmentation: one uniform block of text (measured best on receipts)
OEM = 1             # the LSTM recogniser only (the legacy one is not in Debian's eng model anyway)
MAX_SIDE = 3600     # longer side in pixels above which the image is scaled down (A4 at ~300 dpi)
THREADS = 1         # OMP_THREAD_LIMIT: Tesseract's OpenMP threads mostly wait on small images
MIN_CONF = 0.0      # words below this confidence (0..100) are dropped; -1 keeps all
# A "word" with no letter or digit below this confidence is a speck or a rule line read as marks
# ("~—", "_"): dropped. Measured on dev-tune receipts (bench/ocr_settings.py): dropping words by
# confidence alone loses more real text than it removes noise; this filter does not.
JUNK_CONF = 50.0
TIMEOUT_S = 120.0   # one image; a hung process is killed and the document gets an error row
LANG = "eng"


class TesseractError(RuntimeError):
    """The program failed on an image (message includes its stderr)."""


@dataclass(frozen=True)
class TesseractSettings:
    """Environment overrides: `DOCASSAY_OCR_TESSERACT_PSM`, `DOCASSAY_OCR_TESSERACT_MAX_SIDE`,
    `DOCASSAY_OCR_TESSERACT_THREADS`, `DOCASSAY_OCR_TESSERACT_MIN_CONF`, `DOCASSAY_OCR_TESSERACT_JUNK_CONF`,
    `DOCASSAY_OCR_TESSERACT_LANG`."""
    psm: int = PSM
    max_side: int = MAX_SIDE
    threads: int = THREADS
    min_conf: float = MIN_CONF
    junk_conf: float = JUNK_CONF
    lang: str = LANG
    timeout_s: float = TIMEOUT_S

    @classmethod
    def from_env(cls) -> "TesseractSettings":
        env, p = os.environ, "DOCASSAY_OCR_TESSERACT_"
        try:
            s = cls(psm=int(env.get(p + "PSM", cls.psm)), max_side=int(env.get(p + "MAX_SIDE", cls.max_side)),
                    threads=int(env.get(p + "THREADS", cls.threads)),
                    min_conf=float(env.get(p + "MIN_CONF", cls.min_conf)),
                    junk_conf=float(env.get(p + "JUNK_CONF", cls.junk_conf)),
                    lang=env.get(p + "LANG", cls.lang).strip() or cls.lang)
        except ValueError as exc:
            raise ConfigError(f"bad Tesseract OCR setting in the environment: {exc}", setting="ocr") from exc
        if not 0 <= s.psm <= 13 or s.max_side < 64 or s.threads < 1:
            raise ConfigError(f"Tesseract OCR settings out of range: psm {s.psm} (0..13), max side {s.max_side} "
                              f"(>= 64), threads {s.threads} (>= 1)", setting="ocr")
        return s


@dataclass(frozen=True, slots=True)
class TessWord:
    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    conf: float          # 0..100
    line: tuple[int, int, int]   # (block, paragraph, line) numbers: words of one line share it


def binary() -> str | None:
    """Path of the tesseract program, or None when it is not installed."""
    configured = os.environ.get(BINARY_ENV, "").strip()
    if configured:
        return configured if os.path.isfile(configured) and os.access(configured, os.X_OK) else None
    return shutil.which("tesseract")


def available() -> bool:
    return binary() is not None


def parse_tsv(tsv: str, scale: float = 1.0, min_conf: float = MIN_CONF, junk_conf: float = JUNK_CONF) -> list[TessWord]:
    """Words (level-5 rows with text) of Tesseract's TSV output; boxes divided by `scale`. Words under
    `min_conf`, and words without a letter or digit under `junk_conf`, are dropped."""
    out: list[TessWord] = []
    rows = tsv.splitlines()
    if not rows:
        return out
    head = rows[0].split("\t")
    try:
        col = {name: head.index(name) for name in ("level", "block_num", "par_num", "line_num",
                                                   "left", "top", "width", "height", "conf", "text")}
    except ValueError as exc:
        raise TesseractError(f"unexpected Tesseract TSV header {rows[0]!r}") from exc
    for row in rows[1:]:
        f = row.split("\t")
        if len(f) < len(head) or f[col["level"]] != "5":
            continue
        text = clean_text(f[col["text"]]).strip()
        if not text:
            continue
        try:
            conf = float(f[col["conf"]])
            left, top = float(f[col["left"]]), float(f[col["top"]])
            w, h = float(f[col["width"]]), float(f[col["height"]])
            line = (int(f[col["block_num"]]), int(f[col["par_num"]]), int(f[col["line_num"]]))
        except ValueError as exc:
            raise TesseractError(f"unreadable Tesseract TSV row {row!r}") from exc
        if conf < min_conf or (conf < junk_conf and not any(ch.isalnum() for ch in text)):
            continue
        out.append(TessWord(text, left / scale, top / scale, (left + w) / scale, (top + h) / scale, conf, line))
    return out


def recognize_words(image: "Image", settings: TesseractSettings | None = None) -> list[TessWord]:
    """Words of `image` (mode RGB or L) in pixels of `image`; [] when no word has a letter or digit.
    Raises TesseractError."""
    s = settings or TesseractSettings.from_env()
    exe = binary()
    if exe is None:
        raise TesseractError("the tesseract program is not installed (apt-get install tesseract-ocr, or set "
                             f"{BINARY_ENV})")
    scale = 1.0
    longest = max(image.width, image.height)
    if longest > s.max_side:
        scale = s.max_side / longest
        image = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))))
    buf = io.BytesIO()
    image.save(buf, format="PPM")                  # PGM for mode L, PPM for RGB: no compression
    env = {**os.environ, "OMP_THREAD_LIMIT": str(s.threads)}
    cmd = [exe, "stdin", "stdout", "--oem", str(OEM), "--psm", str(s.psm), "-l", s.lang, "--dpi", "300", "tsv"]
    try:
        proc = subprocess.run(cmd, input=buf.getvalue(), capture_output=True, timeout=s.timeout_s, env=env,
                              check=False)
    except subprocess.TimeoutExpired as exc:
        raise TesseractError(f"tesseract did not finish within {s.timeout_s:.0f} s") from exc
    except OSError as exc:
        raise TesseractError(f"tesseract could not be started ({exe}: {exc})") from exc
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise TesseractError(f"tesseract failed (exit {proc.returncode}): {' / '.join(err[-3:]) or 'no message'}")
    words = parse_tsv(proc.stdout.decode("utf-8", "replace"), scale, s.min_conf, s.junk_conf)
    if not any(ch.isalnum() for w in words for ch in w.text):
        return []                      # only marks (a frame read as "|", specks): no text on this image
    return words
