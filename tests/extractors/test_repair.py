"""The fixer (changes a new format's instructions) and the troubleshooter (changes one document's
values) of extractors/instructions/repair.py, each against a verify function written here: a rule
on the record, judged by a small verdict that has the fields repair reads."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from builders import make_doc
from docassay.extractors.document import BBox
from docassay.extractors.instructions.executor import Extraction, FieldValue, Provenance, execute
from docassay.extractors.instructions.generator import generate
from docassay.extractors.instructions.repair import fix, troubleshoot
from docassay.extractors.spans import DocIndex

SCHEMA = {"type": "object", "required": ["invoice_number", "gross_total"],
          "properties": {"invoice_number": {"type": "string"}, "issue_date": {"type": "string", "format": "date"},
                         "gross_total": {"type": "number"}}}


@dataclass
class Verdict:
    failing_fields: list[str]
    score: float = 1.0

    @property
    def passed(self) -> bool:
        return not self.failing_fields

    @property
    def n_errors(self) -> int:
        return len(self.failing_fields)


def wants(**expected: object) -> Callable[[dict, Extraction], Verdict]:
    """Verify: every named field must hold the given value (calls counted in `verify.calls`)."""
    def verify(record: dict, extraction: Extraction) -> Verdict:
        verify.calls += 1  # type: ignore[attr-defined]
        return Verdict([k for k, v in expected.items() if record.get(k) != v])
    verify.calls = 0  # type: ignore[attr-defined]
    return verify


def invoice():
    return make_doc([
        (40, 20, "Muster GmbH"),
        (40, 120, "Rechnungsnummer:"), (200, 120, "RE-4711"),
        (40, 140, "Kundennummer:"), (200, 140, "KD-0815"),
        (400, 120, "Datum"), (400, 132, "03.05.2024"),
        (40, 300, "Gesamtbetrag"), (450, 300, "1.234,50 EUR"),
    ])


def reading(value: object, how: str) -> FieldValue:
    return FieldValue(value, Provenance(1, BBox(0, 0, 10, 10), str(value), "test"), how)


# -- fixer -------------------------------------------------------------------------------------------

def test_the_fixer_changes_the_instructions_until_the_document_verifies() -> None:
    doc = invoice()
    gen = generate(doc, SCHEMA)
    assert gen.extraction.record["invoice_number"] == "RE-4711"           # the generator's first choice
    verify = wants(invoice_number="KD-0815")
    first = verify(gen.extraction.record, gen.extraction)
    res = fix(DocIndex(doc), gen, gen.extraction, first, verify, max_attempts=3)
    assert res.verdict.passed and res.extraction.record["invoice_number"] == "KD-0815"
    assert res.instructions is not None and res.instructions != gen.instructions
    assert execute(res.instructions, doc).record["invoice_number"] == "KD-0815", "the stored instructions read it"
    assert [(c.field, c.before, c.after) for c in res.changes] == [("invoice_number", "RE-4711", "KD-0815")]
    assert res.attempts == 2 and res.tried >= 1 and any(a.adopted for a in res.log)
    assert res.extraction.record["gross_total"] == 1234.5, "fields that verified are left as they were"


def test_the_fixer_stops_at_the_attempt_budget() -> None:
    doc = invoice()
    gen = generate(doc, SCHEMA)
    verify = wants(invoice_number="not on the page")
    first = verify(gen.extraction.record, gen.extraction)
    res = fix(DocIndex(doc), gen, gen.extraction, first, verify, max_attempts=1)
    assert res.attempts == 1 and res.tried == 0 and not res.changes and res.instructions == gen.instructions
    res = fix(DocIndex(doc), gen, gen.extraction, first, verify, max_attempts=3)
    assert not res.verdict.passed and not res.changes and res.attempts <= 3
    assert res.extraction.record["invoice_number"] == "RE-4711", "nothing better found: nothing adopted"


# -- troubleshooter ----------------------------------------------------------------------------------

def extraction() -> Extraction:
    return Extraction(record={"invoice_number": "RE-4711", "gross_total": 1.5},
                      provenance={"gross_total": reading(1.5, "printed").provenance},
                      alternatives={"gross_total": [reading(1.5, "same"), reading(15.0, "x10"), reading(1500.0, "decimal ,")]})


def test_the_troubleshooter_adopts_the_reading_that_verifies_and_keeps_the_instructions() -> None:
    verify = wants(gross_total=1500.0)
    ext = extraction()
    res = troubleshoot(ext, verify(ext.record, ext), verify, max_attempts=3)
    assert res.verdict.passed and res.extraction.record == {"invoice_number": "RE-4711", "gross_total": 1500.0}
    assert res.instructions is None, "the troubleshooter never changes instructions"
    assert [(c.field, c.before, c.after, c.how) for c in res.changes] == [("gross_total", 1.5, 1500.0, "decimal ,")]
    assert res.extraction.provenance["gross_total"].text == "1500.0", "provenance follows the value"
    assert ext.record["gross_total"] == 1.5, "the input extraction is not modified"
    tried = {(row["to"], row["adopted"]) for row in res.log_json()}
    assert (1500.0, True) in tried and 1.5 not in {to for to, _ in tried}, "a reading equal to the value is not tried"


def test_the_troubleshooter_keeps_the_document_when_no_reading_helps() -> None:
    verify = wants(gross_total=99.0, invoice_number="RE-4711")
    ext = extraction()
    first = verify(ext.record, ext)
    res = troubleshoot(ext, first, verify, max_attempts=5)
    assert not res.verdict.passed and res.verdict is first and not res.changes
    assert res.extraction.record == ext.record and res.tried == 2 and not any(a.adopted for a in res.log)


def test_the_troubleshooter_has_nothing_to_try_without_alternatives_and_respects_the_budget() -> None:
    verify = wants(invoice_number="RE-0001")             # no alternative reading for the failing field
    ext = extraction()
    res = troubleshoot(ext, verify(ext.record, ext), verify, max_attempts=5)
    assert res.tried == 0 and res.attempts == 1 and not res.changes
    verify = wants(gross_total=1500.0)
    res = troubleshoot(ext, verify(ext.record, ext), verify, max_attempts=1)
    assert res.tried == 0 and not res.verdict.passed, "max_attempts=1: the first verification only"
