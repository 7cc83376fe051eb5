"""consistency gate: a known format's sender fields hold the value its documents hold.

A format is one sender's layout. Fields declared `x-docassay: {"per_format": "same"}` (the
seller's name, a receipt's shop and address) must hold the value of the format's previous
accepted document, within the field's tolerance (normalised similarity for names). When they do
not, either the value was read from the wrong place, or the document comes from another sender
whose layout merely looks alike (a wrong format match): in both cases the record is not to be
trusted as it stands. The pipeline tries another reading first (the violation is repairable);
a document that still disagrees is learned as a format of its own.

Needs `ctx.history` of a known format; a new format, or no history, passes and says so.
"""
from __future__ import annotations

from docassay.verifiers.context import VerifyContext
from docassay.verifiers.gates import malformed
from docassay.verifiers.result import GateResult, Violation
from docassay.verifiers.tolerance import closeness

NAME = "consistency"
RULE = "sender_changed"


def check(ctx: VerifyContext) -> GateResult:
    bad = malformed(ctx, NAME)
    if bad is not None:
        return bad
    fields = {n: p for n, p in ctx.cfg.fields.items() if p.same_per_format and p.same_severity != "off"}
    if not fields or ctx.history is None:
        return GateResult(NAME, True, {"checked": False})
    prev = ctx.history.previous()
    if prev is None:
        return GateResult(NAME, True, {"checked": False, "previous": None})
    violations: list[Violation] = []
    for name, pol in fields.items():
        want, got = prev.record.get(name), ctx.record.get(name)
        if want in (None, "") or got in (None, ""):
            continue
        c = closeness(pol.tolerance, want, got)
        if c < 1.0:
            violations.append(Violation(NAME, RULE, name,
                                        f"{name} {got!r} differs from {want!r} on the format's previous document "
                                        f"({prev.sha256[:12]}): misread, or another sender's document",
                                        severity=pol.same_severity, expected=want, actual=got))
    return GateResult(NAME, not any(v.severity == "error" for v in violations),
                      {"checked": True, "previous": prev.sha256[:12], "fields": sorted(fields)}, violations)
