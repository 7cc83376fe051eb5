"""The pipeline's stages as plain functions: one document in, one results row out.

    read -> parse -> fingerprint -> match ─known─> replay -> verify -> troubleshoot (data only)
                                         │                    └─ failing repeatedly (drift):
                                         │                       propose a new version through
                                         │                       the reference gate
                                         └─new───> generate -> verify -> fix (instructions) -> learn

`process_document` never raises for a bad document: every failure becomes the row's `status` and
`error`. The front (read, parse, index, fingerprint, match) is flows/front.py's plain functions; the
rest is `DocumentRun`, one document's state (its index, extraction, history, format status, the
instructions generated for it) with a method per stage. The `Job` and `RunContext` every stage
takes live in flows/context.py (re-exported here). Prefect tasks (flows/extract_flow.py) only wrap it with concurrency and retries; tests call
it directly. Verification (flows/verification.py) judges each record with the gates in
verifiers/, the evidence behind each value, the stale-value history and the format's lifecycle;
after the row is final, flows/lifecycle.py remembers accepted values, grows the golden set and
keeps the bytes a reviewer or a reference replay will need.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import psycopg

from docassay.extractors.document import Document
from docassay.extractors.errors import InstructionError, ParseError
from docassay.extractors.instructions.executor import Extraction, execute
from docassay.extractors.instructions.language import Instructions
from docassay.extractors.instructions.repair import Change, RepairResult, fix, troubleshoot
from docassay.extractors.library import FormatMatch, LearnHold
from docassay.extractors.spans import DocIndex
from docassay.flows import doubt, einvoice, front, lifecycle, trust
from docassay.flows.context import Budget, Job, Reservation, RunContext, open_context
from docassay.flows.front import Indexed, Timer
from docassay.flows.job_options import DEFAULT_GENERATOR
from docassay.flows.metering import metered_generate
from docassay.flows.results import Row, row_format
from docassay.flows.verification import verify_record
from docassay.infra import store
from docassay.infra.errors import DocassayError
from docassay.infra.objects import ObjectStore
from docassay.verifiers.gates import consistency
from docassay.verifiers.history import DbHistory, History
from docassay.verifiers.result import Verification

__all__ = ["DEFAULT_GENERATOR", "Job", "RunContext", "Budget", "Reservation", "process_document", "open_context",
           "DocState", "DocumentRun", "DriftQueue", "DriftOutcome", "propose_queued_drift"]

# DEFAULT_GENERATOR (flows/job_options.py): the generator of new formats' instructions unless told
# otherwise (the CLI's `--generator`, `Job`, `JobOptions`, `docassay.extract`): the shipped MoE model
# (`infra/model/MODEL_CARD.md` has its figures). `baseline` is label similarity, no model.


@dataclass
class DocState:
    """One document on its way through the stages, and what its verification looks at. Kept with a
    queued drift proposal (DriftQueue), so that the proposal after the batch sees what the
    document's own path saw."""
    doc: Document
    ix: DocIndex
    vec: np.ndarray
    extraction: Extraction | None = None
    history: History | None = None
    format_status: str | None = None
    generated: RepairResult | None = None          # instructions generated (and fixed) for this document, once
    other_layout: bool = False                     # another layout: drift proposal refused, or another sender

    @classmethod
    def of(cls, indexed: Indexed) -> "DocState":
        return cls(indexed.doc, indexed.ix, indexed.vec)


def _objects(ctx: RunContext, job: Job) -> ObjectStore:
    """Where document bytes are kept: the context's store, else the job's default (home/objects)."""
    if ctx.objects is None:
        ctx.objects = lifecycle.objects_for(job.settings)
    return ctx.objects


def process_document(source: str, job: Job, ctx: RunContext, *, data: bytes | None = None,
                     document: Document | None = None) -> Row:
    """Read, match or learn, extract, verify and repair one document. Never raises for bad input."""
    row = Row(source=source)
    hold = LearnHold(ctx.library.learn_lock)      # a document that learns a format holds it until stored
    try:
        _process(source, job, ctx, row, hold, data, document)
    finally:
        hold.release()
    return row


