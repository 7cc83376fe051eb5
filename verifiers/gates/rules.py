"""rules gate: no `error`-severity SQL business rule violated; warnings are reported, not gating.

A rule that could not run (syntax error, timeout) fails the gate when it has error severity: a
rule the user wrote and we could not check is not a pass.
"""
from __future__ import annotations

from docassay.rules.runner import run_rules
from docassay.verifiers.context import VerifyContext
from docassay.verifiers.gates import malformed
from docassay.verifiers.result import GateResult, Violation

NAME = "rules"


def check(ctx: VerifyContext) -> GateResult:
    bad = malformed(ctx, NAME)
    if bad is not None:
        return bad
    if not ctx.rules:
        return GateResult(NAME, True, {"rules": 0})
    if ctx.conn is None:
        return GateResult(NAME, False, {"rules": len(ctx.rules)},
                          [Violation(NAME, "database", None, "SQL rules given but no database connection")])
    results = run_rules(ctx.conn, ctx.schema, ctx.record, ctx.rules, timeout_ms=ctx.rule_timeout_ms,
                        sandbox=ctx.rule_sandbox)
    violations: list[Violation] = []
    errors = warnings = failed_to_run = 0
    for r in results:
        if r.error:
            failed_to_run += r.severity == "error"
            violations.append(Violation(NAME, r.rule, None, f"rule {r.rule!r} could not run: {r.error}",
                                        severity=r.severity))
            continue
        for v in r.violations:
            violations.append(Violation(NAME, r.rule, v.field, v.message or f"rule {r.rule!r} violated",
                                        severity=r.severity, expected=v.expected, actual=v.actual))
            if r.severity == "error":
                errors += 1
            else:
                warnings += 1
    return GateResult(NAME, errors == 0 and failed_to_run == 0,
                      {"rules": len(results), "errors": errors, "warnings": warnings, "failed_to_run": failed_to_run},
                      violations)
