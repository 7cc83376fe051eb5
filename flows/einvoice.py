"""The e-invoice step of the pipeline: read the XML, check the print against it, learn from it.

    --einvoice use      (default) a hybrid PDF's record is its XML, mapped to the schema
                        (extractors/einvoice/mapping.py); every value printed on the page gets
                        its provenance there; the print is checked against the XML; and the
                        document's layout learns from it: the format's instructions are generated,
                        repaired by the fixer with the XML record as the target, and stored (or
                        proposed as a new version of a known format through the reference gate),
                        so later print-only invoices of that sender replay instructions proven on
                        real data. A standalone .xml invoice is read as its record.
    --einvoice check    the print is read by the layout path as without an XML, then compared with
                        the XML; every disagreement is a violation.
    --einvoice ignore   the layout path alone (attachments are not opened; a bare XML is unsupported).

Print vs XML. In `use` mode a field agrees when its XML value is printed on the page (searched
with the normalisers). When it is not, the layout reading of the page (the known format's
instructions, else instructions generated for it) is asked: if it reads a value for the field and
that value differs, the print says something else than the XML: `print_differs_from_einvoice`
(severity `error` by default; schema root `x-docassay: {"einvoice": {"print_differs": "warning"}}`).
In `check` mode every field both readings have is compared. A document whose print differs is
not learned from.

Arithmetic (EN 16931 BR-CO-10/13/15: the lines add up to BT-106; BT-106 - BT-107 + BT-108 = BT-109;
BT-109 + BT-110 = BT-112) is reported as warnings in the `einvoice` gate's details.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping

from docassay.extractors import einvoice as ei
from docassay.extractors.document import Document
from docassay.extractors.einvoice.mapping import FieldMap, Mapped, map_record
from docassay.extractors.einvoice.model import TERM_TYPES
from docassay.extractors.einvoice.printed import AMOUNT_TOLERANCE, Printed, find_printed, in_order, tokens
from docassay.extractors.fingerprint import fingerprint
from docassay.extractors.instructions.executor import Extraction, execute
from docassay.extractors.instructions.generator import Generation
from docassay.extractors.instructions.language import Instructions
from docassay.extractors.instructions.repair import fix
from docassay.extractors.library import LearnHold
from docassay.extractors.spans import DocIndex
from docassay.flows import front, lifecycle
from docassay.flows.metering import metered_generate
from docassay.flows.results import Row, RowFormat, row_format
from docassay.flows.verification import settings_for, verify_record
from docassay.infra import store
from docassay.infra.errors import ConfigError
from docassay.verifiers.gates import consistency
from docassay.verifiers.history import DbHistory
from docassay.verifiers.result import GateResult, Violation
from docassay.verifiers.settings import VerifySettings
from docassay.verifiers.tolerance import matches

if TYPE_CHECKING:
    from docassay.flows.context import Job, RunContext

__all__ = ["MODES", "DEFAULT_MODE", "GATE", "RULE", "Found", "detect", "finish_standalone", "use_hybrid",
           "check_row", "FIX_ATTEMPTS"]

MODES = ("use", "check", "ignore")
DEFAULT_MODE = "use"
GATE = "einvoice"
RULE = "print_differs_from_einvoice"
FIX_ATTEMPTS = 6                 # fixer rounds toward the XML target (a hybrid is worth more than one guess)
ARITHMETIC_TOLERANCE = 0.011     # EN 16931 sums agree to the cent
_NUMERIC_KINDS = {"amount", "quantity", "number", "integer"}


@dataclass
class Found:
    """The e-invoice of one document and its record in the job's schema."""
    inv: ei.EInvoice
    mapped: Mapped
    standalone: bool

    def details(self, mode: str) -> dict[str, Any]:
        return {"mode": mode, "syntax": self.inv.syntax, "version": self.inv.version,
                "profile": self.inv.profile, "attachment": self.inv.attachment,
                "credit_note": self.inv.is_credit_note, "lines": len(self.inv.lines)}


def detect(source: str, data: bytes, job: "Job") -> Found | None:
    """The document's e-invoice (a standalone XML, or a PDF's attachment), None when it has none
    or the job ignores e-invoices. Hostile or broken invoice XML raises ParseError."""
    if job.einvoice == "ignore":
        return None
    limit = job.settings.limits.max_bytes
    if b"%PDF-" in data[:1024]:
        inv = ei.read_pdf(data, source, min(limit, ei.MAX_XML_BYTES))
        standalone = False
    elif ei.looks_like_xml(data):
        inv = ei.read_xml(data, source, min(limit, ei.MAX_XML_BYTES))
        standalone = True
    else:
        return None
    if inv is None:
        return None
    return Found(inv, map_record(inv, job.schema), standalone)


