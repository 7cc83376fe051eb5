"""Reading numeric amounts (and percentages) in any of the common locales.

Grammar of one amount, as printed inside a short span of text:

    [label:] [(] [sign] [currency] [sign] NUMBER [,-] [sign] [currency | tax code] [)] [punct]

NUMBER is digits with at most two kinds of separator: the decimal separator ("," or "."), last
and once, and a thousands separator ("." "," "'" "’", a no-break/thin space, or one plain space)
between groups of three digits (Indian 1,23,456.78 grouping too). A separator followed by exactly
three digits and nothing else ("1,234") is ambiguous: both readings are kept, thousands first.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import lru_cache
from typing import Iterator

from docassay.extractors.normalize._currency import (
    WORDLIKE_CODES,
    is_currency_token,
    minor_digits,
    parse_currency,
    token_currency,
)

__all__ = ["AmountReading", "AmountParse", "parse_amount", "amount_readings", "find_amounts",
           "parse_percent", "MAX_SPAN_CHARS", "MAX_LINE_CHARS", "MAX_DIGITS"]

MAX_SPAN_CHARS = 200          # parse_* read only this much of a span
MAX_LINE_CHARS = 1000         # find_* read only this much of a line
MAX_DIGITS = 12               # more digits than this is an identifier, not an amount
MAX_UNGROUPED_DIGITS = 9      # integer part printed without thousands separators

_TAX_CODES = frozenset({"S", "SR", "Z", "ZR", "E", "ES", "T", "N", "A", "B", "C", "D"})
_SPACES = "\u00a0\u202f\u2009"            # no-break, narrow no-break, thin space
_APOSTROPHES = "'’"

_DIGIT_RE = re.compile(r"[0-9]")
# Words split at whitespace, except a no-break/thin space between two digits ("1\u00a0234,56").
_WORD_RE = re.compile(r"(?:[^\s]|(?<=[0-9])[\u00a0\u202f\u2009](?=[0-9]))+")
_NUM_WORD_RE = re.compile(
    r"(?P<lead>[^0-9]*?)(?P<num>[0-9](?:[0-9.,'’\u00a0\u202f\u2009 ]*[0-9])?)(?P<trail>[^0-9]*)")
_LEAD_RE = re.compile(
    r"(?:[^0-9]*[:=@])?[*~]*(?P<open>\()?(?P<s1>[-−–+])?(?P<cur>[^\s()+\-−–.,:=@*~][^\s()+\-−–.,]*\.?)?"
    r"(?P<s2>[-−–+])?(?P<dot>[.,])?")
_TRAIL_RE = re.compile(
    r"(?P<dash>[.,][-–—]{1,2})?(?P<minus>[-−–])?(?P<close>\))?(?P<cur>[^\s()\-−–.,;:*%]+\.?)?"
    r"(?P<close2>\))?(?P<punct>[.,;:*]*)")
_SEP_RE = re.compile(r"[^0-9]")
_GROUP3_RE = re.compile(r"[1-9][0-9]{0,2}")
_GROUPED_TAIL_RE = re.compile(r"[0-9]{3}(?:[.,][0-9]+)?")


@dataclass(frozen=True, slots=True)
class AmountReading:
    """One way to read a printed amount."""
    value: Decimal
    decimal: str | None       # decimal separator used, or implied by the thousands separator
    thousands: str | None     # thousands separator used ("." "," "'" " "), None if none
    currency: str | None      # ISO 4217 code printed with the amount (parse_*: in the span)
    text: str                 # the printed token this reading covers
    start: int                # offsets of `text` in the input
    end: int


@dataclass(frozen=True, slots=True)
class AmountParse(AmountReading):
    """The best reading of a span, and whether other readings exist (see `amount_readings`)."""
    ambiguous: bool = False


@dataclass(slots=True)
class _Token:
    kind: str                               # amount | percent | bad
    start: int
    end: int
    readings: list[AmountReading]
    alternatives: list[AmountReading]      # readings of a narrower token (space-grouped numbers)


def _core(num: str) -> list[tuple[str, str | None, str | None]]:
    """Readings of a bare number: (canonical digits "1234.56", decimal, thousands), best first."""
    seps: list[str] = []
    for ch in num:
        if not ("0" <= ch <= "9"):
            if ch in _SPACES or ch == " ":
                ch = " "
            elif ch in _APOSTROPHES:
                ch = "'"
            seps.append(ch)
    n_digits = len(num) - len(seps)
    if n_digits > MAX_DIGITS:
        return []
    if not seps:
        if len(num) > MAX_UNGROUPED_DIGITS or (len(num) > 1 and num[0] == "0"):
            return []
        return [(num, None, None)]
    groups = _SEP_RE.split(num)
    if any(not g for g in groups):
        return []
    kinds = set(seps)
    if len(kinds) == 1:
        sep = seps[0]
        if sep in " '" or len(seps) > 1:
            if _thousands_ok(groups, sep):
                return [("".join(groups), _other(sep), sep)]
            return []
        x, y = groups
        out: list[tuple[str, str | None, str | None]] = []
        dec_ok = len(x) <= MAX_UNGROUPED_DIGITS and (len(x) == 1 or x[0] != "0")
        if len(y) == 3 and _GROUP3_RE.fullmatch(x):
            out.append((x + y, _other(sep), sep))
        if dec_ok:
            out.append((f"{x}.{y}", sep, None))
        return out
    if len(kinds) != 2:
        return []
    dec = seps[-1]
    if dec not in ".," or seps.count(dec) != 1:
        return []
    th = seps[0]
    int_groups, frac = groups[:-1], groups[-1]
    if not _thousands_ok(int_groups, th):
        return []
    return [("".join(int_groups) + "." + frac, dec, th)]


def _thousands_ok(groups: list[str], sep: str) -> bool:
    if len(groups) < 2 or not _GROUP3_RE.fullmatch(groups[0]):
        return False
    if all(len(g) == 3 for g in groups[1:]):
        return True
    # Indian grouping: 1,23,45,678
    return (sep == "," and len(groups[0]) <= 2 and len(groups[-1]) == 3
            and all(len(g) == 2 for g in groups[1:-1]))


def _other(sep: str) -> str | None:
    return "," if sep == "." else "." if sep == "," else None


_Core = tuple[tuple[str, "str | None", "str | None"], ...]


@dataclass(frozen=True, slots=True)
class _Word:
    """What one whitespace-delimited word is, as far as amounts go."""
    kind: str                 # amount | percent | bad
    core: _Core = ()          # readings of the number: (digits "1234.56", decimal, thousands)
    negative: bool = False
    lskip: int = 0            # leading characters that are label or punctuation, not the amount
    tskip: int = 0            # trailing characters likewise
    currency: str | None = None   # currency token printed attached to the number ("RM", "€")


_BAD = _Word("bad")
_NEG = ("-", "−", "–")


def _analyse(word: str) -> _Word:
    """Classify one word. Short words are cached: the same ones ("1", "0,00", "19%", "RM9.00")
    recur on every document; the cache holds at most 65 536 words of at most 40 characters."""
    return _analyse_cached(word) if len(word) <= 40 else _analyse_word(word)


@lru_cache(maxsize=1 << 16)
def _analyse_cached(word: str) -> _Word:
    return _analyse_word(word)


def _analyse_word(word: str) -> _Word:
    m = _NUM_WORD_RE.fullmatch(word)
    if m is None:
        return _BAD
    lead, num, trail = m.group("lead"), m.group("num"), m.group("trail")
    lm = _LEAD_RE.fullmatch(lead)
    if lm is None:
        return _BAD
    if trail.startswith("%"):
        if lm.group("cur") or lm.group("s2"):
            return _BAD
        return _Word("percent", tuple(_core(num)), lm.group("s1") in _NEG)
    tm = _TRAIL_RE.fullmatch(trail)
    if tm is None:
        return _BAD
    cur_lead = lm.group("cur")
    if cur_lead and not is_currency_token(cur_lead):
        return _BAD
    dot = lm.group("dot")
    if cur_lead and cur_lead.endswith(".") and len(cur_lead) > 1 and not cur_lead[-2].isalpha():
        cur_lead, dot = cur_lead[:-1], "."      # "$.99": the dot belongs to the number
    if dot:
        # ".99": a leading decimal separator, only straight after a sign, bracket or currency.
        if (cur_lead and cur_lead.endswith(".")) or not num.isdigit():
            return _BAD
        readings: list[tuple[str, str | None, str | None]] = [("0." + num, dot, None)]
    else:
        readings = _core(num)
        if not readings:
            return _BAD
    cur_trail = tm.group("cur")
    tax = False
    if cur_trail:
        unit = cur_trail.split("/", 1)
        if cur_trail.rstrip(".") in _TAX_CODES and not is_currency_token(cur_trail):
            # "75.00SR": a tax class printed against the amount; only on amounts with decimals.
            readings = [r for r in readings if "." in r[0]]
            tax = True
        elif len(unit) == 2 and is_currency_token(unit[0]) and unit[1].rstrip(".").isalpha():
            cur_trail = unit[0]                 # "1,50 €/Stk.": a price per unit
        elif not is_currency_token(cur_trail):
            return _BAD
    if tm.group("dash"):
        # "12,-" / "12.--": a whole amount; the separator is the decimal one.
        d = tm.group("dash")[0]
        readings = [(r[0], d, r[2]) for r in readings if r[2] != d and "." not in r[0]]
    if not readings:
        return _BAD
    if lm.group("open") and not (tm.group("close") or tm.group("close2")):
        return _BAD                             # "(139386": an unclosed bracket opens a reference
    negative = bool(lm.group("s1") in _NEG or lm.group("s2") in _NEG or tm.group("minus")
                    or (lm.group("open") and (tm.group("close") or tm.group("close2"))))
    lead_skip = lm.start("open") if lm.group("open") else (
        lm.start("s1") if lm.group("s1") else lm.start("cur") if cur_lead else
        lm.start("s2") if lm.group("s2") else lm.start("dot") if lm.group("dot") else len(lead))
    trail_keep = tm.end("close2") if tm.group("close2") else tm.end("cur") if cur_trail and not tax else (
        tm.end("close") if tm.group("close") else tm.end("minus") if tm.group("minus") else
        tm.end("dash") if tm.group("dash") else 0)
    currency = cur_lead or (cur_trail if cur_trail and not tax else None)
    return _Word("amount", tuple(readings), negative, lead_skip, len(trail) - trail_keep, currency)


def _tokens(text: str, dollar: str = "USD") -> list[_Token]:
    """The digit-bearing tokens of `text`, classified, with space-grouped numbers joined and the
    currency printed attached to or next to each amount."""
    words = [(m.start(), m.end()) for m in _WORD_RE.finditer(text)]
    out: list[_Token] = []
    i = 0
    n = len(words)
    while i < n:
        s, e = words[i]
        w = text[s:e]
        if not _DIGIT_RE.search(w):
            if w.startswith("%") and out and out[-1].kind == "amount" and out[-1].end == s - 1:
                out[-1].kind = "percent"          # "19 %"
            i += 1
            continue
        # A plain space as thousands separator: "1 234,56", "€ 12 345.00".
        j = _space_group_end(text, words, i)
        tok = None
        if j > i:
            tok = _make_token(text[s:words[j][1]], s, dollar)
            if tok.kind == "amount":
                last = _make_token(text[words[j][0]:words[j][1]], words[j][0], dollar)
                if last.kind == "amount":
                    tok.alternatives = last.readings
            else:
                tok, j = None, i
        if tok is None:
            tok = _make_token(w, s, dollar)
        if tok.kind == "amount" and tok.readings[0].currency is None:
            frac = any("." in str(r.value) for r in tok.readings)
            code = _neighbour_currency(text, words, i, j, dollar, frac)
            if code is not None:
                tok.readings = [replace(r, currency=code) for r in tok.readings]
                tok.alternatives = [replace(r, currency=code) for r in tok.alternatives]
        out.append(tok)
        i = j + 1
    return out


def _neighbour_currency(text: str, words: list[tuple[int, int]], i: int, j: int,
                        dollar: str, fraction: bool) -> str | None:
    """The currency of the word just before word i or just after word j ("EUR 12,00", "12,00 €",
    "0,03 €/Stk."). Codes that are also words ("SDN BHD", "PEN") count only next to an amount
    with decimals."""
    for k in (i - 1, j + 1):
        if 0 <= k < len(words):
            w = text[words[k][0]:words[k][1]].strip("():;,").split("/", 1)[0]
            if w and not _DIGIT_RE.search(w) and is_currency_token(w):
                if not fraction and w in WORDLIKE_CODES:
                    continue
                return token_currency(w, dollar)
    return None


def _space_group_end(text: str, words: list[tuple[int, int]], i: int) -> int:
    s, e = words[i]
    m = _NUM_WORD_RE.fullmatch(text, s, e)
    if m is None or m.group("trail") or not m.group("num").isdigit() or not _GROUP3_RE.fullmatch(m.group("num")):
        return i
    j = i
    while j + 1 < len(words):
        ns, ne = words[j + 1]
        if ns != words[j][1] + 1 or text[ns - 1] != " ":   # exactly one plain space between groups
            break
        nxt = _NUM_WORD_RE.fullmatch(text, ns, ne)
        if nxt is None or nxt.group("lead") or not _GROUPED_TAIL_RE.fullmatch(nxt.group("num")):
            break
        j += 1
        if not nxt.group("num").isdigit() or nxt.group("trail"):
            break
    return j


def _make_token(word: str, start: int, dollar: str) -> _Token:
    w = _analyse(word)
    if w.kind == "bad":
        return _Token("bad", start, start + len(word), [], [])
    tok_start, tok_end = start + w.lskip, start + len(word) - w.tskip
    shown = word[w.lskip:len(word) - w.tskip]
    code = token_currency(w.currency, dollar) if w.currency else None
    readings = [AmountReading(_to_decimal(digits, w.negative), dec, th, code, shown, tok_start, tok_end)
                for digits, dec, th in w.core]
    return _Token(w.kind, tok_start, tok_end, readings, [])


def _to_decimal(digits: str, negative: bool) -> Decimal:
    v = Decimal(digits)               # digits are [0-9]+(.[0-9]+)? by construction
    return -v if negative else v


def _check_decimal(decimal: str | None) -> None:
    if decimal not in (None, ".", ","):
        raise ValueError(f"decimal must be '.', ',' or None, not {decimal!r}")


def _fits(r: AmountReading, decimal: str) -> bool:
    """The reading is consistent with a known decimal separator."""
    return r.thousands != decimal and r.decimal in (None, decimal)


def _finish(readings: list[AmountReading], decimal: str | None) -> list[AmountReading]:
    """Keep the readings that fit a known decimal separator; order by the currency's habits."""
    if decimal is not None:
        readings = [r for r in readings if _fits(r, decimal)]
        readings = [replace(r, decimal=decimal) if r.decimal is None else r for r in readings]
    currency = readings[0].currency if readings else None
    md = minor_digits(currency)
    if md == 0:
        # "¥1,234" / "Rp 15.000": three digits after a separator are thousands.
        readings = [r for r in readings if "." not in str(r.value)] or readings
    elif md == 3 and len(readings) > 1:
        readings.sort(key=lambda r: _frac_len(r) != 3)
    return readings


