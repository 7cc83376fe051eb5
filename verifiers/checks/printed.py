"""A value the record lacks although its label is printed with one (the reading missed it).

    label_printed   a field the record leaves empty (a date, amount or identifier field with a
                    label meaning: verifiers.checks.vocabulary) whose label is printed with a value
                    of the field's kind right after it, on its line or alone on the next line
                    ("Due date: 06.01.2018", "Sales Tax 20%" over "GBP 242.62"), or, for a date
                    or a number, as a column heading over it ("Fälligkeit" over "05.03.2019"):
                    fail, on the empty field.
                    Nothing when the label is not printed (absent is no evidence), and nothing
                    for a field that holds a value.

    address_printed the seller's address the record leaves empty (an optional field) while one of
                    the `ADDRESS_LINES` lines under the seller's name (the record's, printed on
                    page 1) reads as an address with a postcode or a house number: fail, on the
                    empty field. Nothing without the name printed or such a line

    buyer_elsewhere a buyer's name read under a delivery heading ("Lieferanschrift", "Ship to"),
                    and not printed under the buyer's heading too, while the first page prints
                    another company name (a legal form) heading an address in no delivery,
                    seller or bank block, that is neither this name nor the seller's: fail, on
                    the buyer's name (the delivery recipient read for the buyer, whose own
                    block is printed without a caption; a line with a figure, such as a
                    share-capital notice, is no name). Only fails; nothing when the name is
                    not under a delivery heading, or when no such other block is printed.

    party_printed   a party's name the record leaves empty (an optional seller or buyer name)
                    while the first page prints a company name (it carries a legal form:
                    verifiers.checks.names) heading an address (the next line reads as a street
                    or postcode line), that is not the other party's name nor on a bank or
                    contact line: fail, on the empty field (a buyer's block printed without a
                    caption, "Juniatex Trading LLP" over "182 Queen Road"); for the buyer also
                    the name heading the delivery block ("Deliver to:" / "Femke Bakker", a
                    person's name has no legal form) printed over another address too, in no
                    delivery, seller, bank or contact block (the buyer's own uncaptioned block);
                    and for the buyer a person's name ("Emma Smith": two to four capitalised
                    words, no figure, no legal form, no label) heading an address in the top half
                    of the first page, in no delivery, seller, bank or contact block, and not the
                    seller's name (a private customer's block); and for the buyer the name
                    right under a sender's return line (verifiers.checks.sender: the window
                    envelope's recipient; an attention line under a company's name is skipped
                    too). Nothing when no such block is printed.

A missing optional value is not an error of the record, so no gate holds it; this check is the
evidence that the record is incomplete. What it does with it is the decision's
(verifiers.confidence.decision, `missing_printed`): by default (`confirm`) the record goes to
review with the field named unless the format's trusted history confirms the absence; `review`
always sends it; `report` shows the signal in the row and lets the record pass.
"""
from __future__ import annotations

import re
from typing import Any, Iterator

from docassay.verifiers.checks.fields import roles_of
from docassay.verifiers.checks.labels import nearest_meanings
from docassay.verifiers.checks.names import has_legal_form
from docassay.verifiers.checks.page import Place, compact, doc_lines, heading_above, line_cells, place
from docassay.verifiers.checks.plausibility import address_verdict, is_attention_line
from docassay.verifiers.checks.roles import also_under
from docassay.verifiers.checks.sender import names_under_return_lines
from docassay.verifiers.checks.signal import Signal
from docassay.verifiers.checks.vocabulary import (
    ROLE_MEANING,
    SUPPORTS,
    fold,
    heading_meaning,
    is_label_text,
    meanings_in,
)
from docassay.verifiers.context import VerifyContext

__all__ = ["label_printed", "party_printed", "address_printed", "buyer_elsewhere", "value_after", "CHECKS", "CHECKED_ROLES"]

_MONTH = r"[^\W\d_]{3,10}\.?"
_PATTERNS = {
    "date": re.compile(r"(?<![\d.,/-])(?:\d{1,2}[./-]\d{1,2}[./-](?:\d{4}|\d{2})|\d{4}-\d{2}-\d{2}|"
                       rf"\d{{1,2}}\.?\s+{_MONTH}\s+\d{{4}}|{_MONTH}\s+\d{{1,2}},?\s+\d{{4}})(?![\d.,/-]?\d)"),
    "amount": re.compile(r"(?<![\d.,])-?(?:\d{1,3}(?:[.,' ]\d{3})+|\d+)[.,]\d{2}-?(?![\d.,])"),
    "id": re.compile(r"(?<![\w-])(?=[\w./-]*\d)[A-Z0-9][\w./-]{2,}"),
}
# field role -> the kind of value its label stands before
CHECKED_ROLES = {"issue_date": "date", "due_date": "date", "delivery_date": "date",
                 "net_total": "amount", "tax_total": "amount", "gross_total": "amount",
                 "document_number": "id", "seller_vat_id": "id", "buyer_vat_id": "id"}