# -- helpers ---------------------------------------------------------------------------------------

def _severity(job: "Job") -> str:
    x = job.schema.get("x-docassay") if isinstance(job.schema, Mapping) else None
    cfg = x.get("einvoice") if isinstance(x, Mapping) else None
    sev = cfg.get("print_differs", "error") if isinstance(cfg, Mapping) else "error"
    if sev not in ("error", "warning"):
        raise ConfigError(f"x-docassay.einvoice.print_differs must be 'error' or 'warning', not {sev!r}",
                          setting="x-docassay.einvoice.print_differs")
    return sev


def _kind(cfg: VerifySettings, name: str, fm: FieldMap) -> str:
    """How a field's value is searched on the page and compared."""
    if fm.term == "BT-5":
        return "currency"
    kind = cfg.policy(name).kind
    if fm.term and TERM_TYPES.get(fm.term) in ("amount", "quantity"):
        return "amount"
    return kind


def _scalar_fields(found: Found) -> list[tuple[str, FieldMap]]:
    return [(f, fm) for f, fm in found.mapped.fields.items() if "/" not in f]


def _prov(p: Printed | None, fm: FieldMap) -> dict[str, Any]:
    base: dict[str, Any] = {"source": "einvoice", "term": fm.label}
    if p is None:
        return base
    return {"page": p.page, "bbox": p.bbox.as_list(), "text": p.text, "anchor": f"{fm.label} (e-invoice)", **base}


def _same(cfg: VerifySettings, name: str, a: object, b: object) -> bool:
    """Equal under the field's tolerance (what learned instructions must reproduce)."""
    pol = cfg.policy(name)
    if pol.kind in _NUMERIC_KINDS and isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return matches(pol.tolerance, a, b) or abs(float(a) - float(b)) < AMOUNT_TOLERANCE
    return matches(pol.tolerance, a, b) or str(a).strip().casefold() == str(b).strip().casefold()


def _compatible(cfg: VerifySettings, name: str, a: object, b: object) -> bool:
    """No disagreement between the XML and a reading of the print: equal, or for names one's words
    are the other's with words between (a layout reading that took in a neighbouring column has
    read the same print badly, not another print)."""
    if _same(cfg, name, a, b):
        return True
    if cfg.policy(name).kind == "text" and isinstance(a, str) and isinstance(b, str):
        ta, tb = tokens(a), tokens(b)
        return in_order(ta, tb) or in_order(tb, ta)
    return False


def _arithmetic(found: Found) -> list[str]:
    """EN 16931 calculation rules the XML breaks (reported, not gating: the XML is what was sent)."""
    t = found.inv.terms
    out = []

    def num(bt: str) -> float:
        v = t.get(bt)
        return float(v) if isinstance(v, (int, float)) else 0.0

    lines = [ln.get("BT-131") for ln in found.inv.lines]
    if lines and all(isinstance(v, (int, float)) for v in lines) and "BT-106" in t:
        if abs(sum(lines) - num("BT-106")) > ARITHMETIC_TOLERANCE:  # type: ignore[arg-type]
            out.append(f"BR-CO-10: the line net amounts add up to {sum(lines):.2f}, BT-106 is {num('BT-106'):.2f}")  # type: ignore[arg-type]
    if "BT-106" in t and "BT-109" in t and abs(num("BT-106") - num("BT-107") + num("BT-108") - num("BT-109")) > ARITHMETIC_TOLERANCE:
        out.append(f"BR-CO-13: BT-106 - BT-107 + BT-108 = {num('BT-106') - num('BT-107') + num('BT-108'):.2f}, "
                   f"BT-109 is {num('BT-109'):.2f}")
    if "BT-109" in t and "BT-112" in t and abs(num("BT-109") + num("BT-110") - num("BT-112")) > ARITHMETIC_TOLERANCE:
        out.append(f"BR-CO-15: BT-109 + BT-110 = {num('BT-109') + num('BT-110'):.2f}, BT-112 is {num('BT-112'):.2f}")
    return out


