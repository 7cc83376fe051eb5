"""The life of a format: lifecycle policy, versions through the reference gate, drift, golden set.

    LifecyclePolicy.load()                 named policy settings (environment DOCASSAY_<NAME>)
    propose_version(...)                   a new version of a format's instructions, stored `active`
                                           when the reference gate finds no new failure on the
                                           format's golden documents, else stored `rejected` with why
    reference_check(...)                   that gate alone (replays both versions, verifies, compares)
    merge_instructions(primary, secondary) one version reading both layouts (secondary as fallbacks)
    after_outcome(...)                     after a document's row is final: remember unique values
                                           (stale gate), grow the golden set, keep bytes for review,
                                           promote a pending format after enough accepted documents
    add_golden_document(...)               a golden record with its bytes kept in object storage

Lifecycle: a format is `pending_review` -> `active` -> `archived`. New formats start as
`new_format_status`; `pending_may_pass` says whether a pending format's documents may pass (the
`lifecycle` gate); `auto_promote_after` N > 0 promotes a pending format once N of its documents
were accepted. Drift: a known format whose replays fail their first verification
`drift_threshold` times in a row gets a new version proposed from the failing document instead of
being troubleshot again and again.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from docassay.extractors.errors import InstructionError, ParseError
from docassay.extractors.instructions.executor import execute
from docassay.extractors.instructions.language import FieldRule, Instructions
from docassay.extractors.parsers import parse
from docassay.extractors.spans import DocIndex
from docassay.flows.context import Job, LifecyclePolicy, objects_for  # re-exported: the job's policy lives with the job
from docassay.flows.verification import settings_for, verify_record
from docassay.infra import store
from docassay.infra.errors import DocassayError
from docassay.infra.objects import ObjectStore
from docassay.verifiers.gates import reference
from docassay.verifiers.gates.reference import GoldenCase, Replay
from docassay.verifiers.history import NEAR, near_key, scope_key, value_key
from docassay.verifiers.result import GateResult

__all__ = ["LifecyclePolicy", "Proposal", "objects_for", "document_key", "keep_bytes", "merge_instructions",
           "GoldenReplay", "reference_check", "propose_version", "after_outcome", "add_golden_document",
           "unique_entries", "ACCEPTED"]

ACCEPTED = ("passed", "repaired", "reviewed", "corrected")
_SUFFIX = re.compile(r"(\.[A-Za-z0-9]{1,8}){1,2}$")


# -- document bytes ---------------------------------------------------------------------------------

def document_key(sha256: str, source: str) -> str:
    """documents/<sha256><suffix>: the suffix of the source name tells the parser what it reads."""
    m = _SUFFIX.search(Path(str(source)).name)
    return f"documents/{sha256}{m.group(0).lower() if m else ''}"


def keep_bytes(objects: ObjectStore, sha256: str, source: str, data: bytes | None) -> str | None:
    """Store a document's bytes once; the key, or None when there are no bytes to keep."""
    if data is None:
        return None
    key = document_key(sha256, source)
    if not objects.exists(key):
        objects.put(key, data)
    return key


def add_golden_document(conn: Any, objects: ObjectStore | None, format_id: str, sha256: str, record: Any,
                        reason: str, *, data: bytes | None = None, source: str = "", object_key: str | None = None,
                        added_by: str | None = None) -> None:
    key = object_key
    if key is None and objects is not None:
        key = keep_bytes(objects, sha256, source, data)
    store.add_golden(conn, format_id, sha256, record, reason, object_key=key, added_by=added_by)


# -- versions ---------------------------------------------------------------------------------------

def merge_instructions(primary: Instructions, secondary: Instructions) -> Instructions:
    """One version that reads both layouts: each field's locator from `primary`, the `secondary`
    locators appended as fallbacks (tried when the primary finds nothing); tables and locale from
    `primary` where it has them."""
    merged: dict[str, FieldRule] = {}
    for name in list(primary.fields) + [n for n in secondary.fields if n not in primary.fields]:
        a, b = primary.fields.get(name), secondary.fields.get(name)
        if a is None or b is None:
            merged[name] = a or b  # type: ignore[assignment]
            continue
        fallbacks = list(a.fallbacks)
        for loc in (b.locator, *b.fallbacks):
            if loc != a.locator and loc not in fallbacks:
                fallbacks.append(loc)
        merged[name] = replace(a, fallbacks=tuple(fallbacks))
    tables = {**secondary.tables, **primary.tables}
    return replace(primary, fields=merged, tables=tables)


class GoldenReplay:
    """Replays a format's golden documents under given instructions; each document parsed once."""

    def __init__(self, job: "Job", conn: Any, objects: ObjectStore) -> None:
        self.job, self.conn, self.objects = job, conn, objects
        self._ix: dict[str, DocIndex | str] = {}
        self._keys: dict[str, str | None] = {}

    def cases(self, format_id: str) -> list[GoldenCase]:
        out = []
        for g in store.golden_set(self.conn, format_id):
            if isinstance(g["record"], dict):
                self._keys[g["sha256"]] = g.get("object_key")
                out.append(GoldenCase(g["sha256"], g["record"], g.get("reason") or ""))
        return out

    def _index(self, case: GoldenCase) -> DocIndex | str:
        if case.sha256 not in self._ix:
            key = self._keys.get(case.sha256)
            if not key:
                self._ix[case.sha256] = "the golden document's bytes were not kept"
            else:
                try:
                    data = self.objects.get(key)
                    self._ix[case.sha256] = DocIndex(parse(key, data, settings=self.job.settings))
                except KeyError:
                    self._ix[case.sha256] = f"the golden document's bytes are gone ({key})"
                except (ParseError, DocassayError) as exc:
                    self._ix[case.sha256] = f"the golden document cannot be read: {exc.message}"
        return self._ix[case.sha256]

    def replayer(self, instructions: Instructions | None) -> reference.Replayer:
        def run(case: GoldenCase) -> Replay:
            ix = self._index(case)
            if isinstance(ix, str):
                return Replay(None, error=ix)
            if instructions is None:
                return Replay(None, error="no version to replay")
            try:
                ext = execute(instructions, ix)
            except InstructionError as exc:
                return Replay(None, error=f"the instructions cannot run: {exc.message}")
            v = verify_record(self.job, self.conn, ext.record, ext, document=ix.doc)
            return Replay(ext.record, v)
        return run


