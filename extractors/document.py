"""The one typed `Document` model that every stage consumes and returns.

Coordinates: each page has its own coordinate space with the origin at the top-left corner,
x growing to the right and y growing downwards, in the parser's native unit (PDF points for
text-layer PDFs, pixels for images and OCR line files). `Page.width`/`Page.height` give the
extent, so positions can be made relative (`BBox.relative`).

Reading order: `Page.lines` are in reading order (top to bottom, then left to right); each line
refers to its words by index into `Page.words`, left to right. `Word.line` points back.

Parsers build pages with `Page.from_words`, which groups words into lines; a parser that already
knows its lines (OCR line files, Textract) may pass them in instead.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from statistics import median
from typing import Iterable, Iterator, Sequence

__all__ = ["BBox", "Word", "Line", "Cell", "Table", "KeyValue", "Page", "Document", "build_lines"]


@dataclass(frozen=True, slots=True)
class BBox:
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def cx(self) -> float:
        return (self.x0 + self.x1) / 2

    @property
    def cy(self) -> float:
        return (self.y0 + self.y1) / 2

    def union(self, other: "BBox") -> "BBox":
        return BBox(min(self.x0, other.x0), min(self.y0, other.y0),
                    max(self.x1, other.x1), max(self.y1, other.y1))

    @staticmethod
    def enclosing(boxes: Iterable["BBox"]) -> "BBox":
        it = iter(boxes)
        out = next(it)
        for b in it:
            out = out.union(b)
        return out

    def y_overlap(self, other: "BBox") -> float:
        """Overlap of the vertical extents as a share of the smaller height (0..1)."""
        inter = min(self.y1, other.y1) - max(self.y0, other.y0)
        h = min(self.height, other.height)
        return max(0.0, inter) / h if h > 0 else 0.0

    def x_overlap(self, other: "BBox") -> float:
        """Overlap of the horizontal extents as a share of the smaller width (0..1)."""
        inter = min(self.x1, other.x1) - max(self.x0, other.x0)
        w = min(self.width, other.width)
        return max(0.0, inter) / w if w > 0 else 0.0

    def relative(self, width: float, height: float) -> "BBox":
        return BBox(self.x0 / width, self.y0 / height, self.x1 / width, self.y1 / height)

    def as_list(self, ndigits: int = 2) -> list[float]:
        return [round(self.x0, ndigits), round(self.y0, ndigits),
                round(self.x1, ndigits), round(self.y1, ndigits)]


@dataclass(slots=True)
class Word:
    text: str
    bbox: BBox
    font_size: float | None = None
    bold: bool | None = None
    line: int = -1          # index into Page.lines, set by Page.from_words / build_lines


@dataclass(slots=True)
class Line:
    word_ids: tuple[int, ...]
    bbox: BBox
    text: str


@dataclass(slots=True)
class Cell:
    row: int
    col: int
    text: str
    bbox: BBox
    row_span: int = 1
    col_span: int = 1
    header: bool = False


@dataclass(slots=True)
class Table:
    bbox: BBox
    n_rows: int
    n_cols: int
    cells: list[Cell]

    def grid(self) -> list[list[str]]:
        out = [["" for _ in range(self.n_cols)] for _ in range(self.n_rows)]
        for c in self.cells:
            out[c.row][c.col] = c.text
        return out


@dataclass(slots=True)
class KeyValue:
    """A key/value pair a parser found (Textract FORMS)."""
    key: str
    value: str
    key_bbox: BBox
    value_bbox: BBox | None
    confidence: float | None = None


@dataclass(slots=True)
class Page:
    number: int                      # 1-based
    width: float
    height: float
    words: list[Word]
    lines: list[Line]
    tables: list[Table] = field(default_factory=list)
    key_values: list[KeyValue] = field(default_factory=list)
    source: str = "text"             # text | ocr | ocr-lines | plain | textract | synthetic

    @classmethod
    def from_words(cls, number: int, width: float, height: float, words: list[Word], **kw) -> "Page":
        words, lines = build_lines(words)
        return cls(number=number, width=width, height=height, words=words, lines=lines, **kw)

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)

    def line_words(self, line: Line) -> list[Word]:
        return [self.words[i] for i in line.word_ids]

    def char_spans(self, line: Line) -> list[tuple[int, int]]:
        """(start, end) offsets in `line.text` of each of the line's words, in order."""
        spans: list[tuple[int, int]] = []
        pos = 0
        for i in line.word_ids:
            t = self.words[i].text
            start = line.text.find(t, pos)
            if start < 0:                       # defensive: text was built from these words
                start = pos
            spans.append((start, start + len(t)))
            pos = start + len(t)
        return spans