def _gate(found: Found, mode: str, violations: list[Violation], extra: Mapping[str, Any]) -> GateResult:
    details = {**found.details(mode), **extra}
    broken = _arithmetic(found)
    if broken:
        details["arithmetic"] = broken
    return GateResult(GATE, not any(v.severity == "error" for v in violations), details, violations)


def _history(job: "Job", ctx: "RunContext", sha256: str, format_id: str | None):
    if not job.policy.history:
        return None
    return DbHistory(ctx.conn, schema_key=job.key, format_id=format_id, sha256=sha256)


def _verify_xml_record(job: "Job", ctx: "RunContext", record: dict, document: Document | None, sha256: str,
                       format_id: str | None, format_status: str | None):
    """The XML record through the gates: schema, coverage, rules, stale values, lifecycle. It has no
    layout extraction (evidence is the XML's), so the evidence gate has nothing to judge."""
    return verify_record(job, ctx.conn, record, None, document=document,
                         history=_history(job, ctx, sha256, format_id), format_status=format_status)


def _differ(name: str, fm: FieldMap, xml: object, printed: object, sev: str, how: str) -> Violation:
    return Violation(GATE, RULE, name, f"{name} ({fm.label}): the print says {printed!r}, the e-invoice {xml!r} ({how})",
                     severity=sev, expected=xml, actual=printed, repairable=False)


def _set_row(row: Row, *, record: dict, provenance: dict, verdict, gate: GateResult, fmt: RowFormat, attempts: int) -> None:
    verdict.gates[GATE] = gate
    row.record = record
    row.provenance = provenance
    row.verification = verdict.to_json()
    row.attempts = attempts
    row.format = fmt
    row.status = "passed" if verdict.passed else "needs_review"
    row.fields = _xml_fields(record, gate)
    row.doubtful = [] if verdict.passed else [f for f, v in row.fields.items() if v["status"] == "doubtful"]


def _xml_fields(record: dict, gate: GateResult) -> dict:
    """Per-field confidence of a record read from the XML (the row's `fields`, as the calibrator
    writes them for the layout path): the XML states the value exactly, so confidence 1 and
    `verified`; a field whose print differs from the XML is `doubtful`, naming the difference."""
    differs = {v.fields[0]: v for v in gate.violations if v.fields and v.severity == "error"}
    out: dict = {}
    for name, value in record.items():
        v = differs.get(name)
        if v is not None:
            out[name] = {"value": value, "confidence": None, "status": "doubtful", "family": None,
                         "checks": [{"check": RULE, "outcome": "fail", "detail": v.message[:160]}]}
        else:
            out[name] = {"value": value, "confidence": 1.0, "status": "verified", "family": None,
                         "checks": [{"check": "einvoice", "outcome": "pass", "detail": "stated by the e-invoice XML"}]}
    return out


# -- standalone XML --------------------------------------------------------------------------------

def finish_standalone(found: Found, job: "Job", ctx: "RunContext", row: Row) -> None:
    """A bare XML invoice: its record is the XML's; there is no print to check or layout to learn."""
    job = _job_for(found, job)
    record = found.mapped.record
    prov = {f: {"source": "einvoice", "term": fm.label,
                "xpath": found.inv.paths.get(fm.term or "") if fm.term else fm.xpath}
            for f, fm in _scalar_fields(found) if f in record}
    lines = found.mapped.lines_field
    for i, item in enumerate(record.get(lines, []) if lines else []):
        for col in item:
            fm = found.mapped.fields.get(f"{lines}/*/{col}")
            if fm is not None:
                prov[f"{lines}/{i}/{col}"] = {"source": "einvoice", "term": fm.label}
    verdict = _verify_xml_record(job, ctx, record, None, row.sha256 or "", None, None)
    _set_row(row, record=record, provenance=prov, verdict=verdict, gate=_gate(found, job.einvoice, [], {}),
             fmt=row_format(match="einvoice"), attempts=1)


# -- check mode ------------------------------------------------------------------------------------

