"""Where a value from the XML is printed on the page: the page words searched with the normalisers.

    find_printed(ix, value, kind) -> Printed | None

`kind` is how the value is compared: amount (every reading of every printed amount, either decimal
convention; a credit amount printed without its sign counts), date (every reading of every printed
date, any order or language), currency (a code or a sign), identifier (case and white space
ignored, whole tokens), text (case, accents and white space folded; a multi-line value is printed
when each of its lines is; a line is printed when it is, or when its words are printed in order on
one line of the page with other words between them, as where two columns of a layout interleave:
"Paseo Ruiz Transportes Goya, 222 SA" prints "Ruiz Transportes SA").
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from docassay.extractors import normalize as norm
from docassay.extractors.document import BBox
from docassay.extractors.spans import DocIndex, Segment

__all__ = ["Printed", "find_printed", "tokens", "in_order", "AMOUNT_TOLERANCE"]

AMOUNT_TOLERANCE = 0.005          # a printed amount equals the XML's when closer than half a cent


@dataclass(frozen=True)
class Printed:
    page: int
    bbox: BBox
    text: str


def _segments(ix: DocIndex):
    for pi in ix.pages:
        for line in pi.segments_by_line:
            for seg in line:
                yield seg


def _hit(ix: DocIndex, seg: Segment, start: int, end: int) -> Printed:
    return Printed(seg.page, ix.sub_bbox(seg, start, end), seg.text[start:end])


def _printed_amounts(ix: DocIndex) -> list[tuple[Segment, int, int, list[Decimal]]]:
    """Every printed amount of the document in reading order: (segment, start, end, the values of
    its readings), read once per document (`ix.memo`) for all the XML's amounts."""
    found = ix.memo.get(("printed_amounts",))
    if found is None:
        found = ix.memo[("printed_amounts",)] = [
            (seg, tok.start, tok.end, [r.value for r in norm.amount_readings(seg.text[tok.start:tok.end]) or [tok]])
            for seg in _segments(ix) for tok in norm.find_amounts(seg.text)]
    assert isinstance(found, list)
    return found


def _amount(ix: DocIndex, target: float) -> Printed | None:
    want = Decimal(str(round(target, 6)))
    tolerance = Decimal(str(AMOUNT_TOLERANCE))
    signless = None
    for seg, start, end, values in _printed_amounts(ix):
        for value in values:
            if abs(value - want) <= tolerance:
                return _hit(ix, seg, start, end)
            if signless is None and want != 0 and abs(abs(value) - abs(want)) <= tolerance:
                signless = _hit(ix, seg, start, end)
    return signless


def _date(ix: DocIndex, iso: str) -> Printed | None:
    for seg in _segments(ix):
        for d in norm.find_dates(seg.text):
            piece = seg.text[d.start:d.end]
            if d.value.isoformat() == iso or any(r.value.isoformat() == iso for r in norm.date_readings(piece)):
                return _hit(ix, seg, d.start, d.end)
    return None


def _currency(ix: DocIndex, code: str) -> Printed | None:
    for seg in _segments(ix):
        if re.search(rf"(?<![A-Za-z]){re.escape(code)}(?![A-Za-z])", seg.text):
            m = re.search(re.escape(code), seg.text)
            assert m is not None
            return _hit(ix, seg, m.start(), m.end())
    for seg in _segments(ix):
        for tok in norm.find_amounts(seg.text):
            if tok.currency == code:
                return _hit(ix, seg, tok.start, tok.end)
    return None


def _squash(text: str) -> tuple[str, list[int]]:
    """Folded text without white space, and for each kept character its offset in `text`."""
    out: list[str] = []
    pos: list[int] = []
    for i, ch in enumerate(text):
        if ch.isspace():
            continue
        f = norm.fold(ch)
        for c in f:
            if not c.isspace():
                out.append(c)
                pos.append(i)
    return "".join(out), pos


def _squashed(ix: DocIndex) -> list[tuple[Segment, str, list[int]]]:
    """Every segment with its `_squash`, once per document (`ix.memo`) for all the XML's texts."""
    found = ix.memo.get(("printed_squashed",))
    if found is None:
        found = ix.memo[("printed_squashed",)] = [(seg, *_squash(seg.text)) for seg in _segments(ix)]
    assert isinstance(found, list)
    return found


def _text_line(ix: DocIndex, line: str, *, whole_tokens: bool) -> Printed | None:
    want, _ = _squash(line)
    if not want:
        return None
    for seg, have, pos in _squashed(ix):
        i = have.find(want)
        while i >= 0:
            start, end = pos[i], pos[i + len(want) - 1] + 1
            before = seg.text[start - 1] if start > 0 else " "
            after = seg.text[end] if end < len(seg.text) else " "
            if not whole_tokens or (not before.isalnum() and not after.isalnum()):
                return _hit(ix, seg, start, end)
            i = have.find(want, i + 1)
    return None


def tokens(text: str) -> list[str]:
    """Folded word tokens of a text (punctuation dropped)."""
    return [t for t in re.split(r"[\W_]+", norm.fold(text)) if t]


def in_order(want: list[str], have: list[str]) -> bool:
    """True when every token of `want` occurs in `have`, in order (others may come between)."""
    it = iter(have)
    return bool(want) and all(any(t == h for h in it) for t in want)


def _interleaved(ix: DocIndex, line: str) -> Printed | None:
    want = tokens(line)
    if len(want) < 2:
        return None
    for p in ix.doc.pages:
        for ln in p.lines:
            if in_order(want, tokens(ln.text)):
                return Printed(p.number, ln.bbox, ln.text)
    return None


def _text(ix: DocIndex, value: str, *, whole_tokens: bool) -> Printed | None:
    lines = [ln for ln in str(value).splitlines() if ln.strip()]
    hits = [_text_line(ix, ln, whole_tokens=whole_tokens) or (None if whole_tokens else _interleaved(ix, ln))
            for ln in lines]
    if not hits or any(h is None for h in hits):
        return None
    first = hits[0]
    assert first is not None
    return Printed(first.page, first.bbox, "\n".join(h.text for h in hits if h is not None))


def find_printed(ix: DocIndex, value: object, kind: str) -> Printed | None:
    """Where `value` is printed, or None. `kind`: amount | quantity | date | currency | code | identifier | text."""
    if value is None or value == "":
        return None
    if kind in ("amount", "quantity", "number", "integer") and isinstance(value, (int, float)) \
            and not isinstance(value, bool):
        return _amount(ix, float(value))
    if kind == "date":
        return _date(ix, str(value))
    if kind == "currency":
        return _currency(ix, str(value))
    return _text(ix, str(value), whole_tokens=kind in ("identifier", "code"))
