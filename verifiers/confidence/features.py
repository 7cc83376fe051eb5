"""The basis of each field's confidence: the signals that speak for or against its value, and the
feature vector the calibrator reads.

    field_bases(ctx, gates, signals) -> {field: FieldBasis}

Where the signals come from (each a `verifiers.checks.Signal`, shown in the row's `checks`):

    independent checks    verifiers.checks.run_checks (checksums, arithmetic, label meaning, ...)
    found_by              how the value was found (evidence): pass for a label, table column or
                          document-wide vote; fail when only its position (or nothing) placed it
    <gate>                a hard gate's error naming the field (rules, evidence, stale, format, ...)
    <gate>-warning        a warning naming the field
    rule:<name>           an error rule over the field whose fields are all present and that held

Features (all named; the calibrator's JSON lists the names it was trained on and ignores others):

    bias, how:<how> (one-hot), value_is_label, reads_as, <check>:pass | <check>:fail (0/1),
    checks:pass_n, checks:fail_n (log1p counts of independent checks; fail_n leaves out the
    AMBIGUITY_CHECKS, which say another reading exists, not that this one is wrong: their own
    <check>:fail features weigh them), rules:held (log1p),
    record:errors_elsewhere (log1p of the record's other errors), record:gates_passed,
    alternatives (log1p of the distinct other readings the document offers, at most 5),
    shape:has_digit | shape:words | shape:upper (text values), shape:items (log1p of a list's
    length: every item must be right for the list to be), place:y | place:top |
    place:later_page (where the value was printed)

The generator's own scores are not here: they exist only when the model writes instructions, not
when stored instructions replay; `alternatives` (how many other readings the page offers) is the
generator-side ambiguity measure that both paths have.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from docassay.verifiers.checks import Signal
from docassay.verifiers.confidence.families import family_of
from docassay.verifiers.context import VerifyContext
from docassay.verifiers.evidence import HOWS
from docassay.verifiers.result import GateResult

AMBIGUITY_CHECKS = ("alternative_agrees", "reading_ambiguous")
"""Checks whose fail says the page offers another reading, not that the value is wrong (on
synthetic seeds 0, 4-6, 8-10 an invoice number whose only fail was `alternative_agrees` was right
92 times of 92): they are not counted in `checks:fail_n`."""

__all__ = ["FieldBasis", "field_bases", "STRONG_HOWS", "MAX_ALTERNATIVES", "GATE_CHECKS", "AMBIGUITY_CHECKS"]

STRONG_HOWS = ("label", "table", "detected", "person")
MAX_ALTERNATIVES = 5
# The gates whose per-field violations become signals (their names are the check names).
GATE_CHECKS = ("format", "coverage", "completeness", "evidence", "rules", "stale", "consistency")


@dataclass
class FieldBasis:
    field: str
    family: str
    present: bool
    value: Any = None
    signals: list[Signal] = dataclasses.field(default_factory=list)
    features: dict[str, float] = dataclasses.field(default_factory=dict)


def _present(v: Any) -> bool:
    return v is not None and v != "" and v != []


def field_bases(ctx: VerifyContext, gates: Mapping[str, GateResult], signals: Iterable[Signal]) -> dict[str, FieldBasis]:
    """One FieldBasis per schema field (top level), in schema order."""
    if not ctx.well_formed:
        return {}
    cfg = ctx.cfg
    record: Mapping[str, Any] = ctx.record
    names = list(cfg.fields) or list(record)
    for n in record:
        if n not in names:
            names.append(n)
    by_field: dict[str, list[Signal]] = {}
    for s in signals:
        by_field.setdefault(s.field, []).append(s)
    gate_sig = _gate_signals(gates)
    rule_sig = _rule_signals(ctx, gates)
    errors_total = sum(1 for g in gates.values() if g.hard and not g.passed for v in g.violations if v.severity == "error")
    all_passed = all(g.passed for g in gates.values() if g.hard)
    alts = getattr(ctx.extraction, "alternatives", None) or {}
    out: dict[str, FieldBasis] = {}
    for name in names:
        pol = cfg.fields.get(name)
        kind = pol.kind if pol is not None else ("array" if isinstance(record.get(name), list) else "text")
        value = record.get(name)
        b = FieldBasis(name, family_of(name, kind), _present(value), value)
        if not b.present:
            b.signals = list(by_field.get(name, []))       # e.g. label_printed: the reading missed it
            out[name] = b
            continue
        ev = ctx.evidence.get(name)
        how = ev.how if ev is not None else ("table" if isinstance(value, list) else "unknown")
        found = Signal(name, "found_by", "pass" if how in STRONG_HOWS else "fail",
                       f"{how}" + (f" {ev.label!r}" if ev is not None and ev.label else ""))
        own = by_field.get(name, [])
        b.signals = [found, *own, *gate_sig.get(name, []), *rule_sig.get(name, [])]
        f: dict[str, float] = {"bias": 1.0, f"how:{how if how in HOWS else 'unknown'}": 1.0}
        if ev is not None and ev.value_is_label:
            f["value_is_label"] = 1.0
        if ev is not None and ev.reads_as:
            f["reads_as"] = 1.0
        for s in own:
            f[f"{s.check}:{s.outcome}"] = 1.0
        f["checks:pass_n"] = math.log1p(sum(s.outcome == "pass" for s in own))
        f["checks:fail_n"] = math.log1p(sum(s.outcome == "fail" and s.check not in AMBIGUITY_CHECKS for s in own))
        mine = gate_sig.get(name, [])
        for s in mine:
            f[f"{s.check}:fail"] = 1.0
        f["docassay.rules:held"] = math.log1p(len(rule_sig.get(name, [])))
        own_errors = sum(1 for s in mine if not s.check.endswith("-warning"))
        f["record:errors_elsewhere"] = math.log1p(max(errors_total - own_errors, 0))
        f["record:gates_passed"] = 1.0 if all_passed else 0.0
        distinct = {repr(getattr(a, "value", None)) for a in alts.get(name) or []
                    if getattr(a, "value", None) not in (None, value)}
        f["alternatives"] = math.log1p(min(len(distinct), MAX_ALTERNATIVES))
        f.update(_shape(value))
        f.update(_place(ctx.document, ev))
        b.features = f
        out[name] = b
    return out


def _shape(value: Any) -> dict[str, float]:
    """What a text value looks like: digits in a name, how many words, how much is upper case;
    for a list (line items), how many entries it holds."""
    if isinstance(value, list):
        return {"shape:items": math.log1p(len(value))}
    if not isinstance(value, str):
        return {}
    letters = [ch for ch in value if ch.isalpha()]
    return {"shape:has_digit": 1.0 if any(ch.isdigit() for ch in value) else 0.0,
            "shape:words": math.log1p(len(value.split())),
            "shape:upper": sum(ch.isupper() for ch in letters) / len(letters) if letters else 0.0}


def _place(document: Any, ev: Any) -> dict[str, float]:
    """Where on its page the value was printed: its top edge as a share of the page height, and
    whether it is on the first page."""
    if ev is None or ev.bbox is None or ev.page is None:
        return {}
    pages = getattr(document, "pages", None) or []
    if not 1 <= ev.page <= len(pages):
        return {}
    h = float(getattr(pages[ev.page - 1], "height", 0.0) or 0.0)
    if h <= 0:
        return {}
    y = min(max(ev.bbox[1] / h, 0.0), 1.0)
    return {"place:y": y, "place:top": 1.0 if y < 0.2 else 0.0, "place:later_page": 1.0 if ev.page > 1 else 0.0}


def _gate_signals(gates: Mapping[str, GateResult]) -> dict[str, list[Signal]]:
    out: dict[str, list[Signal]] = {}
    for gname, g in gates.items():
        if gname not in GATE_CHECKS:
            continue
        for v in g.violations:
            if v.severity not in ("error", "warning"):
                continue
            check = gname if v.severity == "error" and g.hard else f"{gname}-warning"
            for top in v.fields:
                sigs = out.setdefault(top, [])
                if all(s.check != check for s in sigs):
                    sigs.append(Signal(top, check, "fail", v.message))
    return out


def _rule_signals(ctx: VerifyContext, gates: Mapping[str, GateResult]) -> dict[str, list[Signal]]:
    """Error rules that ran over a field, with all their fields present, and returned nothing."""
    g = gates.get("rules")
    if g is None or not ctx.rules or (g.details or {}).get("failed_to_run"):
        return {}
    broke = {v.rule for v in g.violations}
    record = ctx.record
    out: dict[str, list[Signal]] = {}
    for r in ctx.rules:
        if getattr(r, "severity", "error") != "error" or r.name in broke or not r.fields:
            continue
        if not all(_present(record.get(f)) for f in r.fields):
            continue
        for f in r.fields:
            out.setdefault(f, []).append(Signal(f, f"rule:{r.name}", "pass", f"rule {r.name} held"))
    return out
