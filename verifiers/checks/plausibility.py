"""Plausibility: values that are possible but not likely.

    date_range        a date lies between `EARLIEST_YEAR` and `LATEST_AHEAD_DAYS` after today
    due_after_issue   the due date is on or after the issue date, within `MAX_TERM_DAYS`
    tax_share         tax is between 0 and `MAX_TAX_SHARE` of the net total, and the gross total
                      is at least the net total (in size; credit notes are negative)
    name_shape        a party's name reads as a name: a legal form ("GmbH", "Ltd", "Sdn Bhd")
                      passes; a postcode and town, a street and number, a country, a phone number,
                      an e-mail or web address, or mostly digits fails
    number_shape      a document number holds a digit and is one short token run (no sentence)

Fields by role (verifiers.checks.fields).
"""
from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Callable

from verifiers.checks.fields import roles_of
from verifiers.checks.signal import Signal
from verifiers.checks.values import iso_date, num, text
from verifiers.checks.vocabulary import fold
from verifiers.context import VerifyContext

__all__ = ["date_range", "due_after_issue", "tax_share", "name_shape", "number_shape", "CHECKS",
           "EARLIEST_YEAR", "LATEST_AHEAD_DAYS", "MAX_TERM_DAYS", "MAX_TAX_SHARE", "today"]

EARLIEST_YEAR = 1990            # no business document of interest is older
LATEST_AHEAD_DAYS = 400         # a due or delivery date may lie a year ahead; later is a misreading
MAX_TERM_DAYS = 366             # payment terms beyond a year are misreadings (a delivery or contract date)
MAX_TAX_SHARE = 0.30            # the highest standard VAT rate is 27 %
MAX_NUMBER_WORDS = 3            # an invoice number is at most this many tokens ("RE 2024 001")
today: Callable[[], date] = date.today      # replaceable in tests

_LEGAL = re.compile(r"\b(gmbh|ag|kg|ohg|gbr|ug|e\s?k|e\s?v|ltd|limited|llc|llp|inc|corp|corporation|co|"
                    r"company|plc|pty|sa|sas|sarl|sprl|srl|spa|bv|nv|vof|aps|sdn\s?bhd|bhd|"
                    r"enterprise|enterprises|trading|berhad|restaurant|restoran|store|mart|shop)\b")
_POSTCODE_TOWN = re.compile(r"^(?:[A-Z]{1,2}[- ]?)?\d{4,5}\s+[^\W\d_]{2,}", re.UNICODE)
_STREET = re.compile(r"(?:stra(?:ss|ß)e|str\.|street|st\.|road|rd\.?|avenue|ave\.?|weg|gasse|platz|allee|laan|"
                     r"straat|rue|jalan|jln\.?|lorong|boulevard|blvd)\s*\d+\w?\b|^\d+\w?\s+\w+\s+"
                     r"(?:street|st|road|rd|avenue|ave|lane|ln|drive|dr)\b", re.IGNORECASE)
_CONTACT = re.compile(r"@|\bwww\.|https?://|\b(?:tel|fax|phone|telefon)\b[.:]?", re.IGNORECASE)
_COUNTRIES = frozenset(fold(c) for c in (
    "Deutschland", "Germany", "France", "Frankreich", "Österreich", "Austria", "Schweiz", "Switzerland",
    "Suisse", "Nederland", "Netherlands", "Niederlande", "België", "Belgique", "Belgium", "Luxembourg",
    "Italia", "Italy", "España", "Spain", "Polska", "Poland", "United Kingdom", "UK", "Great Britain",
    "England", "USA", "United States", "Malaysia", "Singapore", "India", "Danmark", "Denmark", "Sverige",
    "Sweden", "Norge", "Norway", "Ireland", "Portugal", "Czech Republic", "Česko"))


def _dates(ctx: VerifyContext) -> list[tuple[str, date]]:
    out = []
    for f, pol in ctx.cfg.fields.items():
        if pol.kind == "date" and ctx.record.get(f) not in (None, ""):
            out.append((f, iso_date(ctx.record.get(f))))
    return out  # type: ignore[return-value]


