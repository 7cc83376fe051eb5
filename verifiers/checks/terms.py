"""Payment terms: the due date is the issue date plus the days the terms print.

    terms_days      where the issue or the due date was read from figures that also read in the
                    other order (day/month: "01/11/2016" is 1 November or 11 January) and the
                    document prints its payment terms in days ("Net 60", "Payment terms: 30 days
                    net", "Zahlbar innerhalb von 14 Tagen", "Paiement à 30 jours", "Pago a 30 días",
                    "Betaling binnen 14 dagen"): when the dates as read are not that many days
                    apart and the other reading of them is, the dates were read in the wrong order:
                    fail on each date whose other reading it takes. Only fails (terms that do not
                    match are no proof: an early-payment discount, a due date set by hand)
    terms_usual     the same where the page prints no terms in days: the dates as read are an
                    unusual number of days apart (not one of USUAL_TERMS: "due 1 day after issue")
                    while exactly one other reading is a usual term (30 days): fail. Only fails
    discount_date   a due date printed as the only date of a line that offers a discount for
                    early payment (a percentage and a discount's word: "Bij betaling voor
                    24.09.2016 3% kredietbeperking", "Bei Zahlung bis 24.09.2016 2% Skonto") is the
                    discount's date, not the due date: fail. A line with two dates is left alone
                    ("Zahlbar innerhalb 30 Tagen netto bis 04.04.2018, 3% Skonto innerhalb 10 Tagen
                    bis 15.03.2018": the due date and the discount's). Only fails

A term line that speaks of a discount ("2 % Skonto innerhalb von 10 Tagen", "Escompte") or holds a
percentage is no payment term. Dates by role (verifiers.checks.fields); the other reading from the
extraction's alternatives (`how == "other reading"`), as `agreement.reading_ambiguous` has it.
"""
from __future__ import annotations

import re
from datetime import date

from docassay.verifiers.checks.cache import IdentityCache
from docassay.verifiers.checks.fields import roles_of
from docassay.verifiers.checks.page import doc_lines, place
from docassay.verifiers.checks.signal import Signal
from docassay.verifiers.checks.values import iso_date
from docassay.verifiers.checks.vocabulary import meanings_in
from docassay.verifiers.context import VerifyContext

__all__ = ["terms_days", "terms_usual", "discount_date", "printed_term_days", "USUAL_TERMS", "CHECKS"]

_DAY_WORDS = r"(?:days?|tagen?|tage|jours?|d[ií]as|dagen|giorni|hari)"
# "30 days", "30 Tage netto", "à 30 jours", "a 30 días", "binnen 14 dagen"; "Net 60", "Net 30 days"
_N_DAYS = re.compile(r"(?<![\d.,/])(\d{1,3})\s*" + _DAY_WORDS + r"\b", re.IGNORECASE)
_NET_N = re.compile(r"\bnet(?:to)?\s+(\d{1,3})\b(?!\s*[%.,/\d])", re.IGNORECASE)
_DISCOUNT = re.compile(r"%|skonto|discount|escompte|descuento|korting|sconto|rabatt|early", re.IGNORECASE)
_TERM_CUE = re.compile(r"net|netto|pay|zahl|paiement|r[èe]glement|pago|vencimiento|betal|within|innerhalb|"
                       r"binnen|terms|ziel|conditions|due|f[äa]llig|[ée]ch[ée]ance|plazo", re.IGNORECASE)


def printed_term_days(lines: list[str]) -> set[int]:
    """The payment terms in days printed on `lines` (none from discount lines)."""
    out: set[int] = set()
    for t in lines:
        if _DISCOUNT.search(t) or not _TERM_CUE.search(t):
            continue
        for m in (*_N_DAYS.finditer(t), *_NET_N.finditer(t)):
            n = int(m.group(1))
            if 1 <= n <= 180:
                out.add(n)
    return out


def _readings(ctx: VerifyContext, f: str) -> list[date]:
    """The value of `f` as read, then its other readings (day and month swapped)."""
    own = iso_date(ctx.record.get(f))
    if own is None:
        return []
    alts = (getattr(ctx.extraction, "alternatives", None) or {}).get(f) or []
    others = [iso_date(getattr(a, "value", None)) for a in alts if getattr(a, "how", "") == "other reading"]
    return [own, *dict.fromkeys(d for d in others if d is not None and d != own)]


USUAL_TERMS = frozenset({7, 10, 14, 15, 20, 21, 28, 29, 30, 31, 45, 60, 90})   # days; 28-31: the same day a month on


def _swapped(ctx: VerifyContext, days: frozenset[int] | set[int], check: str, what: str) -> list[Signal]:
    """Fail signals for the dates whose other reading puts the due date `days` after the issue
    date, where the dates as read do not."""
    r = roles_of(ctx.schema)
    fi, fd = r.first("issue_date"), r.first("due_date")
    if fi is None or fd is None:
        return []
    issue, due = _readings(ctx, fi), _readings(ctx, fd)
    if not issue or not due or (len(issue) == 1 and len(due) == 1):
        return []                               # nothing read in two orders
    if not days or (due[0] - issue[0]).days in days:
        return []
    # one document prints its dates in one order: every date that reads two ways is swapped together
    # (an issue and a due date printed alike, "05/06/2023", are 0 days apart either way, never 30)
    i, d = issue[-1] if len(issue) == 2 else issue[0], due[-1] if len(due) == 2 else due[0]
    if len(issue) > 2 or len(due) > 2 or (d - i).days not in days:
        return []                               # the other reading does not fit either, or is not one
    n = (d - i).days
    return [Signal(f, check, "fail", f"{what} ({n} days) fit {other.isoformat()}, the other reading of the printed date")
            for f, own, other in ((fi, issue[0], i), (fd, due[0], d)) if other != own]


_TERMS = IdentityCache(8)           # per document: terms_days and terms_usual read the same terms


def _page_terms(ctx: VerifyContext) -> set[int]:
    doc = ctx.document
    if doc is None:
        return set()
    return _TERMS.get_or_make(doc, "terms", lambda: printed_term_days([t for _, _, t in doc_lines(doc)]))


def terms_days(ctx: VerifyContext) -> list[Signal]:
    if ctx.document is None:
        return []
    return _swapped(ctx, _page_terms(ctx), "terms_days", "the printed payment terms")


def terms_usual(ctx: VerifyContext) -> list[Signal]:
    if ctx.document is None or _page_terms(ctx):
        return []                               # printed terms decide (terms_days)
    return _swapped(ctx, USUAL_TERMS, "terms_usual", "a usual payment term")


_A_DATE = re.compile(r"(?<![\d])(?:\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{4}-\d{2}-\d{2}|"
                     r"\d{1,2}\.?\s+[^\W\d_]{3,}\.?\s+\d{4})(?![\d])")
_PERCENT = re.compile(r"\d\s?%")


def discount_date(ctx: VerifyContext) -> list[Signal]:
    fd = roles_of(ctx.schema).first("due_date")
    if fd is None or ctx.record.get(fd) in (None, ""):
        return []
    p = place(ctx, fd)
    if p is None or not _PERCENT.search(p.text) or len(_A_DATE.findall(p.text)) != 1:
        return []
    if not any(m == "discount" for m, *_ in meanings_in(p.text)):
        return []
    return [Signal(fd, "discount_date", "fail",
                   f"printed on a line that offers a discount for early payment ({p.text.strip()[:60]!r}): the discount's date")]


CHECKS = (("terms_days", terms_days), ("terms_usual", terms_usual), ("discount_date", discount_date))
