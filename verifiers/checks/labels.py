"""What the words beside a value mean (verifiers.checks.vocabulary, in the data's languages).

    label_meaning   the label closest before the value (the words left of it on its line, else the
                    label the value was found by) means this field ("Fälligkeitsdatum" for a due
                    date: pass) or a rival of it ("Lieferdatum" for a due date, "Kundennummer" for
                    an invoice number, "Cash" for a total: fail). A date or amount whose line
                    prints a version, stylesheet or discount cue anywhere fails too ("Version 2.1
                    vom 24.03.2020" is no issue date; "bis 15.03. mit 2 % Skonto" is no due date)
    value_not_label the value is not itself a label or heading ("Payment Terms", "Delivery
                    address", "Rechnungsempfänger:" as a buyer's name fail; the evidence's own
                    `value_is_label` finding counts too)

Fields by role (verifiers.checks.fields); a field whose role has no label meaning is not judged.
"""
from __future__ import annotations

import re

from verifiers.checks.fields import roles_of
from verifiers.checks.page import place
from verifiers.checks.signal import Signal
from verifiers.checks.vocabulary import RIVALS, ROLE_MEANING, VETO, is_label_text, meanings_in, tax_inclusion
from verifiers.context import VerifyContext
from verifiers.evidence import FieldEvidence

__all__ = ["label_meaning", "value_not_label", "nearest_meanings", "CHECKS"]

_ANCHOR_NOISE = re.compile(r"^[=<>^v]+|#-?\d+$")


def nearest_meanings(text: str) -> tuple[set[str], str] | None:
    """The meanings of the last cue phrase in `text` (labels sit right before their values); a
    total said to include or exclude tax means the gross or the net total whatever its words."""
    incl = tax_inclusion(text)
    if incl is not None:
        return {incl}, text.strip()[-40:]
    found = meanings_in(text)
    if not found:
        return None
    last_end = max(e for _, _, _, e in found)
    last = [(m, p) for m, p, _, e in found if e == last_end]
    return {m for m, _ in last}, last[0][1]


def label_meaning(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, role in roles_of(ctx.schema).by_field.items():
        own = ROLE_MEANING.get(role)
        if own is None or ctx.record.get(f) in (None, ""):
            continue
        ev = (ctx.evidence or {}).get(f)
        p = place(ctx, f)
        if p is not None:
            veto = [(m, ph) for m, ph, _, _ in meanings_in(p.text) if m in VETO.get(role, ())]
            if veto:
                out.append(Signal(f, "label_meaning", "fail",
                                  f"its line {p.text[:80]!r} prints {veto[0][1]!r} ({veto[0][0]})"))
                continue
        near = nearest_meanings(p.left) if p is not None and p.left else None
        if near is None and isinstance(ev, FieldEvidence) and ev.label:
            near = nearest_meanings(_ANCHOR_NOISE.sub("", ev.label))
        if near is None:
            continue
        meanings, phrase = near
        if own in meanings:
            out.append(Signal(f, "label_meaning", "pass", f"labelled {phrase!r} ({own})"))
        elif meanings & set(RIVALS.get(role, ())):
            rival = sorted(meanings & set(RIVALS[role]))[0]
            out.append(Signal(f, "label_meaning", "fail", f"labelled {phrase!r}, which means {rival}, not {own}"))
    return out


def value_not_label(ctx: VerifyContext) -> list[Signal]:
    out = []
    kinds = {n: p.kind for n, p in ctx.cfg.fields.items()}
    for f, v in ctx.record.items():
        if kinds.get(f) not in ("text", "identifier") or not isinstance(v, str) or not v.strip():
            continue
        ev = (ctx.evidence or {}).get(f)
        flagged = isinstance(ev, FieldEvidence) and ev.value_is_label
        if flagged or is_label_text(v):
            out.append(Signal(f, "value_not_label", "fail", f"{v!r} reads as a label or heading, not a value"))
        else:
            out.append(Signal(f, "value_not_label", "pass", "not a label word"))
    return out


CHECKS = (("label_meaning", label_meaning), ("value_not_label", value_not_label))
