"""evidence gate: every value stands on evidence the document gives for it.

The extraction says how each value was found (`VerifyContext.evidence`, one `FieldEvidence` per
field, built by the pipeline). Weak evidence, generic to any schema and any layout:

* `label_as_value` — the value read is itself a label ("Nummer", "QTY", "Invoice"): the locator
  stopped on the caption instead of the value beside it;
* `shared_span`    — two fields read from the same printed words (seller and buyer both "Lieferant
  GmbH" from one line; net and tax total from one amount): at most one of them is right;
* `wrong_kind`     — a name or text value that reads as another kind of value (a date, an
  amount, a "label: value" pair): "14 MAR 2018 18:40" is no company name;
* `position_only`  — a required value found only by its place on the page, with no printed
  label: the layout of the next document may put something else there.

Each finding's severity comes from `settings.EvidencePolicy` (error gates, warning only lowers the
score, off ignores). Fields without evidence (a record verified without an extraction) pass.
"""
from __future__ import annotations

from itertools import combinations

from docassay.verifiers.context import VerifyContext
from docassay.verifiers.evidence import FieldEvidence, same_place
from docassay.verifiers.gates import malformed
from docassay.verifiers.result import GateResult, Violation

NAME = "evidence"
_NUMERIC = {"amount", "quantity", "number", "integer"}
_TEXTUAL = {"text", "identifier"}


def findings(ctx: VerifyContext) -> list[Violation]:
    """Every evidence finding, whatever its severity (`off` ones left out)."""
    rec = ctx.record
    pol = ctx.cfg.evidence
    out: list[Violation] = []
    present = {f: e for f, e in (ctx.evidence or {}).items()
               if isinstance(e, FieldEvidence) and rec.get(f) not in (None, "", [])}
    for f, e in present.items():
        fp = ctx.cfg.policy(f)
        if e.value_is_label and pol.label_as_value != "off":
            out.append(Violation(NAME, "label_as_value", f, f"{f}: the value read, {e.text!r}, is itself a label",
                                 severity=pol.label_as_value, expected="the value printed beside the label",
                                 actual=rec.get(f)))
        if e.reads_as and fp.kind == "text" and pol.wrong_kind != "off":
            out.append(Violation(NAME, "wrong_kind", f, f"{f}: {e.text!r} reads as a {e.reads_as}, not as {fp.kind}",
                                 severity=pol.wrong_kind, expected=fp.kind, actual=rec.get(f)))
        if e.how == "position" and fp.required and pol.position_only != "off":
            out.append(Violation(NAME, "position_only", f,
                                 f"{f}: found only by its place on page {e.page}, with no printed label",
                                 severity=pol.position_only, expected="a value beside a label", actual=rec.get(f)))
    if pol.shared_span != "off":
        for (fa, ea), (fb, eb) in combinations(sorted(present.items()), 2):
            if ea.how == "detected" or eb.how == "detected":
                continue
            ka, kb = ctx.cfg.policy(fa).kind, ctx.cfg.policy(fb).kind
            same_family = (ka in _NUMERIC and kb in _NUMERIC) or (ka in _TEXTUAL and kb in _TEXTUAL) or ka == kb
            if same_family and same_place(ea, eb):
                out.append(Violation(NAME, "shared_span", f"{fa}, {fb}",
                                     f"{fa} and {fb} were both read from the same printed words {ea.text!r} "
                                     f"(page {ea.page}): at most one of them is right",
                                     severity=pol.shared_span, actual=rec.get(fa)))
    return out


def check(ctx: VerifyContext) -> GateResult:
    bad = malformed(ctx, NAME)
    if bad is not None:
        return bad
    found = findings(ctx)
    weak = sorted({f for v in found for f in v.fields})
    details: dict[str, object] = {"fields": len(ctx.evidence or {}), "weak": weak}
    return GateResult(NAME, not any(v.severity == "error" for v in found), details, found)
