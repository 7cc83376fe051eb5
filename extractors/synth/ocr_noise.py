"""OCR noise for scan-like synthetic documents, on the line representation an OCR engine gives.

`to_noisy_ocr_lines(doc, noise)` is `render.to_ocr_lines(doc, augment=True)` read by an imperfect
OCR engine: words merged (a space lost), lines split in two boxes, characters confused (0/O,
1/l/I, 5/S, 8/B, comma/period), characters dropped, box corners jittered, on the same slight
rotation `to_png(doc, augment=True)` draws. The output is an SROIE-style line file
(`{"lines": [{"text", "quad"}]}`, `"page"` per line on several pages) that the project's
OCR-lines parser reads; the ground truth is unchanged (it is what was printed).

The promise: with `protect_truth=True` (the default) no word that carries a truth value (a field,
a line-item cell, a field label) is altered, dropped or merged with a neighbour, and lines split
only between words, so every truth word is still a whole token of the noisy text. With
`protect_truth=False` everything may be noised (training for robustness; truth not recoverable
everywhere). Noise is a pure function of the document and the noise settings.

    lines = to_noisy_ocr_lines(sd, NOISE_LEVELS["heavy"])
"""
from __future__ import annotations

import io
import random
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from docassay.extractors.synth.canvas import Run, ascent_descent, measure
from docassay.extractors.synth.render import DEFAULT_DPI, _augment_params, _rotate_point
from docassay.extractors.synth.types import SynthDoc

if TYPE_CHECKING:
    from docassay.extractors.document import Document
    from docassay.infra.config import Settings

__all__ = ["OcrNoise", "NOISE_LEVELS", "CONFUSIONS", "to_noisy_ocr_lines", "to_noisy_ocr_document", "to_scan_png",
           "noise_word"]

# What an OCR engine reads a character as, by mistake (both directions where they apply).
CONFUSIONS: dict[str, str] = {"0": "O", "O": "0", "o": "0", "1": "lI", "l": "1I", "I": "1l", "5": "S", "S": "5",
                              "8": "B", "B": "8", ",": ".", ".": ",", "2": "Z", "Z": "2", "6": "b", "e": "c",
                              "rn": "m"}


@dataclass(frozen=True)
class OcrNoise:
    """Rates of each kind of OCR error (per word, per line, per character) and the geometric noise."""
    merge_p: float = 0.04          # per gap between two words of a line: the space is lost
    split_p: float = 0.08          # per line of 3+ words: printed as two boxes
    confuse_p: float = 0.02        # per character
    drop_p: float = 0.006          # per character
    jitter_px: float = 1.5         # box corners moved by up to this much (pixels at 150 dpi, scaled)
    rotate: bool = True            # the rotation of `to_png(augment=True)`
    protect_truth: bool = True     # see the module docstring
    blur_px: float = 0.6           # page image (`to_scan_png`): Gaussian blur radius at 150 dpi
    speckle: float = 0.0005        # page image: share of pixels turned to dark specks

    def key(self) -> str:
        return ",".join(f"{k}={v}" for k, v in asdict(self).items())


NOISE_LEVELS: dict[str, OcrNoise] = {
    "none": OcrNoise(0.0, 0.0, 0.0, 0.0, 0.0, rotate=False, blur_px=0.0, speckle=0.0),
    "light": OcrNoise(0.02, 0.05, 0.008, 0.002, 1.0, blur_px=0.3, speckle=0.0002),
    "medium": OcrNoise(),
    "heavy": OcrNoise(0.08, 0.15, 0.05, 0.015, 3.0, blur_px=1.0, speckle=0.002),
}


def noise_word(word: str, noise: OcrNoise, rng: random.Random) -> str:
    """One word as the OCR engine misreads it (confusions, then dropped characters; never empty)."""
    out: list[str] = []
    i = 0
    while i < len(word):
        two = word[i:i + 2]
        if two in CONFUSIONS and rng.random() < noise.confuse_p:
            out.append(CONFUSIONS[two][0])
            i += 2
            continue
        c = word[i]
        if rng.random() < noise.drop_p and len(word) > 1:
            i += 1
            continue
        if c in CONFUSIONS and rng.random() < noise.confuse_p:
            c = rng.choice(CONFUSIONS[c])
        out.append(c)
        i += 1
    return "".join(out) or word[:1]


def _word_spans(run: Run) -> list[tuple[float, float]]:
    """(x0, x1) of each word of `run`, in points (as `canvas.build_document` places them)."""
    space = measure(" ", run.font, run.size)
    x, out = run.x, []
    for w in run.words:
        ww = measure(w, run.font, run.size)
        out.append((x, x + ww))
        x += ww + space
    return out


def _level(noise: OcrNoise | str) -> OcrNoise:
    if isinstance(noise, OcrNoise):
        return noise
    if noise not in NOISE_LEVELS:
        raise ValueError(f"noise must be an OcrNoise or one of {tuple(NOISE_LEVELS)}, got {noise!r}")
    return NOISE_LEVELS[noise]


