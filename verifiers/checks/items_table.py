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
                            of those is printed there or on the line below (a row printed over two
                            lines): pass; a row printing more numbers than the item holds (a
                            column not read, a description cut before its size or code) or an
                            item value its row does not print: fail. Tax rates (a percentage, or
                            a bare number the document prints as a percentage elsewhere), dates
                            and codes (8 digits or more, or letters glued to the digits) are not
                            counted.
    item_rows_printed       between the first and the last line printing an item, every line
                            that prints two or more amounts with cents (a table row) holds one
                            of the items' descriptions: pass; such a line no item was read from
                            (a row skipped): fail
    item_sum_printed        the sum of the items' line totals is printed on a line below the
                            first item row (not an item's) whose words mean a net total or a total
                            (Positionssumme, Subtotal, Total, Netto), or on the line below such a
                            line when it prints no amount (a header row over its values): pass;
                            such lines print amounts, none of them the items' sum (a line total
                            misread, a row missed or read twice): fail; no such line: no signal. Read from the page, not from the
                            record's totals: evidence independent of the header's reading

Columns by role (verifiers.checks.fields: description, quantity, unit_price, line_total); the
printed lines from the parsed document (page.doc_text). Language-general: numbers, percentages
and colons, nothing of a sender or a layout.
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from docassay.verifiers.checks.fields import roles_of
from docassay.verifiers.checks.page import compact, doc_text, lines_printing_amount, number_readings
from docassay.verifiers.checks.signal import Signal
from docassay.verifiers.checks.values import num
from docassay.verifiers.checks.vocabulary import meanings_in
from docassay.verifiers.context import VerifyContext
from docassay.verifiers.settings import Tolerance
from docassay.verifiers.tolerance import matches

__all__ = ["item_quantity_read", "item_description_lines", "item_description_clean", "item_row_numbers",
           "item_rows_printed",
           "item_sum_printed", "QUANTITY_ONE_TOLERANCE", "ROW_NUMBER_TOLERANCE", "MIN_DESCRIPTION_CHARS", "CHECKS"]

QUANTITY_ONE_TOLERANCE = Tolerance("number", abs=0.02, rel=0.005)   # line total = unit price: quantity 1
ROW_NUMBER_TOLERANCE = Tolerance("number", abs=0.005, rel=0.0)     # a held value printed on its row
MIN_DESCRIPTION_CHARS = 3       # shorter descriptions are not looked up among the printed lines
_PERCENT = re.compile(r"\d\s?%")
_CENTS = re.compile(r"(?<![\d.,])\d{1,3}(?:[.,]\d{3})*[.,]\d{2}(?![\d.,%])")
_LABEL_VALUE = re.compile(r"[^\W\d_]{2,}\.?\s*:\s*\S")
_CURRENCY_EDGE = re.compile(r"^(?:[A-Z]{0,3}[$€£¥₹]|[A-Z]{3}(?=\d))|(?:[$€£¥₹]|[A-Z]{3})$")   # A$, €, EUR
_NUMBER_TOKEN = re.compile(r"[-−+(]?\d[\d.,']*[-−)]?")
_CODE_DIGITS = 8                # a run of this many digits is an article or trade number, not an amount
_NUMERIC_ROLES = ("quantity", "unit_price", "line_total")


def _tables(ctx: VerifyContext) -> list[tuple[str, list[Mapping[str, Any]], dict[str, str]]]:
    """(field, rows, role -> column) for every items array of the record that holds item objects."""
    out = []
    for name, cols in roles_of(ctx.schema).items.items():
        rows = ctx.record.get(name)
        if isinstance(rows, list) and rows and all(isinstance(x, Mapping) for x in rows):
            out.append((name, rows, {role: col for col, role in cols.items()}))
    return out


def _described(ctx: VerifyContext) -> list[tuple[Any, str, list[Mapping[str, Any]], dict[str, str], str]]:
    """(the document's DocText, field, rows, role -> column, description column) for every items
    array with a description column; [] when no document is printed."""
    dt = doc_text(ctx.document)
    if not dt.lines:
        return []
    return [(dt, name, rows, col, col["description"]) for name, rows, col in _tables(ctx) if col.get("description")]


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
    out = []
    for dt, name, rows, _col, d in _described(ctx):
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


def _row_numbers(tokens: list[str], rates: frozenset[float] = frozenset()) -> list[tuple[set[float], bool]]:
    """The numbers among printed tokens (each as its possible readings, and whether it may be a
    tax rate: a bare number that is one of the document's printed percentages, a rate column
    without its %): amounts, quantities and prices, with a currency sign or code around them at
    most. Left out: percentages (a token with %, or followed by a lone %), dates, codes (8 digits
    or more, or digits with letters)."""
    out = []
    for j, t in enumerate(tokens):
        if "%" in t or (j + 1 < len(tokens) and tokens[j + 1] == "%"):
            continue
        core = _CURRENCY_EDGE.sub("", t).rstrip(".,")
        if not _NUMBER_TOKEN.fullmatch(core) or len(re.sub(r"\D", "", core)) >= _CODE_DIGITS and core.isdigit():
            continue
        r = {abs(x) for x in number_readings(core)}
        if r:
            out.append((r, core.isdigit() and r <= rates))
    return out


Numbers = list[tuple[set[float], bool]]


