"""Document fingerprints: one vector per document that says which *format* (layout) it has.

A format is a sender's layout: the label words it prints and where it prints them. Two documents of
one format differ in their values (numbers, dates, amounts, ids, buyer names, how many line items),
so the fingerprint keeps the words that look like labels, masks the value-like tokens down to their
shape, and weighs the head of the first page and the foot of the last page far above the body,
where line items (whose names are values too) live.

`fingerprint(doc, dim)` returns a float32 unit vector; cosine similarity (a dot product) between two
fingerprints is the format similarity. The vector is a concatenation of feature *groups*; each group
is L2-normalised on its own and scaled by its weight (`FingerprintConfig.weights`), so the cosine of
two fingerprints is the weighted mean of the per-group cosines (weights squared, over the groups both
documents have). Hashed groups use signed feature hashing (crc32 -> bucket and sign), so unrelated
documents score near 0 on them; layout histograms are mean-centred, so they act like a correlation.

Feature groups
--------------
Tokens are read from the first `max_pages` pages (2) and from the last `tail_lines` lines of the
last page. Each token is either a **label token** (mostly letters: casefolded, edge punctuation
stripped) or a **value token** (contains a digit or an `@`, or is under 60 % letters), reduced to
its *shape* (digits -> 9, letters -> a, runs collapsed: "05.03.2018" -> "9.9.9", "DE123456789" ->
"a9"), so numbers, dates, amounts and ids never enter the vector as themselves.

Every token carries a *zone weight*: `head` (the first `head_lines` lines of page 1, or its top
`head_fraction`) 1.0, `tail` (the last `tail_lines` lines of the document) `tail_weight`, `body`
(the rest of pages 1-2, up to `max_body_lines` lines a page) `body_weight`. Label tokens also carry
a *key weight*: before a colon in their line, or directly followed by a value, they read as a key
(1.0); after a colon they read as a value such as a name (`after_colon_weight`); else
`plain_weight`. A feature seen n times weighs n ** `tf_power` (sublinear: twenty line items look
like five).

1. ``banner``  - label tokens of the first `banner_lines` lines of page 1, of large print
                 (`banner_height` x the median size) in its top half, and (weighed
                 `banner_tail_weight`) of the last `banner_tail_lines` lines of the document: who
                 sends it, whether the sender's name heads the page or sits in the footer. Two
                 senders printing one generic template (one POS system, one accounting package)
                 share every other group; the banner keeps them apart.
2. ``places``  - label token x where it sits: its line rank within the head (buckets of
                 `head_rank_bucket` lines) or the tail (counted from the end), and its horizontal
                 band (`x_bands` bands of the text's width, soft-assigned to the two nearest). Rank,
                 not y, so a longer address block or more line items shift nothing.
3. ``pairs``   - neighbouring tokens in a line: label bigrams, label -> value shape ("rechnungsdatum
                 9.9.9") and value shape -> label. How labels and values are put together.
4. ``shapes``  - value shapes x zone x horizontal band. Where a format prints dates and amounts.
5. ``layout``  - first-page geometry, no text: character density on a coarse grid (x over the
                 text's width, y over the page height), line-start x histogram, relative size
                 histogram (font size, or word height where the parser has no font size, over the
                 page median: titles, small print), segments per line (columns: gaps wider than 1.5
                 median sizes split a line), and the page aspect ratio (soft one-hot, log bins).

Hashing noise: two unrelated documents collide in a few buckets, so their similarity scatters
around its mean by a few hundredths at dim 512 (less at 1024); the calibrated threshold absorbs it.
Cost: linear in the words read (about 20 us a word), 1-3 ms for a typical page (bench/format_matching.py).
Deterministic: crc32 hashing, fixed iteration order; no Python `hash()`, no randomness.
"""
from __future__ import annotations

import math
import re
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterator

import numpy as np

from docassay.extractors.document import Document, Page
from docassay.extractors.errors import ParseError