def to_scan_png(doc: SynthDoc, noise: OcrNoise | str = "medium", dpi: int = DEFAULT_DPI) -> list[bytes]:
    """Page images of a scan: `to_png(doc, dpi, augment=noise.rotate)` (the rotation the noisy OCR
    lines use, grain), blurred by `blur_px` and speckled; one PNG per page, deterministic."""
    import numpy as np
    from PIL import Image, ImageFilter

    from docassay.extractors.synth.render import to_png

    noise = _level(noise)
    out: list[bytes] = []
    for pno, data in enumerate(to_png(doc, dpi, augment=noise.rotate), start=1):
        img = Image.open(io.BytesIO(data)).convert("L")
        if noise.blur_px:
            img = img.filter(ImageFilter.GaussianBlur(noise.blur_px * dpi / 150.0))
        if noise.speckle:
            arr = np.array(img)
            gen = np.random.default_rng(random.Random(f"{doc.doc_id}/scan/{noise.key()}/{pno}").randrange(2 ** 31))
            arr[gen.random(arr.shape) < noise.speckle] = 40
            img = Image.fromarray(arr)
        buf = io.BytesIO()
        img.save(buf, format="PNG", compress_level=1)
        out.append(buf.getvalue())
    return out


def to_noisy_ocr_lines(doc: SynthDoc, noise: OcrNoise | str = "medium", dpi: int = DEFAULT_DPI,
                       with_tags: bool = False) -> dict[str, list[dict]]:
    """The document's OCR line file with `noise` (an `OcrNoise` or a `NOISE_LEVELS` name) applied.

    `with_tags=True` adds `"tags"` to every line: per whitespace token of its text, the sorted tags
    (see `invoice_layout`: field `f`, label `@f`, item `i<k>`, cell `i<k>.<column>`, header `#<column>`)
    of the printed words the token was read from — the training labels of the noisy words."""
    noise = _level(noise)
    scale = dpi / 72.0
    jitter = noise.jitter_px * dpi / 150.0
    multi = len(doc.layout.pages) > 1
    lines: list[dict] = []
    for pno, pl in enumerate(doc.layout.pages, start=1):
        rng = random.Random(f"{doc.doc_id}/ocr-noise/{noise.key()}/{pno}")
        w_px, h_px = round(pl.width * scale), round(pl.height * scale)
        angle = _augment_params(doc, pno)[0] if noise.rotate else 0.0
        for r in sorted(pl.runs, key=lambda r: (round(r.y, 1), r.x)):
            asc, desc = ascent_descent(r.font, r.size)
            y0, y1 = (r.y - asc) * scale, (r.y - desc) * scale
            spans = _word_spans(r)
            # truth values (and item rows) are protected; labels ("@f", "#col") may be misread
            protected = [noise.protect_truth and any(t[:1] not in "@#" for t in tags) for tags in r.tags]
            texts = [w if protected[i] else noise_word(w, noise, rng) for i, w in enumerate(r.words)]
            # groups of word indices that become one printed token (merged words), then boxes (split lines)
            tokens: list[list[int]] = [[0]]
            for i in range(1, len(texts)):
                if not (protected[i] or protected[i - 1]) and rng.random() < noise.merge_p:
                    tokens[-1].append(i)
                else:
                    tokens.append([i])
            boxes: list[list[list[int]]] = [tokens]
            if len(tokens) >= 3 and rng.random() < noise.split_p:
                cut = rng.randrange(1, len(tokens))
                boxes = [tokens[:cut], tokens[cut:]]
            for box in boxes:
                text = " ".join("".join(texts[i] for i in tok) for tok in box)
                x0, x1 = spans[box[0][0]][0] * scale, spans[box[-1][-1]][1] * scale
                corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
                if jitter:
                    corners = [(x + rng.uniform(-jitter, jitter), y + rng.uniform(-jitter, jitter))
                               for x, y in corners]
                if angle:
                    corners = [_rotate_point(x, y, w_px / 2, h_px / 2, angle) for x, y in corners]
                line: dict[str, object] = {"text": text,
                                           "quad": [int(round(c)) for xy in corners for c in xy]}
                if multi:
                    line["page"] = pno
                if with_tags:
                    line["tags"] = [sorted({t for i in tok for t in r.tags[i]}) for tok in box]
                lines.append(line)
    return {"lines": lines}


def to_noisy_ocr_document(doc: SynthDoc, noise: OcrNoise | str = "medium", dpi: int = DEFAULT_DPI) -> "Document":
    """A one-page document as the project's OCR-lines parser reads its noisy line file (what
    `extractors.instructions.model_data.as_ocr_lines` gives for a clean one): pixel boxes, no font
    sizes, lines rebuilt from word geometry. The truth is `doc.truth`, unchanged. Raises ValueError
    for several pages (a line file holds one page)."""
    import json

    from docassay.extractors.parsers.ocr_lines import OcrLinesParser

    if len(doc.layout.pages) != 1:
        raise ValueError(f"{doc.doc_id}: an OCR line file holds one page, the document has {len(doc.layout.pages)}")
    data = json.dumps(to_noisy_ocr_lines(doc, noise, dpi)).encode()
    return OcrLinesParser().parse(data, f"{doc.doc_id}.ocr.json", _settings())


_SETTINGS: list[Settings] = []


def _settings() -> Settings:
    """The default settings, loaded once per process (the parser reads its limits from them)."""
    from docassay.infra.config import Settings
    if not _SETTINGS:
        _SETTINGS.append(Settings.load())
    return _SETTINGS[0]
