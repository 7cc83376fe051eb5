"""Which label a value belongs to where labels stand over their values or across a column.

    label_above     a date or a document number printed alone in its cell (no words left of it
                    within a cell gap: alone on its line, or in a row of values under a row of
                    labels) under words that are only a label, in its column and tightly above
                    it ("Fecha operación:" over "14.12.2019"): the label means this field: pass; a
                    rival of it (a delivery, order or customer-number label over an issue date or
                    an invoice number; a label made only of known cue phrases): fail, unless the
                    same text is printed elsewhere on the page with a label of this field (an
                    issue date equal to the delivery date);
                    a reference to an invoice ("Réf. facture") over a number is no fail (an
                    invoice's own number, or on a credit note the credited one's: `other_document`);
                    a VAT ID under the other party's VAT label ("N° TVA client" over the seller's
                    VAT ID, or one addressed to the reader: "UW BTW-NUMMER") or under a label made
                    only of another field's cue phrases ("ORDER NUMBER"): fail (no pass for VAT IDs)
    label_across    a date or a document number read to the right of its label across a column
                    gap (at least GAP_EMS line heights of white space), while the line tightly
                    below that label, in the label's column, prints a value of the field's kind
                    ("Nº de factura:" with "FAC2020373234" under it, read as the postcode "10139"
                    of the address block to its right): fail. Only fails (a label with nothing
                    under it says nothing about the value across the gap)

Fields by role (verifiers.checks.fields); positions from the evidence (page, box) and the parsed
document. Nothing is judged without them.
"""
from __future__ import annotations

import re
from typing import Any, Iterator, Literal

from docassay.verifiers.checks.fields import roles_of
from docassay.verifiers.checks.labels import INVOICE_REFERENCES
from docassay.verifiers.checks.page import Place, line_words, place
from docassay.verifiers.checks.signal import Signal
from docassay.verifiers.checks.vocabulary import (
    READER_WORDS,
    RIVALS,
    ROLE_MEANING,
    SUPPORTS,
    fold,
    is_label_text,
    meanings_in,
)
from docassay.verifiers.context import VerifyContext

__all__ = ["label_above", "label_across", "GAP_EMS", "CHECKS"]

_ROLES = ("document_number", "issue_date", "due_date", "delivery_date")
_VAT_ROLES = ("seller_vat_id", "buyer_vat_id")     # label_above: only the other party's label over it fails
_OTHER_PARTY = {"seller_vat_id": "buyer", "buyer_vat_id": "seller"}


def _other_partys(role: str, label: str) -> bool:
    """A VAT label that names the other party: "N° TVA client", "USt-IdNr. Kunde"; for the seller's
    VAT ID also one addressed to the reader ("UW BTW-NUMMER", "Your VAT no.")."""
    found = meanings_in(label)
    if not any(m == "vat_id" for m, *_ in found):
        return False
    if _OTHER_PARTY[role] in {m for m, *_ in found}:
        return True
    return role == "seller_vat_id" and bool(READER_WORDS & set(fold(label).split()))
GAP_EMS = 6.0           # white space between a label and a value, in line heights, that makes two columns
_TIGHT_EMS = 1.2        # the most white space between a label's line and its value's line (stacked)
_CELL_EMS = 1.5         # a gap wider than this between two words of a line separates two cells
_DATE = re.compile(r"\d{1,4}[./\-]\d{1,2}[./\-]\d{2,4}|\d{1,2}\.?\s+(?:de\s+)?[^\W\d_]{3,}\.?\s+(?:de\s+)?\d{4}"
                   r"|[^\W\d_]{3,}\.?\s+\d{1,2},?\s+\d{4}")
_ID = re.compile(r"^(?=[^\s]*\d)[\w./\-#]{3,}$")


def _em(page: Any, li: int) -> float:
    b = page.lines[li].bbox
    return max(b.y1 - b.y0, 1e-6)


def _cells(words: list, em: float) -> list[list]:
    """The words of a line split into cells at gaps wider than _CELL_EMS line heights."""
    cells: list[list] = []
    for w in words:
        if cells and w.bbox.x0 - cells[-1][-1].bbox.x1 <= _CELL_EMS * em:
            cells[-1].append(w)
        else:
            cells.append([w])
    return cells


def _text(cell: list) -> str:
    return " ".join(w.text for w in cell)


def _next_line(page: Any, li: int, x0: float, x1: float, step: int) -> list | None:
    """The words of the nearest line above (step -1) or below (+1) line `li` that stand within
    [x0, x1], when that line is tightly spaced to it; else None."""
    lines = page.lines
    here = lines[li].bbox
    em = _em(page, li)
    k = li + step
    while 0 <= k < len(lines):
        b = lines[k].bbox
        gap = (here.y0 - b.y1) if step < 0 else (b.y0 - here.y1)
        if gap > _TIGHT_EMS * em:
            return None
        if gap >= -0.3 * em:                 # a line that overlaps this one vertically is the same row
            inside = [w for w in line_words(page, k) if min(w.bbox.x1, x1) - max(w.bbox.x0, x0) > 0]
            if inside:
                return inside
        k += step
    return None


def _judge(role: str, label: str) -> tuple[Literal["pass", "fail"], str] | None:
    """('pass' | 'fail', phrase) for what the label `label` says about a value of `role`."""
    found = meanings_in(label)
    if not found:
        return None
    last_end = max(e for _, _, _, e in found)
    meanings = {m for m, _, _, e in found if e == last_end}
    phrase = next(p for _, p, _, e in found if e == last_end)
    own = ROLE_MEANING[role]
    if own in meanings or meanings & set(SUPPORTS.get(role, ())):
        return "pass", phrase
    covered = {k for _, _, b, e in found for k in range(b, e)}
    if meanings & set(RIVALS.get(role, ())) and len(covered) == len(fold(label).split()):
        return "fail", phrase        # only a label made wholly of known cue phrases ("Date limite" is not)
    return None