__all__ = ["FingerprintConfig", "DEFAULT_CONFIG", "fingerprint", "fingerprint_groups", "similarity",
           "token_kind", "GROUPS"]

GROUPS = ("banner", "places", "pairs", "shapes", "layout")
_HASHED = GROUPS[:-1]
_EDGE_PUNCT = " \t.,:;()[]{}<>\"'`*#/\\|!?%&+=_~^-–—•·«»„“”‘’"
_RUNS = re.compile(r"(.)\1+")


@dataclass(frozen=True)
class FingerprintConfig:
    """Named knobs of the fingerprint. Changing any of them changes every vector: re-index then.

    Defaults were chosen on bench/format_matching.py (real invoices and receipts, synthetic formats;
    nearest-neighbour errors averaged over hashing salts).
    """
    head_lines: int = 16               # lines of page 1 that form the head ...
    head_fraction: float = 0.30        # ... or everything in its top 30 %
    tail_lines: int = 10               # last lines of the last page that form the tail
    max_pages: int = 2                 # pages read for the body (the tail is read regardless)
    max_body_lines: int = 80           # body lines read per page
    body_weight: float = 0.25
    tail_weight: float = 0.8
    after_colon_weight: float = 0.35   # label-like token after a ':' (a name, a place: a value)
    plain_weight: float = 0.6          # label-like token neither before a ':' nor before a value
    tf_power: float = 0.75             # a feature seen n times weighs n ** tf_power
    x_bands: int = 3
    y_bands: int = 8                   # page 1 only
    head_rank_bucket: int = 4          # head lines per rank bucket
    tail_rank_bucket: int = 3
    banner_lines: int = 3              # first lines of page 1 that name the sender ...
    banner_height: float = 1.4         # ... and print this much larger than the median
    banner_tail_lines: int = 3         # ... and the last lines of the document (the footer),
    banner_tail_weight: float = 0.4    # weighed lower: receipts end in generic thank-you lines
    grid_cols: int = 6
    grid_rows: int = 8
    hash_salt: str = ""                # prefixed to every hashed key (bench: measure hashing noise)
    weights: dict[str, float] = field(default_factory=lambda: {
        "banner": 1.3, "places": 1.2, "pairs": 0.8, "shapes": 0.3, "layout": 0.5})
    # Share of the hashed part of the vector given to each hashed group (layout has a fixed size).
    shares: dict[str, float] = field(default_factory=lambda: {
        "banner": 0.2, "places": 0.35, "pairs": 0.3, "shapes": 0.15})


DEFAULT_CONFIG = FingerprintConfig()

# Layout sub-histograms: fixed sizes and sub-weights.
_LSTART_BINS = 12
_SIZE_BINS = 8
_SEGMENT_BINS = 4
_ASPECT_BINS = 8
_ASPECT_RANGE = (math.log(0.2), math.log(2.0))     # tall receipts .. landscape
_SIZE_RANGE = 1.5                                  # log2 size ratio, -1.5 .. +1.5
_COLUMN_GAP = 1.5                                  # gap in median word heights that splits a line
_LAYOUT_WEIGHTS = {"grid": 1.0, "starts": 0.8, "sizes": 0.6, "segments": 0.5, "aspect": 0.6}


@lru_cache(maxsize=1 << 16)
def token_kind(text: str) -> tuple[str, str] | None:
    """Classify a word: ("label", casefolded text) or ("value", shape); None for punctuation only.

    A value contains a digit or an '@', or is less than 60 % letters, or has fewer than 2 letters;
    its shape maps digits to 9 and letters to a, collapsing runs ("05.03.2018" -> "9.9.9").
    """
    t = text.strip(_EDGE_PUNCT)
    if not t:
        return None
    letters = sum(ch.isalpha() for ch in t)
    if letters < 2 or letters < 0.6 * len(t) or "@" in t or any(ch.isdigit() for ch in t):
        shape = "".join("9" if ch.isdigit() else "a" if ch.isalpha() else ch for ch in t)
        return "value", _RUNS.sub(r"\1", shape)[:8]
    return "label", t.casefold()


