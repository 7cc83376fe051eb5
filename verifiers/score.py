"""The run-time score in [0, 1]: how far each value agrees with what the checks expect of it, and
how good the evidence behind it is, weighted per field.

There is no ground truth at run time. What the score compares instead, per top-level field F:

* **agreement** — every check that expects something of F: a rule's `expected` column (gross total
  expected to be net + tax), the completeness gate's expected total for the items' sum, the stale
  gate's "a value other than ...". Each is compared with F's value under F's named tolerance
  (`verifiers.tolerance.closeness`: numbers within abs/rel, strings by normalised similarity,
  identifiers and dates exactly). An error-severity finding with no comparable expected value
  (a duplicate, a missing required field) counts 0; a warning at most halves it. No finding: 1.
* **evidence** — how the value was found (`verifiers.evidence`): a labelled, table or detected
  value 1.0, a pattern or another reading 0.9, a value without provenance 0.8, a value found by
  page position only 0.7 (`EvidencePolicy.weights`); a value with an error-severity evidence
  finding (a label read as a value, two fields from one span) is worth `weak_factor` (0.2).

component(F) = agreement * evidence; score = sum(weight(F) * component(F)) / sum(weight(F)) over
the fields present, the required ones, and those a failed check names (missing ones score 0).
Weights come from `x-docassay: {"weight": w}` (default 1). A record with nothing to score scores 0.
The same `closeness` compares a record with its golden reference (gates/reference.py) and
benchmarks compare with ground truth, so one set of tolerances serves all three.
"""
from __future__ import annotations

from typing import Mapping

from docassay.verifiers.context import VerifyContext
from docassay.verifiers.result import GateResult, Violation
from docassay.verifiers.settings import FieldPolicy
from docassay.verifiers.tolerance import closeness

__all__ = ["score_record"]


def _present(v: object) -> bool:
    return v is not None and v != "" and v != [] and v != {}


def _agreement(pol: FieldPolicy, v: Violation) -> float:
    if v.expected is None or v.actual is None:
        return 0.0
    if pol.kind in ("amount", "quantity", "number", "integer") or isinstance(v.expected, (int, float)):
        if isinstance(v.expected, (int, float)) and isinstance(v.actual, (int, float)):
            return closeness(pol.tolerance, v.expected, v.actual)
        return 0.0
    if isinstance(v.expected, str) and isinstance(v.actual, str) and v.gate == "rules":
        return closeness(pol.tolerance, v.expected, v.actual)
    return 0.0


def score_record(ctx: VerifyContext, gates: Mapping[str, GateResult]) -> tuple[float, dict[str, float]]:
    """(score, per-field components) for ctx.record given the gates' results. Deterministic."""
    if not ctx.well_formed:
        return 0.0, {}
    cfg = ctx.cfg
    rec = ctx.record
    by_field: dict[str, list[Violation]] = {}
    for g in gates.values():
        for v in g.violations:
            for f in v.fields:
                by_field.setdefault(f, []).append(v)
    comps: dict[str, float] = {}
    weights: dict[str, float] = {}
    names = list(cfg.fields) + [f for f in by_field if f not in cfg.fields]
    for name in names:
        pol = cfg.policy(name)
        viols = by_field.get(name, [])
        present = _present(rec.get(name))
        named_by_error = any(v.severity == "error" for v in viols)
        if not present:
            if pol.required or named_by_error:
                comps[name], weights[name] = 0.0, pol.weight
            continue
        agree = 1.0
        for v in viols:
            if v.gate == "evidence":
                continue
            c = _agreement(pol, v)
            agree = min(agree, c if v.severity == "error" else 0.5 + 0.5 * c)
        ev = (ctx.evidence or {}).get(name)
        e = cfg.evidence.weights.get(ev.how, 1.0) if ev is not None else 1.0
        if any(v.gate == "evidence" and v.severity == "error" for v in viols):
            e = min(e, cfg.evidence.weak_factor)
        comps[name], weights[name] = agree * e, pol.weight
    total = sum(weights.values())
    if total <= 0:
        return 0.0, comps
    return sum(weights[k] * comps[k] for k in comps) / total, comps
