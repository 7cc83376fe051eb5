"""Proposals of one value type are found once per document (`proposals._plan`, kept in
`DocIndex.memo`) and shared by every field of that type: each field's proposals equal those found
on a fresh index, and they are its own objects (a scorer sets their scores)."""
from __future__ import annotations

from builders import make_doc
from docassay.extractors.instructions.generator import detect_locale
from docassay.extractors.instructions.proposals import propose
from docassay.extractors.labels import field_specs
from docassay.extractors.spans import DocIndex

PROPS = {"net_total": {"type": "number"}, "tax_total": {"type": "number"}, "gross_total": {"type": "number"},
         "issue_date": {"type": "string", "format": "date"}, "due_date": {"type": "string", "format": "date"},
         "seller_address": {"type": "string", "x-docassay": {"multiline": True}}, "buyer_name": {"type": "string"}}


def invoice():
    return make_doc([
        (40, 20, "Muster GmbH"), (40, 32, "Hauptstraße 1"), (40, 44, "12345 Berlin"),
        (400, 100, "Rechnungsdatum:"), (500, 100, "03.05.2024"), (400, 112, "Fällig am:"), (500, 112, "17.05.2024"),
        (40, 300, "Nettobetrag"), (450, 300, "1.000,00 EUR"), (40, 312, "MwSt 19%"), (450, 312, "190,00 EUR"),
        (40, 324, "Gesamtbetrag"), (450, 324, "1.190,00 EUR"),
    ])


def _view(props):
    return [(p.field, p.span.key, p.locator, p.value, p.label, p.relation, p.rank_hint, p.section, p.lines)
            for p in props]


def test_fields_of_one_type_share_a_plan_and_get_their_own_proposals() -> None:
    doc = invoice()
    specs = field_specs(PROPS)
    shared = DocIndex(doc)
    locale = detect_locale(shared)
    together = {s.name: propose(shared, s, locale) for s in specs}
    for s in specs:
        alone = DocIndex(doc)                        # nothing memoised: the field's proposals found afresh
        assert _view(together[s.name]) == _view(propose(alone, s, detect_locale(alone))), s.name
    assert together["net_total"] and together["issue_date"]
    plans = [k for k in shared.memo if k[0] == "proposals"]
    assert sorted(k[1] for k in plans) == sorted({s.type for s in specs}), "one plan per value type"
    net, gross = together["net_total"], together["gross_total"]
    assert {p.span.key for p in net} == {p.span.key for p in gross}
    assert not {id(p) for p in net} & {id(p) for p in gross}, "each field's proposals are its own objects"
    net[0].score = 0.9
    assert gross[0].score == 0.0
    address = [p for p in together["seller_address"] if p.span.text.startswith("Muster")]
    name = [p for p in together["buyer_name"] if p.span.text.startswith("Muster")]
    assert address and name and {p.lines for p in name} == {1}, "only a multi-line field counts continuation lines"


def test_the_currency_vote_is_taken_once_per_document() -> None:
    from docassay.extractors.instructions.executor import candidates_for
    from docassay.extractors.instructions.language import FieldRule, Locator
    loc = Locator(by="detect", what="currency")
    rule = FieldRule("currency", loc)
    ix = DocIndex(invoice())
    first = candidates_for(ix, loc, rule)
    assert first and {s.value for s in first} == {"EUR"}
    assert ("detect_currency",) in ix.memo
    first.clear()                                   # a caller's list is its own
    again = candidates_for(ix, loc, rule)
    assert [s.key for s in again] == [s.key for s in candidates_for(DocIndex(invoice()), loc, rule)] != []
