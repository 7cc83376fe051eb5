"""Reading printed dates: numeric (05.03.2018, 5/3/18, 2018-03-05, 20180305) and with month names
in English, German, French, Spanish, Dutch and Malay ("3. März 2018", "5 de marzo de 2018").

Each reading records the order of its parts (DMY | MDY | YMD) and a strptime-style pattern
("%d.%m.%Y", "%d %B %Y"; %d also covers an ordinal suffix such as "3rd", %b/%B a month name in
any of the languages) that `parse_date(..., pattern=...)` replays exactly.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from docassay.extractors.normalize._amounts import MAX_LINE_CHARS, MAX_SPAN_CHARS

__all__ = ["DateReading", "DateParse", "parse_date", "date_readings", "find_dates",
           "month_number", "ORDERS", "LANGUAGES", "date_order_evidence"]

ORDERS = ("DMY", "MDY", "YMD")
_CURRENT_YEAR = date.today().year
_MIN_YEAR, _MAX_YEAR = 1900, 2100

# Per language, per month: the full name first, then abbreviations and variants (accents folded).
_MONTHS: dict[str, tuple[tuple[str, ...], ...]] = {
    "en": (("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
           ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
           ("october", "oct"), ("november", "nov"), ("december", "dec")),
    "de": (("januar", "jan", "janner", "jaenner"), ("februar", "feb", "feber"),
           ("marz", "maerz", "mar", "mrz"), ("april", "apr"), ("mai",), ("juni", "jun"),
           ("juli", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("oktober", "okt"),
           ("november", "nov"), ("dezember", "dez")),
    "fr": (("janvier", "janv", "jan"), ("fevrier", "fevr", "fev"), ("mars", "mar"),
           ("avril", "avr"), ("mai",), ("juin",), ("juillet", "juil", "juill"), ("aout",),
           ("septembre", "sept", "sep"), ("octobre", "oct"), ("novembre", "nov"),
           ("decembre", "dec")),
    "es": (("enero", "ene"), ("febrero", "feb"), ("marzo", "mar"), ("abril", "abr"),
           ("mayo", "may"), ("junio", "jun"), ("julio", "jul"), ("agosto", "ago"),
           ("septiembre", "setiembre", "sep", "sept", "set"), ("octubre", "oct"),
           ("noviembre", "nov"), ("diciembre", "dic")),
    "nl": (("januari", "jan"), ("februari", "feb"), ("maart", "mrt", "mar"), ("april", "apr"),
           ("mei",), ("juni", "jun"), ("juli", "jul"), ("augustus", "aug"),
           ("september", "sep", "sept"), ("oktober", "okt"), ("november", "nov"),
           ("december", "dec")),
    "ms": (("januari", "jan"), ("februari", "feb"), ("mac",), ("april", "apr"), ("mei",),
           ("jun",), ("julai", "jul"), ("ogos", "ogo"), ("september", "sep", "sept"),
           ("oktober", "okt"), ("november", "nov"), ("disember", "dis")),
}
LANGUAGES = tuple(_MONTHS)
# folded name -> (month, languages in LANGUAGES order, is a full name)
_MONTH_INDEX: dict[str, tuple[int, tuple[str, ...], bool]] = {}
for _lang, _table in _MONTHS.items():
    for _i, _names in enumerate(_table, start=1):
        for _k, _name in enumerate(_names):
            m0, langs, full = _MONTH_INDEX.get(_name, (_i, (), False))
            assert m0 == _i, f"month name {_name!r} means two months"
            _MONTH_INDEX[_name] = (_i, langs + (_lang,), full or _k == 0 or len(_name) > 4)

_ORD = r"(?:st|nd|rd|th|er|e|º|°|ª)?"
_MON = r"(?P<mon>[^\W\d_]{3,10})\.?"
_YEAR_END = r"(?![0-9]|\s?:[0-9]|[.,/-][0-9])"          # not followed by more digits or a time
_NUM_DMY_RE = re.compile(
    r"(?<![0-9A-Za-z.,/-])(?P<a>[0-9]{1,2})(?P<s>[-/.])(?P<b>[0-9]{1,2})(?P=s)(?P<c>[0-9]{4}|[0-9]{2})"
    r"(?![0-9]|[-/.][0-9]|,[0-9])")
_NUM_YMD_RE = re.compile(
    r"(?<![0-9A-Za-z.,/-])(?P<y>(?:19|20|21)[0-9]{2})(?P<s>[-/.])(?P<m>[0-9]{1,2})(?P=s)(?P<d>[0-9]{1,2})"
    r"(?![0-9]|[-/.][0-9])")
_COMPACT_RE = re.compile(r"(?<![0-9A-Za-z.,/-])(?P<n>[0-9]{8})(?![0-9]|[.,][0-9])")
_NAMED_DMY_RE = re.compile(
    rf"(?<![0-9A-Za-z])(?P<d>[0-9]{{1,2}}{_ORD})\.?(?:\s*[-/.]\s*|\s*)(?:(?:de|del|of)\s+)?{_MON}"
    rf"(?:\s*[-/.,]\s*|\s+)(?:(?:de|del)\s+)?(?P<y>[0-9]{{4}}|[0-9]{{2}}){_YEAR_END}", re.IGNORECASE)
_NAMED_MDY_RE = re.compile(
    rf"(?<![^\W\d_]){_MON}\s*(?:[-/]\s*)?(?P<d>[0-9]{{1,2}}{_ORD})(?![0-9])\s*(?:,\s*|\s+|[-/]\s*)"
    rf"(?P<y>[0-9]{{4}}|'?[0-9]{{2}}){_YEAR_END}", re.IGNORECASE)
_NAMED_YMD_RE = re.compile(
    rf"(?<![0-9])(?P<y>(?:19|20)[0-9]{{2}})\s*[-/. ]\s*{_MON}\s*[-/. ]\s*(?P<d>[0-9]{{1,2}})(?![0-9])",
    re.IGNORECASE)
_DIGIT_RE = re.compile(r"[0-9]")
_ALPHA_RE = re.compile(r"[^\W\d_]")


@dataclass(frozen=True, slots=True)
class DateReading:
    """One way to read a printed date."""
    value: date
    order: str                 # DMY | MDY | YMD
    pattern: str               # strptime-style, e.g. "%d.%m.%Y"; replay with parse_date(pattern=)
    lang: str | None           # language of the month name, None for numeric dates
    text: str                  # the printed date
    start: int                 # offsets of `text` in the input
    end: int


@dataclass(frozen=True, slots=True)
class DateParse(DateReading):
    """The best reading of a date, and whether another order reads a different valid date."""
    ambiguous: bool = False


def _fold_word(word: str) -> str:
    w = word.casefold()
    if not w.isascii():
        w = "".join(c for c in unicodedata.normalize("NFKD", w) if not unicodedata.combining(c))
    return w


def month_number(word: str, lang: str | None = None) -> tuple[int, str] | None:
    """(month 1-12, language) for a month name or abbreviation ("März", "Mac", "sept."), or None."""
    hit = _MONTH_INDEX.get(_fold_word(word.rstrip(".")))
    if hit is None:
        return None
    month, langs, _ = hit
    if lang is not None:
        return (month, lang) if lang in langs else None
    return month, langs[0]


def _year(text: str) -> int | None:
    digits = text.lstrip("'")
    y = int(digits)
    if len(digits) == 2:
        y += 2000
        if y > _CURRENT_YEAR + 10:
            y -= 100
    return y if _MIN_YEAR <= y <= _MAX_YEAR else None


def _make(y: int | None, m: int, d: int) -> date | None:
    if y is None:
        return None
    try:
        return date(y, m, d)
    except ValueError:
        return None


def _day(text: str) -> int:
    return int(re.match(r"[0-9]+", text).group(0))  # type: ignore[union-attr]


def _pattern(text: str, m: re.Match[str], subs: dict[str, str]) -> str:
    """The matched text with its date parts replaced by directives."""
    parts: list[tuple[int, int, str]] = sorted((m.start(g), m.end(g), d) for g, d in subs.items())
    out, pos = [], m.start()
    for s, e, d in parts:
        out.append(text[pos:s].replace("%", "%%"))
        out.append(d)
        pos = e
    out.append(text[pos:m.end()].replace("%", "%%"))
    return "".join(out)


def _readings(text: str, m: re.Match[str], kind: str, order: str | None,
              lang: str | None) -> list[DateReading]:
    """The valid readings of one regex match, best first."""
    shown, s, e = m.group(0), m.start(), m.end()
    out: list[DateReading] = []
    if kind == "num":
        a, b, c, sep = m.group("a"), m.group("b"), m.group("c"), m.group("s")
        ya = "%Y" if len(c) == 4 else "%y"
        cands: list[tuple[str, int | None, int, int, str]] = []
        orders = (order,) if order else ("DMY", "MDY")
        for o in orders:
            if o == "DMY":
                cands.append(("DMY", _year(c), int(b), int(a), f"%d{sep}%m{sep}{ya}"))
            elif o == "MDY":
                cands.append(("MDY", _year(c), int(a), int(b), f"%m{sep}%d{sep}{ya}"))
            elif len(a) == 2 and len(c) == 2:
                cands.append(("YMD", _year(a), int(b), int(c), f"%y{sep}%m{sep}%d"))
        if order is None and len(a) == 2 and len(c) == 2 and int(a) > 31:
            cands.append(("YMD", _year(a), int(b), int(c), f"%y{sep}%m{sep}%d"))
        for o, y, mo, d, pat in cands:
            v = _make(y, mo, d)
            if v is not None and all(r.value != v for r in out):
                out.append(DateReading(v, o, pat, None, shown, s, e))
        return out
    if kind == "iso":
        v = _make(_year(m.group("y")), int(m.group("m")), int(m.group("d")))
        sep = m.group("s")
        if v is not None:
            out.append(DateReading(v, "YMD", f"%Y{sep}%m{sep}%d", None, shown, s, e))
        return out
    if kind == "compact":
        n = m.group("n")
        v = _make(_year(n[:4]), int(n[4:6]), int(n[6:])) if n[:2] in ("19", "20") else None
        if v is not None:
            return [DateReading(v, "YMD", "%Y%m%d", None, shown, s, e)]
        orders = (order,) if order else ("DMY", "MDY")
        for o in orders:
            if o == "DMY":
                v, pat = _make(_year(n[4:]), int(n[2:4]), int(n[:2])), "%d%m%Y"
            elif o == "MDY":
                v, pat = _make(_year(n[4:]), int(n[:2]), int(n[2:4])), "%m%d%Y"
            else:
                continue
            if v is not None and all(r.value != v for r in out):
                out.append(DateReading(v, o, pat, None, shown, s, e))
        return out
    hit = month_number(m.group("mon"), lang)
    if hit is None:
        return out
    month, mlang = hit
    full = _MONTH_INDEX[_fold_word(m.group("mon").rstrip("."))][2]
    y_text = m.group("y")
    v = _make(_year(y_text), month, _day(m.group("d")))
    if v is None:
        return out
    ydir = "%Y" if len(y_text.lstrip("'")) == 4 else "%y"
    pat = _pattern(text, m, {"d": "%d", "mon": "%B" if full else "%b", "y": ydir})
    o = {"named_dmy": "DMY", "named_mdy": "MDY", "named_ymd": "YMD"}[kind]
    return [DateReading(v, o, pat, mlang, shown, s, e)]


_FINDERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("iso", _NUM_YMD_RE), ("num", _NUM_DMY_RE), ("named_dmy", _NAMED_DMY_RE),
    ("named_mdy", _NAMED_MDY_RE), ("named_ymd", _NAMED_YMD_RE), ("compact", _COMPACT_RE),
)


def _matches(text: str) -> list[tuple[re.Match[str], str]]:
    """Non-overlapping date-shaped matches, left to right (earliest, then longest, wins)."""
    found: list[tuple[re.Match[str], str]] = []
    has_alpha = _ALPHA_RE.search(text) is not None
    for kind, rx in _FINDERS:
        if kind.startswith("named") and not has_alpha:
            continue
        if kind.startswith("named"):
            found.extend((m, kind) for m in rx.finditer(text)
                         if _fold_word(m.group("mon").rstrip(".")) in _MONTH_INDEX)
        else:
            found.extend((m, kind) for m in rx.finditer(text))
    found.sort(key=lambda mk: (mk[0].start(), -(mk[0].end() - mk[0].start())))
    out: list[tuple[re.Match[str], str]] = []
    last_end = -1
    for m, kind in found:
        if m.start() >= last_end:
            out.append((m, kind))
            last_end = m.end()
    return out


def _check(order: str | None, lang: str | None) -> None:
    if order is not None and order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS} or None, not {order!r}")
    if lang is not None and lang not in _MONTHS:
        raise ValueError(f"lang must be one of {LANGUAGES} or None, not {lang!r}")


def find_dates(text: str, *, order: str | None = None, lang: str | None = None) -> list[DateParse]:
    """Every valid date printed in a line, left to right, each with its best reading.

    `order` ("DMY" | "MDY" | "YMD") decides numeric dates whose first two parts could swap; with
    None such a date reads DMY and is marked ambiguous. Dates with the four-digit year first, and
    dates with month names, read the same under any order. `lang` limits month names to one
    language. Reads the first 1000 characters; never raises on any text.
    """
    _check(order, lang)
    if not isinstance(text, str) or not _DIGIT_RE.search(text, 0, MAX_LINE_CHARS):
        return []
    t = text[:MAX_LINE_CHARS]
    out: list[DateParse] = []
    for m, kind in _matches(t):
        rs = _readings(t, m, kind, order, lang)
        if rs:
            b = rs[0]
            out.append(DateParse(b.value, b.order, b.pattern, b.lang, b.text, b.start, b.end, len(rs) > 1))
    return out


def date_readings(text: str, *, lang: str | None = None) -> list[DateReading]:
    """Every valid reading of the first date printed in `text`, best (DMY) first.

    "05/03/2018" -> [2018-03-05 DMY, 2018-05-03 MDY]; "25/12/2020" -> [2020-12-25 DMY] only.
    Reads the first 200 characters; never raises on any text.
    """
    _check(None, lang)
    if not isinstance(text, str) or not _DIGIT_RE.search(text, 0, MAX_SPAN_CHARS):
        return []
    t = text[:MAX_SPAN_CHARS]
    for m, kind in _matches(t):
        rs = _readings(t, m, kind, None, lang)
        if rs:
            return rs
    return []


def parse_date(text: str, *, order: str | None = None, lang: str | None = None,
               pattern: str | None = None) -> DateParse | None:
    """The first valid date printed in a span, or None.

    Reads numeric dates (05.03.2018, 5/3/18, 2018-03-05, 03-05-2018, 20180305), month names in
    en/de/fr/es/nl/ms ("August 3, 2014", "3. März 2018", "5 de marzo de 2018", "05-Mar-18",
    "5 Mac 2018"), ordinals ("3rd"), with labels, weekdays or a time around it ("DATE: SAT
    21/10/2017 01:31:54 PM"). Two-digit years are 20YY, or 19YY when 20YY would be more than ten
    years ahead. `order`: see `find_dates`. `pattern` (as returned in `DateParse.pattern`)
    replays one recorded format exactly and reads nothing else. Invalid dates (31.02.2018) are
    None. Reads the first 200 characters; never raises on any text (a malformed `pattern`,
    `order` or `lang` raises ValueError).
    """
    _check(order, lang)
    if pattern is not None:
        return _parse_with_pattern(text, pattern, lang)
    if not isinstance(text, str) or not _DIGIT_RE.search(text, 0, MAX_SPAN_CHARS):
        return None
    found = find_dates(text[:MAX_SPAN_CHARS], order=order, lang=lang)
    return found[0] if found else None


# -- replaying a recorded pattern ---------------------------------------------------------------

_DIRECTIVES = {
    "%d": rf"(?P<d>[0-9]{{1,2}}{_ORD})", "%m": r"(?P<m>[0-9]{1,2})", "%Y": r"(?P<y>[0-9]{4})",
    "%y": r"(?P<y>'?[0-9]{2})", "%b": r"(?P<mon>[^\W\d_]{3,10})", "%B": r"(?P<mon>[^\W\d_]{3,10})",
}


@lru_cache(maxsize=256)
def _compile_pattern(pattern: str) -> tuple[re.Pattern[str], str]:
    if not isinstance(pattern, str) or len(pattern) > 64:
        raise ValueError(f"not a date pattern: {pattern!r}")
    parts: list[str] = []
    seen: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "%":
            tok = pattern[i:i + 2]
            if tok == "%%":
                parts.append("%")
            elif tok in _DIRECTIVES:
                key = "m" if tok in ("%b", "%B") else tok[1].lower()
                if key in seen:
                    raise ValueError(f"date pattern {pattern!r} repeats a part: {tok}")
                seen.append(key)
                parts.append(_DIRECTIVES[tok])
            else:
                raise ValueError(f"date pattern {pattern!r}: unknown directive {tok!r}")
            i += 2
            continue
        parts.append(r"\s*" if ch.isspace() else re.escape(ch))
        i += 1
    if sorted(seen) != ["d", "m", "y"]:
        raise ValueError(f"date pattern {pattern!r} needs a day, a month and a year")
    order = "".join(k.upper() for k in seen)
    body = "".join(parts)
    return re.compile(rf"(?<![0-9A-Za-z]){body}\.?(?![0-9])", re.IGNORECASE), order


def _parse_with_pattern(text: str, pattern: str, lang: str | None) -> DateParse | None:
    rx, order = _compile_pattern(pattern)
    if not isinstance(text, str):
        return None
    t = text[:MAX_SPAN_CHARS]
    for m in rx.finditer(t):
        gd = m.groupdict()
        if gd.get("mon") is not None:
            hit = month_number(gd["mon"], lang)
            if hit is None:
                continue
            month, mlang = hit
        else:
            month, mlang = int(gd["m"]), None
        v = _make(_year(gd["y"]), month, _day(gd["d"]))
        if v is not None:
            return DateParse(v, order, pattern, mlang, m.group(0), m.start(), m.end(), False)
    return None


# -- document conventions -----------------------------------------------------------------------

def date_order_evidence(text: str) -> list[str]:
    """What each date in `text` says about the document's numeric date order:
    "DMY"/"MDY" (a numeric date whose day is over 12: decisive), "?" (a numeric date that reads
    either way), "dmy"/"mdy" (a hint: a month-name date written day-first / month-first, or a
    dotted date such as 05.03.2018, a day-first convention), "YMD" (year first)."""
    if not isinstance(text, str) or not _DIGIT_RE.search(text, 0, MAX_LINE_CHARS):
        return []
    t = text[:MAX_LINE_CHARS]
    out: list[str] = []
    for m, kind in _matches(t):
        if kind == "num":
            a, b = int(m.group("a")), int(m.group("b"))
            if not _readings(t, m, kind, None, None):
                continue
            if a > 12 >= b:
                out.append("DMY")
            elif b > 12 >= a:
                out.append("MDY")
            elif m.group("s") == ".":
                out.append("dmy")          # dotted dates are day-first wherever they are printed
            else:
                out.append("?")
        elif kind == "iso":
            if _readings(t, m, kind, None, None):
                out.append("YMD")
        elif kind in ("named_dmy", "named_mdy"):
            if _readings(t, m, kind, None, None):
                out.append(kind[-3:])
    return out