_RATE_OR_JOINER = re.compile(r"^(?:\d{1,2}(?:[.,]\d{1,3})?%|[^\W\d_]{1,3})$")   # "20%", "on", "auf", "de"


def _means(text: str, role: str) -> str | None:
    """The cue phrase when the last cue of `text` means `role` (or supports it) and nothing else."""
    near = nearest_meanings(text)
    if near is None:
        return None
    meanings, phrase = near
    own = ROLE_MEANING[role]
    ok = {own, *SUPPORTS.get(role, ())}
    return phrase if meanings and meanings <= ok else None


def value_after(lines: list[tuple[int, int, str]], i: int, role: str) -> tuple[str, str] | None:
    """(label, value) when line `i` prints `role`'s label and a value of its kind right after it,
    on the line or alone at the start of the next line of the same page."""
    kind = CHECKED_ROLES[role]
    rx = _PATTERNS[kind]
    page, _, t = lines[i]
    ms = list(rx.finditer(t))
    for m in ms:                     # "Tel. 02.30.69.34.17 · Numéro de TVA FR61134924979": the second
        phrase = _means(t[:m.start()], role)
        if phrase:
            return phrase, m.group(0).strip()
    if ms:
        return None
    found = meanings_in(t)
    rest = fold(t).split()[max(e for *_, e in found):] if found else []
    if not found or not all(_RATE_OR_JOINER.match(w) for w in rest):      # the line is only a label
        return None
    phrase = _means(t, role)
    if not phrase or i + 1 >= len(lines) or lines[i + 1][0] != page:
        return None
    nxt = lines[i + 1][2]
    hit = rx.search(nxt)
    if hit is None:
        return None
    lead = nxt[:hit.start()]
    if lead.strip(" :").isalpha() and len(lead.strip()) > 3:            # another label first ("Total 12,00"), a currency is fine
        return None
    return phrase, hit.group(0).strip()


def label_printed(ctx: VerifyContext) -> list[Signal]:
    required = set(ctx.schema.get("required") or [])
    wanted = [(f, role) for f, role in roles_of(ctx.schema).by_field.items()
              if role in CHECKED_ROLES and f not in required and ctx.record.get(f) in (None, "", [])]
    if not wanted:
        return []
    lines = doc_lines(ctx.document)
    out = []
    for f, role in wanted:
        for i, (page, li, _) in enumerate(lines):
            hit = value_after(lines, i, role)
            if hit:
                out.append(Signal(f, "label_printed", "fail",
                                  f"empty, but page {page} prints {hit[0]!r} with {hit[1]!r} (line {li + 1})"))
                break
        else:
            hit2 = next(_label_over_value(ctx.document, role), None)
            if hit2 is not None:
                page, li, phrase, value = hit2
                out.append(Signal(f, "label_printed", "fail", f"empty, but page {page} prints {phrase!r} over "
                                                              f"{value!r} (line {li + 1})"))
    return out


_TIGHT_EMS = 1.2             # a value under its column heading is at most this many line heights below it


def _label_over_value(document: Any, role: str) -> Iterator[tuple[int, int, str, str]]:
    """(page, line, label, value) where a cell of a line is only a label of `role` (a column
    heading: "Fälligkeit") and the line tightly under it prints a value of the role's kind alone
    in that cell's column ("05.03.2019"). Dates and numbers only: an amount under a heading
    ("MwSt." over "14.91") is as often an item's or a tax rate's column as the total."""
    if CHECKED_ROLES[role] == "amount":
        return
    rx = _PATTERNS[CHECKED_ROLES[role]]
    for page in getattr(document, "pages", None) or []:
        lines = getattr(page, "lines", None) or []
        for li in range(len(lines) - 1):
            here, there = lines[li].bbox, lines[li + 1].bbox
            em = max(here.y1 - here.y0, 1e-6)
            if there.y0 - here.y1 > _TIGHT_EMS * em:
                continue
            for x0, x1, t in _cells(page, li):
                if not is_label_text(t) or _means(t, role) is None:
                    continue
                under = [c for c in _cells(page, li + 1) if min(c[1], x1) - max(c[0], x0) > 0]
                if len(under) == 1 and (m := rx.fullmatch(under[0][2].strip())) is not None:
                    yield getattr(page, "number", 1), li, t, m.group(0)


