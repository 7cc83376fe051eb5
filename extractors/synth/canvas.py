"""The drawing list of a synthetic document, and turning it into a `Document`.

A page is a list of text `Run`s and `Shape`s in page coordinates (points, origin top-left, y down).
A run is one piece of text drawn with one font at one baseline; it is a sequence of words joined by
single spaces, and each word carries tags naming what it is ("invoice_number", "@invoice_number"
for its label, "i3.quantity" for a cell of item 3, ...). Word boxes are computed with reportlab's
`pdfmetrics.stringWidth` and the font's ascent/descent, so the PDF drawn from the same runs puts
every glyph inside those boxes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from reportlab.pdfbase import pdfmetrics

from docassay.extractors.document import BBox, Document, Page, Word

__all__ = ["FAMILIES", "Run", "Shape", "PageLayout", "Layout", "measure", "wrap", "build_document", "Tagged"]

# Standard-14 families: (regular, bold). Text is limited to WinAnsi (cp1252) so these can draw it.
FAMILIES = {"Helvetica": ("Helvetica", "Helvetica-Bold"), "Times": ("Times-Roman", "Times-Bold"),
            "Courier": ("Courier", "Courier-Bold")}
_BOLD = {b for _, b in FAMILIES.values()}

Color = tuple[float, float, float]
BLACK: Color = (0.0, 0.0, 0.0)

_WIDTH: dict[tuple[str, str], float] = {}
_ASC: dict[str, tuple[float, float]] = {}


def measure(text: str, font: str, size: float) -> float:
    """Advance width of `text` in points (cached per font at unit size)."""
    key = (font, text)
    w = _WIDTH.get(key)
    if w is None:
        w = pdfmetrics.stringWidth(text, font, 1.0)
        if len(_WIDTH) < 400_000:
            _WIDTH[key] = w
    return w * size


def ascent_descent(font: str, size: float) -> tuple[float, float]:
    ad = _ASC.get(font)
    if ad is None:
        a, d = pdfmetrics.getAscentDescent(font)
        ad = _ASC[font] = (a / 1000.0, d / 1000.0)
    return ad[0] * size, ad[1] * size


def wrap(text: str, font: str, size: float, max_width: float) -> list[str]:
    """Greedy word wrap: lines whose widths fit `max_width` (a single over-long word stays whole)."""
    words = text.split()
    lines: list[str] = []
    cur: list[str] = []
    space = measure(" ", font, size)
    width = 0.0
    for w in words:
        ww = measure(w, font, size)
        if cur and width + space + ww > max_width:
            lines.append(" ".join(cur))
            cur, width = [w], ww
        else:
            width = width + space + ww if cur else ww
            cur.append(w)
    if cur:
        lines.append(" ".join(cur))
    return lines


Tagged = tuple[str, tuple[str, ...]]          # (text, tags) — text may hold several words


@dataclass(slots=True)
class Run:
    x: float                     # left edge of the first word
    y: float                     # baseline
    font: str
    size: float
    words: list[str]
    tags: list[tuple[str, ...]]
    color: Color = BLACK

    @property
    def text(self) -> str:
        return " ".join(self.words)

    @property
    def width(self) -> float:
        return measure(self.text, self.font, self.size)

    @property
    def x1(self) -> float:
        return self.x + self.width


@dataclass(slots=True)
class Shape:
    kind: str                    # rect | line
    x0: float
    y0: float
    x1: float
    y1: float
    stroke: Color | None = BLACK
    fill: Color | None = None
    line_width: float = 0.5


@dataclass(slots=True)
class PageLayout:
    width: float
    height: float
    runs: list[Run] = field(default_factory=list)
    shapes: list[Shape] = field(default_factory=list)

    def text(self, x: float, y: float, parts: str | Iterable[Tagged], font: str, size: float,
             tags: tuple[str, ...] = (), align: str = "left", color: Color = BLACK) -> Run | None:
        """Place text with its baseline at `y`; `x` is the left edge, right edge or centre by `align`.

        `parts` is a string (all words get `tags`) or a sequence of (text, tags) pieces.
        """
        if isinstance(parts, str):
            parts = [(parts, tags)]
        words: list[str] = []
        wtags: list[tuple[str, ...]] = []
        for text, t in parts:
            for w in text.split():
                words.append(w)
                wtags.append(t)
        if not words:
            return None
        run = Run(x, y, font, size, words, wtags, color)
        if align != "left":
            run.x = x - run.width if align == "right" else x - run.width / 2
        self.runs.append(run)
        return run

    def rect(self, x0: float, y0: float, x1: float, y1: float, stroke: Color | None = BLACK,
             fill: Color | None = None, line_width: float = 0.5) -> None:
        self.shapes.append(Shape("rect", x0, y0, x1, y1, stroke, fill, line_width))

    def line(self, x0: float, y0: float, x1: float, y1: float, stroke: Color = BLACK, line_width: float = 0.5) -> None:
        self.shapes.append(Shape("line", x0, y0, x1, y1, stroke, None, line_width))


@dataclass(slots=True)
class Layout:
    pages: list[PageLayout]
    relations: dict[str, str] = field(default_factory=dict)   # field -> where its label sits


@dataclass(frozen=True, slots=True)
class TagHit:
    page: int                    # 1-based
    word_ids: tuple[int, ...]


def build_document(layout: Layout, source: str, sha256: str, meta: dict[str, object]
                   ) -> tuple[Document, dict[str, list[TagHit]]]:
    """The `Document` the layout prints (one `Word` per word of every run, `Page.from_words`), and
    for every tag the words that carry it, per page, as indices into the final `Page.words`."""
    pages: list[Page] = []
    hits: dict[str, list[TagHit]] = {}
    for pno, pl in enumerate(layout.pages, start=1):
        words: list[Word] = []
        tag_of: dict[int, tuple[str, ...]] = {}
        for run in pl.runs:
            asc, desc = ascent_descent(run.font, run.size)
            top, bottom = run.y - asc, run.y - desc
            space = measure(" ", run.font, run.size)
            bold = run.font in _BOLD
            x = run.x
            for text, tags in zip(run.words, run.tags):
                w = measure(text, run.font, run.size)
                box = BBox(x, top, x + w, bottom)
                words.append(Word(text, box, run.size, bold))
                if tags:
                    tag_of[id(box)] = tags
                x += w + space
        page = Page.from_words(pno, pl.width, pl.height, words, source="synthetic")
        per_tag: dict[str, list[int]] = {}
        for i, word in enumerate(page.words):
            for t in tag_of.get(id(word.bbox), ()):
                per_tag.setdefault(t, []).append(i)
        for t, ids in per_tag.items():
            hits.setdefault(t, []).append(TagHit(pno, tuple(ids)))
        pages.append(page)
    doc = Document(source=source, sha256=sha256, kind="synthetic", pages=pages, parser="synth", meta=meta)
    return doc, hits
