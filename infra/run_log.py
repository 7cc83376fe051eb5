"""The outcome of every document of a run, in the database (table `run_documents`, migration 0004).

`documents` keeps one row per content hash, its latest outcome; inputs that could not be read have
no hash and no row there. `run_documents` keeps what each run did to each of its inputs, so a
run's per-document status can be queried (`WHERE run_id = ... AND status = 'quota_exceeded'`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import psycopg

from docassay.infra.db import transact

__all__ = ["RunDocument", "save_run_documents", "run_documents", "CHUNK"]

CHUNK = 500          # rows per transaction (Aurora DSQL caps a transaction at 3,000 modified rows)


@dataclass(frozen=True)
class RunDocument:
    idx: int                      # position in the run's input list
    source: str
    sha256: str | None
    status: str
    format_id: str | None = None
    error_kind: str | None = None
    error_message: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0


def save_run_documents(conn: psycopg.Connection, run_id: str, docs: Sequence[RunDocument]) -> None:
    """Record (or re-record) the per-document outcome of run `run_id`, in chunks of CHUNK rows."""
    sql = ("INSERT INTO run_documents (run_id, idx, source, sha256, status, format_id, error_kind, error_message, "
           "input_tokens, output_tokens) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
           "ON CONFLICT (run_id, idx) DO UPDATE SET source = EXCLUDED.source, sha256 = EXCLUDED.sha256, "
           "status = EXCLUDED.status, format_id = EXCLUDED.format_id, error_kind = EXCLUDED.error_kind, "
           "error_message = EXCLUDED.error_message, input_tokens = EXCLUDED.input_tokens, "
           "output_tokens = EXCLUDED.output_tokens")
    for start in range(0, len(docs), CHUNK):
        part = [(run_id, d.idx, d.source, d.sha256, d.status, d.format_id, d.error_kind, d.error_message,
                 d.input_tokens, d.output_tokens) for d in docs[start:start + CHUNK]]

        def fn(c: psycopg.Connection, part: list = part) -> None:
            with c.cursor() as cur:
                cur.executemany(sql, part)
        transact(conn, fn)


def run_documents(conn: psycopg.Connection, run_id: str, *, status: str | None = None) -> list[RunDocument]:
    q = ("SELECT idx, source, sha256, status, format_id, error_kind, error_message, input_tokens, output_tokens "
         "FROM run_documents WHERE run_id = %s")
    args: list = [run_id]
    if status:
        q += " AND status = %s"
        args.append(status)
    rows = conn.execute(q + " ORDER BY idx", args).fetchall()
    return [RunDocument(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6], int(r[7]), int(r[8])) for r in rows]
