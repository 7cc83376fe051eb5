"""Review decisions, one implementation for `docassay review` (the CLI) and `review serve` (the
review station in the browser).

    accept(session, sha, ...)              the record is right as extracted (a layout never learned
                                           is learned from it: `teach_accepted`)
    correct(session, sha, corrections)     the record with a person's values; the format learns
    reject(session, sha, ...)              the record is not to be used (never golden)
    parse_value(raw, current, prop)        a typed value from what a person typed
    corrections_from(record, sets, unset)  {"field": {"from": old, "to": new}}

A correction teaches (`teach`), when the session has the job's schema and the document's bytes:
the corrected record joins the format's golden set, and instructions that read the corrected
values on this document (extractors.instructions.from_record) are proposed as the format's next
version through the reference gate (flows.lifecycle.propose_version): the current version with
the corrected fields' locators replaced, then merged both ways. A document whose layout was never
learned (no format), or whose corrected values no version of its format can read without
breaking the format's golden documents, is learned as a new format from the corrected record.
What was taught comes back as a `Teaching` in the `Decision`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Mapping

from docassay.extractors.errors import InstructionError, ParseError
from docassay.extractors.fingerprint import fingerprint
from docassay.extractors.instructions.executor import execute
from docassay.extractors.instructions.from_record import instructions_from_record
from docassay.extractors.instructions.language import Instructions, Locale
from docassay.extractors.instructions.model_data import same_value
from docassay.extractors.instructions.values import normalize
from docassay.extractors.parsers import parse
from docassay.extractors.spans import DocIndex
from docassay.flows import lifecycle
from docassay.flows.verification import settings_for, verify_record
from docassay.infra import review_store, store
from docassay.infra.errors import ConfigError, DocassayError
from docassay.verifiers.context import VerifyContext
from docassay.verifiers.gates import format as format_gate
from docassay.verifiers.gates.reference import disagreements

if TYPE_CHECKING:
    from docassay.flows.context import Job, RunContext

__all__ = ["REVIEWABLE", "ReviewError", "Session", "Teaching", "Decision", "accept", "correct", "reject",
           "parse_value", "corrections_from", "teach", "load_document", "locale_of"]

REVIEWABLE = ("needs_review", "failed", "quota_exceeded", "passed", "repaired", "reviewed", "corrected", "rejected")
PRODUCED_BY = "review"


class ReviewError(ConfigError):
    """A review action that cannot be done as asked (unknown document, a value the schema refuses)."""
    kind = "review"


@dataclass
class Session:
    """What review actions run against: the database (through the run context's connection), the
    document bytes and format library, and the job (schema, rules) when one is known."""
    ctx: "RunContext"
    job: "Job | None" = None

    @property
    def conn(self) -> Any:
        return self.ctx.conn


@dataclass
class Teaching:
    taught: bool
    how: str                                   # patched | merged | new_format | not_taught
    format_id: str | None = None
    version: int | None = None
    why: str = ""
    reference: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"taught": self.taught, "how": self.how, "format_id": self.format_id, "version": self.version,
                "why": self.why, "reference": self.reference}


@dataclass
class Decision:
    sha256: str
    status: str
    golden: str | None = None                  # the format it is a golden reference of
    replayable: bool = False                   # its bytes are kept
    teaching: Teaching | None = None
    errors: list[str] = field(default_factory=list)   # schema errors: nothing was stored

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_json(self) -> dict:
        return {"sha256": self.sha256, "status": self.status, "golden": self.golden, "replayable": self.replayable,
                "teaching": self.teaching.to_json() if self.teaching else None, "errors": self.errors}

    def summary(self) -> str:
        if self.errors:
            return f"{self.sha256[:12]}: not stored: " + "; ".join(self.errors)
        s = f"{self.sha256[:12]}: {self.status}"
        if self.golden:
            s += f"; golden reference of {self.golden}" + ("" if self.replayable else " (bytes not kept: not replayable)")
        t = self.teaching
        if t is not None:
            s += (f"; taught {t.format_id} version {t.version} ({t.how})" + (f"; {t.why}" if t.why else "")
                  if t.taught else f"; not taught: {t.why}")
        return s


def load_document(conn: Any, sha: str) -> dict:
    doc = store.get_document(conn, sha)
    if doc is None:
        raise ReviewError(f"no single document matches {sha!r} (see `docassay review list`)")
    return doc


def parse_value(raw: str, current: Any, prop: Any, locale: Locale | None = None) -> Any:
    """A typed value from what a person typed or clicked: a string for a string field (an ISO
    date for a `format: date` field when the text reads as a date under `locale`), a number read
    as printed for a number field ("CHF 15'454.00", "1.234,56" under a comma locale), else JSON
    when it parses as JSON, else the string."""
    t = prop.get("type") if isinstance(prop, Mapping) else None
    text = raw.strip()
    if t == "string" and prop.get("format") == "date" and text:
        for loc in _locales(locale):
            v = normalize(text, "date", loc)
            if v is not None:
                return v
        return raw
    if t == "string" or (t is None and isinstance(current, str)):
        return raw
    try:
        return json.loads(text)
    except ValueError:
        pass
    if t in ("number", "integer"):
        for loc in _locales(locale):
            v = normalize(text, "integer" if t == "integer" else "amount", loc)
            if v is not None:
                return v
    return raw


def _locales(locale: Locale | None) -> list[Locale]:
    """The document's locale first, then the common conventions."""
    guesses = [Locale(".", "DMY"), Locale(",", "DMY"), Locale(".", "MDY"), Locale(".", "YMD")]
    return ([locale] if locale else []) + [g for g in guesses if g != locale]


def corrections_from(record: Mapping[str, Any], sets: Mapping[str, Any], unset: list[str] = (),  # type: ignore[assignment]
                     schema: Mapping[str, Any] | None = None, *, typed: bool = False,
                     locale: Locale | None = None) -> dict[str, dict]:
    """{"field": {"from": old, "to": new}}; `sets` values are parsed (`parse_value`) unless `typed`.
    Values equal to the current ones are not corrections."""
    props = (schema or {}).get("properties") or {}
    out: dict[str, dict] = {}
    for f, raw in sets.items():
        f = str(f).strip()
        if not f:
            raise ReviewError("a correction needs a field name")
        to = raw if typed or not isinstance(raw, str) else parse_value(raw, record.get(f), props.get(f), locale)
        if to != record.get(f):
            out[f] = {"from": record.get(f), "to": to}
    for f in unset:
        if f in record:
            out[f] = {"from": record.get(f), "to": None}
    return out


def locale_of(conn: Any, doc: Mapping[str, Any]) -> Locale | None:
    """The locale of the document's format version (how its numbers and dates are printed)."""
    if not doc.get("format_id") or not doc.get("format_version"):
        return None
    row = store.get_version(conn, doc["format_id"], int(doc["format_version"]))
    if row is None:
        return None
    try:
        return Instructions.from_json(row.instructions).locale
    except InstructionError:
        return None


def _apply(record: Mapping[str, Any], corrections: Mapping[str, dict]) -> dict:
    out = dict(record)
    for f, ch in corrections.items():
        if ch["to"] is None:
            out.pop(f, None)
        else:
            out[f] = ch["to"]
    return out


def _schema_errors(job: "Job | None", record: dict) -> list[str]:
    if job is None:
        return []
    res = format_gate.check(VerifyContext(schema=job.schema, record=record))
    return [] if res.passed else [v.message for v in res.violations]


def accept(session: Session, sha: str, *, by: str = "reviewer", note: str | None = None) -> Decision:
    doc = load_document(session.conn, sha)
    if doc["status"] not in REVIEWABLE:
        raise ReviewError(f"document {doc['sha256'][:12]} is {doc['status']}: nothing to accept")
    return _decide(session, doc, action="accept", corrections=None, by=by, note=note, teach_format=True)


def correct(session: Session, sha: str, corrections: Mapping[str, dict], *, by: str = "reviewer",
            note: str | None = None, teach_format: bool = True) -> Decision:
    if not corrections:
        raise ReviewError("nothing to correct: give at least one field whose value changes")
    doc = load_document(session.conn, sha)
    return _decide(session, doc, action="correct", corrections=dict(corrections), by=by, note=note,
                   teach_format=teach_format)


def reject(session: Session, sha: str, *, by: str = "reviewer", note: str | None = None) -> Decision:
    """The record is not to be used: the document leaves the queue, its values are not accepted
    (stale gate) and it is no golden reference."""
    conn = session.conn
    doc = load_document(conn, sha)
    store.set_document_outcome(conn, doc["sha256"], status="rejected")
    store.forget_values(conn, doc["sha256"])
    if doc["format_id"]:
        store.remove_golden(conn, doc["format_id"], doc["sha256"])
    store.add_review(conn, doc["sha256"], action="reject", reviewer=by, note=note)
    return Decision(doc["sha256"], "rejected")


def _decide(session: Session, doc: dict, *, action: str, corrections: dict | None, by: str, note: str | None,
            teach_format: bool) -> Decision:
    conn, job = session.conn, session.job
    record = _apply(doc.get("record") or {}, corrections or {})
    errors = _schema_errors(job, record)
    if errors:
        return Decision(doc["sha256"], doc["status"], errors=errors)
    status = "corrected" if corrections else "reviewed"
    store.set_document_outcome(conn, doc["sha256"], status=status, record=record)
    store.add_review(conn, doc["sha256"], action=action, reviewer=by, corrections=corrections, note=note)
    if job is not None:
        store.remember_values(conn, schema_key=job.key, sha256=doc["sha256"], format_id=doc["format_id"],
                              entries=lifecycle.unique_entries(job, record))
    decision = Decision(doc["sha256"], status, replayable=bool(doc.get("object_key")))
    if doc["format_id"]:
        lifecycle.add_golden_document(conn, None, doc["format_id"], doc["sha256"], record,
                                      f"{'corrected' if corrections else 'reviewed'} by {by}",
                                      object_key=doc.get("object_key"), added_by=by)
        decision.golden = doc["format_id"]
    if corrections and teach_format:
        decision.teaching = teach(session, {**doc, "record": record}, corrections, by=by)
        if decision.teaching.taught and decision.teaching.how == "new_format":
            decision.golden = decision.teaching.format_id
    elif not corrections and teach_format and not doc["format_id"] and job is not None:
        decision.teaching = teach_accepted(session, {**doc, "record": record}, by=by)
        if decision.teaching.taught:
            decision.golden = decision.teaching.format_id
    return decision


# -- teaching ---------------------------------------------------------------------------------------

def _document_index(session: Session, doc: dict) -> DocIndex | str:
    key = doc.get("object_key")
    if not key:
        return "the document's bytes were not kept"
    if session.ctx.objects is None:
        return "no document store to read the document's bytes from"
    try:
        data = session.ctx.objects.get(key)
    except KeyError:
        return f"the document's bytes are gone ({key})"
    try:
        return DocIndex(parse(key, data, settings=session.job.settings))    # type: ignore[union-attr]
    except (ParseError, DocassayError) as exc:
        return f"the document cannot be read: {exc.message}"


def _reads_back(job: "Job", ins: Instructions, ix: DocIndex, record: dict, fields: list[str],
                exact: list[str]) -> Any:
    """The extraction of `ins` on this document when it reads the record's `fields` (the `exact`
    ones exactly), else None."""
    try:
        ext = execute(ins, ix)
    except InstructionError:
        return None
    want = {f: record[f] for f in fields if f in record}
    if disagreements(settings_for(job), want, ext.record):
        return None
    if any(not _exact(record[f], ext.record.get(f)) for f in exact if f in record):
        return None
    return ext


def _exact(want: Any, got: Any) -> bool:
    """A corrected value is read exactly (numbers to the cent, text after folding), not within
    the score's tolerance."""
    if isinstance(want, list):
        return want == got
    return same_value("text", got, want)


def _without_producer(ins: Instructions) -> dict:
    d = ins.to_json()
    d.pop("produced_by", None)
    return d


def _held(job: "Job", ins: Instructions, ix: DocIndex, record: dict, corrected: list[str]) -> list[str]:
    """The fields a repair must read back: the corrected ones, and those the current version
    already reads as the record holds them (a repair must not change an accepted value)."""
    try:
        ext = execute(ins, ix)
    except InstructionError:
        return list(corrected)
    cfg = settings_for(job)
    return list(corrected) + [f for f in record if f not in corrected and not disagreements(cfg, {f: record[f]}, ext.record)]


def teach(session: Session, doc: dict, corrections: Mapping[str, dict], *, by: str = "reviewer") -> Teaching:
    """Let the document's format learn from its corrected record (see the module docstring)."""
    job = session.job
    if job is None:
        return Teaching(False, "not_taught", doc.get("format_id"), why="no schema given: the format cannot be re-verified")
    ix = _document_index(session, doc)
    if isinstance(ix, str):
        return Teaching(False, "not_taught", doc.get("format_id"), why=ix)
    record = doc["record"]
    learned = instructions_from_record(ix, job.schema, record, produced_by=PRODUCED_BY)
    corrected = [f for f, ch in corrections.items() if ch.get("to") is not None]
    unread = [f for f in learned.disagreeing if f in corrected]
    learnable = [f for f in corrected if f not in unread]
    note = f"no locator reads the corrected value of {', '.join(unread)} on this document" if unread else ""
    if not learnable:
        return Teaching(False, "not_taught", doc.get("format_id"), why=note or "nothing to learn")
    why = ""
    if doc.get("format_id"):
        taught = _new_version(session, doc, ix, learned.instructions, learnable, by)
        if taught.taught:
            taught.why = note
            return taught
        why = taught.why
    verdict = verify_record(job, session.conn, learned.extraction.record, learned.extraction, document=ix.doc)
    if not verdict.passed:
        return Teaching(False, "not_taught", doc.get("format_id"),
                        why="; ".join(x for x in (why, note, "instructions learned from the corrected record do not "
                                                  "verify: failed " + ", ".join(verdict.failed_gates)) if x))
    return _new_format(session, doc, ix, learned.instructions, by, "; ".join(x for x in (why, note) if x))


def teach_accepted(session: Session, doc: dict, *, by: str = "reviewer") -> Teaching:
    """A document whose layout was never learned (no format: it was held, and formats are learned
    only from trusted records), accepted by a person as extracted: its layout is learned from the
    accepted record, so the sender's next document is known and finds this decision in the
    format's history (`missing_printed: confirm`). Not taught when no locator reads back every
    accepted value on this document, or when the learned instructions fail a hard gate."""
    job = session.job
    if job is None:
        return Teaching(False, "not_taught", None, why="no schema given: the layout cannot be learned")
    ix = _document_index(session, doc)
    if isinstance(ix, str):
        return Teaching(False, "not_taught", None, why=ix)
    record = doc["record"]
    learned = instructions_from_record(ix, job.schema, record, produced_by=PRODUCED_BY)
    unread = [f for f in learned.disagreeing if record.get(f) not in (None, "", [])]
    if unread:
        return Teaching(False, "not_taught", None,
                        why=f"no locator reads the accepted value of {', '.join(unread)} on this document")
    verdict = verify_record(job, session.conn, learned.extraction.record, learned.extraction, document=ix.doc)
    if not verdict.passed:
        return Teaching(False, "not_taught", None, why="instructions learned from the accepted record do not verify: "
                                                     "failed " + ", ".join(verdict.failed_gates))
    return _new_format(session, doc, ix, learned.instructions, by, "", learned_from="acceptance")


def _new_version(session: Session, doc: dict, ix: DocIndex, learned: Instructions, corrected: list[str],
                 by: str) -> Teaching:
    """The format's next version reading the `corrected` fields as corrected: the current
    version with those fields' locators replaced (the old ones kept as fallbacks), else the
    learned instructions merged with the current ones; the reference gate decides."""
    job, conn, fid = session.job, session.conn, doc["format_id"]
    assert job is not None
    cur = store.active_version(conn, fid)
    if cur is None:
        return Teaching(False, "not_taught", fid, why=f"format {fid} has no active version")
    current = Instructions.from_json(cur.instructions)
    patched = current
    for f in corrected:
        if f in learned.fields:
            old = current.fields.get(f)
            rule = learned.fields[f]
            if old is not None:
                rule = replace(rule, fallbacks=tuple(x for x in (old.locator, *old.fallbacks) if x != rule.locator))
            patched = patched.with_field(f, rule)
        elif f in learned.tables:
            patched = patched.with_table(f, learned.tables[f])
    candidates = [("patched", patched), ("merged", lifecycle.merge_instructions(learned, current))]
    held = _held(job, current, ix, doc["record"], corrected)
    refused: lifecycle.Proposal | None = None
    same = _without_producer(current)
    objects = session.ctx.objects
    assert objects is not None                    # ix was read from it (_document_index)
    for how, cand in candidates:
        if _without_producer(cand) == same or _reads_back(job, cand, ix, doc["record"], held, corrected) is None:
            continue
        prop = lifecycle.propose_version(job, conn, objects, fid, replace(cand, produced_by=PRODUCED_BY),
                                         produced_by=f"{PRODUCED_BY}:{by}", reason="correction",
                                         source=doc["sha256"], current=current, store_refused=False)
        ref = {k: v for k, v in prop.gate.details.items() if k != "per_case"}
        if prop.accepted:
            review_store.set_document_format(conn, doc["sha256"], fid, prop.version)
            return Teaching(True, how, fid, prop.version, reference=ref)
        refused = refused or prop
    if refused is not None:
        return Teaching(False, "not_taught", fid, why="the reference gate refused the repaired instructions: "
                        + "; ".join(v.message for v in refused.gate.violations[:3]),
                        reference={k: v for k, v in refused.gate.details.items() if k != "per_case"})
    return Teaching(False, "not_taught", fid, why=f"no repair of {fid}'s instructions reads the corrected record")


def _new_format(session: Session, doc: dict, ix: DocIndex, learned: Instructions, by: str, why: str,
                learned_from: str = "correction") -> Teaching:
    job, conn, ctx = session.job, session.conn, session.ctx
    assert job is not None
    done = "corrected" if learned_from == "correction" else "accepted"
    with ctx.library.learn_lock:
        fid, version = ctx.library.learn(conn, fingerprint(ix.doc), job.key, learned, produced_by=f"{PRODUCED_BY}:{by}",
                                         status=job.policy.new_format_status,
                                         meta={"first_document": doc["sha256"], "learned_from": learned_from})
    store.set_version_meta(conn, fid, version, {"reason": f"learned from {'a' if done == 'corrected' else 'an'} {done} record",
                                                "source": doc["sha256"],
                                                "previous_format": doc.get("format_id"), "why_new": why})
    lifecycle.add_golden_document(conn, None, fid, doc["sha256"], doc["record"], f"{done} by {by}",
                                  object_key=doc.get("object_key"), added_by=by)
    if doc.get("format_id"):                       # another layout: no golden reference of the old format
        store.remove_golden(conn, doc["format_id"], doc["sha256"])
    review_store.set_document_format(conn, doc["sha256"], fid, version)
    return Teaching(True, "new_format", fid, version, why=why)