def reference_check(job: "Job", conn: Any, objects: ObjectStore, format_id: str, current: Instructions | None,
                    proposed: Instructions) -> GateResult:
    """The reference gate for `proposed` against `current` on the format's golden documents."""
    gr = GoldenReplay(job, conn, objects)
    cases = gr.cases(format_id)
    return reference.check(cases, gr.replayer(current), gr.replayer(proposed), settings_for(job))


@dataclass
class Proposal:
    accepted: bool
    version: int
    gate: GateResult


def propose_version(job: "Job", conn: Any, objects: ObjectStore, format_id: str, proposed: Instructions, *,
                    produced_by: str, reason: str, source: str | None = None,
                    current: Instructions | None = None, store_refused: bool = True) -> Proposal:
    """Store `proposed` as the format's next version: `active` when the reference gate passes,
    else `rejected` (kept for a person to read, with the gate's reasons) unless `store_refused` is
    False (then version is 0)."""
    cur_row = store.active_version(conn, format_id)
    if current is None and cur_row is not None:
        current = Instructions.from_json(cur_row.instructions)
    gate = reference_check(job, conn, objects, format_id, current, proposed)
    summary = {k: v for k, v in gate.details.items() if k != "per_case"}
    meta: dict[str, Any] = {"reason": reason, "parent": cur_row.version if cur_row else None,
                            "source": source, "reference": summary}
    if gate.passed:
        version = store.add_version(conn, format_id, proposed.to_json(), produced_by=produced_by, status="active",
                                    meta=meta)
        store.reset_health(conn, format_id)
        return Proposal(True, version, gate)
    meta["refused"] = [v.message for v in gate.violations[:10]]
    version = 0
    if store_refused:
        version = store.add_version(conn, format_id, proposed.to_json(), produced_by=produced_by, status="rejected",
                                    meta=meta)
    return Proposal(False, version, gate)


# -- after a document ------------------------------------------------------------------------------

def unique_entries(job: "Job", record: Any) -> list[tuple[str, str, str]]:
    """(field, value_key, scope_key) of the record's values that must not repeat (x-docassay unique)."""
    if not isinstance(record, dict):
        return []
    out = []
    for name, pol in settings_for(job).fields.items():
        if pol.unique_per is None or record.get(name) in (None, ""):
            continue
        sk = scope_key(record, pol.unique_per)
        if sk is not None:
            out.append((name, value_key(record[name]), sk))
        nk = near_key(record, pol.unique_per, pol.unique_near)
        if nk is not None:
            out.append((name + NEAR, value_key(record[name]), nk))
    return out


def after_outcome(job: "Job", conn: Any, objects: ObjectStore | None, *, sha256: str, source: str, status: str,
                  format_id: str | None, match: str | None, record: Any, data: bytes | None,
                  golden: bool = True) -> str | None:
    """Bookkeeping once a document's row is final; returns the object key of kept bytes, if any.

    * accepted (passed / repaired: every required field verified at the confidence target): its
      unique values are remembered for the stale gate;
    * golden (only when `golden`: no field of the record doubtful, flows/trust.py): the first
      document of a newly learned format, and documents that passed on the first try while the
      golden set has fewer than `golden_max`, become golden (bytes kept);
    * reviewed / corrected (a person's decision kept by a re-run): its values stay remembered; the
      golden record the review made is left as the person left it;
    * needs_review: the bytes are kept so that a reviewed document can become golden;
    * a pending_review format is promoted after `auto_promote_after` accepted documents.
    """
    policy = job.policy
    key = None
    if status in ("passed", "repaired"):
        store.remember_values(conn, schema_key=job.key, sha256=sha256, format_id=format_id,
                              entries=unique_entries(job, record))
        if format_id:
            first = match == "new"
            if golden and (first or (status == "passed" and store.count_golden(conn, format_id) < policy.golden_max)):
                if objects is not None:
                    key = keep_bytes(objects, sha256, source, data)
                store.add_golden(conn, format_id, sha256, record,
                                 "first document of the format" if first else "accepted on the first try",
                                 object_key=key, added_by="pipeline")
            elif not golden and objects is not None:
                key = keep_bytes(objects, sha256, source, data)     # a doubtful field: a reviewer may make it golden
            if policy.auto_promote_after > 0:
                fmt = store.get_format(conn, format_id)
                if fmt is not None and fmt.status == "pending_review" and \
                        store.count_documents(conn, format_id, ("passed", "repaired")) >= policy.auto_promote_after:
                    store.set_format_status(conn, format_id, "active")
    elif status in ("reviewed", "corrected"):
        store.remember_values(conn, schema_key=job.key, sha256=sha256, format_id=format_id,
                              entries=unique_entries(job, record))
    else:
        store.forget_values(conn, sha256)           # re-run and no longer accepted
        if status == "needs_review" and objects is not None:
            key = keep_bytes(objects, sha256, source, data)
    return key
