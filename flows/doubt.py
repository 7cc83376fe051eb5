"""Doubtful fields and repair: try the document's other readings of a doubtful required field.

    resolve(result, check, max_alternatives=3) -> RepairResult

Off by default (`Job.doubt_repair`; measured in BENCHMARKS.md, "Calibrated per-field
confidence"): the fixer and the troubleshooter repair until the gates pass, and doubt only
decides. With it on, a record whose gates pass but whose required fields are doubtful gets, per
doubtful field, its first `max_alternatives` other readings verified in turn; the reading that
keeps every gate passing and raises that field's confidence the most is adopted when it reaches
the target (a `Change`, so the row is `repaired` and says what changed). A value is never
replaced by one the calibrator believes less.
"""
from __future__ import annotations

from typing import Callable

from docassay.extractors.instructions.executor import Extraction, FieldValue
from docassay.extractors.instructions.repair import Change, RepairResult
from docassay.verifiers.result import Verification

__all__ = ["resolve", "MAX_ALTERNATIVES"]

MAX_ALTERNATIVES = 3


def _with(ext: Extraction, name: str, alt) -> Extraction:
    out = Extraction(record={**ext.record, name: alt.value}, provenance=dict(ext.provenance),
                     alternatives=ext.alternatives, missing=list(ext.missing))
    if alt.provenance is not None:
        out.provenance[name] = alt.provenance
    return out


def resolve(result: RepairResult, check: Callable[..., Verification], *,
            max_alternatives: int = MAX_ALTERNATIVES) -> RepairResult:
    v = result.verdict
    if not v.passed or not v.doubtful:
        return result
    ext = result.extraction
    for name in list(v.doubtful):
        cur = v.fields.get(name)
        if cur is None or cur.confidence is None:
            continue
        best: tuple[float, Extraction, Verification, FieldValue] | None = None
        seen = {repr(ext.record.get(name))}
        for alt in (ext.alternatives.get(name) or []):
            if repr(alt.value) in seen or alt.value is None:
                continue
            seen.add(repr(alt.value))
            if len(seen) > max_alternatives + 1:
                break
            cand = _with(ext, name, alt)
            cv = check(cand.record, cand)
            f = cv.fields.get(name)
            if not cv.passed or f is None or f.confidence is None:
                continue
            if f.confidence > cur.confidence and (best is None or f.confidence > best[0]):
                best = (f.confidence, cand, cv, alt)
        if best is not None and best[2].fields[name].status == "verified":
            _, cand, cv, alt = best
            result.attempts += 1
            result.changes.append(Change(result.attempts, name, ext.record.get(name), alt.value,
                                         f"{getattr(alt, 'how', 'reading')}: doubtful {cur.confidence:.2f}, "
                                         f"this reading {cv.fields[name].confidence:.2f}"))
            ext, v = cand, cv
            result.extraction, result.verdict = ext, v
    return result
