"""The sender's return line: the one-line address of the sender printed over the recipient's
address in a window envelope's field ("Muster GmbH · Hauptstr. 1 · 12345 Berlin", DIN 5008's
Rücksendeangabe, common on letters and invoices across Europe).

    sender_line   a seller's name read from the block right under such a line, while the line
                  starts with another name, is the recipient's: fail; a buyer's name read from the
                  return line itself (the name it starts with) is the sender's: fail. A seller's
                  name the line starts with, a buyer's name right under it: pass. Nothing where no
                  return line stands over or at the value.

A return line is one cell of a line (runs of words split where the gap is wide) of three or more
parts joined by "·", "•" or "|", the last holding a digit (the postcode) and one before it a
digit (the house number). The line right above the value is looked at only when it stands in the
value's column, at most RETURN_GAP_EMS of the value's line height above it; the recipient's name
under a return line (`names_under_return_lines`, for `printed.party_printed`) within twice that
of the return line's height, past an attention line.
"""
from __future__ import annotations

import re
from typing import Any, Iterator

from docassay.verifiers.checks.fields import roles_of
from docassay.verifiers.checks.page import Place, line_cells, place
from docassay.verifiers.checks.plausibility import FIELD_SEPARATOR, is_attention_line
from docassay.verifiers.checks.signal import Signal
from docassay.verifiers.checks.values import text
from docassay.verifiers.context import VerifyContext
from docassay.verifiers.tolerance import fold_text

__all__ = ["sender_line", "return_name", "names_under_return_lines", "CHECKS"]

RETURN_GAP_EMS = 2.5         # the return line stands at most this many line heights above the first line under it
CELL_GAP_EMS = 1.5           # a gap this wide between two words of a line separates cells (columns)


def return_name(cell: str) -> str | None:
    """The name a sender's return line starts with, or None when `cell` is no return line."""
    parts = [s.strip() for s in FIELD_SEPARATOR.split(cell)]
    if len(parts) < 3 or not all(parts):
        return None
    if not re.search(r"\d", parts[-1]) or not any(re.search(r"\d", s) for s in parts[1:-1]):
        return None
    return parts[0] if not re.search(r"\d", parts[0]) else None


def _cell_over(p: Place, li: int) -> str | None:
    """The text of line `li`'s cell that overlaps the value horizontally, or None."""
    for x0, x1, t in line_cells(p.page, li, CELL_GAP_EMS):
        if min(x1, p.x1) - max(x0, p.x0) > 0:
            return t
    return None


def _above(p: Place) -> str | None:
    """The return line's name right above the value's line, in its column, or None."""
    lines = getattr(p.page, "lines", None) or []
    if not 0 < p.line < len(lines):
        return None
    here = lines[p.line].bbox
    em = max(here.y1 - here.y0, 1e-6)
    for li in range(p.line - 1, -1, -1):
        there = lines[li].bbox
        if here.y0 - there.y1 > RETURN_GAP_EMS * em:
            return None
        cell = _cell_over(p, li)
        if cell is not None:
            return return_name(cell)
    return None


def names_under_return_lines(page: Any) -> Iterator[tuple[int, str]]:
    """(line index, text) of the cell right under each sender's return line of `page` (the
    recipient's first line), in the return line's column; an attention line is skipped."""
    lines = getattr(page, "lines", None) or []
    for li in range(len(lines) - 1):
        for x0, x1, t in line_cells(page, li, CELL_GAP_EMS):
            if return_name(t) is None:
                continue
            em = max(lines[li].bbox.y1 - lines[li].bbox.y0, 1e-6)
            for lj in range(li + 1, min(li + 4, len(lines))):
                if lines[lj].bbox.y0 - lines[li].bbox.y1 > RETURN_GAP_EMS * 2 * em:
                    break
                cell = next((c for c in line_cells(page, lj, CELL_GAP_EMS) if min(c[1], x1) - max(c[0], x0) > 0), None)
                if cell is None:
                    continue
                if not is_attention_line(cell[2]):
                    if not re.search(r"\d", cell[2]):
                        yield lj, cell[2]
                    break


def sender_line(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, role in roles_of(ctx.schema).by_field.items():
        v = text(ctx.record.get(f))
        if role not in ("seller_name", "buyer_name") or v is None:
            continue
        p = place(ctx, f)
        if p is None:
            continue
        own = _cell_over(p, p.line) or ""
        at = return_name(own)
        over = _above(p)
        mine = fold_text(v)
        if at is not None and fold_text(at) == mine:
            ok = role == "seller_name"
            out.append(Signal(f, "sender_line", "pass" if ok else "fail",
                              f"the sender's return line {own[:50]!r} starts with it"))
        elif over is not None:
            ok = role == "buyer_name" or fold_text(over) == mine
            out.append(Signal(f, "sender_line", "pass" if ok else "fail",
                              f"read under the sender's return line, which names {over[:40]!r}"
                              + ("" if ok else ": the block under it is the recipient's")))
    return out


CHECKS = (("sender_line", sender_line),)