# "36 Chapel Close", "39, chemin de la Forge": a house number, then the street's words (a street word list never has them all);
# "Beukenkade 194", "Am Anger 3a", "Paseo Mayor, 119": the street's words, then the house number
_HOUSE_AND_STREET = re.compile(r"^\d{1,4}[a-z]?,?\s+[^\W\d_]{2,}(?:\s+[^\W\d_]{2,})+$")
_STREET_AND_HOUSE = re.compile(r"^[^\W\d_]{2,}(?:[\s-][^\W\d_]{2,}){0,3},?\s+\d{1,4}[a-z]?$")


def _address_start(text: str) -> bool:
    t = text.strip()
    return address_verdict(t)[0] == "pass" or bool(_HOUSE_AND_STREET.match(t) or _STREET_AND_HOUSE.match(t))


_OTHER_PARTY = {"seller_name": "buyer_name", "buyer_name": "seller_name"}
_NOT_A_PARTY_LINE = {"seller_name": ("bank", "contact", "buyer", "delivery"), "buyer_name": ("bank", "contact", "seller")}


def party_printed(ctx: VerifyContext) -> list[Signal]:
    required = set(ctx.schema.get("required") or [])
    by_role = roles_of(ctx.schema).by_field
    field_of = {role: f for f, role in by_role.items()}
    wanted = [(f, role) for f, role in by_role.items()
              if role in _OTHER_PARTY and f not in required and ctx.record.get(f) in (None, "")]
    if not wanted:
        return []
    pages = getattr(ctx.document, "pages", None) or []
    out = []
    for f, role in wanted:
        other = ctx.record.get(field_of.get(_OTHER_PARTY[role], ""))
        other_f = fold(other) if isinstance(other, str) else ""
        found = False
        for li, t, meaning in (_company_blocks(pages[0], _NOT_A_PARTY_LINE[role]) if pages else ()):
            ft = fold(t)
            if (other_f and (other_f in ft or ft in other_f)) or meaning in _NOT_A_PARTY_LINE[role]:
                continue
            out.append(Signal(f, "party_printed", "fail",
                              f"empty, but page 1 prints {t[:60]!r} over an address (line {li + 1})"))
            found = True
            break
        if not found and role == "buyer_name":
            hit = next(_delivery_name_elsewhere(ctx.document, other_f), None)
            if hit is not None:
                li, name, addr = hit
                out.append(Signal(f, "party_printed", "fail",
                                  f"empty, but page 1 prints {name[:40]!r}, the delivery block's name, over the "
                                  f"address {addr[:40]!r} outside a delivery, seller, bank or contact block "
                                  f"(line {li + 1})"))
                found = True
        if not found and role == "buyer_name" and pages:
            under = next((t for _, t in names_under_return_lines(pages[0])
                          if not (other_f and (other_f in fold(t) or fold(t) in other_f))), None)
            if under is not None:
                out.append(Signal(f, "party_printed", "fail",
                                  f"empty, but page 1 prints {under[:40]!r} under the sender's return line (the "
                                  f"recipient)"))
                found = True
        if not found and role == "buyer_name" and pages:
            hit = next(_person_blocks(pages[0], other_f), None)
            if hit is not None:
                li, name, addr = hit
                out.append(Signal(f, "party_printed", "fail",
                                  f"empty, but page 1 prints {name[:40]!r}, a person's name, over the address "
                                  f"{addr[:40]!r} outside a delivery, seller, bank or contact block (line {li + 1})"))
    return out


# Name particles and forms of address a person's name may hold in lower case or abbreviated.
_PARTICLES = frozenset({"van", "de", "der", "den", "von", "da", "di", "du", "la", "le", "del", "y", "e", "el", "ten",
                        "ter", "zu"})
_ADDRESS = re.compile(r"^(?:mr|mrs|ms|miss|dr|herr|frau|mme|mlle|m|dhr|mevr|sr|sra|d|dna)\.?$", re.IGNORECASE)


