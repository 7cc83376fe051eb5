"""Segments, label matches and typed candidate spans of a `Document`, computed once per document.

Vocabulary:
* a **segment** is a run of words on one line with no wide gap between them (a wide gap, more than
  1.5 times the line's text height, separates columns: "Invoice No:      471102" is two segments);
* a **span** is a typed candidate value: part of a segment that reads as a date, an amount, a number,
  an identifier, a currency, or (for names and addresses) text. A span can cover part of a word
  ("RM9.00"): its box is then interpolated inside the word's box;
* a **label match** is where a label phrase (folded, token by token) is printed.

`DocIndex` is what the executor replays instructions on and what the generators score.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from statistics import median

from docassay.extractors import normalize as norm
from docassay.extractors.document import BBox, Document, Line, Page, Word
from docassay.extractors.labels import fold_label

__all__ = ["Segment", "Span", "LabelMatch", "DocIndex", "VALUE_TYPES"]

VALUE_TYPES = ("date", "amount", "number", "integer", "identifier", "currency", "text", "percent")

_IDENT_RE = re.compile(r"(?<![\w/.-])[A-Za-z0-9][A-Za-z0-9/._#-]*\d[A-Za-z0-9/._-]*(?<![._-])|(?<![\w/.-])[A-Z]{1,4}\d[A-Z0-9-]*")
_DECIMAL_NUMBER = re.compile(r"^-?\d{1,3}(?:[.,' ]\d{3})*[.,]\d{1,2}$")
_PERCENT_RE = re.compile(r"(?<![\w.,])\d{1,3}(?:[.,]\d{1,2})?\s?%")
_CURRENCY_RE = re.compile(r"(?<![A-Za-z])(?:[A-Z]{3})(?![A-Za-z])|[$€£¥₹₩₽₺₪₫฿₱₦₴]|(?<![A-Za-z])(?:RM|Rs\.?|US\$|A\$|C\$|HK\$|S\$|NZ\$|R\$|S?Fr\.|zł|Kč|kr\.?)(?![A-Za-z])")


@dataclass(frozen=True, slots=True)
class Segment:
    page: int              # 1-based page number
    line: int              # index into Page.lines
    index: int             # position within the line (0 = leftmost)
    start: int             # first word id (into Page.words)
    end: int               # one past the last word id
    text: str
    bbox: BBox
    word_offsets: tuple[tuple[int, int], ...]  # (start, end) of each word in `text`


@dataclass(frozen=True, slots=True)
class Span:
    type: str              # one of VALUE_TYPES
    text: str              # as printed
    value: object          # best normalised reading (ISO date str, float, str)
    page: int
    line: int
    segment: int           # Segment.index within the line
    seg_start: int         # char offsets within the segment text
    seg_end: int
    bbox: BBox

    @property
    def key(self) -> tuple[int, int, int, int, int]:
        return (self.page, self.line, self.segment, self.seg_start, self.seg_end)


@dataclass(frozen=True, slots=True)
class LabelMatch:
    label: str             # folded label that matched
    page: int
    line: int
    segment: int
    seg_start: int         # char offsets of the label inside the segment text
    seg_end: int
    bbox: BBox
    order: int             # index among all matches of this label in reading order
    whole: bool = False    # the label is all the words of its segment (nothing but values after it)


@dataclass
class PageIndex:
    page: Page
    segments_by_line: list[list[Segment]]
    em: float              # typical text height on the page

    @property
    def segments(self) -> list[Segment]:
        return [s for line in self.segments_by_line for s in line]


@dataclass
class DocIndex:
    doc: Document
    pages: list[PageIndex] = field(init=False)
    _spans: dict[str, list[Span]] = field(default_factory=dict, init=False)
    _labels: dict[tuple[str, int | None], list[LabelMatch]] = field(default_factory=dict, init=False)
    memo: dict[tuple, object] = field(default_factory=dict, init=False, repr=False, compare=False)
    """What callers derive from this document alone, kept for the document's other uses (the
    proposals of one value type serve every field of that type: extractors/instructions/proposals.py)."""

    def __post_init__(self) -> None:
        self.pages = [_index_page(p) for p in self.doc.pages]

    # -- geometry helpers -------------------------------------------------------------------------
    def page(self, number: int) -> PageIndex:
        return self.pages[number - 1]

    def segment(self, page: int, line: int, index: int) -> Segment:
        return self.pages[page - 1].segments_by_line[line][index]

    def sub_bbox(self, seg: Segment, start: int, end: int) -> BBox:
        """Box of characters [start, end) of a segment's text, interpolated inside word boxes."""
        words = self.doc.pages[seg.page - 1].words
        boxes: list[BBox] = []
        for wid, (ws, we) in zip(range(seg.start, seg.end), seg.word_offsets):
            if we <= start or ws >= end:
                continue
            b = words[wid].bbox
            n = max(we - ws, 1)
            a = max(start, ws) - ws
            z = min(end, we) - ws
            boxes.append(BBox(b.x0 + b.width * a / n, b.y0, b.x0 + b.width * z / n, b.y1))
        return BBox.enclosing(boxes) if boxes else seg.bbox

    # -- candidate spans --------------------------------------------------------------------------
    def spans(self, vtype: str) -> list[Span]:
        """All candidate spans of one value type, in reading order."""
        if vtype not in self._spans:
            self._spans[vtype] = [s for pi in self.pages for seg in pi.segments for s in _find(self, seg, vtype)]
        return self._spans[vtype]

    @cached_property
    def all_spans(self) -> list[Span]:
        out: list[Span] = []
        for t in ("date", "amount", "identifier", "currency", "text"):
            out.extend(self.spans(t))
        return out

    # -- labels -----------------------------------------------------------------------------------
    def find_label(self, label: str, page: int | None = None) -> list[LabelMatch]:
        """Where the (folded) label phrase is printed, as whole tokens, in reading order."""
        key = (fold_label(label), page)
        if key in self._labels:
            return self._labels[key]
        target = key[0].split()
        out: list[LabelMatch] = []
        want_page = _abs_page(page, len(self.pages)) if page is not None else None
        n = len(target)
        for seg, i in (self._token_index.get(target[0], []) if target else []):
            if want_page is not None and seg.page != want_page:
                continue
            toks = self._tokens[(seg.page, seg.line, seg.index)]
            if i + n > len(toks) or any(toks[i + k][0] != target[k] for k in range(1, n)):
                continue
            s0, e0 = toks[i][1], toks[i + n - 1][2]
            # Extend over trailing punctuation such as ':' or '.' that belongs to the label.
            while e0 < len(seg.text) and seg.text[e0] in ":.#°º/-)":
                e0 += 1
            whole = i == 0 and not any(_has_letters(t[0]) for t in toks[i + n:])
            out.append(LabelMatch(key[0], seg.page, seg.line, seg.index, s0, e0,
                                  self.sub_bbox(seg, s0, e0), len(out), whole))
        self._labels[key] = out
        return out

    def token_table(self) -> dict[tuple[int, int, int], list[tuple[str, int, int]]]:
        """(page, line, segment) -> folded tokens with their offsets in the segment text."""
        return self._tokens

    @cached_property
    def _tokens(self) -> dict[tuple[int, int, int], list[tuple[str, int, int]]]:
        return {(seg.page, seg.line, seg.index): _seg_tokens(seg) for pi in self.pages for seg in pi.segments}

    @cached_property
    def _token_index(self) -> dict[str, list[tuple[Segment, int]]]:
        """Folded token -> (segment, token position), in reading order."""
        idx: dict[str, list[tuple[Segment, int]]] = {}
        for pi in self.pages:
            for seg in pi.segments:
                for i, (tok, _, _) in enumerate(self._tokens[(seg.page, seg.line, seg.index)]):
                    idx.setdefault(tok, []).append((seg, i))
        return idx


