"""`labels.label_score`: the scores of each way a printed text reads as a label (pinned to the values
the formula gives, so a faster implementation must give them to the last bit)."""
from __future__ import annotations

import pytest

from docassay.extractors.labels import fold_label, label_score

LABELS = (fold_label("Rechnungsnummer"), fold_label("Rechnung Nr"), fold_label("invoice number"), fold_label("number"), "")


@pytest.mark.parametrize("text, score, label", [
    ("Rechnungsnummer", 1.0, "rechnungsnummer"),                    # equal once folded
    ("Invoice number:", 1.0, "invoice number"),
    ("Ihre Rechnungsnummer", 0.8624999999999999, "rechnungsnummer"),  # ends with the label
    ("invoice number of", 0.638235294117647, "invoice number"),     # starts with it
    ("the invoice number here", 0.4826086956521739, "invoice number"),  # contains it
    ("Rechn.-Nr.", 0.847875, "rechnung nr"),                        # every token, abbreviated
    ("Inv. No", 0.38, "invoice number"),                            # some tokens
    ("Num", 0.7220000000000001, "number"),
    ("Datum", 0.0, ""),
    ("", 0.0, ""),
])
def test_label_score(text: str, score: float, label: str) -> None:
    assert label_score(text, LABELS) == (score, label)


@pytest.mark.parametrize("text, concept", [
    ("Vervaldag:", "due_date"), ("Uiterlijk te voldoen op", "due_date"), ("Paiement attendu au plus tard le", "due_date"),
    ("Se ruega el pago antes del", "due_date"), ("Please remit payment by", "due_date"), ("Grondslag:", "net_total"),
])
def test_the_lexicon_reads_the_due_date_and_tax_base_cues(text: str, concept: str) -> None:
    from docassay.extractors.labels import LEXICON
    own = label_score(text, tuple(fold_label(x) for x in LEXICON[concept]))[0]
    assert own >= 0.75, (text, own)
    rivals = [c for c in ("issue_date", "due_date", "net_total", "gross_total", "tax_total") if c != concept]
    assert all(label_score(text, tuple(fold_label(x) for x in LEXICON[c]))[0] < own for c in rivals)
