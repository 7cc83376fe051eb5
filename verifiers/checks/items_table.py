"""Items table: whether each line item was read as the row it is printed as.

    item_quantity_read      items whose quantity column is empty while their line total and unit
                            price differ (the total / price ratio is the printed quantity, not 1):
                            the quantity was printed and not read: fail; no signal otherwise (an
                            empty quantity with total = price may be an unprinted 1 or a missed
                            one; line_arithmetic judges the items that hold their quantity)
    item_description_lines  every item's description is printed whole on one line of the
                            document: pass; a description found only across several lines or
                            nowhere ran into the text around its row (a note, the next block):
                            fail
    item_description_clean  no description holds a percentage, an amount with cents or a
                            "label: value" pair (a tax note, a price or an id line read into it):
                            pass / fail
    item_row_numbers        each item reads the numbers of its printed row: on the line that
                            prints its description (or the line below, when that line prints no
                            number after it), the numbers right of the description are no more
                            than the item's quantity, unit price and line total it holds, and each
                            of those is printed there: pass; a row printing more numbers than the
                            item holds (a column not read, a description cut before its size or
                            code) or an item value its row does not print: fail. Percentages
                            (a tax-rate column) and dates are not counted.

Columns by role (verifiers.checks.fields: description, quantity, unit_price, line_total); the
printed lines from the parsed document (page.doc_text). Language-general: numbers, percentages
and colons, nothing of a sender or a layout.
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from docassay.verifiers.checks.fields import roles_of
from docassay.verifiers.checks.page import compact, doc_text, number_readings
from docassay.verifiers.checks.signal import Signal
from docassay.verifiers.checks.values import num
from docassay.verifiers.context import VerifyContext
from docassay.verifiers.settings import Tolerance
from docassay.verifiers.tolerance import matches

__all__ = ["item_quantity_read", "item_description_lines", "item_description_clean", "item_row_numbers",
           "QUANTITY_ONE_TOLERANCE", "ROW_NUMBER_TOLERANCE", "MIN_DESCRIPTION_CHARS", "CHECKS"]

QUANTITY_ONE_TOLERANCE = Tolerance("number", abs=0.02, rel=0.005)   # line total = unit price: quantity 1
ROW_NUMBER_TOLERANCE = Tolerance("number", abs=0.005, rel=0.0)     # a held value printed on its row
MIN_DESCRIPTION_CHARS = 3       # shorter descriptions are not looked up among the printed lines
_PERCENT = re.compile(r"\d\s?%")
_CENTS = re.compile(r"(?<![\d.,])\d{1,3}(?:[.,]\d{3})*[.,]\d{2}(?![\d.,%])")
_LABEL_VALUE = re.compile(r"[^\W\d_]{2,}\.?\s*:\s*\S")
_EDGE = re.compile(r"^[^\d\-−]+|[^\d\-−]+$")     # currency signs, units glued to a number
_NUMERIC_ROLES = ("quantity", "unit_price", "line_total")


def _tables(ctx: VerifyContext) -> list[tuple[str, list[Mapping[str, Any]], dict[str, str]]]:
    """(field, rows, role -> column) for every items array of the record that holds item objects."""
    out = []
    for name, cols in roles_of(ctx.schema).items.items():
        rows = ctx.record.get(name)
        if isinstance(rows, list) and rows and all(isinstance(x, Mapping) for x in rows):
            out.append((name, rows, {role: col for col, role in cols.items()}))
    return out


def item_quantity_read(ctx: VerifyContext) -> list[Signal]:
    out = []
    for name, rows, col in _tables(ctx):
        q, p, t = col.get("quantity"), col.get("unit_price"), col.get("line_total")
        if not (q and p and t):
            continue
        empty = [(i, num(x.get(p)), num(x.get(t))) for i, x in enumerate(rows) if x.get(q) in (None, "")]
        judged = [(i, pv, tv) for i, pv, tv in empty if pv and tv is not None]
        if not judged:
            continue
        unread = [(i, tv / pv) for i, pv, tv in judged if not matches(QUANTITY_ONE_TOLERANCE, abs(pv), abs(tv))]
        if unread:
            out.append(Signal(name, "item_quantity_read", "fail", "; ".join(
                f"[{i}] has no quantity, but its line total is {round(r, 3)} × its unit price" for i, r in unread[:3])))
    return out


def item_description_lines(ctx: VerifyContext) -> list[Signal]:
    dt = doc_text(ctx.document)
    if not dt.lines:
        return []
    out = []
    for name, rows, col in _tables(ctx):
        d = col.get("description")
        if not d:
            continue
        judged, spread = 0, []
        for i, x in enumerate(rows):
            c = compact(x.get(d)) if isinstance(x.get(d), str) else ""
            if len(c) < MIN_DESCRIPTION_CHARS:
                continue
            judged += 1
            if not any(c in line for line in dt.compact):
                where = "across several lines" if c in dt.joined else "nowhere as one text"
                spread.append(f"[{i}] {str(x.get(d))[:40]!r} is printed {where}")
        if not judged:
            continue
        if spread:
            out.append(Signal(name, "item_description_lines", "fail", "; ".join(spread[:3])))
        else:
            out.append(Signal(name, "item_description_lines", "pass",
                              f"{judged} descriptions each printed on one line"))
    return out


def item_description_clean(ctx: VerifyContext) -> list[Signal]:
    out = []
    for name, rows, col in _tables(ctx):
        d = col.get("description")
        if not d:
            continue
        judged, flaws = 0, []
        for i, x in enumerate(rows):
            v = x.get(d)
            if not isinstance(v, str) or not v.strip():
                continue
            judged += 1
            for rx, why in ((_PERCENT, "a percentage"), (_CENTS, "an amount with cents"),
                            (_LABEL_VALUE, "a 'label: value' pair")):
                if rx.search(v):
                    flaws.append(f"[{i}] {v[:40]!r} holds {why}")
                    break
        if not judged:
            continue
        if flaws:
            out.append(Signal(name, "item_description_clean", "fail", "; ".join(flaws[:3])))
        else:
            out.append(Signal(name, "item_description_clean", "pass",
                              f"{judged} descriptions hold no tax, price or id text"))
    return out


def _after(text: str, desc: str) -> list[str] | None:
    """The whitespace tokens of `text` right of the description `desc` (compared compact: the
    first token prefix whose compact form holds it); None when the line does not hold it."""
    toks = text.split()
    acc = ""
    for j, t in enumerate(toks):
        acc += compact(t)
        if desc in acc:
            return toks[j + 1:]
    return None


def _row_numbers(tokens: list[str]) -> list[set[float]]:
    """The numbers among printed tokens (each as its possible readings); percentages (a token
    ending in %, or followed by a lone %) and tokens without a digit are left out."""
    out = []
    for j, t in enumerate(tokens):
        if "%" in t or (j + 1 < len(tokens) and tokens[j + 1] == "%") or not any(ch.isdigit() for ch in t):
            continue
        r = number_readings(_EDGE.sub("", t).rstrip(".,"))
        if r:
            out.append({abs(x) for x in r})
    return out


def _printed_rows(dt: Any, c: str) -> list[list[set[float]]]:
    """The numbers of each printed row whose line holds the compact description `c` (right of
    it; the line below when nothing is printed right of it); rows printing no number are left out."""
    out = []
    for k, line in enumerate(dt.compact):
        if c not in line:
            continue
        printed = _row_numbers(_after(dt.lines[k][2], c) or [])
        if not printed and k + 1 < len(dt.lines):
            printed = _row_numbers(dt.lines[k + 1][2].split())
        if printed:
            out.append(printed)
    return out


def _row_verdict(held: list[float], printed: list[set[float]]) -> str:
    """"" when the printed row's numbers are the item's, else what differs."""
    if len(printed) > len(held):
        return f"its row prints {len(printed)} numbers, the item holds {len(held)}"
    missing = [v for v in held if not any(matches(ROW_NUMBER_TOLERANCE, v, p) for r in printed for p in r)]
    return f"{missing[0]:g} is not printed on its row" if missing else ""


def item_row_numbers(ctx: VerifyContext) -> list[Signal]:
    dt = doc_text(ctx.document)
    if not dt.lines:
        return []
    out = []
    for name, rows, col in _tables(ctx):
        d = col.get("description")
        held_cols = [col[r] for r in _NUMERIC_ROLES if col.get(r)]
        if not d or not held_cols:
            continue
        judged, flaws = 0, []
        for i, x in enumerate(rows):
            c = compact(x.get(d)) if isinstance(x.get(d), str) else ""
            if len(c) < MIN_DESCRIPTION_CHARS:
                continue
            held = [abs(v) for v in (num(x.get(k)) for k in held_cols) if v is not None]
            verdicts = [_row_verdict(held, p) for p in _printed_rows(dt, c)]
            if not verdicts:
                continue
            judged += 1
            if all(verdicts):                   # no line holding the description prints the item
                flaws.append(f"[{i}] {verdicts[0]}")
        if not judged:
            continue
        if flaws:
            out.append(Signal(name, "item_row_numbers", "fail", f"{len(flaws)} of {judged} rows: " + "; ".join(flaws[:3])))
        else:
            out.append(Signal(name, "item_row_numbers", "pass", f"{judged} rows print the numbers their items hold"))
    return out


CHECKS = (("item_quantity_read", item_quantity_read), ("item_description_lines", item_description_lines),
          ("item_description_clean", item_description_clean), ("item_row_numbers", item_row_numbers))
