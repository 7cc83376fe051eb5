"""Plain-text parser: words on a monospace grid, as if the text were printed in 10-pt Courier.

Encoding: a UTF-8 or UTF-16 byte-order mark wins; otherwise UTF-8, falling back to Windows-1252
and then Latin-1 (which decodes anything). Geometry: a character cell is `CHAR_WIDTH` points wide
and a row `LINE_HEIGHT` points high, so word x = column x CHAR_WIDTH and y = row x LINE_HEIGHT
(tabs expand to 8 columns, East-Asian wide characters take two columns). A form feed starts a new
page. Page coordinates are in these points; `Page.source = "plain"`.
"""
from __future__ import annotations

import codecs
import re
import unicodedata

from docassay.extractors.document import BBox, Document, Page, Word
from docassay.extractors.errors import ParseError
from docassay.extractors.parsers.base import Budget, Parser, finish_page
from docassay.extractors.parsers.words import clean_text
from docassay.infra.config import Settings

__all__ = ["TextParser", "decode_text", "CHAR_WIDTH", "LINE_HEIGHT", "FONT_SIZE"]

CHAR_WIDTH = 6.0
LINE_HEIGHT = 12.0
FONT_SIZE = 10.0

_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
# Bytes that do not occur in text: NUL and C0 controls other than tab, LF, VT, FF, CR, ESC; DEL.
_BINARY_BYTES = bytes(c for c in range(32) if c not in (9, 10, 11, 12, 13, 27)) + b"\x7f"
_BINARY_SHARE = 0.01         # more control bytes than this share (or the allowance) means binary
_BINARY_ALLOWANCE = 8        # a few stray controls (hostile or broken text) are stripped, not refused
_TOKEN = re.compile(r"\S+")
_MARKUP = (b"<?xml", b"<!doctype", b"<html", b"<svg")


class TextParser(Parser):
    name = "text"
    kind = "text"

    def sniff(self, data: bytes, source: str) -> bool:
        if any(data.startswith(bom) for bom, _ in _BOMS):
            return True
        sample = data[:65536]
        binary = len(sample) - len(sample.translate(None, _BINARY_BYTES))
        if binary > max(_BINARY_ALLOWANCE, _BINARY_SHARE * len(sample)):
            return False
        head = sample.lstrip()[:16].lower()
        if head.startswith(_MARKUP):
            return False                                # HTML/XML are refused, not read as prose
        # JSON of a shape no parser knows is refused by the registry, not read as prose.
        return not (head[:1] in (b"{", b"[") and data.rstrip()[-1:] in (b"}", b"]"))

    def parse(self, data: bytes, source: str, settings: Settings) -> Document:
        budget = Budget.for_settings(settings, source)
        limit = settings.limits.max_text_chars
        if len(data) > 4 * limit + 4:
            raise ParseError(f"the text file has more than {limit:,} characters (max_text_chars)",
                             kind="too_large", source=source)
        text, encoding = decode_text(data)
        if len(text) > limit:
            raise ParseError(f"the text file has {len(text):,} characters, more than the limit of "
                             f"{limit:,} (max_text_chars)", kind="too_large", source=source)
        chunks = text.replace("\r\n", "\n").replace("\r", "\n").split("\f")
        if len(chunks) > 1 and not chunks[-1].strip():
            chunks.pop()                                # a trailing form feed ends the last page
        budget.check_pages(len(chunks))
        pages: list[Page] = []
        for number, chunk in enumerate(chunks, start=1):
            budget.check_time(f"page {number}")
            pages.append(_grid_page(number, chunk, budget))
        return self.document(data, source, pages, encoding=encoding, n_pages=len(pages))


def decode_text(data: bytes) -> tuple[str, str]:
    """`(text, encoding)`: BOM if any, else UTF-8, else Windows-1252, else Latin-1."""
    for bom, enc in _BOMS:
        if data.startswith(bom):
            return data.decode(enc, errors="replace"), enc
    for enc in ("utf-8", "cp1252"):
        try:
            return data.decode(enc), enc
        except UnicodeDecodeError:
            pass
    return data.decode("latin-1"), "latin-1"


def _columns(s: str) -> int:
    """Display width of `s` in monospace columns."""
    if s.isascii():
        return len(s)
    return sum(0 if unicodedata.combining(ch) else
               2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in s)


def _grid_page(number: int, chunk: str, budget: Budget) -> Page:
    rows = chunk.split("\n")
    words: list[Word] = []
    max_cols = 1
    for row, raw_line in enumerate(rows):
        line = raw_line.expandtabs(8)
        max_cols = max(max_cols, _columns(line))
        y0 = row * LINE_HEIGHT
        col, pos = 0, 0                                 # running column of character `pos`
        for m in _TOKEN.finditer(line):
            col += _columns(line[pos:m.start()])
            width = _columns(m.group())
            pos = m.end()
            token = clean_text(m.group())
            if not token:
                col += width
                continue
            words.append(Word(token, BBox(col * CHAR_WIDTH, y0, (col + width) * CHAR_WIDTH,
                                          y0 + FONT_SIZE), FONT_SIZE))
            col += width
        if len(words) > budget.limits.max_words_per_page:
            budget.check_words(len(words), number)
    return finish_page(number, max_cols * CHAR_WIDTH, max(len(rows), 1) * LINE_HEIGHT, words,
                       "plain", budget)
