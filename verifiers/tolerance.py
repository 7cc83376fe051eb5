"""Comparing a value with what is expected of it, under a named `Tolerance` (verifiers.settings).

    matches(tol, expected, actual)    -> bool    equal within the tolerance
    closeness(tol, expected, actual)  -> float   1.0 when equal within the tolerance, falling to 0.0

Numbers: equal when |a - e| <= max(abs, rel * max(|a|, |e|)); beyond that, closeness falls with
the relative error (an amount off by half of itself scores 0.5, off by its own size or more 0.0).
Strings (`similarity`): the normalised similarity (case, accents and white space folded; a ratio
of matching characters); equal when it reaches the tolerance's `similarity`.
Exact (identifiers, dates, codes): equal after folding case and white space, else 0.0.
Values of the wrong type (a string where a number is expected) are never equal and score 0.0.
"""
from __future__ import annotations

import math
import re
import unicodedata
from difflib import SequenceMatcher

from docassay.verifiers.settings import Tolerance

__all__ = ["matches", "closeness", "similarity", "fold_text"]

_WS = re.compile(r"\s+")


def fold_text(v: object) -> str:
    """Case, accents, and runs of white space folded; punctuation kept."""
    s = unicodedata.normalize("NFKD", str(v))
    s = "".join(ch for ch in s if not unicodedata.combining(ch))
    return _WS.sub(" ", s).strip().casefold()


def similarity(a: object, b: object) -> float:
    """Normalised similarity of two strings in [0, 1] (1.0 when equal after folding)."""
    fa, fb = fold_text(a), fold_text(b)
    if fa == fb:
        return 1.0
    if not fa or not fb:
        return 0.0
    return SequenceMatcher(None, fa, fb, autojunk=False).ratio()


def _number(v: object) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def closeness(tol: Tolerance, expected: object, actual: object) -> float:
    """How well `actual` agrees with `expected`, in [0, 1] (deterministic, never raises)."""
    if tol.mode == "number":
        e, a = _number(expected), _number(actual)
        if e is None or a is None:
            return 0.0
        d = abs(a - e)
        if d <= tol.allowed(e, a) + 1e-12:
            return 1.0
        scale = max(abs(e), abs(a))
        return max(0.0, 1.0 - d / scale) if scale > 0 else 0.0
    if expected is None or actual is None or isinstance(expected, (dict, list)) or isinstance(actual, (dict, list)):
        return 1.0 if expected == actual else 0.0
    if tol.mode == "similarity":
        s = similarity(expected, actual)
        return 1.0 if s >= tol.similarity else s
    return 1.0 if fold_text(expected).replace(" ", "") == fold_text(actual).replace(" ", "") else 0.0


def matches(tol: Tolerance, expected: object, actual: object) -> bool:
    """True when `actual` equals `expected` within the tolerance."""
    return closeness(tol, expected, actual) >= 1.0
