"""The database side of the format library and of results: formats, instruction versions,
documents, golden sets and runs (tables from infra/db/migrations).

Every write goes through `transact` so an optimistic-concurrency conflict (Aurora DSQL, or
serialisation failures on PostgreSQL) is retried. JSON lives in text columns (`dump_json`).
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from infra.db import dump_json, load_json, transact

__all__ = ["FormatRow", "VersionRow", "new_format_id", "create_format", "add_version", "active_version",
           "get_format", "list_formats", "list_versions", "set_format_status", "set_version_status",
           "save_document", "get_document", "list_documents", "add_golden", "golden_set",
           "start_run", "finish_run", "previous_documents"]

FORMAT_STATUSES = ("pending_review", "active", "archived")


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


def new_format_id() -> str:
    return "fmt-" + uuid.uuid4().hex[:12]


def create_format(conn: psycopg.Connection, format_id: str, *, fingerprint: bytes | None, meta: dict,
                  status: str = "active") -> None:
    def fn(c: psycopg.Connection) -> None:
        c.execute("INSERT INTO formats (id, status, fingerprint, meta) VALUES (%s, %s, %s, %s)",
                  (format_id, status, fingerprint, dump_json(meta)))
    transact(conn, fn)


def add_version(conn: psycopg.Connection, format_id: str, instructions: dict, *, produced_by: str,
                status: str = "active") -> int:
    """Store a new version (max + 1); an `active` new version supersedes the previous active one."""
    def fn(c: psycopg.Connection) -> int:
        row = c.execute("SELECT coalesce(max(version), 0) FROM format_versions WHERE format_id = %s",
                        (format_id,)).fetchone()
        version = int(row[0]) + 1 if row else 1
        if status == "active":
            c.execute("UPDATE format_versions SET status = 'superseded' WHERE format_id = %s AND status = 'active'",
                      (format_id,))
        c.execute("INSERT INTO format_versions (format_id, version, instructions, produced_by, status) "
                  "VALUES (%s, %s, %s, %s, %s)", (format_id, version, dump_json(instructions), produced_by, status))
        c.execute("UPDATE formats SET updated_at = now() WHERE id = %s", (format_id,))
        return version
    return transact(conn, fn)


def active_version(conn: psycopg.Connection, format_id: str) -> VersionRow | None:
    row = conn.execute(
        "SELECT format_id, version, instructions, produced_by, status, created_at FROM format_versions "
        "WHERE format_id = %s AND status = 'active' ORDER BY version DESC LIMIT 1", (format_id,)).fetchone()
    return _version(row) if row else None


def list_versions(conn: psycopg.Connection, format_id: str) -> list[VersionRow]:
    rows = conn.execute(
        "SELECT format_id, version, instructions, produced_by, status, created_at FROM format_versions "
        "WHERE format_id = %s ORDER BY version", (format_id,)).fetchall()
    return [_version(r) for r in rows]


def _version(r: tuple) -> VersionRow:
    return VersionRow(r[0], int(r[1]), load_json(r[2]), r[3], r[4], r[5])


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
                  format_version: int | None, record: Any, verification: Any, provenance: Any) -> None:
    """Insert or update one document's latest outcome (by content hash)."""
    def fn(c: psycopg.Connection) -> None:
        c.execute(
            "INSERT INTO documents (sha256, source, format_id, format_version, status, record, verification, provenance) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (sha256) DO UPDATE SET source = EXCLUDED.source, format_id = EXCLUDED.format_id, "
            "format_version = EXCLUDED.format_version, status = EXCLUDED.status, record = EXCLUDED.record, "
            "verification = EXCLUDED.verification, provenance = EXCLUDED.provenance, updated_at = now()",
            (sha256, source, format_id, format_version, status, dump_json(record), dump_json(verification),
             dump_json(provenance)))
    transact(conn, fn)


def get_document(conn: psycopg.Connection, sha256: str) -> dict | None:
    r = conn.execute("SELECT sha256, source, format_id, format_version, status, record, verification, provenance, "
                     "updated_at FROM documents WHERE sha256 = %s", (sha256,)).fetchone()
    if not r:
        return None
    return {"sha256": r[0], "source": r[1], "format_id": r[2], "format_version": r[3], "status": r[4],
            "record": load_json(r[5]), "verification": load_json(r[6]), "provenance": load_json(r[7]),
            "updated_at": r[8]}


def list_documents(conn: psycopg.Connection, *, status: str | None = None, format_id: str | None = None,
                   limit: int = 100) -> list[dict]:
    q = "SELECT sha256, source, format_id, format_version, status, updated_at FROM documents WHERE true"
    args: list[Any] = []
    if status:
        q += " AND status = %s"
        args.append(status)
    if format_id:
        q += " AND format_id = %s"
        args.append(format_id)
    q += " ORDER BY updated_at DESC LIMIT %s"
    args.append(limit)
    return [{"sha256": r[0], "source": r[1], "format_id": r[2], "format_version": r[3], "status": r[4],
             "updated_at": r[5]} for r in conn.execute(q, args).fetchall()]


def previous_documents(conn: psycopg.Connection, format_id: str, *, exclude_sha256: str, limit: int = 50) -> list[dict]:
    """Accepted records of a format, newest first (for stale-value checks)."""
    rows = conn.execute(
        "SELECT sha256, record FROM documents WHERE format_id = %s AND sha256 <> %s "
        "AND status IN ('passed', 'repaired') ORDER BY updated_at DESC LIMIT %s",
        (format_id, exclude_sha256, limit)).fetchall()
    return [{"sha256": r[0], "record": load_json(r[1])} for r in rows]


def add_golden(conn: psycopg.Connection, format_id: str, sha256: str, record: Any, reason: str) -> None:
    def fn(c: psycopg.Connection) -> None:
        c.execute("INSERT INTO golden (format_id, sha256, record, reason) VALUES (%s, %s, %s, %s) "
                  "ON CONFLICT (format_id, sha256) DO UPDATE SET record = EXCLUDED.record, reason = EXCLUDED.reason",
                  (format_id, sha256, dump_json(record), reason))
    transact(conn, fn)


def golden_set(conn: psycopg.Connection, format_id: str) -> list[dict]:
    rows = conn.execute("SELECT sha256, record, reason FROM golden WHERE format_id = %s ORDER BY added_at",
                        (format_id,)).fetchall()
    return [{"sha256": r[0], "record": load_json(r[1]), "reason": r[2]} for r in rows]


def start_run(conn: psycopg.Connection, run_id: str) -> None:
    transact(conn, lambda c: c.execute("INSERT INTO runs (id) VALUES (%s) ON CONFLICT (id) DO NOTHING", (run_id,)))


def finish_run(conn: psycopg.Connection, run_id: str, summary: dict) -> None:
    transact(conn, lambda c: c.execute("UPDATE runs SET finished_at = now(), summary = %s WHERE id = %s",
                                       (dump_json(summary), run_id)))
