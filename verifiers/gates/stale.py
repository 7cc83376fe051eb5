"""stale gate: no value repeated from an earlier accepted document where it must differ.

* **duplicate** — a field declared `x-docassay: {"unique": {"per": [FIELDS]}}` holds a value that an
  earlier accepted document already holds with the same values of FIELDS (an invoice number
  already accepted for the same seller). The same document seen again (same content hash) is no
  duplicate.
* **possible_duplicate** — such a field declared with `"unique": {"per": [FIELDS], "near": [MORE]}`
  holds a value *other* than that of an earlier accepted document whose FIELDS and MORE values are
  all this one's (an invoice of the same seller, issue date and gross total under another number):
  the same invoice read with a wrong number, or billed twice (accounts payable's duplicate-payment
  control). Both go to a person.
* **copied** — a field declared `x-docassay: {"stale": "previous"}` repeats the value of the
  previous accepted document of the same format although that document is another invoice (its
  unique fields differ): a date or total read from the layout's fixed text, or left over from
  the previous document, instead of this document's own value. When the previous document holds
  the same unique values it is the same invoice, and `duplicate` speaks for it.

A duplicate or possible duplicate is not repairable (`Violation.repairable` False): repair must not pick another value
to get a real duplicate past the gate; it goes to review. A copied value may be repaired (another
reading the document offers). Severity per field (`unique.severity`, `stale.severity`: error |
warning | off). Without a
history (`ctx.history` None) nothing is compared and the gate passes, saying so.
"""
from __future__ import annotations

from docassay.verifiers.context import VerifyContext
from docassay.verifiers.gates import malformed
from docassay.verifiers.history import near_key, scope_key, value_key
from docassay.verifiers.result import GateResult, Violation
from docassay.verifiers.tolerance import matches

NAME = "stale"


def check(ctx: VerifyContext) -> GateResult:
    bad = malformed(ctx, NAME)
    if bad is not None:
        return bad
    hist = ctx.history
    if hist is None:
        return GateResult(NAME, True, {"history": False})
    rec = ctx.record
    cfg = ctx.cfg
    violations: list[Violation] = []
    unique = {n: p for n, p in cfg.fields.items() if p.unique_per is not None and p.unique_severity != "off"}
    for name, pol in unique.items():
        v = rec.get(name)
        if v is None or v == "":
            continue
        sk = scope_key(rec, pol.unique_per or ())
        if sk is None:
            continue
        dups = hist.accepted_with(name, value_key(v), sk)
        if dups:
            scope = " and ".join(f"{p} {rec.get(p)!r}" for p in pol.unique_per or ()) or "any document"
            violations.append(Violation(NAME, "duplicate", name,
                                        f"{name} {v!r} was already accepted for {scope} "
                                        f"(document {dups[0][:12]}): a duplicate, or a value read from the wrong place",
                                        severity=pol.unique_severity, expected="a value not accepted before",
                                        actual=v, repairable=False))
            continue
        nk = near_key(rec, pol.unique_per or (), pol.unique_near)
        twins = hist.accepted_others(name, value_key(v), nk) if nk is not None else []
        if twins:
            near = (*(pol.unique_per or ()), *pol.unique_near)
            same = " and ".join(f"{p} {rec.get(p)!r}" for p in near)
            sha, other = twins[0]
            violations.append(Violation(NAME, "possible_duplicate", name,
                                        f"{name} {v!r}: an accepted document ({sha[:12]}) has the same {same} "
                                        f"under {name} {other!r}: the same invoice read with another number, "
                                        f"or billed twice", severity=pol.unique_severity,
                                        expected="no accepted document with the same " + ", ".join(near),
                                        actual=v, repairable=False))
    stale = {n: p for n, p in cfg.fields.items() if p.stale_previous and p.stale_severity != "off"}
    prev = hist.previous() if stale else None
    if prev is not None:
        same_invoice = bool(unique) and all(
            rec.get(n) is not None and prev.record.get(n) is not None and value_key(rec[n]) == value_key(prev.record[n])
            for n in unique)
        if not same_invoice:
            for name, pol in stale.items():
                v, pv = rec.get(name), prev.record.get(name)
                if v is None or pv is None or not matches(pol.tolerance, pv, v):
                    continue
                violations.append(Violation(NAME, "copied", name,
                                            f"{name} {v!r} repeats the previous document of this format "
                                            f"({prev.sha256[:12]}), which is another document",
                                            severity=pol.stale_severity, expected=f"a value other than {pv!r}",
                                            actual=v))
    details = {"history": True, "unique_fields": sorted(unique), "previous": prev.sha256[:12] if prev else None}
    return GateResult(NAME, not any(v.severity == "error" for v in violations), details, violations)
