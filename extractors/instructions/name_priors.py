"""Which printed line is a receipt's business name: the name line of the top block, not a label,
a table head, an address line, a slogan or a line from below the header.

`company_priors` moves the generator's scores for the `company` concept after any scorer, before
the best proposal is chosen (as `amount_roles.total_priors` does for the total): down for a line
that reads as an amount's label ("TOTAL SALES (INCL GST)", "TAX (RM)"), as another field's label
or a document title, as an address, or that sits below the first date or amount line (the header
has ended there); up for the first name-like line of the page and for a legal form. The field's
best keeps its score (the level the calibrator reads); only the order moves.
"""
from __future__ import annotations

import re
from functools import partial

from docassay.extractors import normalize as norm
from docassay.extractors.instructions.amount_roles import amount_role
from docassay.extractors.instructions.baseline import _LEGAL
from docassay.extractors.instructions.delimit import address_evidence, has_phone, has_registration, is_title, name_like
from docassay.extractors.instructions.proposals import Proposal, reorder_keeping_level
from docassay.extractors.labels import LEXICON, FieldSpec, fold_label
from docassay.extractors.spans import DocIndex

__all__ = ["company_priors", "header_end_line", "first_name_line", "NAME_PRIOR"]

COMPANY_CONCEPTS = ("company",)
NAME_PRIOR = {
    "amount_label": -0.6,      # the line reads as the label of an amount
    "field_label": -0.5,       # ... as another field's label, a title or a table head
    "address": -0.4,           # ... as an address (scaled by the address evidence)
    "below_header": -0.4,      # below the first line printing a date or an amount
    "goes_on": -0.3,           # ends with a comma: an address line continued below
    "under_address": -0.2,     # below a line that reads as an address (names come first)
    "sentence": -0.5,          # a slogan or notice: "GOODS SOLD ARE NOT RETURNABLE", "THANK YOU, COME AGAIN"
    "code": -0.3,              # a terminal or branch code: "T/D #11", "(POS 3)"
    "first_name": 0.15,        # the first name-like line of the page
    "legal_form": 0.1,         # "SDN BHD", "GmbH", "Ltd"
}
STRONG_ADDRESS = 0.6          # address evidence of a line that is surely an address
_WORDS = re.compile(r"[^\W\d_]+")
_DECIMAL = re.compile(r"\d[.,]\d{2}(?!\d)")
_OTHER_CONCEPTS = ("date", "invoice_number", "issue_date", "due_date", "tax_total", "net_total", "currency")
_EXTRA_LABELS = ("cashier", "operator", "counter", "table", "order", "server", "member", "posted", "number",
                 "receipt", "invoice", "bill", "qty", "price", "amount", "description", "item", "thank", "welcome")


# Function words of the lexicon's languages that a slogan or notice prints and a business name rarely does.
_SENTENCE_WORDS = frozenset({
    "are", "is", "not", "you", "your", "please", "for", "with", "thank", "thanks", "again", "our", "we", "will",
    "be", "no", "do", "visit", "come", "shopping", "welcome", "tq", "sold", "returnable", "refundable", "exchangeable",
    "terima", "kasih", "sila", "datang", "lagi", "tidak", "anda", "kami", "dan",
    "vielen", "dank", "bitte", "wir", "sie", "ihr", "ihre", "ist", "nicht", "besuch",
    "merci", "vous", "nous", "pour", "votre", "visite", "gracias", "por", "su", "visita", "vuelva",
    "bedankt", "uw", "voor", "niet", "tot", "ziens",
})
_LEGAL_EXTRA = re.compile(r"(?i)(?:\bs/b\b|\bsdn\.?\b|\bbhd\.?|\bpty\b|\bk\.k\.|\bgbr\b)")


def is_sentence(text: str) -> bool:
    """Two or more words that a slogan or a notice prints: not a name."""
    words = fold_label(text).split()
    return sum(1 for w in words if w in _SENTENCE_WORDS) >= 2


def is_code(text: str) -> bool:
    """A short code rather than a name: fewer than four letters, or a "#" number."""
    letters = sum(ch.isalpha() for ch in text)
    return letters < 4 or bool(re.search(r"#\s*\d", text))