def _means_field(role: str, label: str) -> bool:
    return (_judge(role, label) or ("", ""))[0] == "pass"


def _placed(ctx: VerifyContext, roles: tuple[str, ...] = _ROLES) -> Iterator[tuple[str, str, Place]]:
    """(field, role, place) for each present field of `roles` (dates, document numbers) whose place is known."""
    for f, role in roles_of(ctx.schema).by_field.items():
        if role in roles and ctx.record.get(f) not in (None, ""):
            p = place(ctx, f)
            if p is not None:
                yield f, role, p


def _kind_like(role: str, text: str) -> bool:
    t = text.strip()
    if role == "document_number":
        return bool(_ID.match(t)) and not _DATE.search(t)
    return bool(_DATE.search(t))


def _value_words(p: Place) -> list:
    """The words the value was read from (inside its box on its line)."""
    return [w for w in line_words(p.page, p.line) if w.bbox.x0 >= p.x0 - 1e-6 and w.bbox.x1 <= p.x1 + 1e-6]


def _own_label_elsewhere(p: Place, role: str) -> bool:
    """The value's printed text stands elsewhere on its page at the end of a cell, after a label
    that means the field, or alone in its cell under or right of one (an issue date equal to the
    delivery date, printed under both labels)."""
    at = _value_words(p)
    text = _text(at).strip()
    if not text:
        return False
    mine = {id(w) for w in at}
    for li in range(len(p.page.lines)):
        em = _em(p.page, li)
        cells = _cells(line_words(p.page, li), em)
        for i, cell in enumerate(cells):
            whole = _text(cell).strip()
            if not whole.endswith(text) or id(cell[-1]) in mine:
                continue
            head = whole[: len(whole) - len(text)].strip()
            if head:
                labels = [head]
            else:
                above = _next_line(p.page, li, cell[0].bbox.x0, cell[-1].bbox.x1, -1)
                labels = ([_text(above)] if above else []) + ([_text(cells[i - 1])] if i > 0 else [])
            if any(_means_field(role, lab) for lab in labels):
                return True
    return False


def _alone_in_cell(p: Place) -> bool:
    """No word of the value's line stands left of it within a cell gap (the value starts its line,
    or a cell of a row of values under a row of labels)."""
    em = _em(p.page, p.line)
    left = [w for w in line_words(p.page, p.line) if w.bbox.x1 <= p.x0 + 0.1 * em]
    return not left or p.x0 - left[-1].bbox.x1 > _CELL_EMS * em


def label_above(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, role, p in _placed(ctx, _ROLES + _VAT_ROLES):
        if not _alone_in_cell(p):
            continue
        above = _next_line(p.page, p.line, p.x0, p.x1, -1)
        if not above:
            continue
        label = _text(above)
        if not is_label_text(label):
            continue
        if role in _VAT_ROLES:               # a VAT ID: the other party's label over it fails ("N° TVA client"), or
            verdict: tuple[Literal["pass", "fail"], str] | None = (   # one wholly of another field ("ORDER NUMBER")
                ("fail", f"the {_OTHER_PARTY[role]}'s VAT ID") if _other_partys(role, label) else _judge(role, label))
            if verdict is not None and verdict[0] == "pass":
                verdict = None               # no pass for VAT IDs
        else:
            verdict = _judge(role, label)
        if verdict is None:
            continue
        outcome, phrase = verdict
        if outcome == "fail" and role == "document_number" and fold(phrase) in INVOICE_REFERENCES:
            continue                         # "Réf. facture" over a number: its own or the credited one's (other_document)
        if outcome == "fail" and _own_label_elsewhere(p, role):
            continue                         # the same value printed under its own label too
        what = "means this field" if outcome == "pass" else f"means another field ({phrase!r})"
        out.append(Signal(f, "label_above", outcome, f"under the label {label[:60]!r}, which {what}"))
    return out


def _across(p: Place) -> tuple[list, float] | None:
    """The label cell left of the value across a column gap, and the gap in line heights."""
    em = _em(p.page, p.line)
    left = [w for w in line_words(p.page, p.line) if w.bbox.x1 <= p.x0 + 0.1 * em]
    if not left:
        return None
    cell = _cells(left, em)[-1]
    gap = (p.x0 - cell[-1].bbox.x1) / em
    return (cell, gap) if gap >= GAP_EMS else None


def label_across(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, role, p in _placed(ctx):
        got = _across(p)
        if got is None:
            continue
        cell, gap = got
        label = _text(cell)
        if not is_label_text(label) or not _means_field(role, label):
            continue
        x0, x1 = cell[0].bbox.x0, cell[-1].bbox.x1
        below = _next_line(p.page, p.line, x0, x1, +1)
        if not below:
            continue
        under = _text(_cells(below, _em(p.page, p.line))[0])
        if _kind_like(role, under) and under.strip() not in (str(ctx.record.get(f)).strip(), _text(_value_words(p)).strip()):
            out.append(Signal(f, "label_across", "fail",
                              f"its label {label[:40]!r} is {gap:.0f} line heights to the left, across a column, "
                              f"and prints {under[:40]!r} under it"))
    return out


CHECKS = (("label_above", label_above), ("label_across", label_across))
