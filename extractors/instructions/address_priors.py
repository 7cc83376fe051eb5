"""Which printed line starts a receipt's address: an address line of the header, not a tax-id,
key: value, title, date or amounts line, a code, or a line from below the header.

`address_priors` moves the generator's scores for the `address` concept after any scorer, before
the best proposal is chosen (as `name_priors.company_priors` does for the company); `delimit`
then finds the block's first and last lines. The field's best keeps its score; only the order
moves.
"""
from __future__ import annotations

from functools import partial

from docassay.extractors import normalize as norm
from docassay.extractors.instructions.delimit import address_evidence, not_address
from docassay.extractors.instructions.name_priors import header_end_line, is_code, is_sentence
from docassay.extractors.instructions.proposals import Proposal, reorder_keeping_level
from docassay.extractors.labels import FieldSpec
from docassay.extractors.spans import DocIndex

__all__ = ["address_priors", "ADDRESS_PRIOR"]

ADDRESS_CONCEPTS = ("address",)
ADDRESS_PRIOR = {
    "not_address": -0.5,       # the line is a tax id, key: value, title, date, amounts or name line
    "evidence": 0.3,           # times the line's address evidence (street words, numbers, postcode)
    "below_header": -0.4,      # below the first line printing a date or an amount
    "code": -0.3,              # "PMS", "MC #01"
    "sentence": -0.4,          # "THANK YOU PLEASE COME AGAIN"
}


def _prior(p: Proposal, header_end: int) -> float:
    text = norm.clean_address(p.span.text)
    s = ADDRESS_PRIOR["evidence"] * address_evidence(text)
    if not_address(text):
        s += ADDRESS_PRIOR["not_address"]
    if is_code(text):
        s += ADDRESS_PRIOR["code"]
    if is_sentence(text):
        s += ADDRESS_PRIOR["sentence"]
    if p.span.page == 1 and p.span.line >= header_end:
        s += ADDRESS_PRIOR["below_header"]
    return s


def address_priors(ix: DocIndex, specs: list[FieldSpec], ranked: dict[str, list[Proposal]]) -> dict[str, list[Proposal]]:
    """Move the scores of address proposals by what and where their line is; re-sort, the best
    keeping its field's level. Other fields are returned as they are."""
    for spec in specs:
        if spec.concept not in ADDRESS_CONCEPTS or spec.type != "text":
            continue
        props = ranked.get(spec.name) or []
        if not props:
            continue
        header_end = header_end_line(ix)
        reorder_keeping_level(props, partial(_prior, header_end=header_end))
    return ranked
