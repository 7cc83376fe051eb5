"""Repair driven by diagnostics: the fixer (new formats) and the troubleshooter (known formats).

Both take the verdict of the gates, look only at the fields named by error-severity violations,
try the alternatives the document offers for those fields, and keep a change only when the verdict
improves (fewer errors, then a higher score). A *round* is one re-ask: it tries a bounded batch of
changes (each re-verified) and adopts the best; rounds are bounded by the attempt budget, after
which the document goes to `needs_review`.

* The **fixer** changes the INSTRUCTIONS: another proposal (span and locator) for a failing field,
  another table option, another date order or decimal convention for the format. What it keeps is
  stored with the format, so the next document of the format benefits.
* The **troubleshooter** changes THIS DOCUMENT'S DATA only: another reading of a failing field's
  printed text, or another span near its anchor. The stored instructions stay as they are.

Neither ever removes a value to make a check pass: a rule over a missing value holds vacuously,
so "leave it out" would only hide the problem. A change that loses a value is not tried.

Every candidate verified is recorded (`RepairResult.log`, one `Attempt` each: the round, the
fields it changed, from and to, how, and the verdict it got), adopted or not, so the results row
shows what repair tried. The verify function receives the candidate record and the extraction it
came from (`verify(record, extraction)`), so the gates can judge each value's evidence.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import product
from typing import AbstractSet, Callable, Generic, Protocol, TypeVar

from docassay.extractors.instructions.executor import Extraction, FieldValue, execute
from docassay.extractors.instructions.generator import Generation
from docassay.extractors.instructions.language import Instructions
from docassay.extractors.spans import DocIndex

__all__ = ["Verdict", "Change", "Attempt", "RepairResult", "fix", "troubleshoot", "MAX_TRIES_PER_ROUND"]

MAX_TRIES_PER_ROUND = 16


class Verdict(Protocol):
    @property
    def passed(self) -> bool: ...
    @property
    def n_errors(self) -> int: ...
    @property
    def failing_fields(self) -> list[str]: ...
    score: float


V = TypeVar("V", bound=Verdict)
"""The caller's verdict type (verifiers' Verification): repair returns the verdicts its verify gave."""
VerifyFn = Callable[[dict, Extraction], V]


@dataclass
class Change:
    attempt: int
    field: str
    before: object
    after: object
    how: str

    def to_json(self) -> dict:
        return {"attempt": self.attempt, "field": self.field, "from": self.before, "to": self.after, "how": self.how}


@dataclass
class Attempt:
    """One candidate change that was verified (adopted or not)."""
    attempt: int
    fields: list[tuple[str, object, object, str]]      # (field, from, to, how)
    errors: int
    score: float
    adopted: bool = False

    def to_json(self) -> list[dict]:
        return [{"attempt": self.attempt, "field": f, "from": a, "to": b, "how": h, "errors": self.errors,
                 "score": round(self.score, 4), "adopted": self.adopted} for f, a, b, h in self.fields]


@dataclass
class RepairResult(Generic[V]):
    extraction: Extraction
    verdict: V
    instructions: Instructions | None = None
    attempts: int = 1                                  # verification rounds, the first included
    changes: list[Change] = field(default_factory=list)
    tried: int = 0                                     # candidate changes verified in all rounds
    log: list[Attempt] = field(default_factory=list)   # every candidate verified, adopted or not

    def log_json(self, limit: int = 60) -> list[dict]:
        """The attempts as rows for results.jsonl (adopted first, then the others, at most `limit`)."""
        rows = [r for a in self.log if a.adopted for r in a.to_json()]
        rows += [r for a in self.log if not a.adopted for r in a.to_json()]
        return rows[:limit]


def _better(a: Verdict, b: Verdict) -> bool:
    """True when verdict a is strictly better than b."""
    return (not a.passed, a.n_errors, -a.score) < (not b.passed, b.n_errors, -b.score)


# -- fixer ------------------------------------------------------------------------------------------

def fix(ix: DocIndex, gen: Generation, extraction: Extraction, verdict: V, verify: VerifyFn[V],
        *, max_attempts: int) -> RepairResult[V]:
    """Change the instructions of a new format until the document verifies, within the budget."""
    ins = gen.instructions
    res = RepairResult(extraction, verdict, ins)
    tried_keys: set[tuple] = set()
    while not res.verdict.passed and res.attempts < max_attempts:
        failing = res.verdict.failing_fields
        options = list(_instruction_options(ix, gen, ins, failing, res.extraction))
        options = [o for o in _with_pairs(options) if o[0] not in tried_keys]
        if not options:
            break
        res.attempts += 1
        best: tuple[V, Instructions, Extraction, list[tuple[str, str]], Attempt] | None = None
        for key, cand, how in options[:MAX_TRIES_PER_ROUND]:
            tried_keys.add(key)
            ext = execute(cand, ix)
            if any(f in res.extraction.record and f not in ext.record for f, _ in how):
                continue                     # a change that loses a value only hides the problem
            v = verify(ext.record, ext)
            res.tried += 1
            att = Attempt(res.attempts, [(f, _short(res.extraction.record.get(f)), _short(ext.record.get(f)), h)
                                         for f, h in how], v.n_errors, v.score)
            res.log.append(att)
            if best is None or _better(v, best[0]):
                best = (v, cand, ext, how, att)
            if v.passed:
                break
        if best is None or not _better(best[0], res.verdict):
            continue
        v, cand, ext, how, att = best
        att.adopted = True
        for fname, h in how:
            res.changes.append(Change(res.attempts, fname, res.extraction.record.get(fname), ext.record.get(fname), h))
        res.verdict, res.instructions, res.extraction = v, cand, ext
        ins = cand
    return res


def _instruction_options(ix: DocIndex, gen: Generation, ins: Instructions, failing: list[str],
                         current: Extraction):
    """(key, instructions, [(field, how)]) single changes for the failing fields, best first."""
    specs = {s.name: s for s in gen.specs}
    for name in failing:
        if name in gen.table_options:
            cur = ins.tables.get(name)
            for i, opt in enumerate(gen.table_options[name]):
                if opt != cur:
                    yield (("table", name, i), replace(ins, tables={**ins.tables, name: opt}), [(name, f"table option {i}")])
            continue
        spec = specs.get(name)
        if spec is None:
            continue
        cur_value = current.record.get(name)
        cur_rule = ins.fields.get(name)
        n = 0
        for i, p in enumerate(gen.ranked.get(name, [])):
            if p.value == cur_value or (cur_rule is not None and p.locator == cur_rule.locator):
                continue
            yield (("field", name, i), ins.with_field(name, p.rule(spec)), [(name, f"proposal {i}: {p.locator.describe()}")])
            n += 1
            if n >= 4:
                break
        if cur_rule is not None and spec.type in ("date", "amount", "number"):
            for key, norm in _normalize_flips(spec.type, ins):
                rule = replace(cur_rule, normalize={**dict(cur_rule.normalize), **norm})
                yield (("norm", name, key), ins.with_field(name, rule), [(name, f"read as {key}")])


def _normalize_flips(vtype: str, ins: Instructions) -> list[tuple[str, dict]]:
    if vtype == "date":
        return [(o, {"date_order": o}) for o in ("DMY", "MDY", "YMD") if o != ins.locale.date_order]
    other = "," if ins.locale.decimal == "." else "."
    return [(f"decimal {other!r}", {"decimal": other}), ("negated", {"negate": True})]


def _with_pairs(options: list) -> list:
    """Single changes first, then pairs of changes to two different fields (rules tie fields together)."""
    singles = list(options)
    pairs = []
    firsts: dict[str, list] = {}
    for o in singles:
        fname = o[2][0][0]
        firsts.setdefault(fname, [])
        if len(firsts[fname]) < 2:
            firsts[fname].append(o)
    names = list(firsts)
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            for a, b in product(firsts[names[i]], firsts[names[j]]):
                merged = _merge(a[1], b[1], names[i], names[j])
                pairs.append(((a[0], b[0]), merged, a[2] + b[2]))
    return singles + pairs


def _merge(a: Instructions, b: Instructions, fa: str, fb: str) -> Instructions:
    fields = dict(a.fields)
    if fb in b.fields:
        fields[fb] = b.fields[fb]
    else:
        fields.pop(fb, None)
    tables = dict(a.tables)
    if fb in b.tables:
        tables[fb] = b.tables[fb]
    return replace(a, fields=fields, tables=tables)


# -- troubleshooter ---------------------------------------------------------------------------------

def troubleshoot(extraction: Extraction, verdict: V, verify: VerifyFn[V], *, max_attempts: int,
                 required: AbstractSet[str] = frozenset()) -> RepairResult[V]:
    """Change this document's values (never the instructions) until it verifies, within the budget."""
    res = RepairResult(extraction, verdict)
    tried: set[tuple] = set()
    while not res.verdict.passed and res.attempts < max_attempts:
        failing = res.verdict.failing_fields
        options: list[tuple[tuple, dict, list[tuple[str, FieldValue | None]]]] = []
        for name in failing:
            for i, alt in enumerate(res.extraction.alternatives.get(name, [])):
                if alt.value == res.extraction.record.get(name):
                    continue
                options.append(((name, i), {**res.extraction.record, name: alt.value}, [(name, alt)]))
        options = [o for o in options if o[0] not in tried]
        if not options:
            break
        res.attempts += 1
        best = None
        for key, rec, how in options[:MAX_TRIES_PER_ROUND]:
            tried.add(key)
            cand_ext = _with_values(res.extraction, rec, how)
            v = verify(rec, cand_ext)
            res.tried += 1
            att = Attempt(res.attempts, [(n, _short(res.extraction.record.get(n)), _short(a.value if a else None),
                                          a.how if a else "left out") for n, a in how], v.n_errors, v.score)
            res.log.append(att)
            if best is None or _better(v, best[0]):
                best = (v, rec, how, cand_ext, att)
            if v.passed:
                break
        if best is None or not _better(best[0], res.verdict):
            continue
        v, rec, how, ext, att = best
        att.adopted = True
        for name, chosen in how:
            res.changes.append(Change(res.attempts, name, res.extraction.record.get(name),
                                      chosen.value if chosen else None, chosen.how if chosen else "left out"))
        res.verdict, res.extraction = v, ext
    return res


def _with_values(ext: Extraction, record: dict, how: list[tuple[str, FieldValue | None]]) -> Extraction:
    """The extraction with some values replaced by the alternatives chosen (provenance follows)."""
    out = Extraction(record=dict(record), provenance=dict(ext.provenance), alternatives=ext.alternatives,
                     missing=list(ext.missing))
    for name, alt in how:
        if alt is not None:
            out.provenance[name] = alt.provenance
        else:
            out.provenance.pop(name, None)
            out.missing.append(name)
    return out


def _short(v: object) -> object:
    """A value as an attempt row shows it (a table by its size)."""
    if isinstance(v, list):
        return f"<{len(v)} rows>"
    if isinstance(v, str) and len(v) > 80:
        return v[:80] + "…"
    return v
