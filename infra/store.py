"""The database side of the format library and of results: formats, instruction versions,
documents, golden sets and runs (tables from infra/db/migrations).

Every write goes through `transact` so an optimistic-concurrency conflict (Aurora DSQL, or
serialisation failures on PostgreSQL) is retried. JSON lives in text columns (`dump_json`).
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg

from docassay.infra.db import dump_json, load_json, transact
from docassay.infra.db.dsql import is_dsql_host

__all__ = ["FormatRow", "VersionRow", "HealthRow", "new_format_id", "create_format", "add_version", "active_version",
           "get_format", "first_sighting", "list_formats", "list_versions", "get_version", "set_version_meta", "set_format_status", "set_version_status",
           "save_document", "get_document", "list_documents", "set_document_outcome", "count_documents",
           "add_golden", "golden_set", "count_golden", "remove_golden",
           "record_health", "reset_health", "get_health", "remember_values", "find_accepted_values", "find_accepted_others", "forget_values", "first_accepted_at", "previous_accepted",
           "add_review", "list_reviews", "start_run", "finish_run", "previous_documents",
           "claim_learning", "release_learning", "LEARN_CLAIM", "LEARN_CLAIM_TIMEOUT_MS"]

FORMAT_STATUSES = ("pending_review", "active", "archived")
ACCEPTED_STATUSES = ("passed", "repaired", "reviewed", "corrected")   # a document whose record was accepted


@dataclass(frozen=True)
class FormatRow:
    id: str
    status: str
    meta: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    fingerprint: bytes | None = None


@dataclass(frozen=True)
class VersionRow:
    format_id: str
    version: int
    instructions: dict[str, Any]
    produced_by: str
    status: str
    created_at: datetime
    meta: dict[str, Any] = field(default_factory=dict)     # reason, parent, source, reference verdict


@dataclass(frozen=True)
class HealthRow:
    format_id: str
    consecutive_failures: int
    failures: int
    passes: int
    last_failure_at: datetime | None
    last_pass_at: datetime | None


def new_format_id() -> str:
    return "fmt-" + uuid.uuid4().hex[:12]


def create_format(conn: psycopg.Connection, format_id: str, *, fingerprint: bytes | None, meta: dict,
                  status: str = "active") -> None:
    def fn(c: psycopg.Connection) -> None:
        c.execute("INSERT INTO formats (id, status, fingerprint, meta) VALUES (%s, %s, %s, %s)",
                  (format_id, status, fingerprint, dump_json(meta)))
    transact(conn, fn)


def add_version(conn: psycopg.Connection, format_id: str, instructions: dict, *, produced_by: str,
                status: str = "active", meta: dict | None = None) -> int:
    """Store a new version (max + 1); an `active` new version supersedes the previous active one.
    `meta` records why (reason, parent version, source document, the reference gate's verdict)."""
    def fn(c: psycopg.Connection) -> int:
        row = c.execute("SELECT coalesce(max(version), 0) FROM format_versions WHERE format_id = %s",
                        (format_id,)).fetchone()
        version = int(row[0]) + 1 if row else 1
        if status == "active":
            c.execute("UPDATE format_versions SET status = 'superseded' WHERE format_id = %s AND status = 'active'",
                      (format_id,))
        c.execute("INSERT INTO format_versions (format_id, version, instructions, produced_by, status, meta) "
                  "VALUES (%s, %s, %s, %s, %s, %s)", (format_id, version, dump_json(instructions), produced_by, status,
                                                      dump_json(meta or {})))
        c.execute("UPDATE formats SET updated_at = now() WHERE id = %s", (format_id,))
        return version
    return transact(conn, fn)


def active_version(conn: psycopg.Connection, format_id: str) -> VersionRow | None:
    row = conn.execute(
        f"SELECT {_VERSION_COLS} FROM format_versions "
        "WHERE format_id = %s AND status = 'active' ORDER BY version DESC LIMIT 1", (format_id,)).fetchone()
    return _version(row) if row else None


def list_versions(conn: psycopg.Connection, format_id: str) -> list[VersionRow]:
    rows = conn.execute(
        f"SELECT {_VERSION_COLS} FROM format_versions "
        "WHERE format_id = %s ORDER BY version", (format_id,)).fetchall()
    return [_version(r) for r in rows]


def set_version_meta(conn: psycopg.Connection, format_id: str, version: int, meta: dict) -> bool:
    """Merge `meta` into a version's meta (why it exists, who decided)."""
    def fn(c: psycopg.Connection) -> bool:
        row = c.execute("SELECT meta FROM format_versions WHERE format_id = %s AND version = %s",
                        (format_id, version)).fetchone()
        if row is None:
            return False
        merged = {**(load_json(row[0]) if row[0] else {}), **meta}
        c.execute("UPDATE format_versions SET meta = %s WHERE format_id = %s AND version = %s",
                  (dump_json(merged), format_id, version))
        return True
    return transact(conn, fn)


def get_version(conn: psycopg.Connection, format_id: str, version: int) -> VersionRow | None:
    row = conn.execute(f"SELECT {_VERSION_COLS} FROM format_versions WHERE format_id = %s AND version = %s",
                       (format_id, version)).fetchone()
    return _version(row) if row else None


_VERSION_COLS = "format_id, version, instructions, produced_by, status, created_at, meta"


def _version(r: tuple) -> VersionRow:
    return VersionRow(r[0], int(r[1]), load_json(r[2]), r[3], r[4], r[5], load_json(r[6]) if r[6] else {})


def get_format(conn: psycopg.Connection, format_id: str) -> FormatRow | None:
    r = conn.execute("SELECT id, status, meta, created_at, updated_at, fingerprint FROM formats WHERE id = %s",
                     (format_id,)).fetchone()
    return FormatRow(r[0], r[1], load_json(r[2]), r[3], r[4], bytes(r[5]) if r[5] is not None else None) if r else None


def list_formats(conn: psycopg.Connection, status: str | None = None) -> list[FormatRow]:
    q = "SELECT id, status, meta, created_at, updated_at FROM formats"
    args: tuple = ()
    if status:
        q += " WHERE status = %s"
        args = (status,)
    rows = conn.execute(q + " ORDER BY created_at, id", args).fetchall()
    return [FormatRow(r[0], r[1], load_json(r[2]), r[3], r[4]) for r in rows]


def set_format_status(conn: psycopg.Connection, format_id: str, status: str) -> bool:
    if status not in FORMAT_STATUSES:
        raise ValueError(f"unknown format status {status!r}")

    def fn(c: psycopg.Connection) -> bool:
        cur = c.execute("UPDATE formats SET status = %s, updated_at = now() WHERE id = %s", (status, format_id))
        return cur.rowcount > 0
    return transact(conn, fn)


def set_version_status(conn: psycopg.Connection, format_id: str, version: int, status: str) -> bool:
    def fn(c: psycopg.Connection) -> bool:
        if status == "active":
            c.execute("UPDATE format_versions SET status = 'superseded' WHERE format_id = %s AND status = 'active'",
                      (format_id,))
        cur = c.execute("UPDATE format_versions SET status = %s WHERE format_id = %s AND version = %s",
                        (status, format_id, version))
        return cur.rowcount > 0
    return transact(conn, fn)


def save_document(conn: psycopg.Connection, *, sha256: str, source: str, status: str, format_id: str | None,
                  format_version: int | None, record: Any, verification: Any, provenance: Any,
                  attempts: int | None = None, repairs: Any = None, object_key: str | None = None,
                  schema_key: str | None = None) -> None:
    """Insert or update one document's latest outcome (by content hash). A known `object_key` (where
    the bytes are kept) is not forgotten by a later save without one."""
    def fn(c: psycopg.Connection) -> None:
        c.execute(
            "INSERT INTO documents (sha256, source, format_id, format_version, status, record, verification, provenance, "
            "attempts, repairs, object_key, schema_key, first_source) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (sha256) DO UPDATE SET source = EXCLUDED.source, format_id = EXCLUDED.format_id, "
            "first_source = coalesce(documents.first_source, documents.source), "
            "format_version = EXCLUDED.format_version, status = EXCLUDED.status, record = EXCLUDED.record, "
            "verification = EXCLUDED.verification, provenance = EXCLUDED.provenance, attempts = EXCLUDED.attempts, "
            "repairs = EXCLUDED.repairs, object_key = coalesce(EXCLUDED.object_key, documents.object_key), "
            "schema_key = coalesce(EXCLUDED.schema_key, documents.schema_key), updated_at = now()",
            (sha256, source, format_id, format_version, status, dump_json(record), dump_json(verification),
             dump_json(provenance), attempts, dump_json(repairs) if repairs is not None else None, object_key,
             schema_key, source))
    transact(conn, fn)


def first_sighting(conn: psycopg.Connection, sha256: str) -> dict | None:
    """Where and when a document was first stored, its latest status and record: {sha256, source,
    first_seen, status, record}; None for a document never stored."""
    r = conn.execute("SELECT coalesce(first_source, source), created_at, status, record FROM documents "
                     "WHERE sha256 = %s", (sha256,)).fetchone()
    if r is None:
        return None
    return {"sha256": sha256, "source": r[0], "first_seen": r[1], "status": r[2], "record": load_json(r[3])}


def get_document(conn: psycopg.Connection, sha256: str) -> dict | None:
    """One document's latest outcome; `sha256` may be a unique prefix (at least 6 characters)."""
    q = ("SELECT sha256, source, format_id, format_version, status, record, verification, provenance, "
         "updated_at, attempts, repairs, object_key, schema_key FROM documents WHERE ")
    rows = conn.execute(q + "sha256 = %s", (sha256,)).fetchall()
    if not rows and len(sha256) >= 6:
        rows = conn.execute(q + "sha256 LIKE %s LIMIT 2", (sha256.replace("%", "").replace("_", "") + "%",)).fetchall()
    if len(rows) != 1:
        return None
    r = rows[0]
    return {"sha256": r[0], "source": r[1], "format_id": r[2], "format_version": r[3], "status": r[4],
            "record": load_json(r[5]), "verification": load_json(r[6]), "provenance": load_json(r[7]),
            "updated_at": r[8], "attempts": r[9], "repairs": load_json(r[10]) if r[10] else [],
            "object_key": r[11], "schema_key": r[12]}


def set_document_outcome(conn: psycopg.Connection, sha256: str, *, status: str, record: Any = None,
                         verification: Any = None) -> bool:
    """Change a stored document's status (and record / verification, when given): a review decision."""
    def fn(c: psycopg.Connection) -> bool:
        cur = c.execute("UPDATE documents SET status = %s, record = coalesce(%s, record), "
                        "verification = coalesce(%s, verification), updated_at = now() WHERE sha256 = %s",
                        (status, dump_json(record) if record is not None else None,
                         dump_json(verification) if verification is not None else None, sha256))
        return cur.rowcount > 0
    return transact(conn, fn)


def count_documents(conn: psycopg.Connection, format_id: str, statuses: tuple[str, ...]) -> int:
    row = conn.execute("SELECT count(*) FROM documents WHERE format_id = %s AND status = ANY(%s)",
                       (format_id, list(statuses))).fetchone()
    return int(row[0]) if row else 0


def list_documents(conn: psycopg.Connection, *, status: str | None = None, format_id: str | None = None,
                   limit: int = 100, with_verification: bool = False) -> list[dict]:
    cols = "sha256, source, format_id, format_version, status, updated_at" + (", verification" if with_verification else "")
    q = f"SELECT {cols} FROM documents WHERE true"
    args: list[Any] = []
    if status:
        q += " AND status = %s"
        args.append(status)
    if format_id:
        q += " AND format_id = %s"
        args.append(format_id)
    q += " ORDER BY updated_at DESC, sha256 LIMIT %s"
    args.append(limit)
    out = []
    for r in conn.execute(q, args).fetchall():
        d = {"sha256": r[0], "source": r[1], "format_id": r[2], "format_version": r[3], "status": r[4],
             "updated_at": r[5]}
        if with_verification:
            d["verification"] = load_json(r[6]) if r[6] else {}
        out.append(d)
    return out


def previous_documents(conn: psycopg.Connection, format_id: str, *, exclude_sha256: str, limit: int = 50) -> list[dict]:
    """Accepted records of a format, newest first (for stale-value checks)."""
    rows = conn.execute(
        "SELECT sha256, record FROM documents WHERE format_id = %s AND sha256 <> %s "
        "AND status IN ('passed', 'repaired', 'reviewed', 'corrected') ORDER BY updated_at DESC LIMIT %s",
        (format_id, exclude_sha256, limit)).fetchall()
    return [{"sha256": r[0], "record": load_json(r[1])} for r in rows]


def add_golden(conn: psycopg.Connection, format_id: str, sha256: str, record: Any, reason: str, *,
               object_key: str | None = None, added_by: str | None = None) -> None:
    """Add (or replace) a golden record of a format; `object_key` says where its bytes are kept."""
    def fn(c: psycopg.Connection) -> None:
        c.execute("INSERT INTO golden (format_id, sha256, record, reason, object_key, added_by) "
                  "VALUES (%s, %s, %s, %s, %s, %s) "
                  "ON CONFLICT (format_id, sha256) DO UPDATE SET record = EXCLUDED.record, reason = EXCLUDED.reason, "
                  "object_key = coalesce(EXCLUDED.object_key, golden.object_key), "
                  "added_by = coalesce(EXCLUDED.added_by, golden.added_by)",
                  (format_id, sha256, dump_json(record), reason, object_key, added_by))
    transact(conn, fn)


def golden_set(conn: psycopg.Connection, format_id: str) -> list[dict]:
    rows = conn.execute("SELECT sha256, record, reason, object_key, added_by, added_at FROM golden "
                        "WHERE format_id = %s ORDER BY added_at, sha256", (format_id,)).fetchall()
    return [{"sha256": r[0], "record": load_json(r[1]), "reason": r[2], "object_key": r[3], "added_by": r[4],
             "added_at": r[5]} for r in rows]


def count_golden(conn: psycopg.Connection, format_id: str) -> int:
    row = conn.execute("SELECT count(*) FROM golden WHERE format_id = %s", (format_id,)).fetchone()
    return int(row[0]) if row else 0


def remove_golden(conn: psycopg.Connection, format_id: str, sha256: str) -> bool:
    return transact(conn, lambda c: c.execute("DELETE FROM golden WHERE format_id = %s AND sha256 = %s",
                                              (format_id, sha256)).rowcount > 0)


# -- format health (drift) --------------------------------------------------------------------------

def record_health(conn: psycopg.Connection, format_id: str, *, ok: bool) -> int:
    """Count one replay of a format: `ok` when it verified on the first try (resets the run of
    failures). Returns the consecutive failures after this one."""
    def fn(c: psycopg.Connection) -> int:
        c.execute("INSERT INTO format_health (format_id) VALUES (%s) ON CONFLICT (format_id) DO NOTHING", (format_id,))
        if ok:
            row = c.execute("UPDATE format_health SET consecutive_failures = 0, passes = passes + 1, "
                            "last_pass_at = now(), updated_at = now() WHERE format_id = %s "
                            "RETURNING consecutive_failures", (format_id,)).fetchone()
        else:
            row = c.execute("UPDATE format_health SET consecutive_failures = consecutive_failures + 1, "
                            "failures = failures + 1, last_failure_at = now(), updated_at = now() "
                            "WHERE format_id = %s RETURNING consecutive_failures", (format_id,)).fetchone()
        return int(row[0]) if row else 0
    return transact(conn, fn)


def reset_health(conn: psycopg.Connection, format_id: str) -> None:
    transact(conn, lambda c: c.execute("UPDATE format_health SET consecutive_failures = 0, updated_at = now() "
                                       "WHERE format_id = %s", (format_id,)))


def get_health(conn: psycopg.Connection, format_id: str) -> HealthRow | None:
    r = conn.execute("SELECT format_id, consecutive_failures, failures, passes, last_failure_at, last_pass_at "
                     "FROM format_health WHERE format_id = %s", (format_id,)).fetchone()
    return HealthRow(r[0], int(r[1]), int(r[2]), int(r[3]), r[4], r[5]) if r else None


# -- accepted values (stale-value gate) -------------------------------------------------------------

def remember_values(conn: psycopg.Connection, *, schema_key: str, sha256: str, format_id: str | None,
                    entries: list[tuple[str, str, str]]) -> None:
    """Remember (field, value_key, scope_key) of an accepted document (idempotent)."""
    if not entries:
        return

    def fn(c: psycopg.Connection) -> None:
        for f, vk, sk in entries:
            c.execute("INSERT INTO accepted_values (schema_key, field, value_key, scope_key, sha256, format_id) "
                      "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING", (schema_key, f, vk, sk, sha256, format_id))
    transact(conn, fn)


def find_accepted_values(conn: psycopg.Connection, schema_key: str, field_name: str, value_key: str, scope_key: str, *,
                         exclude_sha256: str | None = None, before: datetime | None = None, limit: int = 5) -> list[str]:
    """sha256 of other accepted documents holding this value in this scope (oldest first), accepted
    before `before` when given."""
    q = ("SELECT sha256 FROM accepted_values WHERE schema_key = %s AND field = %s AND value_key = %s "
         "AND scope_key = %s AND sha256 <> %s")
    args: list[Any] = [schema_key, field_name, value_key, scope_key, exclude_sha256 or ""]
    if before is not None:
        q += " AND accepted_at < %s"
        args.append(before)
    rows = conn.execute(q + " ORDER BY accepted_at, sha256 LIMIT %s", (*args, limit)).fetchall()
    return [r[0] for r in rows]


def find_accepted_others(conn: psycopg.Connection, schema_key: str, field_name: str, value_key: str, scope_key: str, *,
                         exclude_sha256: str | None = None, before: datetime | None = None,
                         limit: int = 5) -> list[tuple[str, str]]:
    """(sha256, value key) of other accepted documents holding *another* value in this scope (oldest
    first), accepted before `before` when given: the stale gate's possible duplicates."""
    q = ("SELECT sha256, value_key FROM accepted_values WHERE schema_key = %s AND field = %s AND value_key <> %s "
         "AND scope_key = %s AND sha256 <> %s")
    args: list[Any] = [schema_key, field_name, value_key, scope_key, exclude_sha256 or ""]
    if before is not None:
        q += " AND accepted_at < %s"
        args.append(before)
    rows = conn.execute(q + " ORDER BY accepted_at, sha256 LIMIT %s", (*args, limit)).fetchall()
    return [(r[0], r[1]) for r in rows]


def first_accepted_at(conn: psycopg.Connection, sha256: str) -> datetime | None:
    """When this document was first stored, if it is stored as accepted (else None)."""
    r = conn.execute("SELECT created_at FROM documents WHERE sha256 = %s AND status = ANY(%s)",
                     (sha256, list(ACCEPTED_STATUSES))).fetchone()
    return r[0] if r else None


def previous_accepted(conn: psycopg.Connection, format_id: str, *, exclude_sha256: str,
                      before: datetime | None = None) -> dict | None:
    """The format's accepted document seen last (before `before` when given), other than this one."""
    q = ("SELECT sha256, record FROM documents WHERE format_id = %s AND sha256 <> %s AND status = ANY(%s)")
    args: list[Any] = [format_id, exclude_sha256, list(ACCEPTED_STATUSES)]
    if before is not None:
        q += " AND created_at < %s"
        args.append(before)
    r = conn.execute(q + " ORDER BY created_at DESC, sha256 LIMIT 1", args).fetchone()
    return {"sha256": r[0], "record": load_json(r[1])} if r else None


def last_reviewed(conn: psycopg.Connection, format_id: str, *, exclude_sha256: str,
                  before: datetime | None = None) -> dict | None:
    """The format's document a person decided last (`reviewed` / `corrected`), other than this one."""
    q = ("SELECT sha256, record FROM documents WHERE format_id = %s AND sha256 <> %s AND status = ANY(%s)")
    args: list[Any] = [format_id, exclude_sha256, ["reviewed", "corrected"]]
    if before is not None:
        q += " AND created_at < %s"
        args.append(before)
    r = conn.execute(q + " ORDER BY updated_at DESC, created_at DESC, sha256 LIMIT 1", args).fetchone()
    return {"sha256": r[0], "record": load_json(r[1])} if r else None


def forget_values(conn: psycopg.Connection, sha256: str) -> None:
    transact(conn, lambda c: c.execute("DELETE FROM accepted_values WHERE sha256 = %s", (sha256,)))


# -- reviews ----------------------------------------------------------------------------------------

def add_review(conn: psycopg.Connection, sha256: str, *, action: str, reviewer: str,
               corrections: dict | None = None, note: str | None = None) -> str:
    rid = "rev-" + uuid.uuid4().hex[:12]
    transact(conn, lambda c: c.execute(
        "INSERT INTO reviews (id, sha256, action, reviewer, corrections, note) VALUES (%s, %s, %s, %s, %s, %s)",
        (rid, sha256, action, reviewer, dump_json(corrections) if corrections is not None else None, note)))
    return rid


def list_reviews(conn: psycopg.Connection, sha256: str) -> list[dict]:
    rows = conn.execute("SELECT id, action, reviewer, corrections, note, created_at FROM reviews WHERE sha256 = %s "
                        "ORDER BY created_at, id", (sha256,)).fetchall()
    return [{"id": r[0], "action": r[1], "reviewer": r[2], "corrections": load_json(r[3]) if r[3] else None,
             "note": r[4], "created_at": r[5]} for r in rows]


def start_run(conn: psycopg.Connection, run_id: str) -> None:
    transact(conn, lambda c: c.execute("INSERT INTO runs (id) VALUES (%s) ON CONFLICT (id) DO NOTHING", (run_id,)))


def finish_run(conn: psycopg.Connection, run_id: str, summary: dict) -> None:
    transact(conn, lambda c: c.execute("UPDATE runs SET finished_at = now(), summary = %s WHERE id = %s",
                                       (dump_json(summary), run_id)))


# -- learning claims (one new format learned at a time per database) -------------------------------

LEARN_CLAIM = "formats"                  # the one claim row: learning is serialised per database
LEARN_CLAIM_TIMEOUT_MS = 600_000         # how long a learner waits for another process's claim


def claim_learning(conn: psycopg.Connection, holder: str, name: str = LEARN_CLAIM) -> None:
    """Wait until `conn` holds the learning claim `name`: its row locked in a transaction left open
    on `conn` (a connection used for nothing else). `release_learning` commits it; a dead holder's
    connection drops and the server releases the lock."""
    conn.autocommit = True
    conn.execute("INSERT INTO learn_claims (name) VALUES (%s) ON CONFLICT (name) DO NOTHING", (name,))
    conn.autocommit = False
    if not is_dsql_host(str(conn.info.host or "")):            # DSQL takes no lock_timeout (nor waits)
        conn.execute(f"SET LOCAL lock_timeout = {int(LEARN_CLAIM_TIMEOUT_MS)}")
    conn.execute("SELECT name FROM learn_claims WHERE name = %s FOR UPDATE", (name,))
    conn.execute("UPDATE learn_claims SET holder = %s, claimed_at = now(), claims = claims + 1 WHERE name = %s",
                 (holder, name))


def release_learning(conn: psycopg.Connection) -> None:
    """Commit (and so release) the claim `conn` holds; the connection goes back to autocommit."""
    try:
        conn.commit()
    finally:
        if not conn.closed:
            conn.autocommit = True
