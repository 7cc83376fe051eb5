"""Simple table detection from word geometry: aligned columns of whitespace-separated segments.

`detect_tables(page)` runs on every page, so it is deliberately simple and linear in the number of
lines. It finds runs of consecutive lines that line up in columns:

* A line's *segments* are its words grouped at wide gaps (wider than `SEGMENT_GAP` x the median word
  height; the same rule that puts three spaces into `Line.text`).
* A table starts at a *header*: a line with at least `MIN_COLUMNS` segments, fewer than half of
  which contain a digit (headers are labels, rows carry numbers). Its segments are the first
  columns (x-intervals).
* A following line *fits* when no segment overlaps two columns. A segment under no column opens a
  new column (two-line headers leave some columns unnamed).
* A fitting line with at least `MIN_COLUMNS` segments, or with two segments one of which is in the
  first column, starts a new *row* (if it is at most `MAX_ROW_GAP` line heights below the previous
  table line); any other fitting line continues the row above (wrapped descriptions, article
  numbers under the item) if it sits close (`MAX_CONTINUATION_GAP`) and is not much taller than the
  table's lines (a section heading is not a continuation). The table ends at the first line that
  does not fit.
* A table needs a header and at least `MIN_ROWS` rows. Cells hold the row's segment texts per
  column, joined with spaces, top to bottom; empty cells are left out (`Table.grid()` fills "").
"""
from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median
from typing import Sequence

from docassay.extractors.document import BBox, Cell, Line, Page, Table, Word

__all__ = ["detect_tables", "line_segments", "Segment", "MIN_COLUMNS", "MIN_ROWS"]

MIN_COLUMNS = 3          # segments that make a header or a full row
MIN_ROWS = 2             # body rows a table needs besides its header
SEGMENT_GAP = 1.5        # gap (x median word height) that separates segments
MAX_ROW_GAP = 4.0        # vertical gap (x header line height) above a row that ends the table
MAX_CONTINUATION_GAP = 1.5   # same, above a continuation line (wrapped text sits close)
MAX_HEIGHT_GROWTH = 1.25 # a continuation line taller than this x the table's tallest line ends it


@dataclass(slots=True)
class Segment:
    text: str
    bbox: BBox


@dataclass(slots=True)
class _Row:
    lines: list[list[tuple[int, Segment]]] = field(default_factory=list)   # (column, segment)


def line_segments(words: Sequence[Word]) -> list[Segment]:
    """The line's words (left to right) grouped into segments at gaps wider than `SEGMENT_GAP` em."""
    if not words:
        return []
    heights = [w.bbox.height for w in words if w.bbox.height > 0]
    gap = SEGMENT_GAP * (median(heights) if heights else 10.0)
    out: list[Segment] = []
    texts, box = [words[0].text], words[0].bbox
    for prev, w in zip(words, words[1:]):
        if w.bbox.x0 - prev.bbox.x1 > gap:
            out.append(Segment(" ".join(texts), box))
            texts, box = [], w.bbox
        texts.append(w.text)
        box = box.union(w.bbox)
    out.append(Segment(" ".join(texts), box))
    return out


def detect_tables(page: Page) -> list[Table]:
    """Tables on `page` (see the module docstring for the rules); [] when there are none."""
    lines = page.lines
    segs = [line_segments(page.line_words(ln)) for ln in lines]
    tables: list[Table] = []
    i = 0
    while i < len(lines):
        if len(segs[i]) >= MIN_COLUMNS and _is_header(segs[i]):
            table, end = _grow(lines, segs, i)
            if table is not None:
                tables.append(table)
                i = end
                continue
        i += 1
    return tables


def _is_header(line_segs: list[Segment]) -> bool:
    """Headers are labels: fewer than half of their segments contain a digit."""
    with_digits = sum(any(ch.isdigit() for ch in s.text) for s in line_segs)
    return 2 * with_digits < len(line_segs)


def _grow(lines: list[Line], segs: list[list[Segment]], start: int) -> tuple[Table | None, int]:
    """Try a table with its header at line `start`; returns it (or None) and the next line index."""
    header_line = lines[start]
    columns = [[s.bbox.x0, s.bbox.x1] for s in segs[start]]
    header = _Row([[(c, s) for c, s in enumerate(segs[start])]])
    rows: list[_Row] = []
    line_h = max(header_line.bbox.height, 1e-6)
    tallest = line_h
    prev_bottom = header_line.bbox.y1
    j = start + 1
    while j < len(lines):
        ln, line_segs = lines[j], segs[j]
        gap = ln.bbox.y0 - prev_bottom
        trial = [c[:] for c in columns]
        placed = _place(line_segs, trial)
        if placed is None:
            break
        first_col = min(range(len(trial)), key=lambda c: trial[c][0])
        new_row = len(line_segs) >= MIN_COLUMNS or (
            len(line_segs) >= 2 and any(c == first_col for c, _ in placed))
        if new_row and gap > MAX_ROW_GAP * line_h:
            break
        if not new_row and (gap > MAX_CONTINUATION_GAP * line_h
                            or ln.bbox.height > MAX_HEIGHT_GROWTH * tallest):
            break
        columns[:] = trial
        tallest = max(tallest, ln.bbox.height)
        if new_row:
            for c, s in placed:                         # rows widen their columns
                columns[c][0] = min(columns[c][0], s.bbox.x0)
                columns[c][1] = max(columns[c][1], s.bbox.x1)
            rows.append(_Row([placed]))
        elif rows:
            rows[-1].lines.append(placed)
        else:
            header.lines.append(placed)                 # a second header line
        prev_bottom = max(prev_bottom, ln.bbox.y1)
        j += 1
    if len(rows) < MIN_ROWS:
        return None, start + 1
    return _table([header, *rows], columns), j


def _place(line_segs: list[Segment], columns: list[list[float]]) -> list[tuple[int, Segment]] | None:
    """Assign each segment to the one column it overlaps (opening a new column when it overlaps
    none); None when a segment overlaps two or more columns, or two segments share a column."""
    placed: list[tuple[int, Segment]] = []
    used: set[int] = set()
    for s in line_segs:
        hits = [c for c, (x0, x1) in enumerate(columns) if s.bbox.x0 < x1 and s.bbox.x1 > x0]
        if len(hits) > 1:
            return None
        if hits:
            c = hits[0]
        else:
            columns.append([s.bbox.x0, s.bbox.x1])
            c = len(columns) - 1
        if c in used:
            return None
        used.add(c)
        placed.append((c, s))
    return placed


def _table(rows: list[_Row], columns: list[list[float]]) -> Table:
    order = sorted(range(len(columns)), key=lambda c: columns[c][0])
    col_index = {c: k for k, c in enumerate(order)}
    cells: list[Cell] = []
    for r, row in enumerate(rows):
        texts: dict[int, list[str]] = {}
        boxes: dict[int, BBox] = {}
        for placed in row.lines:
            for c, s in placed:
                k = col_index[c]
                texts.setdefault(k, []).append(s.text)
                boxes[k] = boxes[k].union(s.bbox) if k in boxes else s.bbox
        for k in sorted(texts):
            cells.append(Cell(row=r, col=k, text=" ".join(texts[k]), bbox=boxes[k], header=(r == 0)))
    return Table(bbox=BBox.enclosing(c.bbox for c in cells), n_rows=len(rows),
                 n_cols=len(columns), cells=cells)