def _abs_page(page: int, n_pages: int) -> int:
    return page if page > 0 else n_pages + 1 + page


def _index_page(page: Page) -> PageIndex:
    heights = [w.bbox.height for w in page.words if w.bbox.height > 0]
    em = median(heights) if heights else 10.0
    by_line: list[list[Segment]] = []
    for li, line in enumerate(page.lines):
        by_line.append(_segments(page, li, line, em))
    return PageIndex(page, by_line, em)


MAX_WORD_HEIGHT_RATIO = 1.6   # words this much taller than their neighbour are printed apart (a stamp, a logo)


MIN_SIZED_CHARS = 2           # a word this short ("*", ":") has no reliable height of its own


def _size_jump(a: Word, b: Word) -> bool:
    """Two words side by side in very different text heights: "POSTED" stamped beside a shop's name.
    (Overlapping boxes and one-character words are left to the gap test.)"""
    if min(sum(ch.isalnum() for ch in w.text) for w in (a, b)) < MIN_SIZED_CHARS:
        return False
    lo, hi = sorted((a.bbox.height, b.bbox.height))
    return lo > 0 and hi > MAX_WORD_HEIGHT_RATIO * lo


def _segments(page: Page, li: int, line: Line, em: float) -> list[Segment]:
    ids = list(line.word_ids)
    if not ids:
        return []
    groups: list[list[int]] = [[ids[0]]]
    for prev, cur in zip(ids, ids[1:]):
        pw, cw = page.words[prev], page.words[cur]
        h = max(min(pw.bbox.height, cw.bbox.height), 0.5 * em)
        gap = cw.bbox.x0 - pw.bbox.x1
        if gap > 1.5 * h or (gap >= 0 and _size_jump(pw, cw)):
            groups.append([cur])
        else:
            groups[-1].append(cur)
    out: list[Segment] = []
    for gi, g in enumerate(groups):
        offs: list[tuple[int, int]] = []
        pos = 0
        parts: list[str] = []
        for wid in g:
            t = page.words[wid].text
            if parts:
                pos += 1
            offs.append((pos, pos + len(t)))
            parts.append(t)
            pos += len(t)
        out.append(Segment(page.number, li, gi, g[0], g[-1] + 1, " ".join(parts),
                           BBox.enclosing(page.words[w].bbox for w in g), tuple(offs)))
    return out


