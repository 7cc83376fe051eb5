"""Agreement: the same value said twice, by the page, by the next-best reading, by the format's
earlier documents.

    value_printed        the value is printed on the document at all (a name or ID as its
                         characters, white space ignored; an amount in any decimal convention;
                         a date in a common numeric or month-name form): a value found nowhere
                         fails (an amount the troubleshooter computed, a garbled name)
    printed_twice        the value is printed on another line too (the seller's name in the
                         letterhead and the footer; the total on page 1 and in the summary)
    alternative_agrees   the next-best readings the extraction offers (extraction.alternatives,
                         `nearby span`): one of them equal to the value passes; only different
                         ones compete: fail
    reading_ambiguous    the printed text also reads as another value (05.03.2018 as 5 March or
                         3 May; 1.234 as 1234 or 1.234): fail; a single reading passes
    history_agrees       a value that belongs to the format (the seller's name, VAT ID, IBAN, the
                         currency, or a field marked `x-docassay: {"per_format": "same"}`) equals
                         the format's previous accepted document's (verifiers.history): pass;
                         differs while another of the issuer's values agrees: fail (when none
                         agrees, the layout is shared by another issuer: no signal)
    history_repeats      a per-document value (document number, issue date, gross total) equal to
                         the format's previous document's fails (copied, or the same document
                         again); a different one passes
    date_order           a date read from a numeric form ("05.03.2018") in the order the document's
                         unambiguous dates show ("24.03.2020": day first): pass; in the other order:
                         fail; a document whose dates never show the order: no signal
    currency_printed     the currency's code or sign is printed; another code or sign printed
                         instead fails
    currency_of_total    the lines that print the gross total print the currency's code or sign:
                         pass; they print only others ("Net à payer: Fr. 10.11" for a currency
                         read from "capital de 1 000 €"): fail. Nothing where they print none

Fields by role and kind (verifiers.checks.fields, verifiers.settings).
"""
from __future__ import annotations

import re
from datetime import date

from docassay.verifiers.checks.fields import roles_of
from docassay.verifiers.checks.page import compact, doc_lines, doc_text, lines_printing_amount
from docassay.verifiers.checks.signal import Signal
from docassay.verifiers.checks.values import iso_date, num, text
from docassay.verifiers.context import VerifyContext
from docassay.verifiers.evidence import FieldEvidence
from docassay.verifiers.history import value_key

__all__ = ["value_printed", "printed_twice", "alternative_agrees", "reading_ambiguous", "history_agrees",
           "history_repeats", "date_order",
           "currency_printed", "currency_of_total", "CHECKS", "CURRENCY_SIGNS"]

_FORMAT_ROLES = ("seller_name", "seller_vat_id", "seller_address", "iban", "bic", "currency")
_DOCUMENT_ROLES = ("document_number", "issue_date", "gross_total")
AMOUNT_EPS = 0.005
CURRENCY_SIGNS = {"€": "EUR", "$": "USD", "£": "GBP", "¥": "JPY", "₹": "INR", "RM": "MYR", "Rs": "INR",
                  "CHF": "CHF", "Fr.": "CHF", "S$": "SGD", "A$": "AUD", "C$": "CAD", "kr": "SEK", "zł": "PLN"}
_MONTHS = {
    1: ("enero", "jan", "januar", "january", "janvier", "januari", "janv", "jän", "jaenner"),
    2: ("febrero", "feb", "februar", "february", "fevrier", "februari", "fev"),
    3: ("marzo", "mar", "marz", "maerz", "march", "mars", "maart", "mac", "mrz"),
    4: ("abril", "apr", "april", "avril", "avr"),
    5: ("mayo", "may", "mai", "mei"),
    6: ("junio", "jun", "juni", "june", "juin"),
    7: ("julio", "jul", "juli", "july", "juillet", "julai", "juil"),
    8: ("agosto", "aug", "august", "aout", "augustus", "ogos"),
    9: ("septiembre", "setiembre", "sep", "sept", "september", "septembre"),
    10: ("octubre", "oct", "okt", "oktober", "october", "octobre"),
    11: ("noviembre", "nov", "november", "novembre"),
    12: ("diciembre", "dec", "dez", "dezember", "december", "decembre", "dis", "disember"),
}
_KINDS_TEXT = ("text", "identifier", "code")


