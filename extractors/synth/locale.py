"""Printing numbers, amounts, percentages and dates the way one locale prints them, and reading them back.

A `Locale` is fixed per format: decimal and group separators, the date pattern, the currency and
how it is marked. Date patterns use the tokens `yyyy yy MMMM MMM mm m dd d` and `'literal'`.
All characters produced stay inside WinAnsi (cp1252) so the standard PDF fonts can draw them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

from docassay.extractors.synth import vocab

__all__ = ["Locale", "format_number", "format_amount", "format_date", "format_percent",
           "parse_amount", "parse_date", "money", "CENT"]

CENT = Decimal("0.01")


@dataclass(frozen=True, slots=True)
class Locale:
    language: str            # en de fr es nl ms
    country: str             # ISO 3166 alpha-2
    decimal: str             # "." or ","
    group: str               # "", ",", ".", " ", "'"
    date_pattern: str        # e.g. "dd.mm.yyyy", "MMMM d, yyyy"
    currency: str            # ISO 4217 code
    currency_mark: str       # what is printed next to amounts: "€", "$", "EUR", "RM" ...
    currency_pos: str        # before | after
    currency_space: bool     # "€ 12.00" vs "€12.00"
    upper_months: bool = False

    @property
    def code(self) -> str:
        return f"{self.language}-{self.country}"

    @property
    def number_style(self) -> str:
        return f"1{self.group}234{self.decimal}56"


def money(value: Decimal | float | str) -> Decimal:
    """Round half-up to cents (the rounding every printed amount in this package uses)."""
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


def format_number(value: Decimal, loc: Locale, decimals: int = 2, group: bool = True) -> str:
    """`value` with `decimals` places, the locale's separators; a leading '-' when negative."""
    q = Decimal(1).scaleb(-decimals) if decimals else Decimal(1)
    v = Decimal(value).quantize(q, rounding=ROUND_HALF_UP)
    sign = "-" if v < 0 else ""
    s = f"{abs(v):.{decimals}f}"
    int_part, _, frac = s.partition(".")
    if group and loc.group and len(int_part) > 3:
        chunks = []
        while len(int_part) > 3:
            chunks.append(int_part[-3:])
            int_part = int_part[:-3]
        chunks.append(int_part)
        int_part = loc.group.join(reversed(chunks))
    return sign + int_part + (loc.decimal + frac if decimals else "")


def format_amount(value: Decimal, loc: Locale, mark: bool = False, decimals: int = 2) -> str:
    """An amount; with `mark`, the currency mark before or after it as the locale places it."""
    s = format_number(value, loc, decimals)
    if not mark:
        return s
    sep = " " if loc.currency_space else ""
    return f"{loc.currency_mark}{sep}{s}" if loc.currency_pos == "before" else f"{s}{sep}{loc.currency_mark}"


def format_percent(rate: Decimal, loc: Locale, spaced: bool = True, decimals: int | None = None) -> str:
    """'19 %', '19%', '5,5 %', '8.1%' ... (decimals only where the rate needs them unless given)."""
    if decimals is None:
        decimals = 0 if rate == rate.to_integral_value() else len(str(rate.normalize()).partition(".")[2])
    return format_number(rate, loc, decimals, group=False) + (" %" if spaced else "%")


_TOKEN = re.compile(r"yyyy|yy|MMMM|MMM|mm|m|dd|d|'[^']*'")


def format_date(d: date, loc: Locale, pattern: str | None = None) -> str:
    """`d` printed with `pattern` (default: the locale's), month names in the locale's language."""
    months = vocab.MONTHS[loc.language]
    short = vocab.MONTHS_SHORT[loc.language]

    def sub(m: re.Match[str]) -> str:
        t = m.group(0)
        if t == "yyyy":
            return f"{d.year:04d}"
        if t == "yy":
            return f"{d.year % 100:02d}"
        if t == "MMMM":
            s = months[d.month - 1]
            return s.upper() if loc.upper_months else s
        if t == "MMM":
            s = short[d.month - 1]
            return s.upper() if loc.upper_months else s
        if t == "mm":
            return f"{d.month:02d}"
        if t == "m":
            return str(d.month)
        if t == "dd":
            return f"{d.day:02d}"
        if t == "d":
            return str(d.day)
        return t[1:-1]

    return _TOKEN.sub(sub, pattern or loc.date_pattern)


# ---- reading back (used by tests and by anyone checking a printed value against the truth) ----

_MARKS = sorted({m for ms in vocab.CURRENCY_MARKS.values() for m in ms}, key=len, reverse=True)


def parse_amount(text: str, loc: Locale) -> Decimal | None:
    """The number printed in `text` under `loc`'s separators, currency marks removed; None if none."""
    s = text.strip()
    for m in _MARKS:
        s = s.replace(m, "")
    s = s.replace(" ", "").replace("\u00a0", "")
    neg = s.startswith("-") or s.endswith("-") or (s.startswith("(") and s.endswith(")"))   # "120,00-" too
    s = s.strip("-()")
    if loc.group:
        s = s.replace(loc.group, "") if loc.group != " " else s
    if loc.decimal == ",":
        s = s.replace(",", ".")
    if not re.fullmatch(r"\d+(\.\d+)?", s):
        return None
    v = Decimal(s)
    return -v if neg else v


def parse_date(text: str, loc: Locale, pattern: str | None = None) -> date | None:
    """Read a date printed with `pattern` (default: the locale's); None if it does not match."""
    pat = pattern or loc.date_pattern
    months = [m.lower() for m in vocab.MONTHS[loc.language]]
    short = [m.lower() for m in vocab.MONTHS_SHORT[loc.language]]
    rx = []
    pos = 0
    for m in _TOKEN.finditer(pat):
        rx.append(re.escape(pat[pos:m.start()]))
        t = m.group(0)
        rx.append({"yyyy": r"(?P<Y>\d{4})", "yy": r"(?P<y>\d{2})", "MMMM": r"(?P<B>[^\d\s,.]+)",
                   "MMM": r"(?P<b>[^\d\s,]+)", "mm": r"(?P<m>\d{2})", "m": r"(?P<m>\d{1,2})",
                   "dd": r"(?P<d>\d{2})", "d": r"(?P<d>\d{1,2})"}.get(t, re.escape(t[1:-1])))
        pos = m.end()
    rx.append(re.escape(pat[pos:]))
    hit = re.fullmatch("".join(rx), " ".join(text.split()))
    if not hit:
        return None
    g = hit.groupdict()
    year = int(g["Y"]) if g.get("Y") else 2000 + int(g["y"])
    if g.get("B"):
        if g["B"].lower() not in months:
            return None
        month = months.index(g["B"].lower()) + 1
    elif g.get("b"):
        if g["b"].lower() not in short:
            return None
        month = short.index(g["b"].lower()) + 1
    else:
        month = int(g["m"])
    try:
        return date(year, month, int(g["d"]))
    except ValueError:
        return None
