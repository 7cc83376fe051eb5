"""Where a value stands on the page, read from the parsed document the pipeline hands over
(`VerifyContext.document`: pages of words and lines with boxes, y growing downwards), and the
small text readers the checks share. Nothing here imports the extractors: the document is read by
its attributes, and anything that does not look like one yields nothing.

    place(ctx, field)            -> Place | None   the value's page, line, the words left of it
    line_words(page, li)         -> the words of a line that have a box, left to right
    line_cells(page, li, gap)    -> the line's runs of words split at column gaps: (x0, x1, text)
    heading_above(place, ...)    -> (meaning, text) of the nearest block heading above it, same column
    doc_text(document)           -> DocText: lines, compact lines, numbers per line, percentages
                                    (computed once per document object)
    doc_lines(document)          -> [(page number, line index, text)]
    number_readings(token)       -> every number a printed token may mean ("1.234" -> 1234 or 1.234)
    lines_printing_amount(dt, x) -> the lines that print an amount, in any decimal convention
    percents_in(text)            -> printed percentages ("19 %", "7,00%") as numbers
"""
from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass
from typing import Any, Iterable

from docassay.verifiers.checks.cache import IdentityCache
from docassay.verifiers.checks.vocabulary import heading_meaning
from docassay.verifiers.context import VerifyContext
from docassay.verifiers.evidence import FieldEvidence
from docassay.verifiers.tolerance import fold_text

__all__ = ["Place", "place", "line_words", "line_cells", "heading_above", "doc_lines", "doc_text", "DocText", "compact",
           "amount_forms", "lines_printing_amount",
           "percents_in", "number_readings",
           "HEADING_MAX_LINES", "HEADING_MAX_EMS"]

HEADING_MAX_LINES = 10          # a block heading is at most this many lines above its value
HEADING_MAX_EMS = 14.0          # ... and at most this many line heights above it
_CACHE_SIZE = 8


@dataclass(frozen=True)
class Place:
    page: Any                    # the document's page object
    line: int                    # index into page.lines
    x0: float
    x1: float
    left: str                    # the words of the line left of the value
    right: str                   # the words of the line right of the value
    text: str                    # the whole printed line


def _words(page: Any) -> list:
    return getattr(page, "words", None) or []


def _lines(page: Any) -> list:
    return getattr(page, "lines", None) or []


def line_words(page: Any, li: int) -> list:
    """The words of line `li` of `page` that have a box, left to right."""
    words = _words(page)
    ids = [i for i in getattr(_lines(page)[li], "word_ids", ()) if 0 <= i < len(words)]
    return sorted((words[i] for i in ids if getattr(words[i], "bbox", None) is not None), key=lambda w: w.bbox.x0)


def line_cells(page: Any, li: int, gap_ems: float, em: float | None = None) -> list[tuple[float, float, str]]:
    """The cells of line `li` of `page`, (x0, x1, text): runs of its boxed words split where the gap
    between two words exceeds `gap_ems` line heights (`em`; None: each word's own height)."""
    cells: list[list] = []
    for w in line_words(page, li):
        h = em if em is not None else max(w.bbox.y1 - w.bbox.y0, 1.0)
        if cells and w.bbox.x0 - cells[-1][1] <= gap_ems * h:
            cells[-1][1] = max(cells[-1][1], w.bbox.x1)
            cells[-1][2] += " " + w.text
        else:
            cells.append([w.bbox.x0, w.bbox.x1, w.text])
    return [(a, b, t) for a, b, t in cells]


_PLACES = IdentityCache(256)
_ROWS = IdentityCache(_CACHE_SIZE * 4)
_TEXTS = IdentityCache(_CACHE_SIZE)


def place(ctx: VerifyContext, field: str) -> Place | None:
    """The printed line a field's value was read from (its evidence's page and box), or None."""
    ev = (ctx.evidence or {}).get(field)
    if not isinstance(ev, FieldEvidence) or ev.page is None or ev.bbox is None:
        return None
    try:
        key = (ev.page if isinstance(ev.page, int) else -1, tuple(ev.bbox))
        hash(key)
    except TypeError:
        return None
    return _PLACES.get_or_make(ctx.document, key, lambda: _place(ctx.document, ev))


