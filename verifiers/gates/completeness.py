"""completeness gate: every page read; line items complete.

* **pages** — every page of the document holds text (a page with no words was not read: an OCR
  that produced nothing, a page the parser skipped); `empty_page_share` allows a share of blank
  pages (a separator sheet).
* **items** — for each array field the schema declares with `x-docassay: {"items": {"sum": COLUMN,
  "totals": [FIELDS]}}` (settings.ItemsPolicy):
    - items missing while a total is present -> `items_missing` (unless the policy says `absent:
      allowed`);
    - an item without the summed column -> `item_without_amount`;
    - the items' sum differs from every present total by more than the tolerance (`items_sum`,
      10 % by default: document-level allowances and charges appear on no line) -> `items_sum`,
      or, when the items stop on a page before the last one / skip a page, `items_page_break`
      (an items table that runs on over a page break and lost its continuation).
  With no total present nothing can be reconciled: the gate says so in its details.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from docassay.verifiers.context import VerifyContext
from docassay.verifiers.gates import malformed
from docassay.verifiers.result import GateResult, Violation
from docassay.verifiers.settings import ItemsPolicy
from docassay.verifiers.tolerance import matches

NAME = "completeness"


def _num(v: object) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def check(ctx: VerifyContext) -> GateResult:
    bad = malformed(ctx, NAME)
    if bad is not None:
        return bad
    cfg = ctx.cfg
    violations: list[Violation] = []
    details: dict[str, object] = {}
    pages = _pages(ctx.document)
    if pages:
        empty = [n for n, words in pages if words == 0]
        details["pages"] = len(pages)
        if empty and len(empty) > cfg.empty_page_share * len(pages):
            for n in empty:
                violations.append(Violation(NAME, "page_not_read", None,
                                            f"page {n} of {len(pages)} has no text: it was not read",
                                            expected="text on every page", actual=f"page {n} empty"))
    for ip in cfg.items:
        violations += _items(ctx, ip, details, len(pages))
    return GateResult(NAME, not any(v.severity == "error" for v in violations), details, violations)


def _pages(doc: Any) -> list[tuple[int, int]]:
    """(page number, word count) for each page of a Document-like object; [] when unknown."""
    pages = getattr(doc, "pages", None)
    if not pages:
        return []
    out = []
    for i, p in enumerate(pages):
        words = getattr(p, "words", None)
        out.append((int(getattr(p, "number", i + 1)), len(words) if words is not None else 1))
    return out


def _item_pages(ctx: VerifyContext, field: str, n_items: int) -> list[int | None]:
    prov = getattr(ctx.extraction, "provenance", None) or {}
    out: list[int | None] = []
    for i in range(n_items):
        page = None
        prefix = f"{field}/{i}/"
        for k, p in prov.items():
            if k.startswith(prefix):
                page = getattr(p, "page", None) if not isinstance(p, Mapping) else p.get("page")
                break
        out.append(page)
    return out


def _items(ctx: VerifyContext, ip: ItemsPolicy, details: dict[str, object], n_pages: int) -> list[Violation]:
    rec = ctx.record
    items = rec.get(ip.field)
    read = {t: _num(rec.get(t)) for t in ip.totals}
    totals = {t: v for t, v in read.items() if v is not None}
    info: dict[str, object] = {}
    details[ip.field] = info
    if items is None or items == []:
        info["items"] = 0
        if ip.absent == "incomplete" and totals:
            t, v = next(iter(totals.items()))
            return [Violation(NAME, "items_missing", ip.field,
                              f"no {ip.field} were read although the document has a {t} of {v}: "
                              f"the items table was not found or not read",
                              expected=f"items whose {ip.sum} add up to {t} {v}", actual=[])]
        return []
    if not isinstance(items, list) or not all(isinstance(x, Mapping) for x in items):
        return [Violation(NAME, "malformed", ip.field, f"{ip.field} is not a list of objects")]
    info["items"] = len(items)
    lacking = [i for i, it in enumerate(items) if _num(it.get(ip.sum)) is None]
    if lacking:
        return [Violation(NAME, "item_without_amount", f"{ip.field}/{i}/{ip.sum}",
                          f"{ip.field}[{i}] has no {ip.sum}: the items cannot be reconciled with the totals",
                          expected=f"a number in {ip.sum}", actual=items[i].get(ip.sum)) for i in lacking[:5]]
    total = round(sum(_num(it.get(ip.sum)) or 0.0 for it in items), 6)
    info["sum"] = total
    if not totals:
        info["reconciled"] = None
        return []
    hit = next((t for t, v in totals.items() if matches(ip.tolerance, v, total)), None)
    info["reconciled"] = hit
    if hit is not None:
        return []
    best = min(totals, key=lambda t: abs(totals[t] - total))
    expected = totals[best]
    pages = _item_pages(ctx, ip.field, len(items))
    known = sorted({p for p in pages if p is not None})
    gap = [p for p in range(known[0], known[-1] + 1) if p not in known] if known else []
    stops_early = bool(known) and n_pages > known[-1] and total * (1 if expected >= 0 else -1) < abs(expected)
    if gap or stops_early:
        where = (f"no items were read from page {gap[0]}" if gap else
                 f"the items stop on page {known[-1]} of {n_pages}")
        return [Violation(NAME, "items_page_break", f"{ip.field}, {best}",
                          f"{ip.field} add up to {total}, not the {best} {expected}: {where}; "
                          f"items may have been lost at a page break",
                          expected=expected, actual=total)]
    return [Violation(NAME, "items_sum", f"{ip.field}, {best}",
                      f"{ip.field} add up to {total}, which reconciles with none of "
                      f"{', '.join(f'{t} {v}' for t, v in totals.items())}: an item was missed, doubled or misread",
                      expected=expected, actual=total)]