def _date_forms(d: date) -> list[str]:
    """Compact forms a date may be printed in (after `_compact`: no punctuation or spaces)."""
    dd, mm, yyyy, yy = f"{d.day:02d}", f"{d.month:02d}", f"{d.year}", f"{d.year % 100:02d}"
    forms = {dd + mm + yyyy, dd + mm + yy, mm + dd + yyyy, mm + dd + yy, yyyy + mm + dd,
             f"{d.day}{d.month}{yyyy}", f"{d.month}{d.day}{yyyy}", f"{d.day}{mm}{yyyy}"}
    for name in _MONTHS[d.month]:
        forms |= {f"{d.day}{name}{yyyy}", f"{dd}{name}{yyyy}", f"{name}{d.day}{yyyy}", f"{name}{dd}{yyyy}",
                  f"{dd}{name}{yy}", f"{d.day}{name}{yy}", f"{d.day}de{name}de{yyyy}", f"{dd}de{name}de{yyyy}"}
    return sorted(forms)


def _lines_with(ctx: VerifyContext, f: str, kind: str) -> list[int] | None:
    """Indexes of the document lines that print the value of `f`; None when not judged."""
    dt = doc_text(ctx.document)
    if not dt.lines:
        return None
    v = ctx.record.get(f)
    if kind in ("amount", "quantity", "number", "integer"):
        x = num(v)
        if x is None:
            return None
        return lines_printing_amount(dt, x)
    if kind == "date":
        d = iso_date(v)
        if d is None:
            return None
        forms = [fm for fm in _date_forms(d) if fm in dt.joined]
        return sorted({i for fm in forms for i, c in enumerate(dt.compact) if fm in c})
    if kind in _KINDS_TEXT:
        c = compact(v) if isinstance(v, str) else ""
        if len(c) < 2:
            return None
        hits = [i for i, line in enumerate(dt.compact) if c in line]
        if not hits and len(c) > 12 and c in dt.joined:      # a value printed over several lines
            return [-1]
        return hits
    return None