def _row_index(page: Any) -> tuple[list[float], list[int], float]:
    words = _words(page)
    order = sorted((i for i, w in enumerate(words) if getattr(w, "bbox", None) is not None),
                   key=lambda i: words[i].bbox.y0)
    tops = [words[i].bbox.y0 for i in order]
    tallest = max((words[i].bbox.y1 - words[i].bbox.y0 for i in order), default=0.0)
    return tops, order, tallest


def _near_rows(page: Any, y0: float, y1: float) -> list[int]:
    """Indexes of the page's words whose vertical extent may overlap [y0, y1] (by a y-sorted index)."""
    tops, order, tallest = _ROWS.get_or_make(page, "rows", lambda: _row_index(page))
    lo, hi = bisect.bisect_left(tops, y0 - tallest), bisect.bisect_right(tops, y1)
    return order[lo:hi]


def _place(document: Any, ev: FieldEvidence) -> Place | None:
    pages = getattr(document, "pages", None)
    if not pages or not isinstance(ev.page, int) or not 1 <= ev.page <= len(pages):
        return None
    page = pages[ev.page - 1]
    if ev.bbox is None:
        return None
    try:
        x0, y0, x1, y1 = (float(v) for v in ev.bbox)
    except (TypeError, ValueError):
        return None
    words = _words(page)
    inside = []
    for i in _near_rows(page, y0, y1):
        w = words[i]
        b = getattr(w, "bbox", None)
        if b is None:
            continue
        wx = min(b.x1, x1) - max(b.x0, x0)
        wy = min(b.y1, y1) - max(b.y0, y0)
        if wx > 0.5 * max(b.x1 - b.x0, 1e-6) and wy > 0.5 * max(b.y1 - b.y0, 1e-6):
            inside.append(i)
    if not inside:
        return None
    lines = _lines(page)
    counts: dict[int, int] = {}
    for i in inside:
        counts[words[i].line] = counts.get(words[i].line, 0) + 1
    li = max(counts, key=lambda k: (counts[k], -k))
    if not 0 <= li < len(lines):
        return None
    ids = list(getattr(lines[li], "word_ids", ()))
    mine = set(inside)
    first = next((k for k, i in enumerate(ids) if i in mine), 0)
    last = max((k for k, i in enumerate(ids) if i in mine), default=len(ids) - 1)
    left = " ".join(words[i].text for i in ids[:first])
    right = " ".join(words[i].text for i in ids[last + 1:])
    return Place(page, li, x0, x1, left, right, str(getattr(lines[li], "text", "")))


BLOCK_MEANINGS = frozenset({"seller", "buyer", "delivery", "bank", "payment_terms"})


def heading_above(p: Place, *, max_lines: int = HEADING_MAX_LINES, max_ems: float = HEADING_MAX_EMS,
                  meanings: frozenset[str] = BLOCK_MEANINGS) -> tuple[str, str] | None:
    """The nearest line above the value, in its column, that reads as a block heading of one of
    `meanings` (vocabulary.heading_meaning), the value's own line's left words first ("Bill to:
    ACME"). Headings of other meanings ("USt.-Id.-Nr.:", "Nummer:") are passed over."""
    if p.left:
        m = heading_meaning(p.left)
        if m in meanings:
            return m, p.left
    lines = _lines(p.page)
    here = lines[p.line].bbox
    em = max(here.y1 - here.y0, 1e-6)
    seen = 0
    for li in range(p.line - 1, -1, -1):
        ln = lines[li]
        b = ln.bbox
        if here.y0 - b.y1 > max_ems * em:
            break
        # Same column: the line's extent overlaps the value's, or it starts near the value's start.
        words = [w for w in (_words(p.page)[i] for i in ln.word_ids)
                 if min(w.bbox.x1, p.x1 + 2 * em) - max(w.bbox.x0, p.x0 - 2 * em) > 0]
        if not words:
            continue
        seen += 1
        if seen > max_lines:
            break
        text = " ".join(w.text for w in words)
        m = heading_meaning(text)
        if m in meanings:
            return m, text
    return None


@dataclass(frozen=True)
class DocText:
    """A document's printed lines and what the checks look up in them, computed once per document."""
    lines: list[tuple[int, int, str]]           # (page number, line index, text)
    compact: list[str]                          # each line folded, without white space or punctuation
    joined: str                                 # every compact line, in order, joined
    percents: frozenset[float]                  # every percentage printed


_COMPACT = re.compile(r"[\s\W_]+", re.UNICODE)