_TOKEN_SPLIT = re.compile(r"[\w#%]+", re.UNICODE)


_ABBREV = re.compile(r"(?<![\w.])(?:[^\W\d_]\.){2,}(?:[^\W\d_](?![\w]))?")


def _seg_tokens(seg: Segment) -> list[tuple[str, int, int]]:
    """Folded tokens of a segment with their char offsets in the segment text.

    Dotted abbreviations ("B.T.W.", "U.S.") become one token ("btw"), as `fold_label` folds them.
    """
    out: list[tuple[str, int, int]] = []
    abbrevs = [(m.start(), m.end()) for m in _ABBREV.finditer(seg.text)]
    for s0, e0 in abbrevs:
        out.append((fold_label(seg.text[s0:e0]), s0, e0))
    for m in _TOKEN_SPLIT.finditer(seg.text):
        if any(s0 <= m.start() < e0 for s0, e0 in abbrevs):
            continue
        f = fold_label(m.group(0))
        for part in f.split():
            out.append((part, m.start(), m.end()))
    if abbrevs:
        out.sort(key=lambda t: t[1])
    return out


def _find(ix: DocIndex, seg: Segment, vtype: str) -> list[Span]:
    text = seg.text[:400]
    out: list[Span] = []

    def add(t: str, value: object, s: int, e: int) -> None:
        out.append(Span(t, text[s:e], value, seg.page, seg.line, seg.index, s, e, ix.sub_bbox(seg, s, e)))

    if vtype == "date":
        for d in norm.find_dates(text):
            add("date", d.value.isoformat(), d.start, d.end)
    elif vtype in ("amount", "number", "integer"):
        skip = [(d.start, d.end) for d in norm.find_dates(text)]
        for a in norm.find_amounts(text, skip=skip):
            if vtype == "integer" and a.value != int(a.value):
                continue
            add(vtype, float(a.value), a.start, a.end)
    elif vtype == "identifier":
        dates = [(d.start, d.end) for d in norm.find_dates(text)]
        for m in _IDENT_RE.finditer(text):
            tok = m.group(0).strip(".,;:")
            if len(tok) < 2 or len(tok) > 40:
                continue
            if any(m.start() < e and s < m.start() + len(tok) for s, e in dates) or _DECIMAL_NUMBER.match(tok):
                continue                                   # a date or an amount, not an identifier
            add("identifier", tok, m.start(), m.start() + len(tok))
    elif vtype == "percent":
        for m in _PERCENT_RE.finditer(text):
            add("percent", m.group(0), m.start(), m.end())
    elif vtype == "currency":
        for m in _CURRENCY_RE.finditer(text):
            # A little context, so that codes which need an amount beside them ("BHD" in
            # "SDN BHD" is a company suffix, not dinars) are judged as normalize judges them.
            code = norm.parse_currency(text[max(0, m.start() - 3):m.end() + 3])
            if code:
                add("currency", code, m.start(), m.end())
    elif vtype == "text":
        # The whole segment, and what follows a colon (label: value printed as one segment).
        stripped = text.strip()
        if _has_letters(stripped):
            add("text", stripped, 0, len(text))
        c = text.find(":")
        if 0 < c < len(text) - 1:
            rest = text[c + 1:]
            lead = len(rest) - len(rest.lstrip())
            if _has_letters(rest):
                add("text", rest.strip(), c + 1 + lead, len(text.rstrip()))
    return out


def _has_letters(t: str) -> bool:
    return sum(ch.isalpha() for ch in t) >= 2

