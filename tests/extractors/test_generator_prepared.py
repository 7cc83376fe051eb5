"""A generation's proposals computed once (`generator.prepare`) serve both the token estimate a
budget reserves and the generation itself: the same instructions, the same estimate, one pass."""
from __future__ import annotations

from pathlib import Path

import pytest

from builders import make_doc
from docassay.extractors.instructions import generator
from docassay.extractors.instructions.generator import estimate_tokens, generate, prepare
from docassay.extractors.spans import DocIndex
from docassay.flows.context import Job
from docassay.flows.metering import metered_generate
from docassay.flows.results import Row
from docassay.infra.config import Settings
from docassay.infra.db import Database
from docassay.infra.quota import QuotaBudget, subjects_for

SCHEMA = {"type": "object", "required": ["invoice_number", "gross_total"],
          "properties": {"invoice_number": {"type": "string"}, "issue_date": {"type": "string", "format": "date"},
                         "gross_total": {"type": "number"}}}


class CountingScorer:
    """The baseline's ranking with a model's `tokens` (one token per proposal and per field)."""

    def __call__(self, ix, specs, proposals):
        from docassay.extractors.instructions import baseline
        return baseline.score_proposals(ix, specs, proposals)

    def tokens(self, ix, specs, proposals) -> tuple[int, int]:
        return sum(len(v) for v in proposals.values()), len(specs)


def invoice(number: str = "RE-4711"):
    return make_doc([(40, 20, "Muster GmbH"), (40, 120, "Rechnungsnummer:"), (200, 120, number),
                     (400, 120, "Datum"), (400, 132, "03.05.2024"), (40, 300, "Gesamtbetrag"), (450, 300, "1.234,50 EUR")])


def test_prepared_generation_equals_the_plain_one() -> None:
    ix = DocIndex(invoice())
    plain = generate(ix, SCHEMA, scorer=CountingScorer())
    pre = prepare(ix, SCHEMA)
    assert estimate_tokens(ix, SCHEMA, CountingScorer(), prepared=pre) == estimate_tokens(ix, SCHEMA, CountingScorer())
    again = generate(ix, SCHEMA, scorer=CountingScorer(), prepared=pre)
    assert again.instructions == plain.instructions
    assert again.extraction.record == plain.extraction.record
    assert (again.tokens.input, again.tokens.output) == (plain.tokens.input, plain.tokens.output) != (0, 0)


def test_prepared_for_another_document_is_refused() -> None:
    pre = prepare(DocIndex(invoice()), SCHEMA)
    with pytest.raises(ValueError, match="another document"):
        generate(DocIndex(invoice("RE-9999")), SCHEMA, prepared=pre)
    with pytest.raises(ValueError, match="another document or schema"):
        generate(pre.ix, dict(SCHEMA), prepared=pre)


def test_a_metered_generation_proposes_once(tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = generator.propose

    def counted(ix, spec, locale):
        calls.append(spec.name)
        return real(ix, spec, locale)

    monkeypatch.setattr(generator, "propose", counted)
    settings = Settings.load(home=tmp_path / "home", db=pg_dsn, quota_project="acme-prepared", quota_user="ada")
    budget = QuotaBudget(Database(pg_dsn), settings, subjects_for(settings))
    try:
        job = Job(schema=SCHEMA, rules=[], settings=settings, generator="model", scorer=CountingScorer(), budget=budget)
        ix = DocIndex(invoice())
        gen, refused = metered_generate(ix, job, Row(source="x.pdf"))
    finally:
        budget.close()
    assert refused is None and gen is not None
    assert sorted(calls) == sorted(SCHEMA["properties"]), "each field's proposals once, for the estimate and the call"
    calls.clear()
    assert gen.instructions == generate(ix, SCHEMA, scorer=CountingScorer(), produced_by="model").instructions
    assert len(calls) == len(SCHEMA["properties"])