def check_row(found: Found, job: "Job", row: Row) -> None:
    """`--einvoice check`: the row the layout path finished, compared field by field with the XML."""
    cfg = settings_for(job)
    sev = _severity(job)
    xml = found.mapped.record
    out: list[Violation] = []
    for name, fm in _scalar_fields(found):
        if name in xml and name in row.record and not _compatible(cfg, name, xml[name], row.record[name]):
            out.append(_differ(name, fm, xml[name], row.record[name], sev, "layout reading"))
    gate = _gate(found, "check", out, {"compared": sum(1 for n, _ in _scalar_fields(found)
                                                        if n in xml and n in row.record)})
    if row.status == "error":
        return
    ver = row.verification or {}
    ver.setdefault("gates", {})[GATE] = gate.to_json()
    ver.setdefault("violations", []).extend(v.to_json() for v in out)
    if not gate.passed:
        ver["passed"] = False
        row.status = "needs_review"
    row.verification = ver


# -- use mode: hybrid PDF --------------------------------------------------------------------------

@dataclass
class TargetVerdict:
    """How a layout reading compares with the XML record: the repair `Verdict` the fixer drives
    toward zero (fields whose reading differs from the XML, where the XML value is printed)."""
    wrong: list[str]
    right: float                 # fields right (items count by the share of items right)
    total: int
    details: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not self.wrong

    @property
    def n_errors(self) -> int:
        return len(self.wrong)

    @property
    def failing_fields(self) -> list[str]:
        return list(self.wrong)

    @property
    def repairable(self) -> bool:
        return True

    @property
    def score(self) -> float:
        return self.right / self.total if self.total else 1.0


ITEM_SIMILARITY = 0.6             # an item's printed description matches the XML name from this similarity


def _items_score(got: object, want: list[dict]) -> float:
    """Share of items the reading gets right (matched one to one: every number it read equal to the
    XML's, its description similar), over the larger of the two counts: 1.0 is complete agreement."""
    from docassay.extractors.normalize import similarity
    if not isinstance(got, list) or not got:
        return 0.0
    used: set[int] = set()
    matched = 0
    for w in want:
        for i, g in enumerate(got):
            if i in used or not isinstance(g, Mapping):
                continue
            ok = True
            for col, wv in w.items():
                gv = g.get(col)
                if gv is None:
                    continue
                if isinstance(wv, (int, float)):
                    ok = isinstance(gv, (int, float)) and abs(float(gv) - float(wv)) <= AMOUNT_TOLERANCE
                else:
                    ok = similarity(str(wv), str(gv)) >= ITEM_SIMILARITY or in_order(tokens(str(gv)), tokens(str(wv)))
                if not ok:
                    break
            if ok:
                used.add(i)
                matched += 1
                break
    return matched / max(len(want), len(got))


def _target_verify(target: dict, printed: set[str], lines_field: str | None, cfg: VerifySettings):
    def verify(record: dict, extraction: Extraction | None = None) -> TargetVerdict:
        wrong: list[str] = []
        right = 0.0
        for name in printed:
            if name in record and _same(cfg, name, target[name], record[name]):
                right += 1
            else:
                wrong.append(name)
        total = len(printed)
        if lines_field and target.get(lines_field):
            total += 1
            share = _items_score(record.get(lines_field), target[lines_field])
            right += share
            if share < 1.0:
                wrong.append(lines_field)
        return TargetVerdict(sorted(wrong, key=lambda n: (n == lines_field, n)), right, total)
    return verify


def _proven(ins: Instructions, ix: DocIndex, target: dict, printed: set[str], verify,
            cfg: VerifySettings) -> tuple[Instructions, TargetVerdict]:
    """The instructions without the field locators that do not reproduce the XML (a value the XML
    does not print, or that the fixer could not find): a layout reading proven on this document.
    Tables are kept (the XML may carry no lines, as in MINIMUM and BASIC-WL, while the page prints them)."""
    ext = execute(ins, ix, with_alternatives=False)
    keep = {n: r for n, r in ins.fields.items()
            if n in printed and n in ext.record and _same(cfg, n, target[n], ext.record[n])}
    proven = replace(ins, fields=keep)
    return proven, verify(execute(proven, ix, with_alternatives=False).record)


def _aim(gen: Generation, ix: DocIndex, target: dict, printed: set[str], cfg: VerifySettings) -> Generation:
    """The generation with each printed field's locator set to the best-ranked proposal that reads
    the XML's value (the target says which of the page's candidates is right); the fixer then
    works on what is left (tables, fields no proposal reads)."""
    ins = gen.instructions
    specs = {sp.name: sp for sp in gen.specs}
    for name in sorted(printed):
        if name not in specs or _same(cfg, name, target[name], gen.extraction.record.get(name)):
            continue
        for p in gen.ranked.get(name, []):
            if p.value is not None and _same(cfg, name, target[name], p.value):
                ins = ins.with_field(name, p.rule(specs[name]))
                break
    if ins is gen.instructions:
        return gen
    return replace(gen, instructions=ins, extraction=execute(ins, ix))