def _frac_len(r: AmountReading) -> int:
    s = str(r.value)
    return len(s) - s.index(".") - 1 if "." in s else 0


def _readings_of(tok: _Token, decimal: str | None, currency: str | None = None) -> list[AmountReading]:
    """The token's readings, then its alternatives; `currency` (read from the whole span)
    overrides the one printed next to the number ("$ 12.00 (SGD)" is SGD)."""
    main, alt = tok.readings, tok.alternatives
    if currency is not None and main and main[0].currency != currency:
        main = [replace(r, currency=currency) for r in main]
        alt = [replace(r, currency=currency) for r in alt]
    return _finish(list(main), decimal) + _finish(list(alt), decimal)


def _best(readings: list[AmountReading]) -> AmountParse:
    b = readings[0]
    ambiguous = len({(r.value, r.start) for r in readings}) > 1
    return AmountParse(b.value, b.decimal, b.thousands, b.currency, b.text, b.start, b.end, ambiguous)


def amount_readings(text: str, *, decimal: str | None = None, dollar: str = "USD") -> list[AmountReading]:
    """Every plausible reading of the one amount printed in `text`, best first.

    "1,234" -> [1234 ("," thousands), 1.234 ("," decimal)]; "1 234,56" -> [1234.56, 234.56] (a
    plain space may separate thousands or two numbers). Empty when the span holds no amount, more
    than one number, or something that is not an amount (a date, phone number, IBAN, identifier
    with letters, more than 12 digits); percentages are passed over (see `parse_percent`). With
    `decimal` ("," or "."), only readings that use it. Reads the first 200 characters; never
    raises on any text.
    """
    _check_decimal(decimal)
    if not isinstance(text, str) or not _DIGIT_RE.search(text, 0, MAX_SPAN_CHARS):
        return []
    t = text[:MAX_SPAN_CHARS]
    amount = None
    for tok in _tokens(t, dollar):
        if tok.kind == "bad" or (tok.kind == "amount" and amount is not None):
            return []
        if tok.kind == "amount":
            amount = tok
    if amount is None:
        return []
    return _readings_of(amount, decimal, parse_currency(t, dollar=dollar))