def _process(source: str, job: Job, ctx: RunContext, row: Row, hold: LearnHold, data: bytes | None,
             document: Document | None) -> None:
    found: einvoice.Found | None = None
    timer = Timer()
    t0 = time.perf_counter()
    try:
        if document is None:
            with timer.stage("read"):
                if data is None:
                    data = front.read(source, job)
            row.sha256 = Document.hash_bytes(data)
            with timer.stage("einvoice"):
                found = einvoice.detect(source, data, job)     # None: no e-invoice, or --einvoice ignore
            if found is not None and found.standalone:
                einvoice.finish_standalone(found, job, ctx, row)
            else:
                with timer.stage("parse"):
                    document = front.parse_document(source, data, job)
        else:
            row.sha256 = document.sha256
        if document is not None:
            row.pages = len(document.pages)
            if found is not None and job.einvoice == "use":
                einvoice.use_hybrid(found, document, job, ctx, row, timer, data=data, hold=hold)
            else:
                DocumentRun(job, ctx, row, timer, DocState.of(front.index(document, timer)), hold=hold).extract()
                if found is not None:
                    einvoice.check_row(found, job, row)
    except ParseError as exc:
        row.fail("error", exc.kind, exc.message)
    except InstructionError as exc:
        row.fail("error", exc.kind, f"stored instructions could not run: {exc.message}")
    except DocassayError as exc:
        row.fail("error", exc.kind, exc.message)
    except (MemoryError, RecursionError) as exc:
        row.fail("error", "too_large", f"document too complex to process ({type(exc).__name__})")
    timer.ms["total"] = (time.perf_counter() - t0) * 1000
    row.timings_ms = {k: round(v, 2) for k, v in timer.ms.items()}
    if row.sha256 and row.status != "error":
        _persist(row, row.sha256, job, ctx, timer, source, data)


def _persist(row: Row, sha256: str, job: Job, ctx: RunContext, timer: Timer, source: str, data: bytes | None) -> None:
    """The final row into the database: prior trust, the format's lifecycle, the document."""
    try:
        with timer.stage("persist"):
            trust.apply_prior(ctx.conn, row)
            key = lifecycle.after_outcome(job, ctx.conn, _objects(ctx, job), sha256=sha256, source=source,
                                          status=row.status, format_id=row.format.get("id"),
                                          match=row.format.get("match"), record=row.record, data=data,
                                          golden=trust.golden_worthy(row))
            store.save_document(ctx.conn, sha256=sha256, source=source, status=row.status,
                                format_id=row.format.get("id"), format_version=row.format.get("version"),
                                record=row.record, verification=trust.stored_verification(row),
                                provenance=row.provenance,
                                attempts=row.attempts, repairs=row.repairs, object_key=key, schema_key=job.key)
    except (psycopg.Error, DocassayError) as exc:
        row.fail("error", "database", f"could not store the result: {exc}")


def _sender_changed(v: Verification) -> bool:
    g = v.gates.get(consistency.NAME)
    return g is not None and not g.passed


def _score(r: RepairResult) -> tuple:
    return (r.verdict.passed, -r.verdict.n_errors, r.verdict.score)