def has_legal_form(text: str) -> bool:
    return bool(_LEGAL.search(text) or _LEGAL_EXTRA.search(text))


def _field_label_words() -> frozenset[str]:
    words: set[str] = set(_EXTRA_LABELS)
    for concept in _OTHER_CONCEPTS:
        for phrase in LEXICON.get(concept, ()):
            words.update(w for w in phrase.split() if len(w) >= 4)
    return frozenset(words)


_LABEL_WORDS = _field_label_words()


def _reads_as_label(text: str) -> bool:
    """Most of the line's words are label words ("CASHIER", "YOUR ORDER NUMBER IS", "QTY PRICE AMOUNT")."""
    words = [w for w in fold_label(text).split() if _WORDS.fullmatch(w)]
    if not words:
        return True
    hits = sum(1 for w in words if w in _LABEL_WORDS)
    return hits >= max(1, (len(words) + 1) // 2) or text.rstrip().endswith(":")


def header_end_line(ix: DocIndex, page: int = 1) -> int:
    """The first line of the page that prints a date or an amount with a decimal part: the header
    (name, address, ids) is above it."""
    lines = [s.line for s in ix.spans("date") if s.page == page]
    lines += [s.line for s in ix.spans("amount") if s.page == page and _DECIMAL.search(s.text)]
    return min(lines) if lines else len(ix.page(page).segments_by_line)


def first_name_line(ix: DocIndex, page: int = 1) -> int | None:
    """The first line of the page whose text is name-like (not a title, id, phone or address)."""
    pi = ix.page(page)
    for li, segs in enumerate(pi.segments_by_line):
        text = norm.clean_name(" ".join(s.text for s in segs))
        if name_like(text) and not is_title(text) and not _reads_as_label(text) and \
                address_evidence(text) < 0.35 and not amount_role(text):
            return li
    return None


def first_address_line(ix: DocIndex, page: int = 1) -> int | None:
    """The first line of the page that reads clearly as an address (a street word and a number)."""
    for li, segs in enumerate(ix.page(page).segments_by_line):
        text = norm.clean_address(" ".join(s.text for s in segs))
        if address_evidence(text) >= STRONG_ADDRESS and not _LEGAL.search(text) and not has_registration(text):
            return li
    return None


def _prior(ix: DocIndex, p: Proposal, header_end: int, first_line: int | None, first_address: int | None) -> float:
    text = norm.clean_name(p.span.text)        # a registration number after the name is no evidence
    s = 0.0
    if amount_role(text):
        s += NAME_PRIOR["amount_label"]
    elif _reads_as_label(text) or is_title(text) or has_registration(text) or has_phone(text):
        s += NAME_PRIOR["field_label"]
    if is_sentence(text):
        s += NAME_PRIOR["sentence"]
    if is_code(text):
        s += NAME_PRIOR["code"]
    legal = has_legal_form(text)
    if not legal:
        s += NAME_PRIOR["address"] * min(1.0, address_evidence(text))
    else:
        s += NAME_PRIOR["legal_form"]
    if p.span.text.rstrip().endswith(","):
        s += NAME_PRIOR["goes_on"]
    if p.span.page == 1 and first_address is not None and p.span.line > first_address:
        s += NAME_PRIOR["under_address"]
    if p.span.page == 1 and p.span.line >= header_end:
        s += NAME_PRIOR["below_header"]
    if p.span.page == 1 and first_line is not None and p.span.line == first_line:
        s += NAME_PRIOR["first_name"]
    return s


def company_priors(ix: DocIndex, specs: list[FieldSpec], ranked: dict[str, list[Proposal]]) -> dict[str, list[Proposal]]:
    """Move the scores of company proposals by where and what their line is; re-sort, the best
    keeping its field's level. Other fields are returned as they are."""
    for spec in specs:
        if spec.concept not in COMPANY_CONCEPTS or spec.type != "text":
            continue
        props = ranked.get(spec.name) or []
        if not props:
            continue
        header_end, first_line, first_address = header_end_line(ix), first_name_line(ix), first_address_line(ix)
        reorder_keeping_level(props, partial(_prior, ix, header_end=header_end, first_line=first_line,
                                            first_address=first_address))
    return ranked
