"""Document conventions by vote: decimal separator and numeric date order."""
from __future__ import annotations

from itertools import islice
from typing import Iterable

from docassay.extractors.normalize._amounts import iter_amount_currencies, iter_number_evidence
from docassay.extractors.normalize._currency import parse_currency
from docassay.extractors.normalize._dates import date_order_evidence

__all__ = ["detect_number_locale", "detect_date_order", "detect_currency", "MAX_TEXTS"]

MAX_TEXTS = 100_000            # texts read per document


def detect_number_locale(texts: Iterable[str]) -> str | None:
    """The decimal separator ("," or ".") a document uses, by vote over every number it prints,
    or None when nothing decides (or the votes tie).

    Only numbers that read one way vote: "5,00" and "1.234,56" (twice: it shows both
    separators) vote ","; "1,234" (ambiguous) and "1234" do not. Dates and identifiers are not
    numbers. Reads at most 100 000 texts, 1000 characters each; never raises on any text.
    """
    votes = {",": 0, ".": 0}
    for t in islice(texts, MAX_TEXTS):
        for d in iter_number_evidence(t):
            votes[d] += 1
    if votes[","] == votes["."]:
        return None
    return "," if votes[","] > votes["."] else "."


def detect_date_order(texts: Iterable[str]) -> str | None:
    """The order ("DMY" | "MDY" | "YMD") of the document's numeric dates, or None.

    A numeric date whose first part is over 12 ("25/12/2020") settles DMY, one whose second part
    is ("12/25/2020") MDY; when both occur the majority wins (a tie is None). Without such a date,
    month-name dates and dotted dates hint ("5 March 2018", "05.03.2018" -> DMY; "March 5, 2018"
    -> MDY), and a document whose
    numeric dates are all year-first is YMD. Reads at most 100 000 texts; never raises on any text.
    """
    strong = {"DMY": 0, "MDY": 0}
    weak = {"dmy": 0, "mdy": 0}
    ymd = undecided = 0
    for t in islice(texts, MAX_TEXTS):
        for ev in date_order_evidence(t):
            if ev in strong:
                strong[ev] += 1
            elif ev in weak:
                weak[ev] += 1
            elif ev == "?":
                undecided += 1
            else:
                ymd += 1
    for table in (strong, weak):
        a, b = table.values()
        if a != b:
            return list(table)[0 if a > b else 1].upper()
        if a:
            return None
    return "YMD" if ymd and not undecided else None


def detect_currency(texts: Iterable[str], *, dollar: str = "USD") -> str | None:
    """The currency a document's amounts are in, by vote, or None when nothing decides.

    A currency printed with an amount ("RM9.00", "12,00 €", "USD 12.00") counts three votes; a
    currency named on a line without an amount ("Währung: EUR") one. A bare "$" counts as
    `dollar`. Reads at most 100 000 texts; never raises on any text.
    """
    votes: dict[str, int] = {}
    for t in islice(texts, MAX_TEXTS):
        found = False
        for code in iter_amount_currencies(t, dollar):
            votes[code] = votes.get(code, 0) + 3
            found = True
        if not found:
            single = parse_currency(t, dollar=dollar)
            if single:
                votes[single] = votes.get(single, 0) + 1
    if not votes:
        return None
    ranked = sorted(votes.values(), reverse=True)
    if len(ranked) > 1 and ranked[0] == ranked[1]:
        return None
    return max(votes, key=votes.__getitem__)
