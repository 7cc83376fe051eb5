"""Verification gates, one module each. A gate is a function `check(ctx) -> GateResult`.

    format        the record validates against the JSON Schema (every error, with its path)
    coverage      every required field found; at least the configured share of optional ones
    completeness  every page read; line items complete (they reconcile with a total; none lost
                  at a page break)
    evidence      each value stands on evidence: not a label read as a value, not two fields
                  from the same printed words, not a name that reads as a date; a required value
                  found by page position only is weak
    rules         no `error`-severity SQL business rule violated (warnings reported)
    stale         no value repeated where it must differ (a duplicate invoice number for the
                  same seller; a date or total copied from the previous document of the format)
    consistency   a known format's sender fields hold the value its previous document holds
                  (another sender's look-alike layout, or a misread)
    lifecycle     the format's lifecycle lets its documents pass (pending_review policy)
    reference     (for a proposed new version of a format, not for one record: `reference.check`)

Every gate returns a `GateResult` with its reasons; none raises for a malformed record.
"""
from __future__ import annotations

from docassay.verifiers.context import VerifyContext
from docassay.verifiers.result import GateResult, Violation

__all__ = ["malformed"]


def malformed(ctx: VerifyContext, gate: str) -> GateResult | None:
    """A failed result when the record is not a JSON object (the gate cannot judge it), else None."""
    if ctx.well_formed:
        return None
    what = type(ctx.record).__name__
    return GateResult(gate, False, {"malformed": True},
                      [Violation(gate, "malformed", None, f"the record is a {what}, not a JSON object")])
