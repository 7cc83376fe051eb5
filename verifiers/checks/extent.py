"""Extent: a party's address holds its whole printed block, no more and no less.

    address_extent   the lines right above and right below the address (same column, tightly
                     spaced, not part of the value) are not address lines themselves: the block
                     begins and ends where the value does: pass. A line above that reads as an
                     address (a floor, a building, a street: "3RD FLR, AEON TAMAN MALURI SC"
                     above "JLN JEJAKA, ...") and is not the party's name, or a line below that
                     does (a postcode and town, a state), means the address was cut short: fail.
                     A value whose first printed line is not an address line (a registration
                     number, a phone number, a name) ran into the block before it: fail.

    id_extent        an identifier (VAT ID, document number) is the whole code printed after its
                     label: a code-like token (with a digit) between the label and the value
                     ("VAT ID: 653090237 RT0001" read as "RT0001"), or right after the value
                     ("ABN 27 351 757 204" read as "27"; "CHE-610.132.919 MWST" read without its
                     short upper-case suffix ending the line, or wrapped alone onto the next
                     line of its cell, right under the label and value), means only part of it
                     was read: fail. Only fails (a whole code is what the readings give by
                     default).

"Reads as an address" is plausibility.address_verdict (a postcode or a street word, and no phone
number, time, date, price or contact detail), the same for every language of the data. Positions
come from the value's evidence (page and box) and the parsed document; nothing is judged without
them. Receipts print the shop's name right above its address, so the party's own name (the
record's name field of the same party) and a line of legal-form words end the block.
"""
from __future__ import annotations

import re
from typing import Any

from docassay.verifiers.checks.fields import roles_of
from docassay.verifiers.checks.page import compact, place
from docassay.verifiers.checks.plausibility import address_verdict
from docassay.verifiers.checks.signal import Signal
from docassay.verifiers.checks.values import text
from docassay.verifiers.checks.vocabulary import fold, is_legal_line, meanings_in
from docassay.verifiers.context import VerifyContext
from docassay.verifiers.evidence import FieldEvidence

__all__ = ["address_extent", "id_extent", "covered_lines", "line_next_to", "wrapped_suffix", "BLOCK_GAP_EMS", "CHECKS"]

BLOCK_GAP_EMS = 0.8          # lines closer than this many line heights belong to one printed block
_NAME_OF = {"seller_address": "seller_name", "buyer_address": "buyer_name"}


def _box(ln: Any) -> tuple[float, float, float, float] | None:
    b: Any = getattr(ln, "bbox", None)
    try:
        return float(b.x0), float(b.y0), float(b.x1), float(b.y1)
    except (AttributeError, TypeError, ValueError):
        return None


def _outside(lines: list, j: int, value_c: str) -> str | None:
    """The text of line `j` when it holds something the value does not, else None."""
    t = str(getattr(lines[j], "text", "") or "")
    c = compact(t)
    return None if not c or c in value_c else t


def field_lines(ctx: VerifyContext, name: str) -> tuple[Any, list[int]] | None:
    """(page, indexes of its lines the field's evidence box covers) for a field read on a page of
    the document, else None (no evidence, no such page, or no line inside the box)."""
    ev = (ctx.evidence or {}).get(name)
    pages = getattr(ctx.document, "pages", None) or []
    if not isinstance(ev, FieldEvidence) or not isinstance(ev.page, int) or not 1 <= ev.page <= len(pages):
        return None
    page = pages[ev.page - 1]
    mine = covered_lines(page, ev.bbox)
    return (page, mine) if mine else None


def covered_lines(page: Any, bbox: Any) -> list[int]:
    """Indexes of the page's lines inside the box (more than half their height and some width
    within it), top to bottom."""
    try:
        x0, y0, x1, y1 = (float(v) for v in bbox)
    except (TypeError, ValueError):
        return []
    hits = []
    for i, ln in enumerate(getattr(page, "lines", None) or []):
        b = _box(ln)
        if b is None:
            continue
        h = max(b[3] - b[1], 1e-6)
        if min(b[3], y1) - max(b[1], y0) > 0.5 * h and min(b[2], x1) - max(b[0], x0) > 0:
            hits.append((b[1], i))
    return [i for _, i in sorted(hits)]


def line_next_to(page: Any, li: int, step: int, *, gap_ems: float = BLOCK_GAP_EMS) -> int | None:
    """The line right above (step -1) or below (+1) line `li` that shares its column and is no
    more than `gap_ems` line heights away; None when there is none."""
    lines = getattr(page, "lines", None) or []
    if not 0 <= li < len(lines):
        return None
    here = _box(lines[li])
    if here is None:
        return None
    em = max(here[3] - here[1], 1e-6)
    best: tuple[float, int] | None = None
    for j, ln in enumerate(lines):
        b = _box(ln)
        if j == li or b is None or min(b[2], here[2]) - max(b[0], here[0]) <= 0:
            continue
        gap = here[1] - b[3] if step < 0 else b[1] - here[3]
        centre_ok = (b[1] + b[3]) / 2 < here[1] if step < 0 else (b[1] + b[3]) / 2 > here[3]
        if not centre_ok or gap > gap_ems * em:
            continue
        if best is None or gap < best[0]:
            best = (gap, j)
    return None if best is None else best[1]