class DocumentRun:
    """One document through the stages after the front: match, then the known path (replay,
    troubleshoot, drift) or the new path (generate, fix, learn); each stage a method that reads
    and sets the document's state `d` and finishes the `row`. `check` verifies a record as this
    document's stages see it at that moment (its history and format status)."""

    def __init__(self, job: Job, ctx: RunContext, row: Row, timer: Timer, d: DocState,
                 hold: LearnHold | None = None) -> None:
        self.job, self.ctx, self.row, self.timer, self.d = job, ctx, row, timer, d
        self.hold = hold if hold is not None else LearnHold(ctx.library.learn_lock)

    # -- verification and the end of a row ----------------------------------------------------

    def check(self, record: dict, extraction: Extraction | None = None) -> Verification:
        d = self.d
        return verify_record(self.job, self.ctx.conn, record, extraction if extraction is not None else d.extraction,
                             document=d.doc, history=d.history, format_status=d.format_status)

    def history(self, format_id: str | None) -> History | None:
        if not self.job.policy.history:
            return None
        return DbHistory(self.ctx.conn, schema_key=self.job.key, format_id=format_id, sha256=self.d.doc.sha256)

    def finish(self, result: RepairResult, *, repaired: bool) -> None:
        if self.job.doubt_repair:
            n = len(result.changes)
            result = doubt.resolve(result, self.check)
            repaired = repaired or len(result.changes) > n
        self.row.finish(result, repaired=repaired)
        self.row.repairs = result.log_json() if result.log else self.row.repairs

    # -- the stages ------------------------------------------------------------------------------

    def extract(self) -> None:
        """Match the document; replay a known format, or learn a new one under the learn lock
        (held until the row is stored: `LearnHold`)."""
        job, ctx = self.job, self.ctx
        known, best_sim = front.match(job, ctx, self.d.vec, self.timer)
        if known is not None:
            self.known_path(known, best_sim)
            return
        self.hold.acquire()
        # Another worker may have learned this format while we waited for the lock.
        known, best_sim = front.match(job, ctx, self.d.vec, self.timer)
        if known is None:
            self.learn(best_sim, None)
            return
        self.hold.release()
        self.known_path(known, best_sim)

    def known_path(self, known: FormatMatch, best_sim: float) -> None:
        """Replay a known format and finish the row, unless the document turned out to be another
        layout: the drift proposal's instructions verify here but break the format's golden
        documents, or the consistency gate says another sender's document matched this format.
        Then it is learned as a new format. Otherwise a failed replay is not learned as a new
        format before the format has failed `drift_threshold` times in a row: the document goes to
        review with the known format's attempt."""
        result = self.replay(known)
        if result is None:
            return
        if self.d.other_layout:
            self.hold.acquire()
            self.learn(best_sim, result)
            return
        self.finish(result, repaired=False)

    def replay(self, known: FormatMatch) -> RepairResult | None:
        """Known format: replay its instructions; troubleshoot the data. None when the row is
        finished; otherwise the failed attempt.

        A replay that fails its first verification counts against the format's health; after
        `policy.drift_threshold` such failures in a row, a new version is proposed from this
        document (drift: after the batch when the batch queues it, else here) before the
        troubleshooter is asked again; when the reference gate refuses it, `d.other_layout` is
        set. A failure that is not the instructions' doing (a duplicate invoice, the format's
        lifecycle) finishes the row for review."""
        job, ctx, row, timer, d = self.job, self.ctx, self.row, self.timer, self.d
        row.format = row_format(known.format_id, known.version, "known", known.similarity)
        d.format_status = known.status
        d.history = self.history(known.format_id)
        with timer.stage("extract"):
            ext = execute(known.instructions, d.ix)
        d.extraction = ext
        with timer.stage("verify"):
            verdict = self.check(ext.record, ext)
        result = RepairResult(ext, verdict)
        if verdict.passed:
            store.record_health(ctx.conn, known.format_id, ok=True)
            self.finish(result, repaired=False)
            ctx.library.add_exemplar(known.format_id, d.vec, job.key)
            return None
        if not verdict.repairable:
            self.finish(result, repaired=False)
            return None
        other_sender = _sender_changed(verdict)
        failures = 0 if other_sender else store.record_health(ctx.conn, known.format_id, ok=False)
        drifting = job.repair and not other_sender and failures >= job.policy.drift_threshold
        if drifting and ctx.drift is not None:
            ctx.drift.put(known, d, row.source, failures)   # proposed after the batch (propose_queued_drift)
        elif drifting:
            with timer.stage("drift"):
                if self.propose_from_drift(known, failures):
                    return None
                d.other_layout = d.generated is not None and d.generated.verdict.passed
            d.extraction = ext
        if job.repair and job.troubleshooter:
            with timer.stage("repair"):
                result = troubleshoot(ext, verdict, self.check, max_attempts=job.settings.max_attempts,
                                      required=set(job.schema.get("required", [])))
        if result.verdict.passed:
            self.finish(result, repaired=bool(result.changes))
            ctx.library.add_exemplar(known.format_id, d.vec, job.key)
            return None
        if not result.verdict.repairable:
            self.finish(result, repaired=False)
            return None
        if _sender_changed(result.verdict):
            d.other_layout = True                  # another sender's look-alike layout: a format of its own
        return result

    def generate_fixed(self) -> tuple[RepairResult | None, str | None]:
        """Generate instructions for this document and let the fixer repair them: (result, None),
        or (None, reason) when the token budget refuses the model call. Done once per document: a
        second call (drift, then learning as a new format) re-verifies the first result in the
        current state."""
        job, timer, d = self.job, self.timer, self.d
        if d.generated is not None:
            d.extraction = d.generated.extraction
            with timer.stage("verify"):
                d.generated.verdict = self.check(d.generated.extraction.record, d.generated.extraction)
            return d.generated, None
        gen, refused = metered_generate(d.ix, job, self.row, timer)
        if gen is None:
            return None, refused
        d.extraction = gen.extraction
        with timer.stage("verify"):
            verdict = self.check(gen.extraction.record, gen.extraction)
        result = RepairResult(gen.extraction, verdict, gen.instructions)
        if not verdict.passed and job.repair and job.fixer and verdict.repairable:
            with timer.stage("repair"):
                result = fix(d.ix, gen, gen.extraction, verdict, self.check, max_attempts=job.settings.max_attempts)
        d.generated = result
        return result, None

    def propose_from_drift(self, known: FormatMatch, failures: int) -> bool:
        """Drift: learn instructions from this document and propose them as the format's next version,
        merged with the current one so that both layouts read; the reference gate decides. True when a
        new version was stored and this row finished with it."""
        job, ctx, row, d = self.job, self.ctx, self.row, self.d
        with ctx.library.learn_lock:
            gen, _quota = self.generate_fixed()
            if gen is None or gen.instructions is None or not gen.verdict.accepted:
                return False
            current = known.instructions
            candidates: list[tuple[str, Instructions]] = [
                ("merged: current locators first, the new ones as fallbacks",
                 lifecycle.merge_instructions(current, gen.instructions)),
                ("merged: new locators first, the current ones as fallbacks",
                 lifecycle.merge_instructions(gen.instructions, current)),
                ("learned from this document", gen.instructions)]
            refused: lifecycle.Proposal | None = None
            refused_ins: Instructions | None = None
            produced_by = f"{job.generator}+drift" + ("+fixer" if gen.changes else "")
            for how, cand in candidates:
                ext = execute(cand, d.ix)
                v = self.check(ext.record, ext)
                if not v.accepted:                 # a version only from a record verified at the target
                    continue
                prop = lifecycle.propose_version(job, ctx.conn, _objects(ctx, job), known.format_id, cand,
                                                 produced_by=produced_by, reason="drift", source=d.doc.sha256,
                                                 current=current, store_refused=False)
                if not prop.accepted:
                    refused, refused_ins = refused or prop, refused_ins or cand
                    continue
                row.format = row_format(known.format_id, prop.version, "known", known.similarity)
                ref = {k: prop.gate.details.get(k) for k in ("cases", "kept", "improved", "unavailable")}
                result = RepairResult(ext, v, cand, attempts=gen.attempts + 1, changes=list(gen.changes), log=list(gen.log))
                result.changes.append(Change(result.attempts, "<instructions>", known.version, prop.version,
                                             f"drift after {failures} failed replays: new version {prop.version} "
                                             f"({how}); reference gate {ref}"))
                self.finish(result, repaired=True)
                row.repairs = [c.to_json() for c in result.changes[-1:]] + row.repairs
                ctx.library.add_exemplar(known.format_id, d.vec, job.key)
                return True
            if refused is not None and refused_ins is not None:
                lifecycle.propose_version(job, ctx.conn, _objects(ctx, job), known.format_id, refused_ins,
                                          produced_by=produced_by, reason="drift", source=d.doc.sha256, current=current)
            return False

    def learn(self, best_sim: float, known_result: RepairResult | None) -> None:
        """New format: generate (and fix) instructions; learn them when the record is accepted
        (learn only from trust), else finish for review with the better of this attempt and the
        known format's (`known_result`, when a known format's replay led here)."""
        job, ctx, row, timer, d = self.job, self.ctx, self.row, self.timer, self.d
        known_format = row.format.copy()
        known_status = d.format_status
        d.format_status = None                            # a new format: no lifecycle yet
        d.history = self.history(None)
        result, quota_reason = self.generate_fixed()
        if result is None:
            if known_result is not None:
                self.finish(known_result, repaired=False)
            row.fail("quota_exceeded", "quota_exceeded", quota_reason or "token quota exhausted")
            return
        if known_result is not None:
            result.attempts += known_result.attempts
        if job.doubt_repair:
            result = doubt.resolve(result, self.check)
        if result.verdict.accepted and result.instructions is not None:      # learn only from trust
            status = job.policy.new_format_status
            with timer.stage("learn"):
                produced_by = job.generator + ("+fixer" if result.changes else "")
                fid, version = ctx.library.learn(ctx.conn, d.vec, job.key, result.instructions, produced_by=produced_by,
                                                 status=status, hold=self.hold,
                                                 meta={"first_document": d.doc.sha256, "source": Path(row.source).name})
                store.set_version_meta(ctx.conn, fid, version, {"reason": "first document", "source": d.doc.sha256,
                                                                "source_name": Path(row.source).name})
            row.format = row_format(fid, version, "new", best_sim)
            if status != "active" and not job.policy.pending_may_pass:
                d.format_status = status
                result.verdict = self.check(result.extraction.record, result.extraction)
            self.finish(result, repaired=bool(result.changes) or known_result is not None)
            return
        if known_result is not None and _score(known_result) >= _score(result):
            result = known_result                    # keep the known format's attempt for the reviewer
            row.format = known_format
            d.format_status = known_status
        else:
            row.format = row_format(match="new", similarity=best_sim)
        self.finish(result, repaired=False)