def _generate(ix: DocIndex, job: "Job", row: Row) -> Generation | None:
    """Instructions generated for this page (the job's generator; its tokens reserved on the budget).
    None when the budget refuses the model call."""
    return metered_generate(ix, job, row)[0]


def _xml_values(found: Found) -> list[object]:
    """Every value the XML states (header and line terms)."""
    vals = list(found.inv.terms.values())
    for line in found.inv.lines:
        vals.extend(line.values())
    return vals


def _stated_elsewhere(value: object, stated: list[object]) -> bool:
    """True when a reading equals some value the XML states (for another term): the layout took
    the print of another XML value, which is a misreading, not a print that differs."""
    for v in stated:
        if isinstance(value, (int, float)) and isinstance(v, (int, float)) and not isinstance(value, bool):
            if abs(float(value) - float(v)) < AMOUNT_TOLERANCE:
                return True
        elif isinstance(value, str) and isinstance(v, str) and tokens(value) and tokens(value) == tokens(v):
            return True
    return False


def _job_for(found: Found, job: "Job") -> "Job":
    """The job verifying an XML record: a profile without lines (MINIMUM, BASIC-WL) is complete
    without items, so their absence is allowed there."""
    if found.inv.lines or found.mapped.lines_field is None:
        return job
    cfg = settings_for(job)
    return replace(job, verify_settings=replace(cfg, items=tuple(replace(ip, absent="allowed") for ip in cfg.items)))


def _sender_changed(verdict) -> bool:
    g = verdict.gates.get(consistency.NAME)
    return g is not None and not g.passed


@contextmanager
def _kept(hold: LearnHold) -> Iterator[None]:
    """Acquire `hold` for a block, leaving it held after the block (its owner releases it); a
    block that raises releases it at once."""
    hold.acquire()
    try:
        yield
    except BaseException:
        hold.release()
        raise


def use_hybrid(found: Found, doc: Document, job: "Job", ctx: "RunContext", row: Row, timer: Any = None, *,
               data: bytes | None = None, hold: LearnHold | None = None) -> None:
    """`--einvoice use` on a PDF with an invoice attached: the XML's record, checked against the
    print, and the page's layout learned (or its known format's instructions improved) from it.
    A known format whose previous documents came from another seller (a look-alike layout: the
    consistency gate) is not this sender's: the page is learned as a format of its own."""
    job = _job_for(found, job)
    cfg = settings_for(job)
    sev = _severity(job)
    target = found.mapped.record
    lines_field = found.mapped.lines_field
    with front.stage(timer, "index"):
        ix = DocIndex(doc)
    with front.stage(timer, "einvoice_print"):
        where: dict[str, Printed | None] = {}
        for name, fm in _scalar_fields(found):
            if name in target:
                where[name] = find_printed(ix, target[name], _kind(cfg, name, fm))
        printed = {n for n, p in where.items() if p is not None}
        prov: dict[str, Any] = {n: _prov(where.get(n), fm) for n, fm in _scalar_fields(found) if n in target}
        for i, item in enumerate(target.get(lines_field, []) if lines_field else []):
            for col, v in item.items():
                fm = found.mapped.fields[f"{lines_field}/*/{col}"]
                kind = "amount" if isinstance(v, (int, float)) else "text"
                prov[f"{lines_field}/{i}/{col}"] = _prov(find_printed(ix, v, kind), fm)
    with front.stage(timer, "fingerprint"):
        vec = fingerprint(doc)
    # Matching, the layout reading and learning hold the library's learn lock (as the pipeline's
    # new-format path does), so two workers never learn the same layout twice; a hybrid that learns
    # a new format keeps it until its row is stored (`hold`: the caller releases it; LearnHold).
    own = hold is None
    hold = hold if hold is not None else LearnHold(ctx.library.learn_lock)
    with _kept(hold):
        known, best_sim = front.match(job, ctx, vec, timer)
        if known is not None:
            probe = _verify_xml_record(job, ctx, target, doc, row.sha256 or "", known.format_id, known.status)
            if _sender_changed(probe):
                known = None                         # another sender's look-alike layout
        verify = _target_verify(target, printed, lines_field, cfg)
        gen: Generation | None = None
        with front.stage(timer, "extract"):
            if known is not None:
                layout = execute(known.instructions, ix, with_alternatives=False)
            else:
                gen = _generate(ix, job, row)
                layout = gen.extraction if gen is not None else Extraction()
        # Print vs XML: a field whose XML value is not printed, where the layout reads something the
        # XML does not state anywhere.
        stated = _xml_values(found)
        diffs = [_differ(n, fm, target[n], layout.record[n], sev, "the XML value is not printed; the layout reads this")
                 for n, fm in _scalar_fields(found)
                 if n in target and n not in printed and n in layout.record
                 and not _compatible(cfg, n, target[n], layout.record[n])
                 and not _stated_elsewhere(layout.record[n], stated)]
        learned: dict[str, Any] = {"printed": f"{len(printed)}/{len(where)}"}
        fmt = row_format(match="new", similarity=best_sim)
        format_status = None
        attempts = 1
        if known is not None:
            fmt = row_format(known.format_id, known.version, "known", known.similarity)
            format_status = known.status
        if not any(v.severity == "error" for v in diffs):
            with front.stage(timer, "learn"):
                attempts, learned_more = _learn(found, ix, vec, job, ctx, row, known, gen, layout, verify, printed, fmt,
                                                data, hold)
            learned.update(learned_more)
        else:
            learned["learned"] = "no: the print differs from the XML"
    if own or fmt.get("match") != "new" or not fmt.get("id"):
        hold.release()                               # no new format: nothing for another worker to wait for
    if fmt.get("match") == "new":
        format_status = None
    verdict = _verify_xml_record(job, ctx, target, doc, row.sha256 or "", fmt.get("id"), format_status)
    gate = _gate(found, "use", diffs, learned)
    _set_row(row, record=target, provenance=prov, verdict=verdict, gate=gate, fmt=fmt, attempts=attempts)


