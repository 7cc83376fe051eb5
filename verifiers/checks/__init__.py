"""Independent checks: small verifiers that raise or lower one field's confidence.

A gate says whether a record may pass at all; a check says how much to believe one value. Each
check is a plain function of the verification context that returns `Signal`s, one per field it
has an opinion on, and nothing for fields it cannot judge (absent is not evidence). Checks never
raise for odd input: a malformed value is a `fail` signal or no signal.

    Check = Callable[[VerifyContext], list[Signal]]

    Signal(field, check, outcome, detail)
        field    top-level field name ("seller_vat_id", "gross_total", "line_items")
        check    the check's name (stable: it is a feature of the calibrator and shows in rows)
        outcome  "pass" (evidence the value is right) | "fail" (evidence it is wrong)
        detail   one human sentence for the row and the reviewer

`CHECKS` is the registry, in order, one module per family (each module's docstring lists its
checks): identifiers (checksums, formats), arithmetic, labels (what the words beside a value
mean), columns (which label a value belongs to where labels stand over their values or
across a column), roles (which block of the page a value stands in), agreement (printed twice, the next-best
reading, the format's earlier documents), plausibility (dates, proportions, the shape of a name),
terms (the due date the printed payment terms' days after the issue date), extent (an address
holds its whole printed block), names (a party's legal name, not its brand),
items_table (each item read as its printed row), rounding (a cash total read before rounding) and
printed (an empty field whose label is printed with a value: the record is incomplete) and
sender (the sender's return line over a window envelope's address) and payee (the account
holder the payment details name is the seller).
Field roles come from the schema (verifiers.checks.fields; `x-docassay: {"role": ...}`).
`run_checks` runs all of them and never lets one check's bug stop the others (a check that raises
yields a `fail` signal named `<check>:error` on the field "" (no field), and is logged). The
calibrator (verifiers.confidence) turns the signals of a field, with the generator's scores, into
a probability. Each check ships conformance cases in tests/verifiers/:
a value it supports, a value it contradicts, malformed input, and determinism.
"""
from __future__ import annotations

import logging

from docassay.verifiers.checks import (
    agreement,
    arithmetic,
    columns,
    extent,
    identifiers,
    items_table,
    labels,
    names,
    payee,
    plausibility,
    printed,
    roles,
    rounding,
    sender,
    terms,
)
from docassay.verifiers.checks.signal import OUTCOMES, Check, Outcome, Signal
from docassay.verifiers.context import VerifyContext

__all__ = ["Signal", "Check", "Outcome", "CHECKS", "run_checks", "OUTCOMES"]

_log = logging.getLogger(__name__)

# name -> check, in the order they run; names are unique and stable (calibrator features).
CHECKS: tuple[tuple[str, Check], ...] = (
    identifiers.CHECKS + arithmetic.CHECKS + labels.CHECKS + columns.CHECKS + roles.CHECKS + agreement.CHECKS
    + plausibility.CHECKS + terms.CHECKS + extent.CHECKS + names.CHECKS + items_table.CHECKS + rounding.CHECKS
    + printed.CHECKS + sender.CHECKS + payee.CHECKS
)


def run_checks(ctx: VerifyContext, checks: tuple[tuple[str, Check], ...] | None = None) -> list[Signal]:
    out: list[Signal] = []
    if not ctx.well_formed:
        return out
    for name, check in (CHECKS if checks is None else checks):
        try:
            out.extend(check(ctx))
        except Exception as exc:          # a check's bug must not stop verification
            _log.warning("check %s failed: %s", name, exc, exc_info=True)
            out.append(Signal("", f"{name}:error", "fail", f"{type(exc).__name__}: {exc}"))
    return out
