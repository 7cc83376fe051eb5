"""Doubt-driven repair (flows/doubt.py): a doubtful required field takes another reading of the
page only when the calibrator believes that reading more, and every gate still passes."""
from __future__ import annotations

from docassay.extractors.document import BBox
from docassay.extractors.instructions.executor import Extraction, FieldValue, Provenance
from docassay.extractors.instructions.repair import RepairResult
from docassay.flows.doubt import resolve
from docassay.flows.evidence import build_evidence
from docassay.verifiers.confidence import Calibrator
from docassay.verifiers.confidence.calibrator import POOLED, FamilyModel
from docassay.verifiers.context import VerifyContext
from docassay.verifiers.verify import verify

SCHEMA = {"type": "object", "required": ["invoice_number", "gross_total"],
          "properties": {"invoice_number": {"type": "string", "x-docassay": {"kind": "identifier"}},
                         "gross_total": {"type": "number"}}}
BOX = BBox(10, 10, 50, 20)
# a labelled reading is believed, a value placed by its position only is not
CAL = Calibrator({POOLED: FamilyModel(["bias"], [4.0]),
                  "amount": FamilyModel(["bias", "how:label", "how:position"], [0.0, 5.0, -3.0])})


def check(record, ext):
    ev = build_evidence(record, ext, {"invoice_number": "identifier", "gross_total": "amount"})
    return verify(VerifyContext(schema=SCHEMA, record=record, extraction=ext, evidence=ev, calibrator=CAL,
                                min_confidence=0.9))


def extraction(alts: list[FieldValue]) -> Extraction:
    return Extraction(record={"invoice_number": "RE-1", "gross_total": 1.0},
                      provenance={"invoice_number": Provenance(1, BOX, "RE-1", "Invoice No -> right"),
                                  "gross_total": Provenance(1, BOX, "1.00", "region p1")},
                      alternatives={"gross_total": alts})


def test_a_believed_reading_replaces_a_doubtful_value() -> None:
    ext = extraction([FieldValue(1.0, Provenance(1, BOX, "1.00", "region p1"), "same"),
                      FieldValue(12.5, Provenance(1, BOX, "12,50", "Total -> right"), "label Total")])
    first = check(ext.record, ext)
    assert first.passed and first.doubtful == ["gross_total"]
    res = resolve(RepairResult(ext, first), check)
    assert res.extraction.record["gross_total"] == 12.5 and res.verdict.accepted
    assert [(c.field, c.before, c.after) for c in res.changes] == [("gross_total", 1.0, 12.5)]


def test_no_reading_believed_more_leaves_the_value_and_the_doubt() -> None:
    ext = extraction([FieldValue(7.0, Provenance(1, BOX, "7.00", "region p1"), "position")])
    first = check(ext.record, ext)
    res = resolve(RepairResult(ext, first), check)
    assert res.extraction.record["gross_total"] == 1.0 and res.changes == [] and res.verdict.doubtful == ["gross_total"]