@lru_cache(maxsize=1 << 17)
def _bucket(key: str, size: int) -> tuple[int, float]:
    h = zlib.crc32(key.encode("utf-8"))
    return h % size, (1.0 if (h >> 31) & 1 else -1.0)


class _Hashed:
    """Accumulates (key, weight) features of one group into a signed hashed vector.

    Weights of a repeated feature add up, then are damped by `power` (sublinear term frequency):
    ten line items must not outweigh one header label, and twenty items should look like five.
    """

    def __init__(self, size: int, power: float, salt: str = "") -> None:
        self.size = size
        self.power = power
        self.salt = salt
        self.acc: dict[str, float] = {}

    def add(self, key: str, weight: float) -> None:
        if weight > 0.0:
            self.acc[key] = self.acc.get(key, 0.0) + weight

    def vector(self) -> np.ndarray:
        if not self.acc:
            return np.zeros(self.size)
        idx = np.empty(len(self.acc), dtype=np.int64)
        sign = np.empty(len(self.acc))
        for i, key in enumerate(self.acc):
            idx[i], sign[i] = _bucket(self.salt + key, self.size)
        val = sign * np.fromiter(self.acc.values(), float, len(self.acc)) ** self.power
        return np.bincount(idx, weights=val, minlength=self.size)