def _golden(job: "Job", ctx: "RunContext", row: Row, data: bytes | None, format_id: str, record: dict) -> None:
    """The hybrid becomes a golden case of its format: the XML's values its instructions reproduce
    (what a later version must keep reading), with the bytes kept for replays."""
    objects = ctx.objects if ctx.objects is not None else lifecycle.objects_for(job.settings)
    lifecycle.add_golden_document(ctx.conn, objects, format_id, row.sha256 or "", record,
                                  "e-invoice hybrid: the XML's values the instructions reproduce",
                                  data=data, source=row.source, added_by="einvoice")


def _reproduced(target: dict, ext: Extraction, cfg: VerifySettings, lines_field: str | None) -> dict:
    out = {k: target[k] for k in ext.record if k in target and k != lines_field and _same(cfg, k, target[k], ext.record[k])}
    if lines_field and target.get(lines_field) and _items_score(ext.record.get(lines_field), target[lines_field]) >= 1.0:
        out[lines_field] = target[lines_field]
    return out


FRESH_LAYOUT_TRIED = "einvoice_fresh_layout_tried"
"""A format version's meta key: the hybrid on which a freshly generated layout read no more of the
XML than the version's replay (how much the replay read there, and the fresh layout)."""


def fresh_layout_tried(version) -> dict[str, Any] | None:
    """What a format version (`store.VersionRow` or None) records of a fresh layout tried against it."""
    tried = (version.meta or {}).get(FRESH_LAYOUT_TRIED) if version is not None else None
    return tried if isinstance(tried, dict) else None


def covers(tried: Mapping[str, Any] | None, right: float, total: int) -> bool:
    """Whether a fresh layout tried on an earlier hybrid settles this one: its replay reads at least
    the share of its XML that the replay read there (a document it reads less of is tried again)."""
    if not tried or not total:
        return False
    try:
        was = float(tried["replay_right"]) / float(tried["replay_total"])
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return False
    return right / total >= was - 1e-9


