"""Cash rounding: a total is the amount the document finally asks for, rounded where it rounds.

    cash_rounding   a gross total that is not a multiple of `CASH_STEP` (7.72) while a later line
                    prints it rounded to that step (7.70: "Rounding adj", "Total rounded") was read
                    before the rounding: fail; otherwise no signal (on dev-tune, totals that are no
                    multiple of the step and are not printed rounded later were right less often
                    than totals in general: their absence of a rounding line is no evidence)

Numbers only (every language and layout of the data): the step is the smallest coin of the
currencies that round cash totals (0.05: MYR, CHF, ...); a document that does not round prints no
such later amount and gets no signal.
"""
from __future__ import annotations

from docassay.verifiers.checks.fields import roles_of
from docassay.verifiers.checks.page import doc_text, lines_printing_amount
from docassay.verifiers.checks.signal import Signal
from docassay.verifiers.checks.values import num
from docassay.verifiers.context import VerifyContext

__all__ = ["cash_rounding", "CASH_STEP", "CHECKS"]

CASH_STEP = 0.05


def _rounded(x: float) -> float:
    return round(round(x / CASH_STEP) * CASH_STEP, 2)


def cash_rounding(ctx: VerifyContext) -> list[Signal]:
    dt = doc_text(ctx.document)
    if not dt.lines:
        return []
    out = []
    for f in roles_of(ctx.schema).fields("gross_total"):
        x = num(ctx.record.get(f))
        if x is None:
            continue
        r = _rounded(x)
        if abs(r - x) < 0.005:
            continue
        hits = lines_printing_amount(dt, x)
        if not hits:
            continue
        later = [i for i in lines_printing_amount(dt, r) if i > hits[0]]
        if later:
            _, _, t = dt.lines[later[-1]]
            out.append(Signal(f, "cash_rounding", "fail", f"{x} is printed rounded to {r} later ({t[:40]!r})"))
    return out


CHECKS = (("cash_rounding", cash_rounding),)