def _is_address_line(t: str) -> bool:
    return address_verdict(t)[0] == "pass" and not is_legal_line(t)


def address_extent(ctx: VerifyContext) -> list[Signal]:
    out = []
    roles = roles_of(ctx.schema)
    for f, role in roles.by_field.items():
        v = text(ctx.record.get(f))
        if role not in _NAME_OF or v is None:
            continue
        found = field_lines(ctx, f)
        if found is None:
            continue
        page, mine = found
        lines = page.lines
        value_c = compact(v)
        name_f = roles.first(_NAME_OF[role])
        name_c = compact(text(ctx.record.get(name_f)) or "") if name_f else ""

        first_text = str(getattr(lines[mine[0]], "text", "") or "")
        above = line_next_to(page, mine[0], -1)
        below = line_next_to(page, mine[-1], +1)
        t_above = _outside(lines, above, value_c) if above is not None else None
        t_below = _outside(lines, below, value_c) if below is not None else None
        is_name = bool(t_above) and bool(name_c) and (compact(t_above) in name_c or name_c in compact(t_above))
        if t_above and not is_name and _is_address_line(t_above):
            out.append(Signal(f, "address_extent", "fail",
                              f"the line above, {t_above[:40]!r}, goes on with the address"))
        elif t_below and _is_address_line(t_below):
            out.append(Signal(f, "address_extent", "fail",
                              f"the line below, {t_below[:40]!r}, goes on with the address"))
        elif len(mine) > 1 and not _is_address_line(first_text) and compact(first_text) in value_c:
            out.append(Signal(f, "address_extent", "fail",
                              f"starts with {first_text[:40]!r}, a line that is not the address"))
        else:
            out.append(Signal(f, "address_extent", "pass", "the address holds its whole printed block"))
    return out


_ID_ROLES = ("seller_vat_id", "buyer_vat_id", "document_number")
_CODE = re.compile(r"^(?=[\w./-]*\d)[\w./-]+$")
WORD_GAP_EMS = 0.6           # a wider gap between words of one line is a column gap ...
WORD_GAP_OF_LINE = 1.5       # ... unless the line's own tightest word gap is this near it (a widely set font),
WORD_GAP_MAX_EMS = 1.2       # ... and never wider than this (a column gap, whatever the font)
SUFFIX_MAX = 4               # a lone upper-case word this short ending the line is part of the code
ROW_SLACK_EMS = 0.25         # lines whose tops lie this close (in line heights) are one printed row


_DATE_OR_AMOUNT = re.compile(r"^(?:\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{4}-\d{2}-\d{2}|-?[\d.,']+[.,]\d{2})$")


def _code_like(tok: str) -> bool:
    t = tok.strip(",;")
    return bool(_CODE.match(t)) and not t.endswith(":") and not _DATE_OR_AMOUNT.match(t)


def _word_gap(row: list, em: float) -> float:
    """The widest gap between two words of one run on this line: `WORD_GAP_EMS` line heights, or
    `WORD_GAP_OF_LINE` times the line's tightest gap where the font sets its words wider apart
    ("Umsatzsteuer-ID: CHE-665.597.188 MWST" with 0.7 line heights between every word), at most
    `WORD_GAP_MAX_EMS`."""
    xs = sorted(row, key=lambda w: w.bbox.x0)
    gaps = [b.bbox.x0 - a.bbox.x1 for a, b in zip(xs, xs[1:]) if b.bbox.x0 - a.bbox.x1 > 0]
    if not gaps:
        return WORD_GAP_EMS * em
    return max(WORD_GAP_EMS * em, min(WORD_GAP_OF_LINE * min(gaps), WORD_GAP_MAX_EMS * em))