def _person_name(t: str) -> bool:
    """Two to four words, at least two of them capitalised ("Emma Smith", "Daan de Vries",
    "Dhr. Jan Bos"), no figure, no legal form and no label."""
    words = t.split()
    if not 2 <= len(words) <= 4 or _DIGIT.search(t) or has_legal_form(t) or meanings_in(t):
        return False
    named = 0
    for w in words:
        if w.lower() in _PARTICLES or _ADDRESS.match(w):
            continue
        if not (w[0].isupper() and w[1:].islower() and w.replace("-", "").replace("'", "").isalpha()):
            return False
        named += 1
    return named >= 2


def _person_blocks(page: Any, seller_f: str) -> Iterator[tuple[int, str, str]]:
    """(line index, name, address) of each cell in the top half of `page` that prints a person's
    name over an address (one of the next two lines of its column), in no delivery, seller, bank
    or contact block, that is not the seller's name (`seller_f`, folded)."""
    lines = getattr(page, "lines", None) or []
    boxes = [b for b in (getattr(ln, "bbox", None) for ln in lines) if b is not None]
    if not boxes:
        return
    half = max(b.y1 for b in boxes) / 2
    for li in range(len(lines) - 1):
        b = getattr(lines[li], "bbox", None)
        if b is None or b.y0 > half:
            continue
        for x0, x1, t in _cells(page, li):
            ft = fold(t)
            if not _person_name(t.strip()) or (seller_f and (ft in seller_f or seller_f in ft)):
                continue
            below = [c for lj in range(li + 1, min(li + 5, len(lines))) for c in _cells(page, lj)
                     if min(c[1], x1) - max(c[0], x0) > 0]      # lines of another column may come between
            addr = next((c[2] for c in below[:2] if _address_start(c[2])), None)
            if addr is None:
                continue
            h = heading_above(Place(page, li, float(x0), float(x1), "", "", t))
            if h is not None and h[0] in _NOT_THE_BUYERS_BLOCK:
                continue
            yield li, t, addr


def _delivery_name_elsewhere(document: Any, other_f: str) -> Iterator[tuple[int, str, str]]:
    """(line index, name, address) where page 1 prints the name that heads its delivery block
    ("Deliver to:" / "Femke Bakker") over another address too, in no delivery, seller, bank or
    contact block: the buyer's own block without a caption, a person's name (no legal form) that
    the legal-form rule does not see. Not the seller's name (`other_f`, folded)."""
    pages = getattr(document, "pages", None) or []
    if not pages:
        return
    page = pages[0]
    lines = getattr(page, "lines", None) or []
    for li in range(len(lines) - 1):
        for x0, x1, t in _cells(page, li):
            if heading_meaning(t) != "delivery":
                continue
            below = [c for c in _cells(page, li + 1) if min(c[1], x1) - max(c[0], x0) > 0]
            if not below:
                continue
            name = below[0][2]
            fn = fold(name)
            if (not fn or _DIGIT.search(name) or meanings_in(name) or _address_start(name)
                    or (other_f and (other_f in fn or fn in other_f))):
                continue
            for lj in range(len(lines) - 1):
                if lj == li:
                    continue
                for cx0, cx1, ct in _cells(page, lj):
                    if fold(ct) != fn or (lj == li + 1 and min(cx1, below[0][1]) - max(cx0, below[0][0]) > 0):
                        continue                 # the delivery block's own name; the buyer's may stand beside it
                    under = [c for lk in range(lj + 1, min(lj + 3, len(lines))) for c in _cells(page, lk)
                             if min(c[1], cx1) - max(c[0], cx0) > 0]
                    if not any(_address_start(c[2]) for c in under[:2]):
                        continue
                    h = heading_above(Place(page, lj, float(cx0), float(cx1), "", "", ct))
                    if h is not None and h[0] in _NOT_THE_BUYERS_BLOCK:
                        continue
                    yield lj, ct, under[0][2]


_DIGIT = re.compile(r"\d")
# Blocks a buyer's own (uncaptioned) block is not in.
_NOT_THE_BUYERS_BLOCK = ("delivery", "seller", "bank", "contact")


def _cells(page: Any, li: int) -> list[tuple[float, float, str]]:
    """The cells of line `li` of `page`: runs of words split where the gap exceeds two line heights."""
    return line_cells(page, li, 2.0)


