"""Proposals: for each schema field, every (candidate span, locator) pair a generator may choose.

A proposal couples a typed span on the page with a locator that finds that same span again (checked
by replaying it on this document), plus the context a scorer needs: the label text printed to its
left or above, the relation, where on the page it sits. The baseline generator scores proposals
with label similarity and a few priors; the MoE model scores the same proposals with a learned
function. Both then build instructions from the best proposal per field (`build.py`).
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, replace
from typing import Callable

from docassay.extractors.document import BBox
from docassay.extractors.instructions import values as V
from docassay.extractors.instructions.executor import _text_near, candidates_for
from docassay.extractors.instructions.language import FieldRule, Locale, Locator
from docassay.extractors.labels import FieldSpec
from docassay.extractors.spans import DocIndex, Span

__all__ = ["Proposal", "propose", "label_context", "reorder_keeping_level"]

MAX_PROPOSALS_PER_FIELD = 40
_DIGIT = re.compile(r"\d")


@dataclass
class Proposal:
    field: str
    span: Span
    locator: Locator
    value: object
    label: str                 # label text as printed ("" for region locators)
    relation: str              # right | below | region | detect | pattern
    rank_hint: int = 0         # position of the span among the locator's candidates (0 = nearest)
    section: str = ""          # the heading of the block the value sits in ("Verkäufer", "Bill to")
    features: dict[str, float] = dataclasses.field(default_factory=dict)
    score: float = 0.0

    lines: int = 1             # multi-line values (addresses): how many lines the value spans here
    normalize: dict[str, object] = dataclasses.field(default_factory=dict)   # FieldRule.normalize overrides

    def rule(self, spec: FieldSpec) -> FieldRule:
        lines = self.lines if spec.multiline and self.lines > 1 else None
        return FieldRule(type=spec.type, locator=self.locator, lines=lines, normalize=dict(self.normalize))


# A currency printed before the amount is part of the value's cell, not of its label.
_CURRENCY_TAIL = re.compile(r"(?:\b[A-Z]{3}|[$€£¥₹]|\bRM|\bRs\.?|\bS?Fr\.|\bUS\$)\s*$")
_CURRENCY_ONLY = re.compile(r"^\s*(?:[A-Z]{3}|[$€£¥₹]|RM|Rs\.?|S?Fr\.|in\s+[A-Z]{3}|\(?[A-Z]{3}\)?)\s*$")
_RATE = re.compile(r"^[(\[]?[\d.,]*\s*%?[)\]]?[:.]*$")


def reorder_keeping_level(props: list[Proposal], prior: Callable[[Proposal], float]) -> None:
    """Add `prior(p)` to each proposal's score and re-sort them (ties by span); the best then keeps
    the score the best had before (the field's level: what the calibrator reads as the generator's
    confidence), so a prior moves only the order. `props` must not be empty."""
    level = props[0].score
    for p in props:
        p.score += prior(p)
    props.sort(key=lambda p: (-p.score, p.span.key))
    shift = level - props[0].score
    for p in props:
        p.score += shift


def _label_tail(text: str, max_tokens: int = 5) -> str:
    """The label-like end of a prefix: trailing tokens up to the last one with a digit. A rate or
    bare punctuation at the very end ("B.T.W. 21 %:") is skipped: it varies between documents."""
    toks = text.replace("\u00a0", " ").split()
    while toks and _RATE.match(toks[-1]) and (len(toks) > 1):
        toks.pop()
    tail: list[str] = []
    for t in reversed(toks):
        if _DIGIT.search(t) or len(tail) >= max_tokens:
            break
        tail.append(t)
    return " ".join(reversed(tail)).strip()


def _is_labelish(text: str) -> bool:
    t = text.strip()
    if not t or len(t) > 60:
        return False
    letters = sum(ch.isalpha() for ch in t)
    digits = sum(ch.isdigit() for ch in t)
    return letters >= 2 and digits <= max(1, letters // 4) and len(t.split()) <= 7


def label_context(ix: DocIndex, span: Span) -> list[tuple[str, str, BBox]]:
    """Label texts around a span: (label text as printed, relation of the value to it, label box).

    Left: the label-like end of the span's own segment, else of the segments to its left (passing
    over a currency or unit printed between label and value). Above: the label-like segments of
    the few lines above, in the value's column (a block title two lines up counts: "Verkäufer:"
    over "Globale Nummer: ..." over "Lieferant GmbH").
    """
    seg = ix.segment(span.page, span.line, span.segment)
    pi = ix.page(span.page)
    out: list[tuple[str, str, BBox]] = []
    prefix = _CURRENCY_TAIL.sub("", seg.text[:span.seg_start]).rstrip()
    tail = _label_tail(prefix)
    if tail and _is_labelish(tail):
        s0 = prefix.rfind(tail)
        out.append((tail, "right", ix.sub_bbox(seg, s0, s0 + len(tail))))
    elif not any(ch.isalnum() for ch in prefix):      # nothing but ":" before the value
        for left in reversed(pi.segments_by_line[span.line][max(0, span.segment - 3):span.segment]):
            if _CURRENCY_ONLY.match(left.text) or not any(ch.isalnum() for ch in left.text):
                continue                        # "EUR", "(RM)", ":" between label and value
            tail = _label_tail(left.text)
            if tail and _is_labelish(tail):
                s0 = left.text.rfind(tail)
                out.append((tail, "right", ix.sub_bbox(left, s0, s0 + len(tail))))
            break
    found_above = 0
    for li in range(span.line - 1, max(-1, span.line - 5), -1):
        segs = [s for s in pi.segments_by_line[li]
                if (min(s.bbox.x1, span.bbox.x1 + pi.em) - max(s.bbox.x0, span.bbox.x0 - pi.em)) > 0]
        if not segs:
            continue
        if span.bbox.y0 - segs[0].bbox.y1 > 6 * pi.em:
            break
        s = min(segs, key=lambda s: abs(s.bbox.x0 - span.bbox.x0))
        t = _label_tail(s.text)
        if t and _is_labelish(t):
            s0 = s.text.rfind(t)
            out.append((t, "below", ix.sub_bbox(s, s0, s0 + len(t))))
            found_above += 1
            if found_above >= 3:
                break
    return out


def section_heading(ix: DocIndex, page: int, line: int, x0: float, max_lines: int = 14) -> str:
    """The nearest heading above a position: a line holding one short label-like segment that
    starts at or left of `x0` (block titles such as "Verkäufer", "Bill To", "Rechnungsempfänger")."""
    pi = ix.page(page)
    y_top = pi.page.lines[line].bbox.y0 if line < len(pi.page.lines) else 0.0
    for li in range(line - 1, max(-1, line - max_lines), -1):
        segs = pi.segments_by_line[li]
        if y_top - pi.page.lines[li].bbox.y1 > 0.3 * pi.page.height:
            break
        if len(segs) != 1:
            continue
        seg = segs[0]
        if seg.bbox.x0 > x0 + pi.em or seg.bbox.x1 < x0 - 20 * pi.em:
            continue
        t = seg.text.strip().rstrip(":")
        if _is_labelish(t) and len(t.split()) <= 4 and not _DIGIT.search(t):
            return t
    return ""


_KEYVALUE = re.compile(r"^[^\d:]{1,25}:|\b(?:tel|fax|phone|gst|sst|vat|reg|email|www|http)\b", re.I)


def continuation_lines(ix: DocIndex, span: Span, max_lines: int = 6) -> int:
    """How many lines a multi-line value starting at `span` runs over: the lines directly below,
    aligned with it, until a gap, a key-value line ("TEL: ...", "GST Reg No ...") or a lone label."""
    pi = ix.page(span.page)
    n, last = 1, span.bbox
    li = span.line
    while n < max_lines:
        li += 1
        if li >= len(pi.segments_by_line):
            break
        segs = [s for s in pi.segments_by_line[li]
                if (min(s.bbox.x1, last.x1 + pi.em) - max(s.bbox.x0, last.x0 - pi.em)) > 0]
        if len(segs) != 1 or segs[0].bbox.y0 - last.y1 > 1.2 * pi.em:
            break
        t = segs[0].text.strip()
        if _KEYVALUE.search(t) or t.endswith(":") or len(t) < 2:
            break
        n += 1
        last = segs[0].bbox
    return n


def _occurrence(ix: DocIndex, label: str, box: BBox, page: int) -> tuple[int, bool] | None:
    """(occurrence index, exact) of the label printed at `box`: counted among whole-segment
    matches when this one is whole (robust to "SUB-TOTAL" or "TOTAL QTY" elsewhere), else among
    all matches; from the top in the first half, from the end in the second."""
    matches = ix.find_label(label)
    for m in matches:
        if m.page == page and abs(m.bbox.x0 - box.x0) < 1.0 and abs(m.bbox.y0 - box.y0) < 1.0:
            pool = [x for x in matches if x.whole] if m.whole else matches
            i = pool.index(m)
            return (i if i <= len(pool) // 2 else i - len(pool)), m.whole
    return None


def _line_of(ix: DocIndex, box: BBox, span: Span) -> int:
    """Line index (on the span's page) of a label box: the span's line, or the one above for 'below'."""
    pi = ix.page(span.page)
    for li in range(span.line, -1, -1):
        if pi.page.lines[li].bbox.y_overlap(box) >= 0.5:
            return li
    return span.line


def _same(a: Span, b: Span) -> bool:
    return a.page == b.page and a.line == b.line and abs(a.bbox.x0 - b.bbox.x0) < 1.0 and abs(a.bbox.x1 - b.bbox.x1) < 1.0


def _spans_of(ix: DocIndex, vtype: str) -> list[Span]:
    if vtype in ("amount", "number", "integer"):
        return ix.spans("amount")
    if vtype == "text":
        return ix.spans("text")
    if vtype == "boolean":
        return []
    return ix.spans(vtype)


_Entry = tuple[Locator, str, str, int, str]          # locator, label, relation, rank, section


@dataclass
class _Plan:
    """What `propose` finds for one value type on one document, whichever field asks: the detected
    currency, and per span its value and its (locator, label, relation, rank, section) entries."""
    detect: tuple[Span, Locator] | None
    spans: list[tuple[Span, object, list[_Entry]]]


def propose(ix: DocIndex, spec: FieldSpec, locale: Locale) -> list[Proposal]:
    """Every proposal for one field whose locator, replayed on this document, finds its span.

    The spans, their locators and their replays depend on the field's value type and the locale
    only, so they are found once per document and type (`_plan`, kept in `ix.memo`) and every field
    of that type (net, tax and gross totals; issue and due dates) gets its own proposals from them."""
    key = ("proposals", spec.type, locale)
    plan = ix.memo.get(key)
    if plan is None:
        plan = ix.memo[key] = _plan(ix, spec.type, locale)
    assert isinstance(plan, _Plan)
    out: list[Proposal] = []
    if plan.detect is not None:
        span, loc = plan.detect
        out.append(Proposal(spec.name, span, loc, span.value, "", "detect"))
    for span, value, entries in plan.spans:
        n_lines = _continuation(ix, span) if spec.multiline else 1
        for loc, label, relation, rank, sect in entries:
            out.append(Proposal(spec.name, span, loc, value, label, relation, rank, sect, lines=n_lines))
    return out


def _continuation(ix: DocIndex, span: Span) -> int:
    key = ("continuation_lines", span.key)
    n = ix.memo.get(key)
    if n is None:
        n = ix.memo[key] = continuation_lines(ix, span)
    assert isinstance(n, int)
    return n


def _plan(ix: DocIndex, vtype: str, locale: Locale) -> _Plan:
    detect: tuple[Span, Locator] | None = None
    if vtype == "currency":
        loc = Locator(by="detect", what="currency")
        hits = candidates_for(ix, loc, FieldRule(vtype, loc))
        if hits:
            detect = (hits[0], loc)
    spans: list[tuple[Span, object, list[_Entry]]] = []
    seen: set[tuple] = set()
    for span in _spans_of(ix, vtype):
        value = V.normalize(span.text, vtype, locale, {})
        if value is None:
            continue
        entries: list[_Entry] = []
        for label, relation, lbox in label_context(ix, span):
            found_occ = _occurrence(ix, label, lbox, span.page)
            if found_occ is None:
                continue
            occ, exact = found_occ
            loc = Locator(by="anchor", label=label, relation=relation, occurrence=occ, exact=exact)
            probe = FieldRule(vtype, loc)
            found = candidates_for(ix, loc, probe)
            rank = next((i for i, s in enumerate(found[:5]) if _same(s, span)), None)
            if rank is None:
                continue
            if rank:
                loc = replace(loc, skip=rank)
            key = (span.key, label, relation)
            if key in seen:
                continue
            seen.add(key)
            sect = section_heading(ix, span.page, min(span.line, _line_of(ix, lbox, span)), min(lbox.x0, span.bbox.x0))
            entries.append((loc, label, relation, rank, sect))
        # Always also offer the span by its place on the page (for values printed without a label).
        pi = ix.page(span.page)
        W, H = pi.page.width, pi.page.height
        b = span.bbox
        pad_x, pad_y = 0.02, 0.01
        loc = Locator(by="region", page=span.page if span.page == 1 else span.page - len(ix.pages) - 1,
                      bbox=(max(0.0, b.x0 / W - pad_x), max(0.0, b.y0 / H - pad_y),
                            min(1.0, b.x1 / W + pad_x), min(1.0, b.y1 / H + pad_y)), pick="nearest")
        found = candidates_for(ix, loc, FieldRule(vtype, loc))
        if found and _same(found[0], span) and (span.key, "region") not in seen:
            seen.add((span.key, "region"))
            entries.append((loc, "", "region", 0, section_heading(ix, span.page, span.line, span.bbox.x0)))
        spans.append((span, value, entries))
    return _Plan(detect, spans)


def text_after_label(ix: DocIndex, label: str, relation: str, occurrence: int) -> list[Span]:
    """For tests and tools: what a text anchor locator would read."""
    matches = ix.find_label(label)
    if not matches:
        return []
    return _text_near(ix, matches[occurrence], relation, None)