def parse_amount(text: str, *, decimal: str | None = None, dollar: str = "USD") -> AmountParse | None:
    """The one amount printed in a short span, or None.

    Accepts any common locale: "1.234,56", "1,234.56", "1 234,56", "1'234.56", "1234.5", "12,-",
    negatives "-8,79" "(8.79)" "8.79-", currency before or after ("€ 1.234,56", "USD 12.00",
    "RM9.00", "$4.11"), labels around it ("NETT TOTAL: $9.20") and tax-class letters after it
    ("45.00 SR"). `decimal` is the known decimal separator ("," or "."), or None to infer it.
    The result says which separators were used, the currency printed in the span (a bare "$" is
    `dollar`), and whether other readings exist (`ambiguous`; see `amount_readings`). Never
    raises on any text.
    """
    readings = amount_readings(text, decimal=decimal, dollar=dollar)
    return _best(readings) if readings else None


def find_amounts(text: str, *, decimal: str | None = None, dollar: str = "USD",
                 skip: list[tuple[int, int]] | None = None) -> list[AmountParse]:
    """Every amount printed in a line, left to right, with its offsets (`start`, `end`) and the
    currency printed attached to it or in the word next to it.

    Tokens that are not amounts (identifiers, dates, phone numbers, percentages) are passed
    over; `skip` lists (start, end) ranges to leave out, e.g. where `find_dates` found dates.
    Reads the first 1000 characters; never raises on any text.
    """
    _check_decimal(decimal)
    if not isinstance(text, str) or not _DIGIT_RE.search(text, 0, MAX_LINE_CHARS):
        return []
    out: list[AmountParse] = []
    for tok in _tokens(text[:MAX_LINE_CHARS], dollar):
        if tok.kind != "amount":
            continue
        if skip and any(tok.start < e and tok.end > s for s, e in skip):
            continue
        readings = _readings_of(tok, decimal)
        if readings:
            out.append(_best(readings))
    return out