def _printed_rows(dt: Any, c: str, descriptions: set[str]) -> list[tuple[Numbers, Numbers]]:
    """For each printed line holding the compact description `c`: (the numbers right of it, those
    and the line below's: where its values may stand). When nothing is printed right of it, the
    line below is the row's. A line below that prints another item (one of `descriptions`) is not
    this row's. Lines whose row prints no number are left out."""
    out = []
    for k, line in enumerate(dt.compact):
        if c not in line:
            continue
        below: Numbers = []
        if k + 1 < len(dt.lines) and not any(o != c and o in dt.compact[k + 1] for o in descriptions):
            below = _row_numbers(dt.lines[k + 1][2].split(), dt.percents)
        printed = _row_numbers(_after(dt.lines[k][2], c) or [], dt.percents) or below
        if printed:
            out.append((printed, printed + below))
    return out


def _row_verdict(held: list[float], row: tuple[Numbers, Numbers]) -> str:
    """"" when the printed row's numbers are the item's, else what differs (a bare number that may
    be a tax rate is not counted, but may be one of the item's values)."""
    printed, near = row
    counted = sum(1 for _, rate in printed if not rate)
    if counted > len(held):
        return f"its row prints {counted} numbers, the item holds {len(held)}"
    missing = [v for v in held if not any(matches(ROW_NUMBER_TOLERANCE, v, p) for r, _ in near for p in r)]
    return f"{missing[0]:g} is not printed on its row" if missing else ""


def item_row_numbers(ctx: VerifyContext) -> list[Signal]:
    out = []
    for dt, name, rows, col, d in _described(ctx):
        held_cols = [col[r] for r in _NUMERIC_ROLES if col.get(r)]
        if not held_cols:
            continue
        descs = [compact(x.get(d)) if isinstance(x.get(d), str) else "" for x in rows]
        known = {c for c in descs if len(c) >= MIN_DESCRIPTION_CHARS}
        judged, flaws = 0, []
        for i, (x, c) in enumerate(zip(rows, descs)):
            if c not in known:
                continue
            held = [abs(v) for v in (num(x.get(k)) for k in held_cols) if v is not None]
            verdicts = [_row_verdict(held, p) for p in _printed_rows(dt, c, known)]
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


def item_rows_printed(ctx: VerifyContext) -> list[Signal]:
    out = []
    for dt, name, rows, _col, d in _described(ctx):
        descs = {compact(x.get(d)) for x in rows if isinstance(x.get(d), str)}
        descs = {c for c in descs if len(c) >= MIN_DESCRIPTION_CHARS}
        hit = [k for k, line in enumerate(dt.compact) if any(c in line for c in descs)]
        if len(hit) < 2:
            continue
        read = set(hit)
        skipped = [k for k in range(hit[0] + 1, hit[-1]) if k not in read
                   and len(_CENTS.findall(dt.lines[k][2])) >= 2 and any(ch.isalpha() for ch in dt.lines[k][2])]
        if skipped:
            out.append(Signal(name, "item_rows_printed", "fail", f"{len(skipped)} printed rows between the items "
                              f"were not read, e.g. {dt.lines[skipped[0]][2][:50]!r}"))
        else:
            out.append(Signal(name, "item_rows_printed", "pass",
                              "every row printed between the first and the last item was read"))
    return out


_TOTAL_MEANINGS = frozenset({"net_total", "gross_total"})
_AMOUNT = re.compile(r"(?<![\d.,])\d+(?:[.,']\d{3})*[.,]\d{2}(?![\d.,%])")   # with cents, grouped or not


def item_sum_printed(ctx: VerifyContext) -> list[Signal]:
    out = []
    for dt, name, rows, col, d in _described(ctx):
        t = col.get("line_total")
        vals = [num(x.get(t)) for x in rows] if t else []
        if not vals or any(v is None for v in vals):
            continue
        descs = {compact(x.get(d)) for x in rows if isinstance(x.get(d), str)}
        descs = {c for c in descs if len(c) >= MIN_DESCRIPTION_CHARS}
        hit = [k for k, line in enumerate(dt.compact) if any(c in line for c in descs)]
        if not hit:
            continue
        total = round(sum(v for v in vals if v is not None), 2)
        read = set(hit)
        labelled = []                   # total lines printing amounts; a header row's values: the line below
        for k in range(hit[0] + 1, len(dt.lines)):
            if k in read or not _TOTAL_MEANINGS & {m[0] for m in meanings_in(dt.lines[k][2])}:
                continue
            at = k if _AMOUNT.search(dt.lines[k][2]) else k + 1
            if at < len(dt.lines) and at not in read and _AMOUNT.search(dt.lines[at][2]):
                labelled.append(at)
        if not labelled:
            continue
        printing = set(lines_printing_amount(dt, total)) & set(labelled) if total else set()
        if printing:
            k = min(printing)
            out.append(Signal(name, "item_sum_printed", "pass", f"the {len(rows)} line totals' sum {total} is "
                              f"printed as {dt.lines[k][2].strip()[:50]!r}"))
        else:
            out.append(Signal(name, "item_sum_printed", "fail", f"the {len(rows)} line totals' sum {total} is printed "
                              f"on none of the {len(labelled)} total lines below the first item, e.g. "
                              f"{dt.lines[labelled[0]][2].strip()[:50]!r}"))
    return out


CHECKS = (("item_quantity_read", item_quantity_read), ("item_description_lines", item_description_lines),
          ("item_description_clean", item_description_clean), ("item_row_numbers", item_row_numbers),
          ("item_rows_printed", item_rows_printed),
          ("item_sum_printed", item_sum_printed))
