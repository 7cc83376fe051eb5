"""The review station's reads and writes beyond `infra.store`: the queue, a document moved to the
format it was learned as, recent runs.

    queue(conn, ...)                 documents waiting for a person, with what the queue shows
    set_document_format(...)         a corrected document now belongs to a (new) format version
    recent_runs(conn)                batches, newest first, for the queue's filter

Values reach PostgreSQL only as bound parameters.
"""
from __future__ import annotations

from typing import Any, Sequence

import psycopg

from docassay.infra.db import load_json, transact

__all__ = ["REVIEW_ACTIONS", "queue", "set_document_format", "recent_runs"]

REVIEW_ACTIONS = ("accept", "correct", "reject")


def queue(conn: psycopg.Connection, *, statuses: Sequence[str], format_id: str | None = None,
          run_id: str | None = None, limit: int = 200) -> list[dict]:
    """Documents whose status is one of `statuses` (optionally of one format, or one run), with
    their verification and record, oldest change first."""
    q = ("SELECT d.sha256, d.source, d.format_id, d.format_version, d.status, d.updated_at, d.verification, "
         "d.record, d.object_key FROM documents d WHERE d.status = ANY(%s)")
    args: list[Any] = [list(statuses)]
    if format_id:
        q += " AND d.format_id = %s"
        args.append(format_id)
    if run_id:
        q += " AND d.sha256 IN (SELECT r.sha256 FROM run_documents r WHERE r.run_id = %s)"
        args.append(run_id)
    q += " ORDER BY d.updated_at, d.sha256 LIMIT %s"
    args.append(limit)
    out = []
    for r in conn.execute(q, args).fetchall():
        out.append({"sha256": r[0], "source": r[1], "format_id": r[2], "format_version": r[3], "status": r[4],
                    "updated_at": r[5], "verification": load_json(r[6]) if r[6] else {},
                    "record": load_json(r[7]) if r[7] else {}, "object_key": r[8]})
    return out


def set_document_format(conn: psycopg.Connection, sha256: str, format_id: str, version: int) -> bool:
    def fn(c: psycopg.Connection) -> bool:
        return c.execute("UPDATE documents SET format_id = %s, format_version = %s, updated_at = now() "
                         "WHERE sha256 = %s", (format_id, version, sha256)).rowcount > 0
    return transact(conn, fn)


def recent_runs(conn: psycopg.Connection, limit: int = 30) -> list[dict]:
    rows = conn.execute("SELECT id, started_at, finished_at FROM runs ORDER BY started_at DESC, id LIMIT %s",
                        (limit,)).fetchall()
    return [{"id": r[0], "started_at": r[1], "finished_at": r[2]} for r in rows]
