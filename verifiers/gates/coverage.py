"""coverage gate: every required field found, and at least a configured share of optional ones."""
from __future__ import annotations

from verifiers.context import VerifyContext
from verifiers.result import GateResult, Violation

NAME = "coverage"


def _present(v: object) -> bool:
    return v is not None and v != "" and v != []


def check(ctx: VerifyContext) -> GateResult:
    props = ctx.schema.get("properties", {})
    required = list(ctx.schema.get("required", []))
    optional = [k for k in props if k not in required]
    missing = [k for k in required if not _present(ctx.record.get(k))]
    found_opt = [k for k in optional if _present(ctx.record.get(k))]
    share = len(found_opt) / len(optional) if optional else 1.0
    violations = [Violation(NAME, "required", k, f"required field {k!r} not found on the document") for k in missing]
    if share + 1e-9 < ctx.optional_share:
        violations.append(Violation(NAME, "optional_share", None,
                                    f"only {len(found_opt)}/{len(optional)} optional fields found "
                                    f"(need {ctx.optional_share:.0%})"))
    details = {"required_found": len(required) - len(missing), "required": len(required),
               "optional_found": len(found_opt), "optional": len(optional)}
    return GateResult(NAME, not violations, details, violations)