@dataclass(slots=True)
class Document:
    source: str
    sha256: str
    kind: str                          # pdf | image | text | ocr-lines | textract | synthetic
    pages: list[Page]
    parser: str = ""
    meta: dict[str, object] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n\f".join(p.text for p in self.pages)

    @property
    def n_words(self) -> int:
        return sum(len(p.words) for p in self.pages)

    def iter_lines(self) -> Iterator[tuple[Page, Line]]:
        for p in self.pages:
            for line in p.lines:
                yield p, line

    @staticmethod
    def hash_bytes(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()


def build_lines(words: Sequence[Word], y_tolerance: float = 0.5,
                x_stack: float = 0.3) -> tuple[list[Word], list[Line]]:
    """Group words into lines and order both in reading order.

    Words whose vertical extents overlap by at least `y_tolerance` of the smaller height join one
    line, unless the word stands over or under a word already on that line: words of one printed
    row sit side by side, so a word whose horizontal extent overlaps a line's word by more than
    `x_stack` of the narrower width belongs to another row (two tightly set rows whose boxes
    overlap vertically, e.g. a two-line shop name, would otherwise merge into one line and
    interleave their words), and unless it meets the line only through a much taller word
    (`_bridged`). Lines are sorted top to bottom, words in a line left to right. Returns new
    lists; the words get their `line` index set.
    """
    if not words:
        return [], []
    order = sorted(range(len(words)), key=lambda i: (words[i].bbox.cy, words[i].bbox.x0))
    groups: list[list[int]] = []
    boxes: list[BBox] = []
    for i in order:
        b = words[i].bbox
        placed = False
        # Only the last few lines can overlap a word further down the sort order.
        for g in range(len(groups) - 1, max(-1, len(groups) - 4), -1):
            gb = boxes[g]
            if gb.y_overlap(b) >= y_tolerance and abs(gb.cy - b.cy) <= 0.6 * max(gb.height, b.height) \
                    and not any(words[j].bbox.x_overlap(b) > x_stack for j in groups[g]) \
                    and not _bridged([words[j].bbox for j in groups[g]], b):
                groups[g].append(i)
                boxes[g] = gb.union(b)
                placed = True
                break
        if not placed:
            groups.append([i])
            boxes.append(b)
    groups_sorted = sorted(range(len(groups)), key=lambda g: (boxes[g].y0, boxes[g].x0))
    out_words: list[Word] = []
    lines: list[Line] = []
    for li, g in enumerate(groups_sorted):
        ids = sorted(groups[g], key=lambda i: words[i].bbox.x0)
        start = len(out_words)
        for i in ids:
            w = words[i]
            out_words.append(Word(w.text, w.bbox, w.font_size, w.bold, li))
        word_ids = tuple(range(start, len(out_words)))
        lines.append(Line(word_ids, boxes[g], _join(out_words[start:])))
    return out_words, lines


BRIDGE_TALLER = 1.5          # a word this many times taller than another spans several of its rows
BRIDGE_OVERLAP = 0.15        # two words of about one size overlapping vertically less than this stand on two rows


def _bridged(members: list[BBox], b: BBox) -> bool:
    """Whether `b` meets a line only through a much taller word on it (a title, a rotated side
    text): the line holds a word of about `b`'s size that `b` does not overlap vertically, so the
    two stand on two rows that the tall word spans ("Factura" beside a seller's name and the
    street under it). Words of one row on a skewed scan still overlap (above BRIDGE_OVERLAP)."""
    hb = b.height
    if hb <= 0 or not any(m.height > BRIDGE_TALLER * hb for m in members):
        return False
    return any(m.height > 0 and max(m.height, hb) <= BRIDGE_TALLER * min(m.height, hb)
               and m.y_overlap(b) < BRIDGE_OVERLAP for m in members)


def _join(words: Sequence[Word]) -> str:
    """Join a line's words with one space, or with several where the gap is wide (columns)."""
    if not words:
        return ""
    heights = [w.bbox.height for w in words if w.bbox.height > 0]
    em = median(heights) if heights else 10.0
    parts = [words[0].text]
    for prev, w in zip(words, words[1:]):
        gap = w.bbox.x0 - prev.bbox.x1
        parts.append("   " if gap > 1.5 * em else " ")
        parts.append(w.text)
    return "".join(parts)
