"""The baseline scorer: label similarity plus a few priors. The MoE model must beat it.

Each proposal (a typed span with a locator that finds it) is scored by how well the label printed
to its left or above reads as the field's label (`labels.label_score`), minus how well it reads as
*another* field's label (the distractor: "Order No." beside "Invoice No."), plus priors that hold
for business documents in general: totals are the largest amounts and sit low on the page, names
carry legal forms, a value should not itself read as a label.
"""
from __future__ import annotations

import re
from functools import lru_cache

from docassay.extractors.instructions.proposals import Proposal
from docassay.extractors.labels import FieldSpec, fold_label, label_score
from docassay.extractors.spans import DocIndex

__all__ = ["score_proposals", "NAME"]

NAME = "baseline"

_LEGAL = re.compile(
    r"(?i)\b(gmbh|ag|kg|ohg|ug|e\.?k|ltd|limited|inc|llc|llp|plc|corp|co\.?|company|s\.?a\.?s?|s\.?a\.?r\.?l|"
    r"s\.?l\.?|b\.?v\.?|n\.?v\.?|bv|nv|sdn\.?\s*bhd|bhd|enterprise|trading|pvt|pte|oy|ab|as|spa|srl)\b\.?")
_TOTALISH = {"gross_total", "total", "net_total", "tax_total"}
_COMPAT = {
    "amount": {"amount", "number", "integer"}, "number": {"amount", "number", "integer"},
    "integer": {"amount", "number", "integer"}, "date": {"date"}, "identifier": {"identifier", "text"},
    "text": {"text", "identifier"}, "currency": {"currency"}, "boolean": {"boolean"},
}


def score_proposals(ix: DocIndex, specs: list[FieldSpec], proposals: dict[str, list[Proposal]]) -> dict[str, list[Proposal]]:
    """Score every proposal in place and return each field's list sorted best first."""
    by_name = {s.name: s for s in specs}
    amount_values = sorted({abs(float(s.value)) for s in ix.spans("amount") if isinstance(s.value, float)})
    for name, props in proposals.items():
        spec = by_name[name]
        rivals = [s for s in specs if s.name != name and s.type in _COMPAT.get(spec.type, {spec.type})]
        for p in props:
            p.score = _score(ix, spec, rivals, p, amount_values)
        props.sort(key=lambda p: (-p.score, p.span.key))
    return proposals


def _score(ix: DocIndex, spec: FieldSpec, rivals: list[FieldSpec], p: Proposal, amounts: list[float]) -> float:
    pi = ix.page(p.span.page)
    y_rel = p.span.bbox.cy / max(pi.page.height, 1.0)
    if p.relation == "detect":
        return 0.8
    own = label_score(p.label, spec.labels)[0] if p.label else 0.0
    other = max((label_score(p.label, r.labels)[0] for r in rivals), default=0.0) if p.label else 0.0
    s = own
    if other > own:
        s -= 0.6 * (other - own)
    if p.section:
        # The block a value sits in decides between fields that share a label ("Name:" under
        # "Verkäufer" is the seller's, under "Käufer" the buyer's).
        sect_own = label_score(p.section, spec.labels)[0]
        sect_other = max((label_score(p.section, r.labels)[0] for r in rivals), default=0.0)
        s += 0.3 * (sect_own - sect_other)
    if p.relation == "region":
        s = 0.12
    elif p.relation == "below":
        s *= 0.95
    s -= 0.04 * p.rank_hint
    concept = spec.concept or ""
    if spec.type in ("amount", "number", "date") and p.relation == "right":
        # A key-value pair prints one value after its label; several are a table row.
        same_line = sum(1 for x in ix.spans("amount" if spec.type != "date" else "date")
                        if x.page == p.span.page and x.line == p.span.line)
        s -= 0.08 * max(0, same_line - 1)
    if spec.type in ("amount", "number") and amounts and isinstance(p.value, float) and p.relation != "region":
        rank = amounts.index(abs(p.value)) / max(len(amounts) - 1, 1) if abs(p.value) in amounts else 0.0
        if concept in ("gross_total", "total"):
            s += 0.15 * rank + 0.05 * y_rel + (0.05 if p.span.page == len(ix.pages) else 0.0)
        elif concept == "net_total":
            s += 0.05 * rank
        if abs(p.value) == 0 and concept in ("gross_total", "total"):
            s -= 0.2
    if spec.type == "text":
        text = p.span.text
        # A value is not itself a label of any field.
        folded = fold_label(text)
        if text.rstrip().endswith(":") or folded in _all_labels(spec, rivals):
            s -= 0.5
        if concept in ("seller_name", "buyer_name", "company") and _LEGAL.search(text):
            s += 0.15
        if concept in ("company", "seller_name") and p.relation == "region":
            s += 0.25 * (1.0 - min(y_rel * 3, 1.0)) * (1.0 if p.span.page == 1 else 0.0)
            s += 0.1 * _font_rank(ix, p)
        if concept == "address":
            s += 0.35 * min(1.0, _address_evidence(text) + (0.2 if p.lines > 1 else 0.0))
            if p.relation == "region":
                s += 0.15 * (1.0 - min(y_rel * 2.5, 1.0)) * (1.0 if p.span.page == 1 else 0.0)
        if sum(ch.isdigit() for ch in text) > len(text) / 3:
            s -= 0.2
    if p.label and _LEGAL.search(p.label) and len(p.label.split()) > 1:
        s -= 0.4                                   # "Lieferant GmbH" above a value is a name, not a label
    if spec.type == "identifier":
        if sum(ch.isdigit() for ch in str(p.value)) < 2:
            s -= 0.2
    return s


def _all_labels(spec: FieldSpec, rivals: list[FieldSpec]) -> frozenset[str]:
    return _label_set(spec.labels + tuple(l for r in rivals for l in r.labels))


@lru_cache(maxsize=64)
def _label_set(labels: tuple[str, ...]) -> frozenset[str]:
    return frozenset(labels)


_ADDRESS_WORDS = re.compile(
    r"(?i)\b(jalan|jln|lorong|taman|lot|no\.?|street|st\.|road|rd\.?|avenue|ave|lane|floor|suite|building|"
    r"stra(?:ss|ß)e|str\.|weg|platz|gasse|allee|rue|avenue|boulevard|calle|avenida|plaza|straat|laan|plein|kade|"
    r"\d{4,6})\b")


def _address_evidence(text: str) -> float:
    """0..1: street words, house numbers and postcodes, as any address prints them."""
    hits = len(_ADDRESS_WORDS.findall(text))
    digits = any(ch.isdigit() for ch in text)
    return min(1.0, 0.35 * hits + (0.15 if digits else 0.0) + (0.1 if "," in text else 0.0))


def _font_rank(ix: DocIndex, p: Proposal) -> float:
    """1 when the span is printed in the largest font on its page (a letterhead), else less."""
    page = ix.doc.pages[p.span.page - 1]
    sizes = [fs for w in page.words if (fs := w.font_size)]
    if not sizes:
        return 0.0
    seg = ix.segment(p.span.page, p.span.line, p.span.segment)
    own = [fs for i in range(seg.start, seg.end) if (fs := page.words[i].font_size)]
    return (max(own) / max(sizes)) if own else 0.0