class DriftQueue:
    """Drift seen during a batch, proposed after it (`propose_queued_drift`) instead of on the
    failing document's own path: generating, fixing and replaying the golden set of a new version
    takes seconds, and every later failure of the same format would pay it again. One entry per
    format: its latest failing document (the document, its index and how many failures in a row)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[str, tuple[FormatMatch, DocState, str, int]] = {}

    def put(self, known: FormatMatch, d: DocState, source: str, failures: int) -> None:
        with self._lock:
            self._items[known.format_id] = (known, d, source, failures)

    def take(self) -> list[tuple[FormatMatch, DocState, str, int]]:
        with self._lock:
            items = list(self._items.values())
            self._items.clear()
        return items

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


@dataclass
class DriftOutcome:
    """What became of one queued drift: `new_version` (the reference gate accepted it), `new_format`
    (the document's own instructions verify but would break the format's golden documents: another
    layout, learned as a format of its own), `refused`, or `quota_exceeded`."""
    format_id: str
    source: str
    outcome: str
    version: int | None = None
    new_format_id: str | None = None
    ms: float = 0.0

    def to_json(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


def propose_queued_drift(job: Job, ctx: RunContext) -> list[DriftOutcome]:
    """Propose a new version for every format in `ctx.drift` from its latest failing document, as
    the inline path does (merged candidates first, the reference gate decides). The documents'
    rows are final already (they read as the version they were matched with); what is proposed
    serves the next documents. Never raises for one format: a failure is that format's outcome."""
    if ctx.drift is None:
        return []
    out: list[DriftOutcome] = []
    for known, d, source, failures in ctx.drift.take():
        t0 = time.perf_counter()
        scratch = Row(source=source)
        run = DocumentRun(job, ctx, scratch, Timer(), d)
        d.history = run.history(known.format_id)
        d.format_status = known.status
        try:
            if run.propose_from_drift(known, failures):
                o = DriftOutcome(known.format_id, source, "new_version", version=scratch.format.get("version"))
            elif d.generated is None:
                o = DriftOutcome(known.format_id, source, "quota_exceeded")
            elif d.generated.verdict.passed and d.generated.instructions is not None:
                with ctx.library.learn_lock:
                    run.learn(known.similarity, None)
                o = DriftOutcome(known.format_id, source, "new_format", new_format_id=scratch.format.get("id"))
            else:
                o = DriftOutcome(known.format_id, source, "refused")
        except (DocassayError, psycopg.Error) as exc:
            o = DriftOutcome(known.format_id, source, f"error: {exc}")
        o.ms = round((time.perf_counter() - t0) * 1000, 1)
        out.append(o)
    return out