def _adjacent(p: Any) -> tuple[list[str], list[str]]:
    """The words of the value's line left and right of it that run on from it without a column
    gap (`_word_gap`)."""
    lines = getattr(p.page, "lines", None) or []
    words = getattr(p.page, "words", None) or []
    if not 0 <= p.line < len(lines):
        return [], []
    row = [words[i] for i in getattr(lines[p.line], "word_ids", ()) if 0 <= i < len(words)]
    b = getattr(lines[p.line], "bbox", None)
    em = max(float(b.y1 - b.y0), 1e-6) if b is not None else 10.0
    left = sorted((w for w in row if w.bbox.x1 <= p.x0 + 0.5), key=lambda w: w.bbox.x0)
    right = sorted((w for w in row if w.bbox.x0 >= p.x1 - 0.5), key=lambda w: w.bbox.x0)
    gap = _word_gap(row, em)
    run_l: list[str] = []
    edge = p.x0
    for w in reversed(left):
        if edge - w.bbox.x1 > gap:
            break
        run_l.insert(0, w.text)
        edge = w.bbox.x0
    run_r: list[str] = []
    edge = p.x1
    for w in right:
        if w.bbox.x0 - edge > gap:
            break
        run_r.append(w.text)
        edge = w.bbox.x1
    return run_l, run_r


def _run_left_x0(p: Any) -> float:
    """The left edge of the words running on from the value leftwards (its label and all) without
    a column gap: where the value's cell begins."""
    lines = getattr(p.page, "lines", None) or []
    words = getattr(p.page, "words", None) or []
    if not 0 <= p.line < len(lines):
        return p.x0
    row = [words[i] for i in getattr(lines[p.line], "word_ids", ()) if 0 <= i < len(words)]
    gap = _word_gap(row, _em(lines[p.line]))
    edge = p.x0
    for w in sorted((w for w in row if w.bbox.x1 <= p.x0 + 0.5), key=lambda w: -w.bbox.x0):
        if edge - w.bbox.x1 > gap:
            break
        edge = w.bbox.x0
    return edge


def _em(ln: Any) -> float:
    b = _box(ln)
    return max(b[3] - b[1], 1e-6) if b is not None else 10.0


def wrapped_suffix(p: Any) -> str | None:
    """A short upper-case word printed alone in the value's cell on the next line, right under
    it ("UID-Nr.: CHE-610.132.919" over "MWST" in a narrow footer column): the code's suffix,
    wrapped. Only when nothing else of that line lies between the cell's left edge and the
    value's right end (with a column gap's slack either side)."""
    lines = getattr(p.page, "lines", None) or []
    words = getattr(p.page, "words", None) or []
    if not 0 <= p.line < len(lines):
        return None
    em = _em(lines[p.line])
    here = _box(lines[p.line])
    x0, x1 = _run_left_x0(p) - WORD_GAP_EMS * em, p.x1 + WORD_GAP_EMS * em
    if here is None:
        return None
    below = [(j, b) for j, ln in enumerate(lines) if j != p.line and (b := _box(ln)) is not None
             and b[1] >= here[3] - ROW_SLACK_EMS * em and b[1] - here[3] <= BLOCK_GAP_EMS * em]
    if not below:
        return None
    top = min(b[1] for _, b in below)
    cell = [w for j, b in below if b[1] <= top + ROW_SLACK_EMS * em
            for i in getattr(lines[j], "word_ids", ()) if 0 <= i < len(words)
            for w in (words[i],) if min(w.bbox.x1, x1) - max(w.bbox.x0, x0) > 0]
    if len(cell) != 1:
        return None
    t = cell[0].text.strip()
    if not (t.isalpha() and t.isupper() and len(t) <= SUFFIX_MAX) or cell[0].bbox.x0 < x0 or cell[0].bbox.x1 > x1:
        return None
    return t


def id_extent(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, role in roles_of(ctx.schema).by_field.items():
        v = text(ctx.record.get(f))
        if role not in _ID_ROLES or v is None:
            continue
        p = place(ctx, f)
        if p is None:
            continue
        left, after = _adjacent(p)
        cues = meanings_in(" ".join(left))
        if cues:                                   # only the words after the last label count
            left = fold(" ".join(left)).split()[max(e for *_, e in cues):]
        before = left[-1:]
        line_ends = len(p.right.split()) == len(after)
        if before and _code_like(before[0]) and fold(before[0]) not in fold(v):
            out.append(Signal(f, "id_extent", "fail", f"{before[0]!r} stands between the label and {v!r}"))
        elif after and _code_like(after[0]) and fold(after[0]) not in fold(v):
            out.append(Signal(f, "id_extent", "fail", f"{v!r} goes on with {after[0]!r}"))
        elif len(after) == 1 and line_ends and after[0].isalpha() and after[0].isupper() \
                and len(after[0]) <= SUFFIX_MAX and after[0] not in v:
            out.append(Signal(f, "id_extent", "fail", f"{v!r} goes on with the suffix {after[0]!r}"))
        elif not after and (w := wrapped_suffix(p)) is not None and w not in v:
            out.append(Signal(f, "id_extent", "fail", f"{v!r} goes on with the suffix {w!r}, wrapped onto the "
                                                      f"next line"))
    return out


CHECKS = (("address_extent", address_extent), ("id_extent", id_extent))
