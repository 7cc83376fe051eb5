"""Run the gates in order and score the record.

Hard gates run first (format, coverage, rules); a record passes when every hard gate passes. The
score in [0, 1] weighs the share of schema fields found and the share of checks that hold; it is
reported, not gating (the richer tolerance scoring lives in `verifiers.score`).
"""
from __future__ import annotations

from typing import Callable

from verifiers.context import VerifyContext
from verifiers.gates import coverage, format as format_gate, rules as rules_gate
from verifiers.result import GateResult, Verification

Gate = Callable[[VerifyContext], GateResult]

DEFAULT_GATES: tuple[tuple[str, Gate], ...] = (
    (format_gate.NAME, format_gate.check),
    (coverage.NAME, coverage.check),
    (rules_gate.NAME, rules_gate.check),
)


def verify(ctx: VerifyContext, gates: tuple[tuple[str, Gate], ...] = DEFAULT_GATES) -> Verification:
    results: dict[str, GateResult] = {}
    for name, gate in gates:
        results[name] = gate(ctx)
    props = ctx.schema.get("properties", {})
    found = sum(1 for k in props if ctx.record.get(k) not in (None, "", []))
    coverage_share = found / len(props) if props else 1.0
    gate_share = sum(g.passed for g in results.values()) / len(results) if results else 1.0
    score = 0.5 * coverage_share + 0.5 * gate_share
    return Verification(results, score, {"coverage": coverage_share, "gates": gate_share})
