"""Cleaning identifiers and names, folding text for comparison, and a fast string similarity."""
from __future__ import annotations

import unicodedata
from difflib import SequenceMatcher

__all__ = ["fold", "similarity", "normalize_identifier", "normalize_name"]

MAX_TEXT_CHARS = 10_000        # fold / normalize_* read at most this much
MAX_COMPARE_CHARS = 500        # similarity compares at most this much of each side

# Letters that NFKD does not decompose into a base letter plus accents.
_FOLD_EXTRA = str.maketrans({"ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "æ": "ae",
                             "œ": "oe", "ı": "i", "ŧ": "t", "ħ": "h"})
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)
_DASHES = str.maketrans({c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2212\ufe63\uff0d"})

_ID_STRIP = " :;,.#*•·|>\"'`~_-/\\=+"
_OPEN, _CLOSE = "([{<", ")]}>"
_NAME_STRIP_LEFT = " :;,.#*•·|>-=~_/\\"
_NAME_STRIP_RIGHT = " :;,#*•·|>-=~_/\\"


def fold(text: str) -> str:
    """Text for comparison: accents stripped, case folded, whitespace collapsed to single spaces.
    "  Müller   GmbH " -> "muller gmbh"; "Straße" -> "strasse". Never raises."""
    if not isinstance(text, str):
        return ""
    t = text[:MAX_TEXT_CHARS]
    if t.isascii():
        return " ".join(t.casefold().split())
    t = unicodedata.normalize("NFKD", t.translate(_INVISIBLE))
    t = "".join(c for c in t if not unicodedata.combining(c))
    return " ".join(t.casefold().translate(_FOLD_EXTRA).split())


def similarity(a: str, b: str) -> float:
    """Similarity of two strings in [0, 1] after `fold`: 1.0 when they fold alike (two empty
    strings included), 0.0 when one is empty; otherwise difflib's ratio over the first 500
    folded characters of each. Symmetric up to difflib's tie-breaking; never raises."""
    fa, fb = fold(a)[:MAX_COMPARE_CHARS], fold(b)[:MAX_COMPARE_CHARS]
    if fa == fb:
        return 1.0
    if not fa or not fb:
        return 0.0
    return SequenceMatcher(None, fa, fb, autojunk=False).ratio()


def _clean(text: str) -> str:
    t = text[:MAX_TEXT_CHARS].translate(_INVISIBLE)
    return " ".join(t.split())


def normalize_identifier(text: str) -> str:
    """An identifier as printed, without what surrounds it: whitespace collapsed, unicode dashes
    made "-", punctuation and unmatched brackets stripped from both ends ("# INV-2018/001." ->
    "INV-2018/001", "(12345-A)" -> "12345-A"); internal hyphens, slashes and dots kept.
    Never raises; "" for nothing left."""
    if not isinstance(text, str):
        return ""
    t = _clean(text).translate(_DASHES)
    for _ in range(64):
        before = t
        t = t.strip(_ID_STRIP)
        if len(t) >= 2 and t[0] in _OPEN and t[-1] == _CLOSE[_OPEN.index(t[0])]:
            inner = t[1:-1]
            if _balanced(inner, t[0]):
                t = inner
                continue
        if t and t[0] in _OPEN and t.count(t[0]) > t.count(_CLOSE[_OPEN.index(t[0])]):
            t = t[1:]
        if t and t[-1] in _CLOSE and t.count(t[-1]) > t.count(_OPEN[_CLOSE.index(t[-1])]):
            t = t[:-1]
        if t == before:
            break
    return t


def _balanced(inner: str, opener: str) -> bool:
    """Stripping an outer pair leaves the inside balanced ("(a)(b)" must keep its brackets)."""
    closer = _CLOSE[_OPEN.index(opener)]
    depth = 0
    for c in inner:
        if c == opener:
            depth += 1
        elif c == closer:
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def normalize_name(text: str) -> str:
    """A name or address as printed: whitespace collapsed, label remnants and separators stripped
    from the ends (": ACME GmbH ," -> "ACME GmbH"); case, internal punctuation and a final "."
    ("Pvt. Ltd.") kept; a quote pair around the whole name removed. Never raises."""
    if not isinstance(text, str):
        return ""
    t = _clean(text)
    for _ in range(8):
        before = t
        t = t.lstrip(_NAME_STRIP_LEFT).rstrip(_NAME_STRIP_RIGHT)
        if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'" and t.count(t[0]) == 2:
            t = t[1:-1].strip()
        if t == before:
            break
    return t
