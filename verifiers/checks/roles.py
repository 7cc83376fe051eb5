"""Role and place: which block of the page a value stands in.

    party_block       a party's value (seller's name and VAT ID, buyer's name, ...) stands under a
                      heading of its party ("Verkäufer:", "Bill to"): pass; under a rival one
                      (the buyer's block for the seller's VAT ID; a delivery address or a bank
                      block for the buyer's name): fail, unless the same value is printed under
                      its own party's heading too (bill-to and ship-to name the same company)
    seller_one_block  the seller's VAT ID and name stand under the same heading: pass; under
                      headings of different parties: fail
    seller_with_vat   the printed block of the seller's VAT ID (the closely spaced lines of its
                      column, up to the next block's heading; whole lines in a footer, the page's
                      bottom quarter, which is the seller's) names the seller: pass, on the name
                      and the VAT ID; names the record's buyer and not its seller: fail, on both
                      (the parties swapped, or the buyer's VAT ID read for the seller's); names
                      neither but another company (a run of words with a legal form and a word
                      besides it, not part of the seller's name, on no bank or contact line):
                      fail, on both. Nothing when the block names both, or no company
    not_table_row     a name or address is not read from an item or tax line (a line that prints
                      a percentage or two amounts besides it fails)
    outside_items     a header value (names, IDs, dates) does not stand between the first and
                      last item rows of the items table on its page
    parties_distinct  the seller's and the buyer's name (and VAT IDs) differ
    address_whole     an address without a street or house number while the line right above it
                      (same column, tightly spaced) prints one, that starts without a house
                      number while that line is a house number and a word or two ("14 Green"
                      over "Road Boise, ID 74328"), or without the postcode the line
                      right below it prints, or below a line that runs on into it (ending with a
                      comma), was cut short: fail
    name_whole        a party's name whose next line (tightly below, same column) is only a legal
                      form or trade word ("ENTERPRISE", "SDN BHD") was cut short: fail
    items_complete    every item holds every column the others hold (an item without its
                      description or amount was read from a broken row): pass / fail

Fields by role (verifiers.checks.fields); positions from the evidence (page, box) and the parsed
document. Nothing is judged without them.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Mapping

from docassay.verifiers.checks.fields import PARTY_OF, roles_of
from docassay.verifiers.checks.names import has_legal_form
from docassay.verifiers.checks.page import BLOCK_MEANINGS, Place, compact, heading_above, line_cells, percents_in, place
from docassay.verifiers.checks.signal import Signal
from docassay.verifiers.checks.values import text
from docassay.verifiers.checks.vocabulary import heading_meaning, is_legal_line, meanings_in
from docassay.verifiers.context import VerifyContext
from docassay.verifiers.tolerance import fold_text

__all__ = ["party_block", "also_under", "seller_one_block", "seller_with_vat", "not_table_row", "outside_items", "parties_distinct",
           "address_whole", "name_whole", "items_complete", "CHECKS"]

# Headings that contradict a party's value.
_RIVAL_BLOCKS = {"seller": ("buyer", "delivery"), "buyer": ("seller", "delivery", "bank", "payment_terms")}
_NAME_ROLES = ("seller_name", "buyer_name", "seller_address", "buyer_address")
_HEADER_ROLES = ("seller_name", "buyer_name", "seller_vat_id", "buyer_vat_id", "document_number",
                 "issue_date", "due_date", "iban", "bic")
ROW_AMOUNTS = 2              # a line printing this many decimal amounts besides the value is a table row
_AMOUNT = re.compile(r"(?<![\d.,])\d[\d.,]*[.,]\d{2}(?![\d.,])")


def also_under(ctx: VerifyContext, p: Place, value: Any, party: str) -> str | None:
    """The heading of `party` above another printed occurrence of `value` (a buyer's name printed
    in the bill-to block and again in the ship-to block, above or beside it), else None."""
    want = compact(value)
    n = len(str(value).split())
    if len(want) < 3 or n == 0:
        return None
    for page in getattr(ctx.document, "pages", None) or []:
        words = getattr(page, "words", None) or []
        for li, ln in enumerate(getattr(page, "lines", None) or []):
            if want not in compact(getattr(ln, "text", "")):
                continue
            ids = [i for i in getattr(ln, "word_ids", ()) if 0 <= i < len(words)]
            for k in range(len(ids) - n + 1):
                run = [words[i] for i in ids[k:k + n]]
                if compact(" ".join(w.text for w in run)) != want:
                    continue
                x0, x1 = run[0].bbox.x0, run[-1].bbox.x1
                if page is p.page and li == p.line and min(x1, p.x1) - max(x0, p.x0) > 0:
                    continue                     # the value's own occurrence
                h = heading_above(Place(page, li, float(x0), float(x1), "", "", str(ln.text)))
                if h is not None and h[0] == party:
                    return h[1]
    return None


def party_block(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, role in roles_of(ctx.schema).by_field.items():
        party = PARTY_OF.get(role)
        if party is None or ctx.record.get(f) in (None, ""):
            continue
        p = place(ctx, f)
        h = heading_above(p) if p is not None else None
        if h is None:
            continue
        meaning, heading = h
        if meaning == party:
            out.append(Signal(f, "party_block", "pass", f"under the {party}'s heading {heading!r}"))
        elif meaning in _RIVAL_BLOCKS.get(party, ()) and p is not None:
            own = also_under(ctx, p, ctx.record.get(f), party)
            if own is not None:
                out.append(Signal(f, "party_block", "pass", f"under {heading!r} and again under the {party}'s "
                                                            f"heading {own!r}"))
            else:
                out.append(Signal(f, "party_block", "fail", f"under {heading!r} ({meaning}), not the {party}'s block"))
    return out


def _heading(ctx: VerifyContext, f: str | None) -> tuple[str, str] | None:
    if f is None or ctx.record.get(f) in (None, ""):
        return None
    p = place(ctx, f)
    return heading_above(p) if p is not None else None


def seller_one_block(ctx: VerifyContext) -> list[Signal]:
    r = roles_of(ctx.schema)
    name, vat = r.first("seller_name"), r.first("seller_vat_id")
    hn, hv = _heading(ctx, name), _heading(ctx, vat)
    if hn is None or hv is None or name is None or vat is None:
        return []
    if hn == hv:
        return [Signal(x, "seller_one_block", "pass", f"the seller's name and VAT ID both under {hn[1]!r}")
                for x in (name, vat)]
    if {hn[0], hv[0]} >= {"seller", "buyer"}:
        return [Signal(x, "seller_one_block", "fail",
                       f"the seller's name is under {hn[1]!r} but the VAT ID under {hv[1]!r}") for x in (name, vat)]
    return []


BLOCK_GAP_EMS = 2.0          # lines of one printed block, in its column, are at most this many line heights apart
FOOTER_GAP_EMS = 1.0         # ... in a footer (whole lines)
BLOCK_MAX_LINES = 8          # ... and at most this many lines from the VAT ID's line, up or down
SEGMENT_GAP_EMS = 1.5        # a gap this wide between two words of a line separates columns
LABEL_GAP_EMS = 3.0          # the run left of a value, this close, is its label ("USt-IdNr    : DE...")
FOOTER_SHARE = 0.75          # a block whose lines all start below this share of the page is a footer


def _band(lines: list, li0: int, gap_ems: float, em: float, keep: Callable[[int], bool],
          heading: Callable[[int], bool] | None = None) -> list[int]:
    """Line `li0` and the lines above and below it for which `keep(li)` holds, each at most
    `gap_ems` line heights from the previous one kept (lines `keep` rejects are passed over);
    downwards up to a line `heading(li)` calls a block heading, upwards up to and including one
    (the block's own heading; a heading below starts the next block)."""
    out = [li0]
    for step in (-1, 1):
        last = lines[li0].bbox
        li = li0 + step
        while 0 <= li < len(lines) and abs(li - li0) <= BLOCK_MAX_LINES:
            b = lines[li].bbox
            if (last.y0 - b.y1 if step < 0 else b.y0 - last.y1) > gap_ems * em:
                break
            if keep(li):
                if heading is not None and heading(li):
                    if step < 0:
                        out.append(li)
                    break
                out.append(li)
                last = b
            li += step
    return sorted(out)


def vat_block(p: Place) -> list[str]:
    """The runs of words (split at column gaps) of the printed block around the value at `p`: in a
    footer (tightly spaced lines in the page's bottom quarter) all runs of its lines; else the runs
    of its column (overlapping the value with its label) on the lines above and below it."""
    lines = getattr(p.page, "lines", None) or []
    here = lines[p.line].bbox
    em = max(here.y1 - here.y0, 1e-6)
    height = float(getattr(p.page, "height", 0) or 0)
    footer = _band(lines, p.line, FOOTER_GAP_EMS, em, lambda li: True)
    if height > 0 and all(lines[li].bbox.y0 > FOOTER_SHARE * height for li in footer):
        return [t for li in footer for _, _, t in line_cells(p.page, li, SEGMENT_GAP_EMS, em)]
    segs = line_cells(p.page, p.line, SEGMENT_GAP_EMS, em)
    k = next((i for i, (a, b, _) in enumerate(segs) if a <= p.x1 and b >= p.x0), None)
    if k is None:
        return []
    x0, x1 = segs[k][0], segs[k][1]
    if k > 0 and x0 - segs[k - 1][1] <= LABEL_GAP_EMS * em:
        x0 = segs[k - 1][0]

    def runs(li: int) -> list[str]:
        return [t for a, b, t in line_cells(p.page, li, SEGMENT_GAP_EMS, em) if a <= x1 and b >= x0]

    def heading(li: int) -> bool:
        return any(heading_meaning(t) in BLOCK_MEANINGS for t in runs(li))
    band = _band(lines, p.line, BLOCK_GAP_EMS, em, lambda li: bool(runs(li)), heading)
    return [t for li in band for t in runs(li)]


def seller_with_vat(ctx: VerifyContext) -> list[Signal]:
    r = roles_of(ctx.schema)
    name, vat, buyer = r.first("seller_name"), r.first("seller_vat_id"), r.first("buyer_name")
    if name is None or vat is None or buyer is None:
        return []
    vn, vb = text(ctx.record.get(name)), text(ctx.record.get(buyer))
    p = place(ctx, vat) if text(ctx.record.get(vat)) else None
    if p is None or not vn or not vb:
        return []
    runs = vat_block(p)
    block = compact(" ".join(runs))
    cn, cb = compact(vn), compact(vb)
    if len(cn) < 3 or len(cb) < 3 or cn in cb or cb in cn:
        return []
    has_n, has_b = cn in block, cb in block
    if has_n and not has_b:
        return [Signal(x, "seller_with_vat", "pass", f"the seller's VAT ID is printed in the block naming {vn!r}")
                for x in (name, vat)]
    if has_b and not has_n:
        return [Signal(x, "seller_with_vat", "fail", f"the seller's VAT ID is printed in the block naming the "
                                                     f"buyer {vb!r}, not the seller {vn!r}") for x in (name, vat)]
    other = next((t for t in runs if _company_run(t) and compact(t) not in cn), None) if not has_n and not has_b else None
    if other is not None:
        return [Signal(x, "seller_with_vat", "fail", f"the seller's VAT ID is printed in the block naming "
                                                     f"{other[:60]!r}, not the seller {vn!r}") for x in (name, vat)]
    return []


def _company_run(t: str) -> bool:
    """A run of words that is a company's name: a legal form and a word besides it, no figure, on no
    bank or contact line."""
    return (has_legal_form(t) and len(t.split()) >= 2 and not re.search(r"\d", t)
            and not any(m in ("bank", "contact", "payment_terms") for m, *_ in meanings_in(t)))


def _row_like(p: Place) -> str | None:
    rest = f"{p.left} {p.right}"
    if percents_in([rest]):
        return "prints a percentage"
    amounts = _AMOUNT.findall(rest)
    return f"prints {len(amounts)} amounts" if len(amounts) >= ROW_AMOUNTS else None


def not_table_row(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, role in roles_of(ctx.schema).by_field.items():
        if role not in _NAME_ROLES or not text(ctx.record.get(f)):
            continue
        p = place(ctx, f)
        if p is None:
            continue
        why = _row_like(p)
        if why:
            out.append(Signal(f, "not_table_row", "fail", f"its line {p.text[:80]!r} {why}: an item or tax line"))
        else:
            out.append(Signal(f, "not_table_row", "pass", "its line is no item or tax line"))
    return out


def _item_bands(ctx: VerifyContext) -> dict[int, tuple[float, float]]:
    """page -> (top, bottom) of the item rows read there (from the extraction's provenance)."""
    prov = getattr(ctx.extraction, "provenance", None) or {}
    arrays = set(roles_of(ctx.schema).items)
    bands: dict[int, list[float]] = {}
    for k, pv in prov.items():
        if not isinstance(k, str) or k.split("/", 1)[0] not in arrays or "/" not in k:
            continue
        page = getattr(pv, "page", None) if not isinstance(pv, Mapping) else pv.get("page")
        box: Any = getattr(pv, "bbox", None) if not isinstance(pv, Mapping) else pv.get("bbox")
        try:
            y0, y1 = (float(box.y0), float(box.y1)) if hasattr(box, "y0") else (float(box[1]), float(box[3]))
        except (TypeError, ValueError, IndexError, AttributeError):
            continue
        if isinstance(page, int):
            b = bands.setdefault(page, [y0, y1])
            b[0], b[1] = min(b[0], y0), max(b[1], y1)
    return {p: (b[0], b[1]) for p, b in bands.items()}


def outside_items(ctx: VerifyContext) -> list[Signal]:
    bands = _item_bands(ctx)
    if not bands:
        return []
    out = []
    for f, role in roles_of(ctx.schema).by_field.items():
        ev = (ctx.evidence or {}).get(f)
        if role not in _HEADER_ROLES or ev is None or ev.page not in bands or ev.bbox is None:
            continue
        top, bottom = bands[ev.page]
        cy = (ev.bbox[1] + ev.bbox[3]) / 2
        if top < cy < bottom:
            out.append(Signal(f, "outside_items", "fail", f"read from inside the items table on page {ev.page}"))
        else:
            out.append(Signal(f, "outside_items", "pass", "outside the items table"))
    return out


def parties_distinct(ctx: VerifyContext) -> list[Signal]:
    r = roles_of(ctx.schema)
    out = []
    for a_role, b_role in (("seller_name", "buyer_name"), ("seller_vat_id", "buyer_vat_id")):
        a, b = r.first(a_role), r.first(b_role)
        va, vb = (text(ctx.record.get(a)) if a else None), (text(ctx.record.get(b)) if b else None)
        if not va or not vb or a is None or b is None:
            continue
        same = fold_text(va).replace(" ", "") == fold_text(vb).replace(" ", "")
        for x in (a, b):
            out.append(Signal(x, "parties_distinct", "fail" if same else "pass",
                              f"{a} and {b} are {'the same' if same else 'different'}: {va!r} / {vb!r}"))
    return out


_POSTCODE = re.compile(r"(?:(?<![\w-])|(?<=\b[A-Z]-))\d{4,6}(?![\w-])")
_STREETISH = re.compile(r"\d|\b(?:jalan|jln|lorong|lot|no|street|st|road|rd|avenue|strasse|str|weg|rue|laan|straat|"
                        r"floor|flr|level|block|blok|seksyen|taman|tmn|bangunan)\b", re.IGNORECASE)
_SAINT_TOWN = re.compile(r"((?<![\w-])\d{4,6}\s+)(?i:st|ste|saint|sainte)\.?\s+(?=[A-Z])")  # "3213 St. Gallen"
ADJACENT_EMS = 0.8           # lines closer than this many line heights belong to one printed block
_HOUSE_FIRST = re.compile(r"^\d{1,4}[A-Za-z]?,?\s+[^\W\d_]{2,}(?:\s+[^\W\d_]+)?\s*$")   # "14 Green", "105, chemin"


def _neighbour(p: Place, step: int) -> str | None:
    """The text of the line right above (step -1) or below (+1) the value's, in its column, when
    tightly spaced; else None."""
    lines = getattr(p.page, "lines", None) or []
    li = p.line + step
    if not 0 <= li < len(lines):
        return None
    here, there = lines[p.line].bbox, lines[li].bbox
    em = max(here.y1 - here.y0, 1e-6)
    gap = (here.y0 - there.y1) if step < 0 else (there.y0 - here.y1)
    if gap > ADJACENT_EMS * em or min(there.x1, p.x1) - max(there.x0, p.x0) <= 0:
        return None
    return str(getattr(lines[li], "text", ""))


def address_whole(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, role in roles_of(ctx.schema).by_field.items():
        v = text(ctx.record.get(f))
        if role not in ("seller_address", "buyer_address") or v is None:
            continue
        p = place(ctx, f)
        if p is None:
            continue
        no_street = not _STREETISH.search(_POSTCODE.sub(" ", _SAINT_TOWN.sub(r"\1", v)))
        above = _neighbour(p, -1)
        below = _neighbour(p, +1)
        if no_street and above and _STREETISH.search(above) and fold_text(above) not in fold_text(v):
            out.append(Signal(f, "address_whole", "fail", f"has no street; the line above, {above[:40]!r}, "
                                                          f"prints one"))
        elif above and above.rstrip().endswith((",", "&")) and fold_text(above) not in fold_text(v):
            out.append(Signal(f, "address_whole", "fail", f"the line above, {above[:40]!r}, runs on into it"))
        elif above and _HOUSE_FIRST.match(above) and not _HOUSE_FIRST.match(v) and not re.match(r"\d", v) \
                and fold_text(above) not in fold_text(v):
            out.append(Signal(f, "address_whole", "fail", f"starts without a house number; the line above, "
                                                          f"{above[:40]!r}, starts with one"))
        elif not _POSTCODE.search(v) and below and _POSTCODE.search(below) and fold_text(below) not in fold_text(v):
            out.append(Signal(f, "address_whole", "fail", f"has no postcode; the line below, {below[:40]!r}, has one"))
        elif _POSTCODE.search(v):
            out.append(Signal(f, "address_whole", "pass", "holds its postcode and the street before it"))
    return out


def name_whole(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, role in roles_of(ctx.schema).by_field.items():
        v = text(ctx.record.get(f))
        if role not in ("seller_name", "buyer_name") or v is None:
            continue
        p = place(ctx, f)
        if p is None:
            continue
        below = _neighbour(p, +1)
        if below and is_legal_line(below) and fold_text(below) not in fold_text(v):
            out.append(Signal(f, "name_whole", "fail", f"the line below, {below[:40]!r}, goes on with the name"))
        else:
            out.append(Signal(f, "name_whole", "pass", "the name's line is not continued by a legal form"))
    return out


def items_complete(ctx: VerifyContext) -> list[Signal]:
    out = []
    for name, cols in roles_of(ctx.schema).items.items():
        rows = ctx.record.get(name)
        if not isinstance(rows, list) or not rows or not all(isinstance(x, Mapping) for x in rows):
            continue
        held = {c for c in cols if any(x.get(c) not in (None, "") for x in rows)}
        gaps = [(i, sorted(held - {c for c in held if x.get(c) not in (None, "")})) for i, x in enumerate(rows)]
        gaps = [(i, g) for i, g in gaps if g]
        no_desc = [i for i, x in enumerate(rows) if "description" in cols.values()
                   and all(x.get(c) in (None, "") for c, r in cols.items() if r == "description")]
        if gaps or no_desc:
            where = "; ".join(f"[{i}] lacks {', '.join(g)}" for i, g in gaps[:3]) or \
                f"[{no_desc[0]}] has no description"
            out.append(Signal(name, "items_complete", "fail", where))
        else:
            out.append(Signal(name, "items_complete", "pass", f"all {len(rows)} items hold {', '.join(sorted(held))}"))
    return out


CHECKS = (("party_block", party_block), ("seller_one_block", seller_one_block), ("seller_with_vat", seller_with_vat),
          ("not_table_row", not_table_row),
          ("outside_items", outside_items), ("parties_distinct", parties_distinct),
          ("address_whole", address_whole), ("name_whole", name_whole), ("items_complete", items_complete))
