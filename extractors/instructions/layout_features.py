"""What the layout reader (`infra.model.layout`) reads: a document's words and a schema's fields as arrays.

    words = doc_words(ix)                  # every word in reading order (page, line, left to right)
    d = layout_doc(ix, specs, words)       # LayoutDoc: hashed ids, positions, flags, field queries
    first, last = words.span_words(span)   # the flat word indices a candidate span covers

**A word** is described by what is printed and where, never by which format it comes from:
hashed character 3-grams of the folded word (with boundary marks), the whole folded word, its shape
(`Rechnung` -> `Aa`, `12.03.2024` -> `9.9.9`); its box (x0, y0, x1, y1 quantised into 64 bins of
the page), page index and position in its line; flags: parses as a date / amount / identifier /
currency / percent (the spans `extractors.spans` finds, which are what proposals are made of),
bold, font size relative to the page's median (0 where the parser has no sizes: OCR), first / last
word of its line, ends with ':', has digits, all caps.

**A field's query** comes only from what the schema says: its label phrases (`FieldSpec.labels`:
the schema's `x-docassay` labels, its name's words, the lexicon's phrases for its concept), its
description's words and its value type. The name enters only through its words among the labels, so
a field renamed with the same labels and description reads the same, and any new field gets a query.
Label n-grams hash into the same buckets as word n-grams, so "Rechnungs-Nr." on the page and
"rechnungs nr" in the schema share ids.
"""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field

import numpy as np

from docassay.extractors.labels import FieldSpec, fold_label
from docassay.extractors.normalize import fold
from docassay.extractors.spans import DocIndex, Span
from docassay.infra.model.layout import MAX_LINE_POS, MAX_PAGE, POS_BINS, VALUE_TYPES, LayoutDoc

__all__ = ["DocWords", "doc_words", "layout_doc", "field_query_ids", "FLAG_NAMES", "N_BUCKETS"]

N_BUCKETS = 1 << 14
FLAG_NAMES = ("date", "amount", "identifier", "currency", "percent", "bold", "font_ratio", "has_font",
              "line_first", "line_last", "colon", "caps")
_TYPED = ("date", "amount", "identifier", "currency", "percent")
MAX_LABELS = 24              # label phrases of a field that enter its query (most specific first)
MAX_DESC_WORDS = 40
_SHAPE = re.compile(r"(.)\1+")


def _h(s: str) -> int:
    return zlib.crc32(s.encode("utf-8")) % N_BUCKETS


def _ngrams(word: str) -> list[int]:
    w = f"<{word}>"
    return [_h(w[i:i + 3]) for i in range(max(1, len(w) - 2))]


def _shape(text: str) -> str:
    s = "".join("9" if c.isdigit() else "A" if c.isupper() else "a" if c.isalpha() else c for c in text[:16])
    return _SHAPE.sub(r"\1", s)


def word_ids(text: str) -> list[int]:
    f = fold(text).strip() or text.strip().casefold()
    ids = _ngrams(f[:24])
    ids.append(_h("w:" + f[:24]))
    ids.append(_h("s:" + _shape(text)))
    return ids


@dataclass
class DocWords:
    """The words of one document in reading order and where each sits."""
    refs: list[tuple[int, int]]                       # (page number, word id in Page.words)
    index: dict[tuple[int, int], int] = field(default_factory=dict)   # (page, word id) -> flat index

    def span_words(self, ix: DocIndex, span: Span) -> tuple[int, int] | None:
        """(first, last) flat word index of the words a span's characters touch; None if none."""
        try:
            seg = ix.segment(span.page, span.line, span.segment)
        except IndexError:
            return None
        hit = [self.index[(span.page, wid)] for wid, (ws, we) in zip(range(seg.start, seg.end), seg.word_offsets)
               if ws < span.seg_end and we > span.seg_start and (span.page, wid) in self.index]
        return (min(hit), max(hit)) if hit else None