def value_printed(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, pol in ctx.cfg.fields.items():
        if ctx.record.get(f) in (None, "") or (pol.kind == "code" and roles_of(ctx.schema).role(f) == "currency"):
            continue
        hits = _lines_with(ctx, f, pol.kind)
        if hits is None:
            continue
        if hits:
            out.append(Signal(f, "value_printed", "pass", f"printed on {len(hits)} line(s)"))
        else:
            out.append(Signal(f, "value_printed", "fail", f"{ctx.record[f]!r} is printed nowhere on the document"))
    return out


def printed_twice(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, pol in ctx.cfg.fields.items():
        if ctx.record.get(f) in (None, "") or pol.kind in ("boolean",) or roles_of(ctx.schema).role(f) == "currency":
            continue
        hits = _lines_with(ctx, f, pol.kind)
        if hits and len([h for h in hits if h >= 0]) >= 2:
            out.append(Signal(f, "printed_twice", "pass", f"printed on {len(hits)} lines"))
    return out


def _same(a: object, b: object) -> bool:
    x, y = num(a), num(b)
    if x is not None and y is not None:
        return abs(x - y) < AMOUNT_EPS
    return isinstance(a, str) and isinstance(b, str) and compact(a) == compact(b)


def alternative_agrees(ctx: VerifyContext) -> list[Signal]:
    alts = getattr(ctx.extraction, "alternatives", None) or {}
    out = []
    for f, options in alts.items():
        v = ctx.record.get(f) if isinstance(f, str) else None
        if v in (None, "") or not isinstance(options, list):
            continue
        nearby = [getattr(a, "value", None) for a in options if getattr(a, "how", "") == "nearby span"]
        nearby = [a for a in nearby if a not in (None, "")]
        if not nearby:
            continue
        if any(_same(a, v) for a in nearby):
            out.append(Signal(f, "alternative_agrees", "pass", "the next-best reading says the same"))
        else:
            out.append(Signal(f, "alternative_agrees", "fail",
                              f"{len(nearby)} other reading(s) compete, e.g. {nearby[0]!r}"))
    return out


def reading_ambiguous(ctx: VerifyContext) -> list[Signal]:
    alts = getattr(ctx.extraction, "alternatives", None) or {}
    out = []
    for f, pol in ctx.cfg.fields.items():
        v = ctx.record.get(f)
        ev = (ctx.evidence or {}).get(f)
        if v in (None, "") or pol.kind not in ("date", "amount") or not isinstance(ev, FieldEvidence) or not ev.text:
            continue
        if ev.how not in ("label", "table", "pattern", "position"):
            continue
        others = [getattr(a, "value", None) for a in alts.get(f) or [] if getattr(a, "how", "") == "other reading"]
        others = [o for o in others if o not in (None, "") and not _same(o, v)]
        if others:
            out.append(Signal(f, "reading_ambiguous", "fail", f"{ev.text!r} also reads as {others[0]!r}"))
        else:
            out.append(Signal(f, "reading_ambiguous", "pass", f"{ev.text!r} has one reading"))
    return out


def history_agrees(ctx: VerifyContext) -> list[Signal]:
    prev = ctx.history.previous() if ctx.history is not None else None
    if prev is None or not hasattr(prev.record, "get"):
        return []
    r = roles_of(ctx.schema)
    same: dict[str, bool] = {}
    for f, pol in ctx.cfg.fields.items():
        v, pv = ctx.record.get(f), prev.record.get(f)
        if v in (None, "", []) or pv in (None, "", []) or isinstance(v, (list, dict)):
            continue
        if r.role(f) in _FORMAT_ROLES or pol.same_per_format:
            same[f] = value_key(v) == value_key(pv)
    anchors = [f for f in same if r.role(f) != "currency"]
    out = []
    for f, agrees in same.items():
        others = [same[a] for a in anchors if a != f]
        if not agrees and others and not any(others):
            continue                    # nothing of the issuer agrees: another issuer in the same layout
        out.append(Signal(f, "history_agrees", "pass" if agrees else "fail",
                          f"{'as' if agrees else 'unlike'} the format's previous document ({prev.record.get(f)!r})"))
    return out


def history_repeats(ctx: VerifyContext) -> list[Signal]:
    prev = ctx.history.previous() if ctx.history is not None else None
    if prev is None or not hasattr(prev.record, "get"):
        return []
    out = []
    for f, role in roles_of(ctx.schema).by_field.items():
        v, pv = ctx.record.get(f), prev.record.get(f)
        if role not in _DOCUMENT_ROLES or v in (None, "") or pv in (None, "") or isinstance(v, (list, dict)):
            continue
        if value_key(v) == value_key(pv):
            out.append(Signal(f, "history_repeats", "fail", f"the same {f} as the format's previous document"))
        else:
            out.append(Signal(f, "history_repeats", "pass", "differs from the format's previous document"))
    return out


_NUMERIC_DATE = re.compile(r"(?<![\d.,/-])(\d{1,2})[./-](\d{1,2})[./-](\d{4}|\d{2})(?![\d.,/-]|[.,/-]\d)")


def _order_evidence(ctx: VerifyContext) -> tuple[int, int]:
    """How many numeric dates on the document can only be day first, and how many only month first."""
    day_first = month_first = 0
    for _, _, t in doc_lines(ctx.document):
        for a, b, _ in _NUMERIC_DATE.findall(t):
            x, y = int(a), int(b)
            if 12 < x <= 31 and 1 <= y <= 12:
                day_first += 1
            elif 12 < y <= 31 and 1 <= x <= 12:
                month_first += 1
    return day_first, month_first


def date_order(ctx: VerifyContext) -> list[Signal]:
    out = []
    order: tuple[int, int] | None = None
    for f, pol in ctx.cfg.fields.items():
        d = iso_date(ctx.record.get(f)) if pol.kind == "date" else None
        ev = (ctx.evidence or {}).get(f)
        if d is None or not isinstance(ev, FieldEvidence) or not ev.text:
            continue
        m = _NUMERIC_DATE.search(ev.text)
        if m is None or d.day == d.month:
            continue
        a, b = int(m.group(1)), int(m.group(2))
        used = "day" if (a, b) == (d.day, d.month) else "month" if (a, b) == (d.month, d.day) else None
        if used is None:
            continue
        if order is None:
            order = _order_evidence(ctx)
        day_first, month_first = order
        if day_first and not month_first:
            doc_order = "day"
        elif month_first and not day_first:
            doc_order = "month"
        else:
            continue
        ok = used == doc_order
        out.append(Signal(f, "date_order", "pass" if ok else "fail",
                          f"{ev.text!r} read {used} first; the document's other dates are {doc_order} first"))
    return out


_CODE = re.compile(r"\b([A-Z]{3})\b")


def _currencies_in(t: str) -> set[str]:
    """The ISO codes a line prints, as codes or signs."""
    from docassay.verifiers.checks.identifiers import ISO_4217
    out = {c for c in _CODE.findall(t) if c in ISO_4217}
    for sign, code in CURRENCY_SIGNS.items():
        if sign in t and (not sign.isalpha() or re.search(rf"(?<![A-Za-z]){re.escape(sign)}(?![A-Za-z])", t)):
            out.add(code)
    return out


def currency_printed(ctx: VerifyContext) -> list[Signal]:
    fields = roles_of(ctx.schema).fields("currency")
    lines = doc_lines(ctx.document)
    if not fields or not lines:
        return []
    printed: set[str] = set()
    for _, _, t in lines:
        printed |= _currencies_in(t)
    out = []
    for f in fields:
        v = text(ctx.record.get(f))
        if v is None:
            continue
        v = v.upper()
        if v in printed:
            out.append(Signal(f, "currency_printed", "pass", f"{v} is printed (as its code or sign)"))
        elif printed:
            out.append(Signal(f, "currency_printed", "fail", f"{v} is not printed; the document prints "
                                                             + ", ".join(sorted(printed))))
    return out


def currency_of_total(ctx: VerifyContext) -> list[Signal]:
    roles = roles_of(ctx.schema)
    fields, totals = roles.fields("currency"), roles.fields("gross_total")
    if not fields or not totals or ctx.document is None:
        return []
    gross = num(ctx.record.get(totals[0]))
    if gross is None or abs(gross) < 0.01:
        return []
    dt = doc_text(ctx.document)
    beside: set[str] = set()
    for i in lines_printing_amount(dt, abs(gross)):
        beside |= _currencies_in(dt.lines[i][2])
    out = []
    for f in fields:
        v = text(ctx.record.get(f))
        if v is None or not beside:
            continue
        v = v.upper()
        if v in beside:
            out.append(Signal(f, "currency_of_total", "pass", f"{v} is printed with the gross total"))
        else:
            out.append(Signal(f, "currency_of_total", "fail", "the gross total is printed with "
                              + ", ".join(sorted(beside)) + f", not {v}"))
    return out


CHECKS = (("value_printed", value_printed), ("printed_twice", printed_twice),
          ("alternative_agrees", alternative_agrees), ("reading_ambiguous", reading_ambiguous),
          ("date_order", date_order), ("history_agrees", history_agrees), ("history_repeats", history_repeats),
          ("currency_printed", currency_printed), ("currency_of_total", currency_of_total))
