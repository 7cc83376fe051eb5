"""Run the gates in order, attach diagnostics, and score the record.

    verify(ctx) -> Verification(gates, score, components)

Then each field's confidence (verifiers.confidence): the independent checks (verifiers.checks),
the evidence and the gates' per-field findings, through the calibrator, give every field a
probability and a status (verified | doubtful | missing) at the policy's target;
`Verification.accepted` is what lets a record pass without a person.

Hard gates run first and all of them run (every violation is reported at once, not the first);
a record passes when every hard gate passes (and its score reaches `min_score`, 0 by default, so
the score alone never blocks unless configured). Then the score (verifiers.score). Every
violation that names a field carries the alternatives the document offers for it (other spans,
other date orders, other decimal conventions: the extraction's `alternatives`), so the fixer and
the troubleshooter, and a person reviewing, see what else the page says.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Mapping

from docassay.verifiers.checks import run_checks
from docassay.verifiers.confidence import ConfidencePolicy, assess, field_bases, load_default
from docassay.verifiers.confidence.decision import INCOMPLETE_CHECKS
from docassay.verifiers.context import VerifyContext
from docassay.verifiers.gates import completeness, consistency, coverage, evidence, lifecycle, stale
from docassay.verifiers.gates import format as format_gate
from docassay.verifiers.gates import rules as rules_gate
from docassay.verifiers.result import GateResult, Verification, Violation
from docassay.verifiers.score import score_record

__all__ = ["Gate", "DEFAULT_GATES", "verify", "MAX_ALTERNATIVES"]

Gate = Callable[[VerifyContext], GateResult]
MAX_ALTERNATIVES = 5

DEFAULT_GATES: tuple[tuple[str, Gate], ...] = (
    (format_gate.NAME, format_gate.check),
    (coverage.NAME, coverage.check),
    (completeness.NAME, completeness.check),
    (evidence.NAME, evidence.check),
    (rules_gate.NAME, rules_gate.check),
    (stale.NAME, stale.check),
    (consistency.NAME, consistency.check),
    (lifecycle.NAME, lifecycle.check),
)


def verify(ctx: VerifyContext, gates: tuple[tuple[str, Gate], ...] = DEFAULT_GATES) -> Verification:
    results: dict[str, GateResult] = {}
    for name, gate in gates:
        results[name] = gate(ctx)
    _attach_alternatives(results, ctx)
    score, components = score_record(ctx, results)
    min_score = ctx.cfg.min_score if ctx.well_formed else 0.0
    policy = ConfidencePolicy.from_schema(ctx.schema, ctx.min_confidence)       # a bad target fails here
    frozen = replace(ctx, record=dict(ctx.record)) if ctx.well_formed else ctx

    def confidence() -> tuple[dict, dict]:
        bases = field_bases(frozen, results, run_checks(frozen))
        return bases, assess(bases, frozen.calibrator or load_default(), policy,
                             required=list(frozen.schema.get("required") or []),
                             confirmed_absent=_confirmed_absent(bases, policy, frozen))
    return Verification(results, score, components, min_score, confidence)


def _confirmed_absent(bases: Mapping[str, Any], policy: ConfidencePolicy, ctx: VerifyContext) -> set[str]:
    """The empty fields whose value is printed that the format's last document decided by a person
    left empty too (the `confirm` policy of verifiers.confidence.decision). The history is asked
    only when such a field exists, once per document."""
    if policy.missing_printed != "confirm" or ctx.history is None:
        return set()
    empty = [n for n, b in bases.items() if not b.present
             and any(s.check in INCOMPLETE_CHECKS and s.outcome == "fail" for s in b.signals)]
    reviewed = getattr(ctx.history, "reviewed", None)
    prev = reviewed() if empty and reviewed is not None else None
    if prev is None:
        return set()
    return {n for n in empty if prev.record.get(n) in (None, "", [])}


def _attach_alternatives(results: dict[str, GateResult], ctx: VerifyContext) -> None:
    alts = getattr(ctx.extraction, "alternatives", None) or {}
    if not alts or not ctx.well_formed:
        return
    for g in results.values():
        for v in g.violations:
            if v.alternatives or v.severity == "off":
                continue
            v.alternatives = _alternatives_for(v, alts, ctx.record)


def _alternatives_for(v: Violation, alts: dict, record: dict) -> list[object]:
    out: list[object] = []
    for f in v.fields:
        cur = record.get(f)
        for a in alts.get(f) or []:
            value = getattr(a, "value", None)
            if value == cur:
                continue
            prov = getattr(a, "provenance", None)
            item: dict[str, object] = {"field": f, "value": value, "how": getattr(a, "how", "")}
            if prov is not None:
                item["text"] = getattr(prov, "text", "")
                item["page"] = getattr(prov, "page", None)
            out.append(item)
            if len(out) >= MAX_ALTERNATIVES:
                return out
    return out