def _soft(pos: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Linear soft assignment of positions in [0, 1] to the two nearest of `n` bin centres:
    (low bin, its weight, high bin, its weight); out-of-range positions go wholly to the edge bin."""
    x = np.clip(pos, 0.0, 1.0) * n - 0.5
    lo = np.floor(x)
    frac = x - lo
    lo_i = lo.astype(np.int64)
    hi_i = lo_i + 1
    w_lo, w_hi = 1.0 - frac, frac
    w_lo = np.where(lo_i < 0, 0.0, w_lo)
    w_hi = np.where(lo_i < 0, 1.0, np.where(hi_i >= n, 0.0, w_hi))
    w_lo = np.where(hi_i >= n, 1.0, w_lo)
    return np.clip(lo_i, 0, n - 1), w_lo, np.clip(hi_i, 0, n - 1), w_hi


def _soft_hist(pos: np.ndarray, n: int, weights: np.ndarray | None = None) -> np.ndarray:
    lo, w_lo, hi, w_hi = _soft(pos, n)
    w = np.ones(len(pos)) if weights is None else weights
    return np.bincount(lo, w * w_lo, n) + np.bincount(hi, w * w_hi, n)


@dataclass(slots=True)
class _Geom:
    """Word geometry of one page as arrays (read once, used by every group)."""
    x0: float                # left edge of the text
    width: float             # width of the text
    height: float            # page height (text bottom when the page has none)
    cx: np.ndarray           # word centres, x, relative to the text's width (0..1)
    cy: np.ndarray           # word centres, y, relative to the page height
    size: np.ndarray         # font size, else box height
    med_size: float


def _geom(page: Page) -> _Geom:
    n = len(page.words)
    box = np.fromiter((c for w in page.words for c in (w.bbox.x0, w.bbox.y0, w.bbox.x1, w.bbox.y1)),
                      float, 4 * n).reshape(n, 4)
    x0, x1 = float(box[:, 0].min()), float(box[:, 2].max())
    width = max(x1 - x0, 1e-6)
    height = page.height if page.height > 0 else max(float(box[:, 3].max()), 1e-6)
    size = np.fromiter((w.font_size or (w.bbox.y1 - w.bbox.y0) for w in page.words), float, n)
    pos = size[size > 0]
    return _Geom(x0, width, height, ((box[:, 0] + box[:, 2]) / 2 - x0) / width,
                 (box[:, 1] + box[:, 3]) / 2 / height, size, float(np.median(pos)) if len(pos) else 0.0)


@dataclass(slots=True)
class _Tok:
    kind: str            # label | value
    key: str             # casefolded label or value shape
    xpos: float          # word centre relative to the text's width (0..1)
    ypos: float | None   # word centre relative to the page height, page 1 only
    ranks: list[tuple[str, float]]   # soft line-rank codes of its line: head (h*) and tail (t*)
    zw: float            # zone weight
    kw: float            # key weight (labels)


def _segments(page: Page, word_ids: tuple[int, ...], gap: float) -> list[list[int]]:
    """Split a line's words where the gap between two is wider than `gap` (columns)."""
    out: list[list[int]] = []
    prev_x1 = None
    for wi in word_ids:
        b = page.words[wi].bbox
        if prev_x1 is None or b.x0 - prev_x1 > gap:
            out.append([])
        out[-1].append(wi)
        prev_x1 = b.x1
    return out


def _iter_segments(doc: Document, cfg: FingerprintConfig, geoms: dict[int, _Geom]) -> Iterator[list[_Tok]]:
    """Tokens segment by segment (a line split at wide gaps), with position and weights.

    Zones overlap on short documents: a line may be in the head (first `head_lines` lines of page 1,
    or its top `head_fraction`) and in the tail (last `tail_lines` lines of the last page) at once;
    it then carries both positions. Other lines of the first `max_pages` pages are body.
    """
    last = len(doc.pages) - 1
    for p_i, page in enumerate(doc.pages):
        if (p_i >= cfg.max_pages and p_i != last) or not page.words:
            continue
        g = geoms.setdefault(p_i, _geom(page))
        xs, ys = g.cx.tolist(), g.cy.tolist()
        gap = _COLUMN_GAP * g.med_size
        n_lines = len(page.lines)
        for l_i, line in enumerate(page.lines):
            head = l_i if p_i == 0 and (l_i < cfg.head_lines or line.bbox.y1 / g.height <= cfg.head_fraction) else None
            tail = n_lines - 1 - l_i if p_i == last and l_i >= n_lines - cfg.tail_lines else None
            if head is not None:
                zw = 1.0
            elif tail is not None:
                zw = cfg.tail_weight
            elif p_i < cfg.max_pages and l_i < cfg.head_lines + cfg.max_body_lines:
                zw = cfg.body_weight
            else:
                continue
            ranks = []
            if head is not None:
                ranks += [(f"h{b}", f) for b, f in _soft_rank(head, cfg.head_rank_bucket)]
            if tail is not None:
                ranks += [(f"t{b}", f) for b, f in _soft_rank(tail, cfg.tail_rank_bucket)]
            for seg in _segments(page, line.word_ids, gap):
                raw: list[tuple[str, str, int, bool]] = []      # kind, key, word, after a colon
                colon = False
                for wi in seg:
                    text = page.words[wi].text
                    tk = token_kind(text)
                    if tk is not None:
                        raw.append((tk[0], tk[1], wi, colon))
                    colon = colon or ":" in text
                if not raw:
                    continue
                toks = []
                for j, (kind, key, wi, after_colon) in enumerate(raw):
                    kw = 1.0
                    if kind == "label" and after_colon:
                        kw = cfg.after_colon_weight
                    elif kind == "label":
                        before_colon = any(r[3] for r in raw[j + 1:])
                        before_value = j + 1 < len(raw) and raw[j + 1][0] == "value"
                        kw = 1.0 if before_colon or before_value else cfg.plain_weight
                    toks.append(_Tok(kind, key, xs[wi], ys[wi] if p_i == 0 else None, ranks, zw, kw))
                yield toks


def _soft1(pos: float, n: int) -> list[tuple[int, float]]:
    """Soft assignment of one position in [0, 1] to the two nearest of `n` bin centres."""
    x = min(max(pos, 0.0), 1.0) * n - 0.5
    lo = math.floor(x)
    frac = x - lo
    if lo < 0:
        return [(0, 1.0)]
    if lo >= n - 1:
        return [(n - 1, 1.0)]
    return [(lo, 1.0 - frac), (lo + 1, frac)]


def _soft_rank(rank: float, bucket: int) -> list[tuple[int, float]]:
    """Soft assignment of a line rank to rank buckets of `bucket` lines (unbounded)."""
    x = rank / bucket
    lo = math.floor(x)
    frac = x - lo
    return [(lo, 1.0 - frac), (lo + 1, frac)] if frac > 0 else [(lo, 1.0)]


def _positions(t: _Tok, cfg: FingerprintConfig) -> list[tuple[str, float]]:
    """Position codes of a token with their soft weights: x band, y band (page 1), head rank,
    tail rank."""
    out = [(f"x{b}", f) for b, f in _soft1(t.xpos, cfg.x_bands)]
    if t.ypos is not None:
        out += [(f"y{b}", f) for b, f in _soft1(t.ypos, cfg.y_bands)]
    return out + t.ranks


def _banner_tokens(doc: Document, first: int, g: _Geom, cfg: FingerprintConfig) -> list[tuple[str, float]]:
    """Label tokens naming the sender: the first `banner_lines` lines and large print in the top
    half of the first page, and the last `banner_tail_lines` lines of the document (the footer
    where invoices print the sender's legal details)."""
    out = []
    page = doc.pages[first]
    big = cfg.banner_height * g.med_size
    sizes = g.size.tolist()
    for l_i, line in enumerate(page.lines):
        top = l_i < cfg.banner_lines
        if not top and line.bbox.y0 > g.height / 2:
            break
        for wi in line.word_ids:
            if top or (big > 0 and sizes[wi] >= big):
                tk = token_kind(page.words[wi].text)
                if tk is not None and tk[0] == "label":
                    out.append((tk[1], 1.0))
    last = doc.pages[-1]
    for line in last.lines[max(0, len(last.lines) - cfg.banner_tail_lines):] if cfg.banner_tail_lines else []:
        for wi in line.word_ids:
            tk = token_kind(last.words[wi].text)
            if tk is not None and tk[0] == "label":
                out.append((tk[1], cfg.banner_tail_weight))
    return out


def _layout(page: Page, g: _Geom, cfg: FingerprintConfig) -> np.ndarray:
    """First-page geometry: grid density, line starts, relative sizes, segments per line, aspect."""
    n_chars = np.fromiter((max(len(w.text), 1) for w in page.words), float, len(page.words))
    gx = np.clip((g.cx * cfg.grid_cols).astype(np.int64), 0, cfg.grid_cols - 1)
    gy = np.clip((g.cy * cfg.grid_rows).astype(np.int64), 0, cfg.grid_rows - 1)
    grid = np.sqrt(np.bincount(gy * cfg.grid_cols + gx, n_chars, cfg.grid_rows * cfg.grid_cols))
    ok = g.size > 0
    sizes = np.zeros(_SIZE_BINS)
    if g.med_size > 0 and ok.any():
        ratio = np.log2(g.size[ok] / g.med_size)
        sizes = _soft_hist((ratio + _SIZE_RANGE) / (2 * _SIZE_RANGE), _SIZE_BINS, n_chars[ok])
    line_x0 = np.fromiter((ln.bbox.x0 for ln in page.lines), float, len(page.lines))
    starts = _soft_hist((line_x0 - g.x0) / g.width, _LSTART_BINS)
    gap = _COLUMN_GAP * g.med_size
    segments = np.zeros(_SEGMENT_BINS)
    for ln in page.lines:
        ids = ln.word_ids
        segs = 1 + sum(1 for a, b in zip(ids, ids[1:])
                       if page.words[b].bbox.x0 - page.words[a].bbox.x1 > gap)
        segments[min(segs, _SEGMENT_BINS) - 1] += 1
    aspect = np.zeros(_ASPECT_BINS)
    if page.width > 0 and page.height > 0:
        a = (math.log(page.width / page.height) - _ASPECT_RANGE[0]) / (_ASPECT_RANGE[1] - _ASPECT_RANGE[0])
        aspect = _soft_hist(np.array([a]), _ASPECT_BINS)
    parts = {"grid": grid, "starts": starts, "sizes": sizes, "segments": segments}
    out = [_LAYOUT_WEIGHTS[k] * _unit(v - v.mean()) for k, v in parts.items()]
    out.append(_LAYOUT_WEIGHTS["aspect"] * _unit(aspect))   # not centred: one shape scores high
    return np.concatenate(out)


def _layout_size(cfg: FingerprintConfig) -> int:
    return cfg.grid_rows * cfg.grid_cols + _LSTART_BINS + _SIZE_BINS + _SEGMENT_BINS + _ASPECT_BINS


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


def _sizes(dim: int, cfg: FingerprintConfig) -> dict[str, int]:
    layout = _layout_size(cfg)
    hashed = dim - layout
    if hashed < 64:
        raise ValueError(f"fingerprint dim {dim} is too small: layout takes {layout}, hashed groups need 64")
    total = sum(cfg.shares[g] for g in _HASHED)
    sizes = {g: int(hashed * cfg.shares[g] / total) for g in _HASHED}
    sizes["places"] += hashed - sum(sizes.values())
    sizes["layout"] = layout
    return sizes


def fingerprint(doc: Document, dim: int = 512, config: FingerprintConfig = DEFAULT_CONFIG) -> np.ndarray:
    """The document's format fingerprint: float32, shape (dim,), unit L2 norm, deterministic.

    Raises `ParseError(kind="no_text")` for a document without words: there is nothing to tell its
    format by, and page geometry alone would match every blank document. Raises `ValueError` for a
    `dim` too small to hold the groups (under 64 + the layout group's size).
    """
    groups = fingerprint_groups(doc, dim, config)
    vec = np.concatenate([config.weights[g] * groups[g] for g in GROUPS])
    return _unit(vec).astype(np.float32)


def fingerprint_groups(doc: Document, dim: int = 512,
                       config: FingerprintConfig = DEFAULT_CONFIG) -> dict[str, np.ndarray]:
    """The feature groups of `fingerprint`, each a unit vector (zeros when empty), unweighted, in
    the order they are concatenated. For diagnostics: which group made two documents alike."""
    cfg = config
    if not doc.pages or doc.n_words == 0:
        raise ParseError("document has no words to fingerprint", kind="no_text", source=doc.source)
    sizes = _sizes(dim, cfg)
    h = {g: _Hashed(sizes[g], cfg.tf_power, cfg.hash_salt) for g in _HASHED}
    places, pairs, shapes = h["places"], h["pairs"], h["shapes"]
    geoms: dict[int, _Geom] = {}
    for toks in _iter_segments(doc, cfg, geoms):
        prev: _Tok | None = None
        for t in toks:
            target = places if t.kind == "label" else shapes
            w = t.zw * t.kw
            for code, f in _positions(t, cfg):
                target.add(f"{code}|{t.key}", w * f)
            if prev is not None and (prev.kind == "label" or t.kind == "label"):
                pairs.add(f"{prev.kind[0]}{prev.key}|{t.kind[0]}{t.key}", t.zw)
            prev = t
    first = next(i for i, p in enumerate(doc.pages) if p.words)
    g0 = geoms.get(first) or _geom(doc.pages[first])
    for key, weight in _banner_tokens(doc, first, g0, cfg):
        h["banner"].add("b|" + key, weight)
    out = {g: _unit(h[g].vector()) for g in _HASHED}
    out["layout"] = _unit(_layout(doc.pages[first], g0, cfg))
    return {g: out[g] for g in GROUPS}


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two fingerprints (unit vectors, so a dot product), in [-1, 1]."""
    return float(np.dot(np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)))
