"""Which printed date is a receipt's (or a document's issue) date: not a card's expiry date, nor the
end of an offer's or a voucher's validity.

`date_priors` moves the generator's scores for the `date` and `issue_date` concepts after any
scorer, before the best proposal is chosen (as `amount_roles.total_priors` does for the total):
down (`EXPIRY_PRIOR`) for a date whose label, the words printed right before it on its line back to
the previous value, or the label the proposal was found by, means an expiry or a validity ("CARD
EXPIRY: 30/09/18", "EXP 05/21", "VALID THRU", "Gültig bis", "geldig tot"). The field's best keeps
its score (the level the calibrator reads); only the order moves.
"""
from __future__ import annotations

import re
from functools import partial

from docassay.extractors.instructions.amount_roles import line_label
from docassay.extractors.instructions.proposals import Proposal, reorder_keeping_level
from docassay.extractors.labels import FieldSpec, fold_label
from docassay.extractors.spans import DocIndex

__all__ = ["date_priors", "means_expiry", "EXPIRY_PRIOR"]

DATE_CONCEPTS = ("date", "issue_date")
EXPIRY_PRIOR = -0.9
# Folded words and phrases that say a date is when something expires or stops being valid.
EXPIRY_WORDS = frozenset({"expiry", "exp", "expires", "expire", "expired", "expiration", "expiring", "ablaufdatum",
                          "ablauf", "verfallsdatum", "verfall", "caducidad", "caduca", "luput", "scadenza"})
EXPIRY_PHRASES = ("valid thru", "valid through", "valid until", "valid till", "valid to", "good thru",
                  "good through", "gultig bis", "geldig tot", "geldig t m", "valable jusqu", "date d expiration",
                  "valido hasta", "sah sehingga", "sah hingga", "tarikh tamat")
_DIGIT = re.compile(r"\d")


def _governing(left: str) -> str:
    """The words right before a value: back to the previous word with a digit."""
    words = left.split()
    i = len(words)
    while i > 0 and not _DIGIT.search(words[i - 1]):
        i -= 1
    return " ".join(words[i:])


def means_expiry(label: str) -> bool:
    """True when a label says its date is an expiry or the end of a validity."""
    f = f" {fold_label(label)} "
    return bool(EXPIRY_WORDS & set(f.split())) or any(f" {p} " in f for p in EXPIRY_PHRASES)


def _prior(ix: DocIndex, p: Proposal) -> float:
    left = _governing(line_label(ix, p.span))
    if means_expiry(left) or (not left and p.label and means_expiry(p.label)):
        return EXPIRY_PRIOR
    return 0.0


def date_priors(ix: DocIndex, specs: list[FieldSpec], ranked: dict[str, list[Proposal]]) -> dict[str, list[Proposal]]:
    """Move the scores of date proposals whose label means an expiry down; re-sort, the best
    keeping its field's level. Other fields are returned as they are."""
    for spec in specs:
        if spec.concept not in DATE_CONCEPTS or spec.type != "date":
            continue
        props = ranked.get(spec.name) or []
        if props:
            reorder_keeping_level(props, partial(_prior, ix))
    return ranked