def _learn(found: Found, ix: DocIndex, vec, job: "Job", ctx: "RunContext", row: Row, known, gen: Generation | None,
           layout: Extraction, verify, printed: set[str], fmt: RowFormat, data: bytes | None,
           hold: LearnHold | None = None) -> tuple[int, dict[str, Any]]:
    """Instructions proven on this hybrid. A known format whose replay reproduces the XML gets the
    page as an exemplar and a golden case; otherwise the page is a layout of its own (the XML says
    the known instructions misread it) and is learned as a new format. Updates `fmt`; returns
    (fixer rounds, details)."""
    cfg = settings_for(job)
    target = found.mapped.record
    lines_field = found.mapped.lines_field
    first = verify(layout.record, layout)
    if known is not None and first.passed:
        store.record_health(ctx.conn, known.format_id, ok=True)
        ctx.library.add_exemplar(known.format_id, vec, job.key)
        _golden(job, ctx, row, data, known.format_id, _reproduced(target, layout, cfg, lines_field))
        return 1, {"learned": "known format reproduces the XML", "reproduced": f"{first.right:g}/{first.total}"}
    info: dict[str, Any] = {}
    if known is not None:
        info["known_format"] = f"{known.format_id} v{known.version} reproduces {first.right:g}/{first.total}"
        tried = fresh_layout_tried(store.get_version(ctx.conn, known.format_id, known.version))
        if gen is None and tried is not None and covers(tried, first.right, first.total):
            # A fresh layout of this format version was generated on an earlier hybrid whose replay read
            # as much of its XML as this one's does, and read no more: generating again on every
            # document of the format would cost a model call each and keep the format all the same.
            store.record_health(ctx.conn, known.format_id, ok=True)
            ctx.library.add_exemplar(known.format_id, vec, job.key)
            _golden(job, ctx, row, data, known.format_id, _reproduced(target, layout, cfg, lines_field))
            info["learned"] = (f"known format kept: a new layout read no more of the XML on "
                               f"{tried.get('source_name') or tried.get('source')} ({tried.get('reproduced')})")
            return 1, info
    if gen is None:
        gen = _generate(ix, job, row)
        if gen is None:
            return 1, {**info, "learned": f"no: {getattr(job.budget, 'reason', 'token quota exhausted')}"}
    gen = _aim(gen, ix, target, printed, cfg)
    v0 = verify(gen.extraction.record, gen.extraction)
    res = fix(ix, gen, gen.extraction, v0, verify, max_attempts=FIX_ATTEMPTS) if not v0.passed else None
    ins = res.instructions if res is not None and res.instructions is not None else gen.instructions
    proven, v = _proven(ins, ix, target, printed, verify, cfg)
    rounds = res.attempts if res is not None else 1
    info.update({"reproduced": f"{v.right:g}/{v.total}", "fixer_rounds": rounds})
    if not proven.fields:
        info["learned"] = "no: no field of the XML could be read from the print"
        return rounds, info
    if known is not None and v.right <= first.right:
        # Instructions learned afresh read no more of the XML than the known format's replay: the page
        # is that format's (its unread fields are the ones no locator reproduces), not a layout of its
        # own. Learning it again would add a format per run of the same documents.
        store.record_health(ctx.conn, known.format_id, ok=True)
        ctx.library.add_exemplar(known.format_id, vec, job.key)
        _golden(job, ctx, row, data, known.format_id, _reproduced(target, layout, cfg, lines_field))
        store.set_version_meta(ctx.conn, known.format_id, known.version, {FRESH_LAYOUT_TRIED: {
            "replay_right": first.right, "replay_total": first.total, "reproduced": f"{first.right:g}/{first.total}",
            "fresh": f"{v.right:g}/{v.total}", "source": row.sha256, "source_name": Path(row.source).name}})
        info["learned"] = "known format kept: a new layout reads no more of the XML"
        return rounds, info
    produced_by = f"{job.generator}+einvoice" + ("+fixer" if res is not None and res.changes else "")
    src = Path(row.source).name
    fid, version = ctx.library.learn(ctx.conn, vec, job.key, proven, produced_by=produced_by,
                                     status=job.policy.new_format_status,
                                     meta={"first_document": row.sha256, "source": src, "einvoice": True}, hold=hold)
    store.set_version_meta(ctx.conn, fid, version, {"reason": "learned from an e-invoice hybrid",
                                                    "source": row.sha256, "source_name": src})
    fmt.update({"id": fid, "version": version, "match": "new"})     # the caller's row gets it (similarity kept)
    _golden(job, ctx, row, data, fid, _reproduced(target, execute(proven, ix, with_alternatives=False), cfg, lines_field))
    info["learned"] = f"new format {fid} v{version}"
    return rounds, info