def doc_words(ix: DocIndex) -> DocWords:
    refs: list[tuple[int, int]] = []
    for page in ix.doc.pages:
        for line in page.lines:
            refs.extend((page.number, wid) for wid in line.word_ids)
    return DocWords(refs, {r: i for i, r in enumerate(refs)})


def _q(v: float) -> int:
    return int(min(POS_BINS - 1, max(0, v * POS_BINS)))


def layout_doc(ix: DocIndex, specs: list[FieldSpec], words: DocWords | None = None) -> LayoutDoc:
    """The model's input for one document and one schema's scalar fields (no targets)."""
    words = words or doc_words(ix)
    n = len(words.refs)
    ids: list[int] = []
    id_start = np.zeros(n + 1, dtype=np.int64)
    pos = np.zeros((n, 6), dtype=np.int64)
    flags = np.zeros((n, len(FLAG_NAMES)), dtype=np.float32)
    xy = np.zeros((n, 3), dtype=np.float32)
    medians: dict[int, float] = {}
    for page in ix.doc.pages:
        sizes = sorted(w.font_size for w in page.words if w.font_size)
        medians[page.number] = sizes[len(sizes) // 2] if sizes else 0.0
    for i, (pn, wid) in enumerate(words.refs):
        page = ix.doc.pages[pn - 1]
        w = page.words[wid]
        ids.extend(word_ids(w.text))
        id_start[i + 1] = len(ids)
        W, H = max(page.width, 1e-6), max(page.height, 1e-6)
        b = w.bbox
        line = page.lines[w.line].word_ids if 0 <= w.line < len(page.lines) else (wid,)
        k = line.index(wid) if wid in line else 0
        pos[i] = (_q(b.x0 / W), _q(b.y0 / H), _q(b.x1 / W), _q(b.y1 / H), min(pn - 1, MAX_PAGE - 1),
                  min(k, MAX_LINE_POS - 1))
        xy[i] = ((b.x0 + b.x1) / 2 / W, (b.y0 + b.y1) / 2 / H, pn)
        med = medians[pn]
        t = w.text.strip()
        flags[i, 5] = 1.0 if w.bold else 0.0
        if w.font_size and med:
            flags[i, 6] = min(3.0, w.font_size / med) - 1.0
            flags[i, 7] = 1.0
        flags[i, 8] = 1.0 if k == 0 else 0.0
        flags[i, 9] = 1.0 if k == len(line) - 1 else 0.0
        flags[i, 10] = 1.0 if t.endswith(":") else 0.0
        letters = [c for c in t if c.isalpha()]
        flags[i, 11] = 1.0 if len(letters) >= 2 and all(c.isupper() for c in letters) else 0.0
    for j, vt in enumerate(_TYPED):
        for s in ix.spans(vt):
            fl = words.span_words(ix, s)
            if fl is not None:
                flags[fl[0]:fl[1] + 1, j] = 1.0
    q_ids, q_start = field_query_ids(specs)
    q_type = np.array([VALUE_TYPES.index(s.type) if s.type in VALUE_TYPES else VALUE_TYPES.index("text")
                       for s in specs], dtype=np.int64)
    return LayoutDoc(np.array(ids, dtype=np.int64), id_start, pos, flags, xy, q_ids, q_start, q_type)


def field_query_ids(specs: list[FieldSpec]) -> tuple[np.ndarray, np.ndarray]:
    """Hashed ids of each field's query: label n-grams and words, description words, multiline."""
    out: list[int] = []
    start = [0]
    for s in specs:
        ids: list[int] = []
        for phrase in s.labels[:MAX_LABELS]:
            for tok in fold_label(phrase).split():
                ids.extend(_ngrams(tok[:24]))
                ids.append(_h("w:" + tok[:24]))
            ids.append(_h("lp:" + fold_label(phrase)))
        for tok in fold_label(s.description).split()[:MAX_DESC_WORDS]:
            ids.append(_h("d:" + tok))
        ids.append(_h(f"ml:{int(s.multiline)}"))
        out.extend(ids)
        start.append(len(out))
    return np.array(out, dtype=np.int64), np.array(start, dtype=np.int64)