def date_range(ctx: VerifyContext) -> list[Signal]:
    out = []
    latest = today() + timedelta(days=LATEST_AHEAD_DAYS)
    for f, d in _dates(ctx):
        if d is None:
            out.append(Signal(f, "date_range", "fail", f"{ctx.record.get(f)!r} is no YYYY-MM-DD date"))
        elif d.year < EARLIEST_YEAR or d > latest:
            out.append(Signal(f, "date_range", "fail", f"{d} lies outside {EARLIEST_YEAR}..{latest}"))
        else:
            out.append(Signal(f, "date_range", "pass", f"{d} is a plausible date"))
    return out


def due_after_issue(ctx: VerifyContext) -> list[Signal]:
    r = roles_of(ctx.schema)
    fi, fd = r.first("issue_date"), r.first("due_date")
    if fi is None or fd is None:
        return []
    issue, due = iso_date(ctx.record.get(fi)), iso_date(ctx.record.get(fd))
    if issue is None or due is None:
        return []
    days = (due - issue).days
    if 0 <= days <= MAX_TERM_DAYS:
        return [Signal(fd, "due_after_issue", "pass", f"due {days} days after issue")]
    why = f"due {-days} days before the issue date" if days < 0 else f"due {days} days after issue"
    return [Signal(fd, "due_after_issue", "fail", why)]


def tax_share(ctx: VerifyContext) -> list[Signal]:
    r = roles_of(ctx.schema)
    fn, ft, fg = r.first("net_total"), r.first("tax_total"), r.first("gross_total")
    n = num(ctx.record.get(fn)) if fn else None
    t = num(ctx.record.get(ft)) if ft else None
    g = num(ctx.record.get(fg)) if fg else None
    out = []
    if n is not None and t is not None and n != 0 and ft is not None:
        share = t / n
        ok = 0.0 <= share <= MAX_TAX_SHARE
        out.append(Signal(ft, "tax_share", "pass" if ok else "fail", f"tax is {100 * share:.1f} % of the net total"))
    if n is not None and g is not None and fg is not None and fn is not None and n != 0:
        ok = abs(g) >= abs(n) - 0.01 and abs(g) <= abs(n) * (1 + MAX_TAX_SHARE) + 0.01
        for f in (fn, fg):
            out.append(Signal(f, "tax_share", "pass" if ok else "fail",
                              f"gross {g} is {'in' if ok else 'out of'} proportion to net {n}"))
    return out


def _name_verdict(v: str) -> tuple[str, str] | None:
    s = v.strip()
    f = fold(s)
    if _CONTACT.search(s):
        return "fail", "reads as contact details"
    if f in _COUNTRIES:
        return "fail", "is a country"
    if _POSTCODE_TOWN.match(s):
        return "fail", "reads as a postcode and town"
    if _STREET.search(s):
        return "fail", "reads as a street address"
    digits = sum(ch.isdigit() for ch in s)
    letters = sum(ch.isalpha() for ch in s)
    if digits > letters:
        return "fail", "is mostly digits"
    if _LEGAL.search(f):
        return "pass", "carries a legal form or trade word"
    return None


def name_shape(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, role in roles_of(ctx.schema).by_field.items():
        if role not in ("seller_name", "buyer_name"):
            continue
        v = text(ctx.record.get(f))
        if v is None:
            continue
        verdict = _name_verdict(v)
        if verdict:
            out.append(Signal(f, "name_shape", verdict[0], f"{v!r} {verdict[1]}"))
    return out


def number_shape(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f in roles_of(ctx.schema).fields("document_number"):
        v = ctx.record.get(f)
        if v in (None, ""):
            continue
        s = str(v).strip()
        if not any(ch.isdigit() for ch in s):
            out.append(Signal(f, "number_shape", "fail", f"{s!r} holds no digit"))
        elif len(s.split()) > MAX_NUMBER_WORDS:
            out.append(Signal(f, "number_shape", "fail", f"{s!r} is a phrase, not a number"))
        else:
            out.append(Signal(f, "number_shape", "pass", f"{s!r} has the shape of a document number"))
    return out


CHECKS = (("date_range", date_range), ("due_after_issue", due_after_issue), ("tax_share", tax_share),
          ("name_shape", name_shape), ("number_shape", number_shape))
