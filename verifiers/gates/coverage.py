"""coverage gate: every required field found, and at least a configured share of optional fields."""
from __future__ import annotations

from docassay.verifiers.context import VerifyContext
from docassay.verifiers.gates import malformed
from docassay.verifiers.result import GateResult, Violation

NAME = "coverage"


def _present(v: object) -> bool:
    return v is not None and v != "" and v != [] and v != {}


def check(ctx: VerifyContext) -> GateResult:
    bad = malformed(ctx, NAME)
    if bad is not None:
        return bad
    props = ctx.schema.get("properties", {}) or {}
    required = list(ctx.schema.get("required", []) or [])
    optional = [k for k in props if k not in required]
    share_needed = ctx.cfg.optional_share
    missing = [k for k in required if not _present(ctx.record.get(k))]
    found_opt = [k for k in optional if _present(ctx.record.get(k))]
    share = len(found_opt) / len(optional) if optional else 1.0
    violations = [Violation(NAME, "required", k, f"required field {k!r} not found on the document",
                            expected="a value", alternatives=_alternatives(ctx, k)) for k in missing]
    if share + 1e-9 < share_needed:
        absent = [k for k in optional if k not in found_opt]
        violations.append(Violation(NAME, "optional_share", ", ".join(absent),
                                    f"only {len(found_opt)}/{len(optional)} optional fields found "
                                    f"(need {share_needed:.0%}); missing: {', '.join(absent)}",
                                    expected=round(share_needed, 4), actual=round(share, 4)))
    details: dict[str, object] = {"required_found": len(required) - len(missing), "required": len(required),
               "optional_found": len(found_opt), "optional": len(optional)}
    return GateResult(NAME, not violations, details, violations)


def _alternatives(ctx: VerifyContext, name: str) -> list[object]:
    ext = ctx.extraction
    alts = getattr(ext, "alternatives", None) or {}
    return [{"value": a.value, "how": a.how} for a in (alts.get(name) or [])[:5]]
