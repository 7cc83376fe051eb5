"""The pipeline's stages as plain functions: one document in, one results row out.

    read -> parse -> fingerprint -> match ─known─> replay -> verify -> troubleshoot (data only)
                                         └─new───> generate -> verify -> fix (instructions) -> learn

`process_document` never raises for a bad document: every failure becomes the row's `status` and
`error`. Prefect tasks (flows/extract_flow.py) only wrap it with concurrency and retries; tests call
it directly.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Protocol

import psycopg

from extractors.document import Document
from extractors.errors import InstructionError, ParseError
from extractors.fingerprint import fingerprint
from extractors.instructions.executor import Extraction, execute
from extractors.instructions.generator import Generation, Scorer, estimate_tokens, generate
from extractors.instructions.repair import RepairResult, fix, troubleshoot
from extractors.library import FormatLibrary, FormatMatch, schema_key
from extractors.parsers import parse, read_source
from extractors.spans import DocIndex
from flows.results import Row
from infra import store
from infra.config import Settings
from infra.db import Database
from infra.errors import DocassayError
from verifiers.context import VerifyContext
from verifiers.result import Verification
from verifiers.verify import verify

__all__ = ["Job", "RunContext", "process_document", "open_context"]


@dataclass
class Job:
    """What a batch extracts, and how."""
    schema: Mapping[str, Any]
    rules: list = field(default_factory=list)
    settings: Settings = field(default_factory=Settings.load)
    generator: str = "baseline"                  # baseline | model
    reuse_formats: bool = True                   # ablation: False treats every document as new
    repair: bool = True                          # ablation: False skips fixer and troubleshooter
    scorer: Scorer | None = None                 # set from `generator` by the caller (model or baseline)
    budget: "Budget | None" = None               # token quotas (infra.quota); None = unmetered

    @property
    def key(self) -> str:
        return schema_key(self.schema)


class Reservation(Protocol):
    def settle(self, input_tokens: int, output_tokens: int) -> None: ...
    def cancel(self) -> None: ...


class Budget(Protocol):
    """Token quotas. `reserve` atomically sets tokens aside before a model call, or returns None
    (with `reason` set) when the quota cannot cover it; the reservation is settled with the true
    count after the call."""
    reason: str

    def reserve(self, input_tokens: int, output_tokens: int) -> Reservation | None: ...


class RunContext:
    """Shared, thread-safe state of a batch: database, format library, one connection per thread."""

    def __init__(self, db: Database, library: FormatLibrary) -> None:
        self.db = db
        self.library = library
        self._local = threading.local()
        self._conns: list[psycopg.Connection] = []
        self._lock = threading.Lock()

    @property
    def conn(self) -> psycopg.Connection:
        c = getattr(self._local, "conn", None)
        if c is None or c.closed:
            c = self.db.connect()
            self._local.conn = c
            with self._lock:
                self._conns.append(c)
        return c

    def close(self) -> None:
        with self._lock:
            for c in self._conns:
                c.close()
            self._conns.clear()


@contextmanager
def open_context(settings: Settings) -> Iterator[RunContext]:
    db = Database.from_settings(settings)
    ctx = RunContext(db, FormatLibrary.from_settings(settings))
    try:
        yield ctx
    finally:
        ctx.close()


class _Timer:
    def __init__(self) -> None:
        self.ms: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        t = time.perf_counter()
        try:
            yield
        finally:
            self.ms[name] = self.ms.get(name, 0.0) + (time.perf_counter() - t) * 1000


def _verifier(job: Job, ctx: RunContext, extraction_holder: list) -> Callable[[dict], Verification]:
    s = job.settings

    def run(record: dict) -> Verification:
        vc = VerifyContext(schema=job.schema, record=record, extraction=extraction_holder[0] if extraction_holder else None,
                           rules=job.rules, conn=ctx.conn, rule_timeout_ms=s.rule_timeout_ms)
        return verify(vc)
    return run


def process_document(source: str, job: Job, ctx: RunContext, *, data: bytes | None = None,
                     document: Document | None = None) -> Row:
    """Read, match or learn, extract, verify and repair one document. Never raises for bad input."""
    row = Row(source=source)
    timer = _Timer()
    t0 = time.perf_counter()
    try:
        if document is None:
            with timer.stage("read"):
                if data is None:
                    data = read_source(source, job.settings.limits.max_bytes)
            row.sha256 = Document.hash_bytes(data)
            with timer.stage("parse"):
                document = parse(source, data, settings=job.settings)
        else:
            row.sha256 = document.sha256
        row.pages = len(document.pages)
        _extract(document, job, ctx, row, timer)
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
        try:
            with timer.stage("persist"):
                store.save_document(ctx.conn, sha256=row.sha256, source=source, status=row.status,
                                    format_id=row.format.get("id"), format_version=row.format.get("version"),
                                    record=row.record, verification=row.verification, provenance=row.provenance)
        except (psycopg.Error, DocassayError) as exc:
            row.fail("error", "database", f"could not store the result: {exc}")
    return row


def _extract(doc: Document, job: Job, ctx: RunContext, row: Row, timer: _Timer) -> None:
    s = job.settings
    with timer.stage("index"):
        ix = DocIndex(doc)
    with timer.stage("fingerprint"):
        vec = fingerprint(doc)
    holder: list[Extraction] = []
    check = _verifier(job, ctx, holder)
    known: FormatMatch | None = None
    best_sim = 0.0
    if job.reuse_formats:
        with timer.stage("match"):
            known, best_sim = ctx.library.match(ctx.conn, vec, job.key, s.match_threshold)
    known_result: RepairResult | None = None
    if known is not None:
        known_result = _replay(known, ix, vec, job, ctx, row, timer, check, holder)
        if known_result is None:
            return
    with ctx.library.learn_lock:
        if known is None and job.reuse_formats:
            # Another worker may have learned this format while we waited for the lock.
            with timer.stage("match"):
                known, best_sim = ctx.library.match(ctx.conn, vec, job.key, s.match_threshold)
        if known is None or known_result is not None:
            _learn(doc, ix, vec, job, ctx, row, timer, check, holder, best_sim, known_result)
            return
    known_result = _replay(known, ix, vec, job, ctx, row, timer, check, holder)
    if known_result is not None:
        with ctx.library.learn_lock:
            _learn(doc, ix, vec, job, ctx, row, timer, check, holder, best_sim, known_result)


def _replay(known: FormatMatch, ix: DocIndex, vec, job: Job, ctx: RunContext, row: Row, timer: _Timer,
            check: Callable[[dict], Verification], holder: list) -> RepairResult | None:
    """Known format: replay its instructions; troubleshoot the data. None when the row is finished;
    otherwise the failed attempt (verification, not the threshold, decides whether the stored
    instructions fit: the document is then tried as a new format before it goes to review)."""
    s = job.settings
    row.format = {"id": known.format_id, "version": known.version, "match": "known",
                  "similarity": round(known.similarity, 4)}
    with timer.stage("extract"):
        ext = execute(known.instructions, ix)
    holder[:] = [ext]
    with timer.stage("verify"):
        verdict = check(ext.record)
    result = RepairResult(ext, verdict)
    if not verdict.passed and job.repair:
        with timer.stage("repair"):
            result = troubleshoot(ext, verdict, check, max_attempts=s.max_attempts,
                                  required=set(job.schema.get("required", [])))
    if result.verdict.passed:
        row.finish(result, repaired=bool(result.changes))
        ctx.library.add_exemplar(known.format_id, vec, job.key)
        return None
    return result


def _learn(doc: Document, ix: DocIndex, vec, job: Job, ctx: RunContext, row: Row, timer: _Timer,
           check: Callable[[dict], Verification], holder: list, best_sim: float,
           known_result: RepairResult | None) -> None:
    s = job.settings
    reservation = None
    if job.budget is not None:
        est_in, est_out = estimate_tokens(ix, job.schema, job.scorer)
        if est_in or est_out:
            reservation = job.budget.reserve(est_in, est_out)
            if reservation is None:
                if known_result is not None:
                    row.finish(known_result, repaired=False)
                row.fail("quota_exceeded", "quota_exceeded", job.budget.reason)
                return
    try:
        with timer.stage("generate"):
            gen: Generation = generate(ix, job.schema, scorer=job.scorer, produced_by=job.generator)
    except BaseException:
        if reservation is not None:
            reservation.cancel()
        raise
    if reservation is not None:
        reservation.settle(gen.tokens.input, gen.tokens.output)
    row.model_tokens = {"input": row.model_tokens["input"] + gen.tokens.input,
                        "output": row.model_tokens["output"] + gen.tokens.output}
    holder[:] = [gen.extraction]
    with timer.stage("verify"):
        verdict = check(gen.extraction.record)
    result = RepairResult(gen.extraction, verdict, gen.instructions)
    if not verdict.passed and job.repair:
        with timer.stage("repair"):
            result = fix(ix, gen, gen.extraction, verdict, check, max_attempts=s.max_attempts)
    if known_result is not None:
        result.attempts += known_result.attempts
    if result.verdict.passed and result.instructions is not None:
        with timer.stage("learn"):
            fid, version = ctx.library.learn(ctx.conn, vec, job.key, result.instructions,
                                             produced_by=job.generator + ("+fixer" if result.changes else ""),
                                             meta={"first_document": doc.sha256, "source": Path(row.source).name})
            store.add_golden(ctx.conn, fid, doc.sha256, result.extraction.record, "first document of the format")
        row.format = {"id": fid, "version": version, "match": "new", "similarity": round(best_sim, 4)}
        row.finish(result, repaired=bool(result.changes) or known_result is not None)
        return
    if known_result is not None and _score(known_result) >= _score(result):
        result = known_result                    # keep the known format's attempt for the reviewer
    else:
        row.format = {"id": None, "version": None, "match": "new", "similarity": round(best_sim, 4)}
    row.finish(result, repaired=False)


def _score(r: RepairResult) -> tuple:
    return (r.verdict.passed, -r.verdict.n_errors, r.verdict.score)