def parse_percent(text: str, *, decimal: str | None = None) -> Decimal | None:
    """The one percentage printed in a span ("19 %", "GST @6%", "7,5%", "-2,00%"), in percent
    units (Decimal("19")), or None. Other numbers in the span are ignored. Never raises."""
    _check_decimal(decimal)
    if not isinstance(text, str) or "%" not in text[:MAX_SPAN_CHARS]:
        return None
    pct = [tok for tok in _tokens(text[:MAX_SPAN_CHARS]) if tok.kind == "percent"]
    if len(pct) != 1:
        return None
    readings = pct[0].readings
    if decimal is not None:
        readings = [r for r in readings if _fits(r, decimal)]
    else:
        # "7,5%" reads as 7.5 and "1,000%" is unusual: prefer a decimal reading for rates.
        readings = sorted(readings, key=lambda r: r.thousands is not None)
    return readings[0].value if readings else None


def iter_number_evidence(text: str) -> Iterator[str]:
    """For locale voting: the decimal separator each number in `text` shows unambiguously,
    once per number ("1.234,56" counts twice: it shows both separators)."""
    if not isinstance(text, str) or not _DIGIT_RE.search(text, 0, MAX_LINE_CHARS):
        return
    for tok in _tokens(text[:MAX_LINE_CHARS]):
        if tok.kind == "bad":
            continue
        decs = {r.decimal for r in tok.readings + tok.alternatives}
        if len(decs) == 1:
            d = next(iter(decs))
            if d is not None:
                yield d
                if any(r.thousands in (".", ",") and "." in str(r.value) for r in tok.readings):
                    yield d


def iter_amount_currencies(text: str, dollar: str = "USD") -> Iterator[str]:
    """For currency voting: the currency printed with each amount in `text`."""
    if not isinstance(text, str) or not _DIGIT_RE.search(text, 0, MAX_LINE_CHARS):
        return
    for tok in _tokens(text[:MAX_LINE_CHARS], dollar):
        if tok.kind == "amount" and tok.readings[0].currency:
            yield tok.readings[0].currency
