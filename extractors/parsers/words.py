"""Word helpers shared by the parsers: hostile-text cleaning and splitting a text line into words.

Text that comes out of documents is hostile: it may carry NULs, control characters, bidi
overrides, zero-width characters or lone surrogates (which cannot even be encoded to UTF-8).
`clean_text` removes them from a word; whitespace never reaches a word because parsers split on it.
"""
from __future__ import annotations

import math
import re
import unicodedata
from typing import Iterable, Sequence

from docassay.extractors.document import BBox, Word

__all__ = ["clean_text", "split_line", "words_from_lines", "finite"]

# Unicode categories removed from word text: controls (incl. NUL), format characters (bidi
# overrides, zero-width spaces, soft hyphens, BOM) and surrogates. Private-use and unassigned
# code points are kept: they are harmless and sometimes all a broken PDF font maps to.
_DROP_CATEGORIES = frozenset({"Cc", "Cf", "Cs"})
_TOKEN = re.compile(r"\S+")


def clean_text(text: str) -> str:
    """`text` without control, format and surrogate characters (whitespace is kept as is)."""
    if text.isprintable():                      # fast path: nothing to drop
        return text
    return "".join(ch for ch in text
                   if ch.isspace() or unicodedata.category(ch) not in _DROP_CATEGORIES)


def split_line(text: str, quad: Sequence[float]) -> list[Word]:
    """Split one recognised text line into words placed proportionally along its quadrilateral.

    `quad` is `[x1, y1, x2, y2, x3, y3, x4, y4]`, corners clockwise from top-left. A word covering
    characters `[s, e)` of a line of `n` characters spans the fractions `s/n .. e/n` of the top and
    bottom edges (so a slanted line gives slanted-but-correct word positions); its bbox is the
    axis-aligned box around those four points. Words that are empty after `clean_text` are dropped.
    """
    x1, y1, x2, y2, x3, y3, x4, y4 = (float(v) for v in quad)
    n = len(text)
    out: list[Word] = []
    for m in _TOKEN.finditer(text):
        token = clean_text(m.group())
        if not token:
            continue
        a, b = m.start() / n, m.end() / n
        xs = (x1 + a * (x2 - x1), x1 + b * (x2 - x1), x4 + a * (x3 - x4), x4 + b * (x3 - x4))
        ys = (y1 + a * (y2 - y1), y1 + b * (y2 - y1), y4 + a * (y3 - y4), y4 + b * (y3 - y4))
        out.append(Word(token, BBox(min(xs), min(ys), max(xs), max(ys))))
    return out


def words_from_lines(lines: Iterable[tuple[str, Sequence[float]]]) -> list[Word]:
    """All words of `(text, quad)` lines, in the given order (reading order is rebuilt later)."""
    words: list[Word] = []
    for text, quad in lines:
        words.extend(split_line(text, quad))
    return words


def finite(values: Iterable[object]) -> bool:
    """True when every value is a real, finite number (bool excluded)."""
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
               for v in values)
