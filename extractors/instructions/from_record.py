"""Instructions learned from a record a person corrected: the values are known, where they are
printed is not.

    instructions_from_record(ix, schema, record) -> Learned

Every proposal the generator would consider (`proposals.propose`) is scored by the baseline; the
ones whose locator reads the corrected value on this document rank first, the others are dropped
(a field the person left empty gets no locator). For each array of objects, the table option
whose rows agree best with the corrected items is chosen. What comes back is plain instructions,
replayed like any other; `disagreeing` lists the fields whose corrected value no locator reads
(the value is not printed where a locator can find it).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

from docassay.extractors.instructions import baseline
from docassay.extractors.instructions.executor import Extraction, execute, execute_table, locate
from docassay.extractors.instructions.generator import Scorer, detect_locale, generate, schema_fields
from docassay.extractors.instructions.language import Instructions, Locale, TableRule
from docassay.extractors.instructions.model_data import same_value
from docassay.extractors.instructions.proposals import Proposal
from docassay.extractors.labels import FieldSpec
from docassay.extractors.spans import DocIndex

__all__ = ["Learned", "truth_scorer", "instructions_from_record", "TRUTH_BONUS"]

TRUTH_BONUS = 1.0        # added to a proposal's baseline score when it reads the corrected value


@dataclass
class Learned:
    instructions: Instructions
    extraction: Extraction
    disagreeing: list[str]          # fields of the record the instructions do not read back


def _reads(ix: DocIndex, p: Proposal, spec: FieldSpec, locale: Locale) -> object:
    if spec.multiline:
        fv = locate(ix, p.locator, p.rule(spec), locale)
        return None if fv is None else fv.value
    return p.value


def truth_scorer(record: Mapping[str, object], base: Scorer = baseline.score_proposals) -> Scorer:
    """A scorer that keeps, per field, only the proposals reading `record`'s value, best first by
    `base` (label similarity, so the value is found by its label rather than by chance)."""
    def score(ix: DocIndex, specs: list[FieldSpec], proposals: dict[str, list[Proposal]]) -> dict[str, list[Proposal]]:
        ranked = base(ix, specs, proposals)
        locale = detect_locale(ix)
        out: dict[str, list[Proposal]] = {}
        for spec in specs:
            want = record.get(spec.name)
            keep = [p for p in ranked.get(spec.name) or []
                    if want is not None and same_value(spec.type, _reads(ix, p, spec, locale), want)]
            for p in keep:
                p.score += TRUTH_BONUS
            out[spec.name] = sorted(keep, key=lambda p: -p.score)
        return out
    return score


def _items_agreeing(rows: list[dict], want: list) -> int:
    """Cells of `want` (the corrected items) that `rows` hold, position by position."""
    n = 0
    for got, w in zip(rows, want):
        if not isinstance(w, Mapping):
            continue
        for k, v in w.items():
            g = got.get(k)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                n += isinstance(g, (int, float)) and abs(float(g) - float(v)) <= 0.011
            else:
                n += g is not None and str(g).strip().casefold() == str(v).strip().casefold()
    return n - abs(len(rows) - len(want))


def _best_table(ix: DocIndex, options: list[TableRule], want: list, locale: Locale) -> TableRule | None:
    best, best_n = None, 0
    for opt in options:
        rows, _ = execute_table(ix, opt, locale)
        n = _items_agreeing(rows, want)
        if n > best_n:
            best, best_n = opt, n
    return best


def instructions_from_record(ix: DocIndex, schema: Mapping[str, object], record: Mapping[str, object], *,
                             produced_by: str = "review") -> Learned:
    gen = generate(ix, schema, scorer=truth_scorer(record), produced_by=produced_by)
    ins = gen.instructions
    _, table_specs = schema_fields(schema)
    tables = dict(ins.tables)
    for name in table_specs:
        want = record.get(name)
        if isinstance(want, list) and want:
            best = _best_table(ix, gen.table_options.get(name) or [], want, ins.locale)
            if best is not None:
                tables[name] = best
        else:
            tables.pop(name, None)
    ins = replace(ins, tables=tables)
    ext = execute(ins, ix)
    specs = {s.name: s for s in gen.specs}
    disagreeing = []
    for name, want in record.items():
        got = ext.record.get(name)
        if isinstance(want, list):
            if not isinstance(got, list) or _items_agreeing(got, want) < sum(len(w) for w in want if isinstance(w, Mapping)):
                disagreeing.append(name)
        elif name in specs and not same_value(specs[name].type, got, want):
            disagreeing.append(name)
    return Learned(ins, ext, sorted(disagreeing))