def _company_blocks(page: Any, skip: tuple[str, ...]) -> Iterator[tuple[int, str, str | None]]:
    """(line index, text, heading meaning or None) of each cell of `page` that prints a company
    name (a legal form) over an address (one of the next two lines of its column reads as one),
    on no line of the `skip` meanings."""
    lines = getattr(page, "lines", None) or []
    for li in range(len(lines) - 1):
        for x0, x1, t in _cells(page, li):
            if not has_legal_form(t) or _DIGIT.search(t) or any(m in skip for m, *_ in meanings_in(t)):
                continue                 # a figure: a registry or share-capital line ("SAS au capital de 1 000 €")
            below = [c for lj in range(li + 1, min(li + 4, len(lines))) for c in _cells(page, lj)
                     if min(c[1], x1) - max(c[0], x0) > 0 and not is_attention_line(c[2])]
            if not any(_address_start(c[2]) for c in below[:2]):
                continue
            h = heading_above(Place(page, li, float(x0), float(x1), "", "", t))
            yield li, t, (h[0] if h else None)


def buyer_elsewhere(ctx: VerifyContext) -> list[Signal]:
    by_role = roles_of(ctx.schema).by_field
    field_of = {role: f for f, role in by_role.items()}
    out = []
    for f, role in by_role.items():
        value = ctx.record.get(f)
        if role != "buyer_name" or not isinstance(value, str) or not value.strip():
            continue
        p = place(ctx, f)
        if p is None:
            continue
        h = heading_above(p)
        if h is None or h[0] != "delivery" or also_under(ctx, p, value, "buyer") is not None:
            continue
        seller = ctx.record.get(field_of.get("seller_name", ""))
        mine = [fold(x) for x in (value, seller) if isinstance(x, str) and fold(x)]
        for li, t, meaning in _company_blocks(p.page, ("bank", "contact", "seller", "delivery")):
            ft = fold(t)
            if meaning in _NOT_THE_BUYERS_BLOCK or any(m in ft or ft in m for m in mine):
                continue
            out.append(Signal(f, "buyer_elsewhere", "fail",
                              f"read under {h[1][:30]!r} (delivery), while {t[:50]!r} heads an address "
                              + (f"under {meaning!r}" if meaning else "without a caption") + f" (line {li + 1})"))
            break
    return out


ADDRESS_LINES = 6            # the seller's address is printed within this many lines under its name
# An address line proper: a postcode (4-6 digits, or Dutch "9075 PJ") or a house number after a word.
_POSTCODE_OR_HOUSE = re.compile(r"(?<![\w-])\d{4,6}(?![\w-])|\b\d{4}\s?[A-Z]{2}\b|[^\W\d_]{3,}\.?,?\s+\d{1,4}[a-z]?\b|"
                                r"^\s*\d{1,4}[a-z]?,?\s+[^\W\d_]{3,}")   # ... or the house number first ("206, boulevard du ...")


def address_printed(ctx: VerifyContext) -> list[Signal]:
    by_role = roles_of(ctx.schema).by_field
    required = set(ctx.schema.get("required") or [])
    field_of = {role: f for f, role in by_role.items()}
    wanted = [f for f, role in by_role.items()
              if role == "seller_address" and f not in required and ctx.record.get(f) in (None, "")]
    name = ctx.record.get(field_of.get("seller_name", ""))
    pages = getattr(ctx.document, "pages", None) or []
    if not wanted or not isinstance(name, str) or len(compact(name)) < 3 or not pages:
        return []
    lines = getattr(pages[0], "lines", None) or []
    want = compact(name)
    start = next((i for i, ln in enumerate(lines) if want in compact(getattr(ln, "text", ""))), None)
    if start is None:                    # a name wrapped over two lines ("... MINI MARKET SDN" / "BHD")
        start = next((i + 1 for i in range(len(lines) - 1)
                      if (a := compact(getattr(lines[i], "text", ""))) and len(a) >= len(want) // 2
                      and want == a + compact(getattr(lines[i + 1], "text", ""))), None)
    if start is None:
        return []
    for li in range(start + 1, min(start + 1 + ADDRESS_LINES, len(lines))):
        t = str(getattr(lines[li], "text", ""))
        if _POSTCODE_OR_HOUSE.search(t) and address_verdict(t)[0] == "pass":
            return [Signal(f, "address_printed", "fail", f"empty, but page 1 prints {t[:60]!r} under the seller's "
                                                         f"name (line {li + 1})") for f in wanted]
    return []


CHECKS = (("label_printed", label_printed), ("party_printed", party_printed), ("address_printed", address_printed),
          ("buyer_elsewhere", buyer_elsewhere))
