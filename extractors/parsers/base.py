"""The one small interface every parser implements, and the budget it parses under.

A parser is a stateless object with a `name`, the `kind` of `Document` it produces, a cheap
`sniff` that looks at the bytes (never at the file name alone) and a `parse` that returns one
`Document` or raises `ParseError` with a `kind` and a message a person understands.

`Budget` bundles what a parse may cost (from `Settings.limits`) with the wall-clock deadline,
so that every parser checks the same limits the same way and says which limit was hit.
"""
from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from docassay.extractors.document import Document, Page, Word
from docassay.extractors.errors import ParseError
from docassay.extractors.tables import detect_tables
from docassay.infra.config import Limits, Settings

__all__ = ["Parser", "Budget", "finish_page"]


@dataclass
class Budget:
    """Limits for one document parse plus the deadline derived from `parse_timeout_s`."""
    limits: Limits
    source: str
    started: float = field(default_factory=time.monotonic)

    @classmethod
    def for_settings(cls, settings: Settings, source: str) -> "Budget":
        return cls(settings.limits, source)

    def check_time(self, where: str) -> None:
        """Raise `ParseError(kind="timeout")` once the parse has run past `parse_timeout_s`."""
        elapsed = time.monotonic() - self.started
        if elapsed > self.limits.parse_timeout_s:
            raise ParseError(
                f"reading the document took longer than {self.limits.parse_timeout_s:g} s "
                f"(limit parse_timeout_s); stopped at {where}",
                kind="timeout", source=self.source, elapsed_s=round(elapsed, 1))

    def check_pages(self, n_pages: int) -> None:
        if n_pages > self.limits.max_pages:
            raise ParseError(
                f"the document has {n_pages} pages, more than the limit of {self.limits.max_pages} "
                f"(max_pages)", kind="too_large", source=self.source, pages=n_pages)

    def check_pixels(self, width: int, height: int, page: int) -> None:
        """Raise before decoding an image whose pixel count exceeds `max_page_pixels`."""
        if width * height > self.limits.max_page_pixels:
            raise ParseError(
                f"page {page} is an image of {width}x{height} = {width * height:,} pixels, more than "
                f"the limit of {self.limits.max_page_pixels:,} (max_page_pixels); refusing to decode it",
                kind="too_large", source=self.source, page=page, pixels=width * height)

    def check_words(self, n_words: int, page: int) -> None:
        if n_words > self.limits.max_words_per_page:
            raise ParseError(
                f"page {page} has more than {self.limits.max_words_per_page:,} words "
                f"(max_words_per_page)", kind="too_large", source=self.source, page=page)


def finish_page(number: int, width: float, height: float, words: list[Word], source: str,
                budget: Budget) -> Page:
    """Build a page from its words (lines in reading order) and fill its simple tables."""
    budget.check_words(len(words), number)
    page = Page.from_words(number, width, height, words, source=source)
    page.tables = detect_tables(page)
    return page


class Parser(ABC):
    """One input format. Subclasses set `name` (registry key) and `kind` (`Document.kind`)."""
    name: str = ""
    kind: str = ""

    @abstractmethod
    def sniff(self, data: bytes, source: str) -> bool:
        """True when `data` is this parser's format, judged by content. Must be cheap."""

    @abstractmethod
    def parse(self, data: bytes, source: str, settings: Settings) -> Document:
        """Read `data` into a `Document` (`sha256`, `source`, `kind`, `parser` filled).

        Raises `ParseError` with a `kind` from extractors.errors when the input cannot be read.
        """

    def document(self, data: bytes, source: str, pages: list[Page], **meta: object) -> Document:
        """Wrap parsed pages; raises `ParseError(kind="no_text")` when no page has any word."""
        if not any(p.words for p in pages):
            raise ParseError(
                f"no text found in {source or 'the document'} ({len(pages)} page(s)), "
                f"not even after OCR", kind="no_text", source=source)
        return Document(source=source, sha256=Document.hash_bytes(data), kind=self.kind,
                        pages=pages, parser=self.name, meta=dict(meta))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"