def compact(v: object) -> str:
    """Folded (case, accents), without white space or punctuation: how printed text is compared."""
    t = str(v)
    if t.isascii():                                     # most lines: no accents to strip
        return _COMPACT.sub("", t).casefold()
    return _COMPACT.sub("", fold_text(t))


def doc_text(document: Any) -> DocText:
    """The document's DocText (cached per document object); empty for no document."""
    pages = getattr(document, "pages", None)
    if not pages:
        return DocText([], [], "", frozenset())
    return _TEXTS.get_or_make(document, "text", lambda: _doc_text(pages))


def _doc_text(pages: Any) -> DocText:
    lines = [(int(getattr(pg, "number", n + 1)), li, str(getattr(ln, "text", "")))
             for n, pg in enumerate(pages) for li, ln in enumerate(_lines(pg))]
    comp = [compact(t) for _, _, t in lines]
    return DocText(lines, comp, "".join(comp), frozenset(percents_in(t for _, _, t in lines)))


def doc_lines(document: Any) -> list[tuple[int, int, str]]:
    """Every printed line of a document as (page number, line index, text); [] for no document."""
    return doc_text(document).lines


_PCT = re.compile(r"(?<![\d.,])(\d{1,2}(?:[.,]\d{1,3})?)\s?%")


def amount_forms(x: float) -> list[str]:
    """The ways an amount's size may be printed: 1234.5 -> 1234.50, 1234,50, 1,234.50, 1.234,50,
    1 234,50, 1'234.50 (and 1234 for a whole amount)."""
    a = abs(x)
    whole, cents = f"{a:.2f}".split(".")
    groups = f"{int(whole):,}"
    forms = {f"{whole}.{cents}", f"{whole},{cents}"}
    if "," in groups:
        forms |= {f"{groups}.{cents}", f"{groups.replace(',', '.')},{cents}", f"{groups.replace(',', ' ')},{cents}",
                  f"{groups.replace(',', chr(39))}.{cents}"}
    if cents == "00":
        forms |= {whole, groups, groups.replace(",", ".")}
    elif cents.endswith("0"):
        forms |= {f"{whole}.{cents[0]}", f"{whole},{cents[0]}"}
    return sorted(forms)


def lines_printing_amount(dt: "DocText", x: float) -> list[int]:
    """Indexes of the lines of `dt` that print the amount `x` (its size, in any convention)."""
    out: set[int] = set()
    for form in amount_forms(x):
        rx = re.compile(r"(?<!\d)(?<!\d[.,])" + re.escape(form) + r"(?![\d]|[.,]\d)")
        out |= {i for i, (_, _, t) in enumerate(dt.lines) if form in t and rx.search(t)}
    return sorted(out)


def number_readings(token: str) -> set[float]:
    """The numbers a printed token may mean: "1.234,50" -> {1234.5}; "1.234" -> {1234.0, 1.234};
    "7,90-" and "-7,90" -> {-7.9}. Empty when it is no number."""
    t = token.strip().replace("−", "-").replace("'", "").replace(" ", "").replace("\u00a0", "")
    neg = t.startswith("-") or t.endswith("-")
    t = t.strip("-")
    if not t or not t[0].isdigit() or not t[-1].isdigit():
        return set()
    out: set[float] = set()
    seps = [c for c in t if c in ".,"]
    if not seps:
        cands = [t]
    else:
        last = max(t.rfind("."), t.rfind(","))
        dec, intpart = t[last + 1:], t[:last]
        cands = []
        if 1 <= len(dec) <= 4 and (len(set(seps)) == 1 and seps.count(seps[-1]) == 1 or t[last] not in intpart):
            cands.append(intpart.replace(".", "").replace(",", "") + "." + dec)
        if all(len(g) == 3 for g in re.split(r"[.,]", t)[1:]) and len(set(seps)) == 1:
            cands.append(t.replace(".", "").replace(",", ""))
    for c in cands:
        try:
            v = float(c)
        except ValueError:
            continue
        if math.isfinite(v):
            out.add(-v if neg else v)
    return out


def percents_in(texts: Iterable[str]) -> set[float]:
    """Every percentage printed in `texts` (0 < p < 100)."""
    out: set[float] = set()
    for t in texts:
        for m in _PCT.finditer(t):
            try:
                v = float(m.group(1).replace(",", "."))
            except ValueError:
                continue
            if 0.0 < v < 100.0:
                out.add(v)
    return out
