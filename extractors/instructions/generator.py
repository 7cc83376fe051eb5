"""Write instructions for a new format from one document and the target JSON Schema.

    document -> DocIndex -> locale -> proposals per field -> scorer ranks them -> best per field
             -> tables (header -> column mapping, row key, stop labels) -> Instructions

The scorer is pluggable: `baseline.score_proposals` (label similarity, the baseline) or the MoE
model's scorer. Whatever scores, the instructions are plain data and are replayed without it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from docassay.extractors import normalize as norm
from docassay.extractors.document import Document
from docassay.extractors.instructions import baseline, invoice_reading
from docassay.extractors.instructions.address_priors import address_priors
from docassay.extractors.instructions.amount_roles import total_priors
from docassay.extractors.instructions.date_priors import date_priors
from docassay.extractors.instructions.delimit import refine_rule
from docassay.extractors.instructions.executor import Extraction, execute, execute_table
from docassay.extractors.instructions.language import Column, Instructions, Locale, TableRule
from docassay.extractors.instructions.name_priors import company_priors
from docassay.extractors.instructions.proposals import Proposal, propose
from docassay.extractors.instructions.reference_priors import reference_priors
from docassay.extractors.labels import LEXICON, FieldSpec, field_specs, fold_label, label_score
from docassay.extractors.spans import DocIndex

__all__ = ["Generation", "Prepared", "Scorer", "TokenCount", "generate", "prepare", "estimate_tokens", "detect_locale", "schema_fields", "propose_tables", "MIN_SCORE"]

Scorer = Callable[[DocIndex, list[FieldSpec], dict[str, list[Proposal]]], dict[str, list[Proposal]]]
"""Ranks proposals. A scorer that calls a model also has `tokens(ix, specs, proposals) -> (input,
output)`: what one call costs, known before the call (budgets reserve it) and reported after."""

MIN_SCORE = 0.3            # below this an optional field is left out rather than guessed
_STOP_CONCEPTS = ("net_total", "gross_total", "tax_total", "total")


@dataclass
class TokenCount:
    input: int = 0
    output: int = 0


@dataclass
class Generation:
    instructions: Instructions
    ranked: dict[str, list[Proposal]]
    table_options: dict[str, list[TableRule]]
    extraction: Extraction
    specs: list[FieldSpec]
    tokens: TokenCount = field(default_factory=TokenCount)


def schema_fields(schema: Mapping[str, object]) -> tuple[list[FieldSpec], dict[str, list[FieldSpec]]]:
    """Scalar field specs and, per array-of-objects property, its column specs."""
    props = schema.get("properties", {})
    req = schema.get("required", ())
    required = tuple(str(r) for r in req) if isinstance(req, (list, tuple)) else ()
    assert isinstance(props, Mapping)
    scalars = field_specs(props, required)
    tables: dict[str, list[FieldSpec]] = {}
    for name, prop in props.items():
        if prop.get("type") == "array" and isinstance(prop.get("items"), Mapping) and \
                prop["items"].get("type") == "object":
            item = prop["items"]
            tables[name] = field_specs(item.get("properties", {}), tuple(item.get("required", ())), columns=True)
    return scalars, tables


def detect_locale(ix: DocIndex) -> Locale:
    amounts = [s.text for s in ix.spans("amount")]
    dates = [s.text for s in ix.spans("date")]
    decimal = norm.detect_number_locale(amounts) or "."
    order = norm.detect_date_order(dates) or "DMY"
    currency = norm.detect_currency(seg.text for pi in ix.pages for seg in pi.segments)
    return Locale(decimal=decimal, date_order=order, currency=currency)


@dataclass
class Prepared:
    """What generation computes from the document before any scorer runs: the schema's field specs,
    the locale and every field's proposals. Computed once per document (`prepare`) and shared by the
    token estimate a budget reserves and the generation that follows it, which would otherwise
    compute the proposals twice (they are most of a generation's time)."""
    ix: DocIndex
    schema: Mapping[str, object]
    specs: list[FieldSpec]
    table_specs: dict[str, list[FieldSpec]]
    locale: Locale
    proposals: dict[str, list[Proposal]]


def prepare(doc: Document | DocIndex, schema: Mapping[str, object]) -> Prepared:
    ix = doc if isinstance(doc, DocIndex) else DocIndex(doc)
    specs, table_specs = schema_fields(schema)
    locale = detect_locale(ix)
    return Prepared(ix, schema, specs, table_specs, locale, {s.name: propose(ix, s, locale) for s in specs})


def _prepared(doc: Document | DocIndex, schema: Mapping[str, object], prepared: Prepared | None) -> Prepared:
    if prepared is None:
        return prepare(doc, schema)
    if prepared.schema is not schema or (prepared.ix is not doc and prepared.ix.doc is not doc):
        raise ValueError("generate: `prepared` was computed for another document or schema")
    return prepared


def generate(doc: Document | DocIndex, schema: Mapping[str, object], *, scorer: Scorer | None = None,
             produced_by: str = "baseline", prepared: Prepared | None = None) -> Generation:
    """Instructions for `doc`. `prepared`: `prepare(doc, schema)` computed already (the budget's
    estimate); its proposals are scored here (the scorer sets their scores), so it serves one call."""
    pre = _prepared(doc, schema, prepared)
    ix, specs, table_specs, locale, proposals = pre.ix, pre.specs, pre.table_specs, pre.locale, pre.proposals
    scorer = scorer or baseline.score_proposals
    tokens = TokenCount(*_cost(scorer, ix, specs, proposals))
    ranked = receipt_priors(ix, specs, reference_priors(ix, specs, invoice_reading.refine(ix, specs, scorer(ix, specs, proposals))))
    by_name = {s.name: s for s in specs}
    fields = {name: refine_rule(ix, by_name[name], p, p.rule(by_name[name]), locale) for name, p in assign(specs, ranked).items()}
    table_options = {name: propose_tables(ix, cols, locale) for name, cols in table_specs.items()}
    tables = {name: opts[0] for name, opts in table_options.items() if opts}
    ins = Instructions(locale=locale, fields=fields, tables=tables, produced_by=produced_by)
    return Generation(ins, ranked, table_options, execute(ins, ix), specs, tokens)


def receipt_priors(ix: DocIndex, specs: list[FieldSpec], ranked: dict[str, list[Proposal]]) -> dict[str, list[Proposal]]:
    """The receipt fields' priors after any scorer: the total by the roles of the amounts, the
    company and the address by what and where their lines are, the date by its label (no expiry
    date; each keeps its field's level)."""
    return date_priors(ix, specs, address_priors(ix, specs, company_priors(ix, specs, total_priors(ix, specs, ranked))))


def _cost(scorer: Scorer, ix: DocIndex, specs: list[FieldSpec], proposals: dict[str, list[Proposal]]) -> tuple[int, int]:
    tokens = getattr(scorer, "tokens", None)
    return tokens(ix, specs, proposals) if callable(tokens) else (0, 0)


def estimate_tokens(doc: Document | DocIndex, schema: Mapping[str, object], scorer: Scorer | None, *,
                    prepared: Prepared | None = None) -> tuple[int, int]:
    """What generating instructions for this document would cost in model tokens, without calling
    the model (0, 0 for the baseline, which calls none). `prepared`: as for `generate` (read only here)."""
    if scorer is None or not callable(getattr(scorer, "tokens", None)):
        return 0, 0
    pre = _prepared(doc, schema, prepared)
    return _cost(scorer, pre.ix, pre.specs, pre.proposals)


def assign(specs: list[FieldSpec], ranked: dict[str, list[Proposal]]) -> dict[str, Proposal]:
    """Best proposal per field, each printed span used by one field only.

    Fields whose best proposal scores highest choose first; a field whose best is below
    `MIN_SCORE` is left out unless it is required (a missing optional value beats a wrong one).
    """
    order = sorted(specs, key=lambda s: -(ranked.get(s.name) or [Proposal(s.name, None, None, None, "", "", score=-9)])[0].score)  # type: ignore[arg-type]
    taken: list = []
    out: dict[str, Proposal] = {}
    for spec in order:
        for p in ranked.get(spec.name) or []:
            if p.score < MIN_SCORE and not spec.required:
                break
            if p.relation != "detect" and any(_overlap(p.span, t) for t in taken):
                continue
            out[spec.name] = p
            if p.relation != "detect":
                taken.append(p.span)
            break
    return {s.name: out[s.name] for s in specs if s.name in out}


def _overlap(a, b) -> bool:
    return (a.page, a.line, a.segment) == (b.page, b.line, b.segment) and a.seg_start < b.seg_end and b.seg_start < a.seg_end


def propose_tables(ix: DocIndex, columns: list[FieldSpec], locale: Locale) -> list[TableRule]:
    """Table rules for one array field, best first: header line, column labels, row key, stops."""
    if not columns:
        return []
    hits: dict[tuple[int, int], dict[str, tuple[float, str]]] = {}

    def hit(page: int, line: int, name: str, score: float, printed: str) -> None:
        cur = hits.setdefault((page, line), {})
        if name not in cur or cur[name][0] < score:
            cur[name] = (score, printed)

    for spec in columns:
        for phrase in spec.labels:
            for m in ix.find_label(phrase):
                seg = ix.segment(m.page, m.line, m.segment)
                printed = seg.text[m.seg_start:m.seg_end].rstrip(":. ")
                hit(m.page, m.line, spec.name, label_score(printed, spec.labels)[0] * (1.0 + 0.02 * len(phrase)), printed)
    # Compound headers ("Artikelbeschreibung", "Gesamtnettobetrag"): a long column word ending a token.
    suffixes = [(spec, ph) for spec in columns for ph in spec.labels if " " not in ph and len(ph) >= 6]
    # Abbreviated headers ("Einzelpr.", "Anz."): a token of 3+ letters that begins a column word.
    words = [(spec, ph) for spec in columns for ph in spec.labels if " " not in ph and len(ph) >= 5]
    for (page, line, segi), toks in ix.token_table().items():
        seg = ix.segment(page, line, segi)
        for tok, a, b in toks:
            for spec, ph in suffixes:
                if len(tok) > len(ph) and tok.endswith(ph):
                    hit(page, line, spec.name, 0.8, seg.text[a:b])
            if len(tok) >= 3 and tok.isalpha():
                for spec, ph in words:
                    if len(tok) < len(ph) and ph.startswith(tok) and seg.text[b:b + 1] == ".":
                        hit(page, line, spec.name, 0.7, seg.text[a:b + 1])
    # Headers printed on two lines: fold the next line's matches into this one.
    lines = sorted(hits)
    for (p, li) in lines:
        nxt = hits.get((p, li + 1), {})
        for c, v in nxt.items():
            hits[(p, li)].setdefault(c, v)
    header_lines = sorted(((p, li), cols) for (p, li), cols in hits.items() if len(cols) >= 2)
    if not header_lines:
        return []
    header_lines.sort(key=lambda kv: (-len(kv[1]), kv[0]))
    options: list[tuple[float, TableRule]] = []
    for (page, line), cols in header_lines[:3]:
        # One printed header per column; a printed phrase claimed by two columns goes to the better.
        by_text: dict[str, str] = {}
        for c, (_score, printed) in sorted(cols.items(), key=lambda kv: -kv[1][0]):
            by_text.setdefault(fold_label(printed), c)
        chosen = {c: cols[c][1] for c in by_text.values()}
        if len(chosen) < 2:
            continue
        types = {s.name: s.type for s in columns}
        col_rules = {c: Column(header=chosen[c], type=types[c]) for c in chosen}
        stops = _stop_labels(ix, page, line)
        multiline = next((c for c in chosen if types[c] == "text"), None)
        keys = [c for c in ("line_total", "quantity", "unit_price") if c in chosen] + \
               [c for c in chosen if types[c] != "text" and c not in ("line_total", "quantity", "unit_price")] + \
               [c for c in chosen if types[c] == "text"]
        for key in keys:
            rule = TableRule(columns=col_rules, row_key=key, multiline=multiline, stop=tuple(stops),
                             min_header_matches=min(len(chosen), 3) if len(chosen) > 2 else 2)
            rows, _ = execute_table(ix, rule, locale)
            options.append((_table_quality(rows, list(chosen)), rule))
    options.sort(key=lambda t: -t[0])
    return [r for q, r in options if q > 0]


def _stop_labels(ix: DocIndex, page: int, line: int) -> list[str]:
    """Total-like labels printed below the header: where the item table ends."""
    found: list[tuple[int, int, str]] = []
    amount_lines = {(s.page, s.line) for s in ix.spans("amount")}
    for concept in _STOP_CONCEPTS:
        for phrase in LEXICON[concept]:
            for m in ix.find_label(phrase):
                # A total line prints an amount; header words such as "USt." under "ohne" do not.
                if (m.page, m.line) > (page, line + 1) and (m.page, m.line) in amount_lines:
                    seg = ix.segment(m.page, m.line, m.segment)
                    if m.segment == 0 and m.seg_start == 0 and len(fold_label(seg.text).split()) <= len(phrase.split()) + 4:
                        found.append((m.page, m.line, phrase))
    found.sort()
    out: list[str] = []
    for _, _, phrase in found:
        if phrase not in out:
            out.append(phrase)
    return out[:6]


def _table_quality(rows: list[dict], columns: list[str]) -> float:
    """Prefer tables whose rows are full and whose numbers agree (quantity x unit price = total)."""
    if not rows:
        return 0.0
    fill = sum(len(r) for r in rows) / (len(rows) * max(len(columns), 1))
    agree = 0
    checked = 0
    for r in rows:
        q, u, t = r.get("quantity"), r.get("unit_price"), r.get("line_total")
        if isinstance(q, float) and isinstance(u, float) and isinstance(t, float):
            checked += 1
            if abs(q * u - t) <= max(0.011, 0.01 * abs(t)):
                agree += 1
    consistency = agree / checked if checked else 0.5
    return fill + consistency + 0.01 * min(len(rows), 20)
