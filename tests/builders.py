"""Build small `Document`s by hand for tests: text items at positions, words on a fixed-width grid."""
from __future__ import annotations

import hashlib

from docassay.extractors.document import BBox, Document, Page, Word

CHAR_W = 6.0
LINE_H = 10.0


def make_page(items: list[tuple[float, float, str]], number: int = 1, width: float = 600.0,
              height: float = 800.0) -> Page:
    """items: (x, y, text) — text is split into words at single spaces, CHAR_W points per character."""
    words: list[Word] = []
    for x, y, text in items:
        pos = x
        for token in text.split(" "):
            if token:
                words.append(Word(token, BBox(pos, y, pos + CHAR_W * len(token), y + LINE_H), font_size=LINE_H))
            pos += CHAR_W * (len(token) + 1)
    return Page.from_words(number, width, height, words, source="synthetic")


def make_doc(*pages: list[tuple[float, float, str]], source: str = "test") -> Document:
    ps = [make_page(items, number=i + 1) for i, items in enumerate(pages)]
    h = hashlib.sha256(repr(pages).encode()).hexdigest()
    return Document(source=source, sha256=h, kind="synthetic", pages=ps, parser="test")
