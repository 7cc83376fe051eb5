"""Typed records of the synthetic generator: formats, documents, and the span labels used for training."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Union

from docassay.extractors.document import BBox, Document
from docassay.extractors.synth.canvas import Layout, TagHit
from docassay.extractors.synth.locale import Locale

__all__ = ["Format", "SynthDoc", "Anchor", "FieldSpan", "CellSpan", "ItemSpan", "TruthSpans", "spans_from_hits",
           "SpanError"]

KINDS = ("invoice", "receipt")
ITEM_COLUMNS = ("description", "quantity", "unit_price", "line_total")


class SpanError(ValueError):
    """A truth value has no place on the page (a generator bug, never a property of the data)."""


@dataclass(frozen=True)
class Format:
    """A seeded template: every document of a format shares layout, fonts, labels, locale, positions."""
    format_id: str
    kind: str                                   # invoice | receipt
    seed: int
    language: str
    locale: Locale
    style: "object"                             # InvoiceStyle | ReceiptStyle (see invoice_style / receipt)

    def meta(self) -> dict[str, object]:
        """JSON-ready description of the format (language, locale, layout choices)."""
        return {"format_id": self.format_id, "kind": self.kind, "format_seed": self.seed,
                "language": self.language, "locale": self.locale.code,
                "number_style": self.locale.number_style, "date_pattern": self.locale.date_pattern,
                "currency": self.locale.currency, "currency_mark": self.locale.currency_mark,
                "currency_pos": self.locale.currency_pos,
                "family": getattr(self.style, "layout_family", "classic"),
                "layout": self.style.describe()}  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class Anchor:
    """The label printed for a field (or the column header of an item cell) and where the value sits
    relative to it: left (label left of value, same line), above (label above value), title (label and
    value inside one heading line), cell (key-value table cell), column (table header), none."""
    text: str
    word_ids: tuple[int, ...]
    bbox: BBox
    relation: str


@dataclass(frozen=True, slots=True)
class FieldSpan:
    field: str
    page: int                                   # 1-based
    word_ids: tuple[int, ...]                   # into Document.pages[page - 1].words
    bbox: BBox
    text: str                                   # the printed words, joined by single spaces
    anchor: Anchor | None


@dataclass(frozen=True, slots=True)
class CellSpan:
    column: str                                 # description | quantity | unit_price | line_total
    word_ids: tuple[int, ...]
    bbox: BBox
    text: str
    header: Anchor | None                       # the column header on the same page


@dataclass(frozen=True, slots=True)
class ItemSpan:
    index: int                                  # position in truth["line_items"]
    page: int
    bbox: BBox                                  # the whole row (all lines of a wrapped row)
    word_ids: tuple[int, ...]
    cells: dict[str, CellSpan]


@dataclass(frozen=True)
class TruthSpans:
    fields: dict[str, FieldSpan]
    items: list[ItemSpan]

    def to_json(self) -> dict[str, object]:
        def anchor(a: Anchor | None) -> dict[str, object] | None:
            return None if a is None else {"text": a.text, "word_ids": list(a.word_ids), "bbox": a.bbox.as_list(),
                                           "relation": a.relation}
        return {
            "fields": {k: {"page": s.page, "bbox": s.bbox.as_list(), "word_ids": list(s.word_ids), "text": s.text,
                           "anchor": anchor(s.anchor)} for k, s in self.fields.items()},
            "line_items": [{"index": it.index, "page": it.page, "bbox": it.bbox.as_list(),
                            "word_ids": list(it.word_ids),
                            "cells": {c: {"bbox": cs.bbox.as_list(), "word_ids": list(cs.word_ids), "text": cs.text,
                                          "header": anchor(cs.header)} for c, cs in it.cells.items()}}
                           for it in self.items],
        }


@dataclass
class SynthDoc:
    doc_id: str
    format_id: str
    kind: str
    seed: int
    document: Document
    truth: dict[str, object]                    # canonical ground truth (see /work/shared/data/README.md)
    truth_spans: TruthSpans
    meta: dict[str, object]
    layout: Layout = field(repr=False)

    @property
    def n_pages(self) -> int:
        return len(self.document.pages)


Truth = dict[str, Union[str, float, list]]


def _first(hits: dict[str, list[TagHit]], tag: str) -> TagHit | None:
    got = hits.get(tag)
    return got[0] if got else None


def _text(doc: Document, hit: TagHit) -> tuple[str, BBox]:
    words = doc.pages[hit.page - 1].words
    return " ".join(words[i].text for i in hit.word_ids), BBox.enclosing(words[i].bbox for i in hit.word_ids)


def _anchor(doc: Document, hits: dict[str, list[TagHit]], tag: str, page: int, relation: str) -> Anchor | None:
    for h in hits.get(tag, ()):
        if h.page == page:
            text, box = _text(doc, h)
            return Anchor(text, h.word_ids, box, relation)
    return None


def spans_from_hits(doc: Document, hits: dict[str, list[TagHit]], truth: Mapping[str, object], relations: dict[str, str]
                    ) -> TruthSpans:
    """Spans for every truth key: field `f` is the words tagged `f` (its label: tagged `@f`); item `k`
    is the words tagged `i<k>`, its cells `i<k>.<column>`, column headers `#<column>` on that page.
    Raises SpanError when a truth key has no tagged words (the generator printed it nowhere)."""
    fields: dict[str, FieldSpan] = {}
    for key in truth:
        if key == "line_items":
            continue
        hit = _first(hits, key)
        if hit is None:
            raise SpanError(f"truth key {key!r} is not tagged on any page")
        text, box = _text(doc, hit)
        rel = relations.get(key, "none")
        anchor = _anchor(doc, hits, "@" + key, hit.page, rel) if rel != "none" else None
        fields[key] = FieldSpan(key, hit.page, hit.word_ids, box, text, anchor)
    items: list[ItemSpan] = []
    items_truth = truth.get("line_items")
    for k in range(len(items_truth) if isinstance(items_truth, list) else 0):
        row = _first(hits, f"i{k}")
        if row is None:
            raise SpanError(f"line item {k} is not tagged on any page")
        _, rbox = _text(doc, row)
        cells: dict[str, CellSpan] = {}
        for col in ITEM_COLUMNS:
            h = _first(hits, f"i{k}.{col}")
            if h is None:
                continue
            text, box = _text(doc, h)
            cells[col] = CellSpan(col, h.word_ids, box, text, _anchor(doc, hits, "#" + col, h.page, "column"))
        items.append(ItemSpan(k, row.page, rbox, row.word_ids, cells))
    return TruthSpans(fields, items)
