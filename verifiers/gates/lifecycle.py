"""lifecycle gate: the format's lifecycle lets its documents pass.

A document read by a format in `pending_review` passes only when the policy allows it
(`VerifyContext.pending_may_pass`, from flows.lifecycle.LifecyclePolicy); an `archived` format
never passes a document. A new format (status None) is judged by the other gates alone.
"""
from __future__ import annotations

from docassay.verifiers.context import VerifyContext
from docassay.verifiers.result import GateResult, Violation

NAME = "lifecycle"


def check(ctx: VerifyContext) -> GateResult:
    st = ctx.format_status
    if st is None or st == "active" or (st == "pending_review" and ctx.pending_may_pass):
        return GateResult(NAME, True, {"format_status": st} if st else {})
    why = ("the format is pending review and the policy does not let its documents pass"
           if st == "pending_review" else f"the format is {st}")
    return GateResult(NAME, False, {"format_status": st},
                      [Violation(NAME, f"format_{st}", None, why, expected="active", actual=st)])
