"""The inbox ledger: what a scheduled run claimed, finished and reported, in the database
(tables from migration 0003_inbox; the SQL runs on PostgreSQL and on Aurora DSQL).

    lease    acquire(run) / renew(run) / release(run)   one run per inbox at a time
    claims   claim(sha, source, run) -> Claim            a document, by content hash, once
             complete(sha, run, row, result_key) -> bool only while this run still owns the claim
             archived(sha, location)
    runs     start_run / assign_report(run) / report_rows(run) / finish_run / unwritten_reports

Every write is one short statement in its own transaction, retried on a concurrency conflict
(`infra.db.transact`), and guarded so that the database decides who wins:

* a claim is taken only while the caller holds the inbox's lease (checked in the same statement);
  a `claimed` row of another run is taken over (that run died: only the lease holder claims);
* `complete` only succeeds for the run that owns the claim (a run that lost its lease cannot
  overwrite the work of the run that took over);
* reporting assigns finished, unreported claims to a run in batches of `REPORT_BATCH` rows (under
  DSQL's per-transaction row limit), so each document is listed in exactly one run's report.
"""
from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass
from typing import Any, Literal

import psycopg

from docassay.infra.db import dump_json, load_json, transact

__all__ = ["InboxLedger", "Claim", "ClaimState", "REPORT_BATCH", "SQL"]

REPORT_BATCH = 1000
ClaimState = Literal["claimed", "done", "duplicate", "no_lease"]

# Every statement the ledger sends (tests check them against Aurora DSQL's limits).
SQL = {
    "acquire": """
        INSERT INTO inbox_leases (inbox, holder, host, pid, expires_at)
        VALUES (%(inbox)s, %(run)s, %(host)s, %(pid)s, now() + %(ttl)s * interval '1 second')
        ON CONFLICT (inbox) DO UPDATE
           SET holder = EXCLUDED.holder, host = EXCLUDED.host, pid = EXCLUDED.pid,
               acquired_at = now(), expires_at = EXCLUDED.expires_at
         WHERE inbox_leases.expires_at < now() OR inbox_leases.holder = EXCLUDED.holder
        RETURNING holder""",
    "renew": """
        UPDATE inbox_leases SET expires_at = now() + %(ttl)s * interval '1 second'
         WHERE inbox = %(inbox)s AND holder = %(run)s AND expires_at > now()""",
    "release": "DELETE FROM inbox_leases WHERE inbox = %(inbox)s AND holder = %(run)s",
    "holder": "SELECT holder, expires_at > now() FROM inbox_leases WHERE inbox = %(inbox)s",
    "claim": """
        INSERT INTO inbox_claims (inbox, sha256, source, state, run_id)
        SELECT %(inbox)s, %(sha)s, %(source)s, 'claimed', %(run)s
         WHERE EXISTS (SELECT 1 FROM inbox_leases
                        WHERE inbox = %(inbox)s AND holder = %(run)s AND expires_at > now())
        ON CONFLICT (inbox, sha256) DO UPDATE
           SET run_id = EXCLUDED.run_id, source = EXCLUDED.source, claimed_at = now(),
               attempts = inbox_claims.attempts + 1
         WHERE inbox_claims.state = 'claimed' AND inbox_claims.run_id <> EXCLUDED.run_id
        RETURNING attempts""",
    "claim_state": "SELECT state, run_id, attempts FROM inbox_claims WHERE inbox = %(inbox)s AND sha256 = %(sha)s",
    "complete": """
        UPDATE inbox_claims
           SET state = 'done', status = %(status)s, result = %(result)s, result_key = %(key)s, finished_at = now()
         WHERE inbox = %(inbox)s AND sha256 = %(sha)s AND run_id = %(run)s AND state = 'claimed'""",
    "archived": "UPDATE inbox_claims SET archived_to = %(to)s WHERE inbox = %(inbox)s AND sha256 = %(sha)s",
    "start_run": """
        INSERT INTO inbox_runs (id, inbox, dest) VALUES (%(run)s, %(inbox)s, %(dest)s)
        ON CONFLICT (id) DO NOTHING""",
    "assign_report": """
        UPDATE inbox_claims SET reported_in = %(run)s
         WHERE inbox = %(inbox)s AND state = 'done' AND reported_in IS NULL
           AND sha256 IN (SELECT sha256 FROM inbox_claims
                           WHERE inbox = %(inbox)s AND state = 'done' AND reported_in IS NULL
                           ORDER BY sha256 LIMIT %(batch)s)""",
    "report_rows": """
        SELECT result FROM inbox_claims WHERE inbox = %(inbox)s AND reported_in = %(run)s
         ORDER BY finished_at, sha256""",
    "finish_run": """
        UPDATE inbox_runs SET finished_at = now(), report_key = %(key)s, summary = %(summary)s
         WHERE id = %(run)s""",
    "unwritten_reports": """
        SELECT id FROM inbox_runs WHERE inbox = %(inbox)s AND report_key IS NULL AND id <> %(run)s
         ORDER BY started_at""",
    "claims": """
        SELECT sha256, source, state, run_id, attempts, status, result_key, archived_to, reported_in
          FROM inbox_claims WHERE inbox = %(inbox)s ORDER BY claimed_at, sha256""",
}


@dataclass(frozen=True)
class Claim:
    """The outcome of trying to claim a document.

    state: `claimed` (this run now owns it; `attempts` counts the runs that have tried it),
    `done` (a run finished it already), `duplicate` (this run owns the same content from another
    file), `no_lease` (this run does not hold the inbox: it must stop).
    """
    state: ClaimState
    attempts: int = 0


class InboxLedger:
    """The ledger of one inbox (`inbox` is its normalised URL) on one connection.

    The connection must be in autocommit mode and used by one thread at a time.
    """

    def __init__(self, conn: psycopg.Connection, inbox: str) -> None:
        self.conn = conn
        self.inbox = inbox

    def _args(self, **kw: Any) -> dict[str, Any]:
        return {"inbox": self.inbox, **kw}

    def _write(self, name: str, **kw: Any) -> psycopg.Cursor:
        return transact(self.conn, lambda c: c.execute(SQL[name], self._args(**kw)))

    # ------------------------------------------------------------------------------------ lease
    def acquire(self, run: str, ttl_s: float) -> bool:
        """Take the inbox for `run` for `ttl_s` seconds; False while another run holds it."""
        def fn(c: psycopg.Connection) -> bool:
            row = c.execute(SQL["acquire"], self._args(run=run, ttl=float(ttl_s), host=socket.gethostname(),
                                                       pid=os.getpid())).fetchone()
            return bool(row and row[0] == run)
        return transact(self.conn, fn)

    def renew(self, run: str, ttl_s: float) -> bool:
        """Extend the lease; False when `run` no longer holds it (it expired, or another run took it)."""
        return self._write("renew", run=run, ttl=float(ttl_s)).rowcount == 1

    def release(self, run: str) -> None:
        self._write("release", run=run)

    def holder(self) -> tuple[str, bool] | None:
        """(holder run id, lease still valid) or None when nobody holds the inbox."""
        row = self.conn.execute(SQL["holder"], self._args()).fetchone()
        return (str(row[0]), bool(row[1])) if row else None

    # ----------------------------------------------------------------------------------- claims
    def claim(self, sha256: str, source: str, run: str) -> Claim:
        def fn(c: psycopg.Connection) -> Claim:
            got = c.execute(SQL["claim"], self._args(sha=sha256, source=source, run=run)).fetchone()
            if got:
                return Claim("claimed", int(got[0]))
            row = c.execute(SQL["claim_state"], self._args(sha=sha256)).fetchone()
            if row is None or (row[0] == "claimed" and row[1] != run):
                return Claim("no_lease")                 # the insert's lease check failed
            if row[0] == "done":
                return Claim("done", int(row[2]))
            return Claim("duplicate", int(row[2]))
        return transact(self.conn, fn)

    def complete(self, sha256: str, run: str, row: dict[str, Any], result_key: str | None) -> bool:
        """Record the finished row; False when `run` does not own the claim any more."""
        cur = self._write("complete", sha=sha256, run=run, status=str(row.get("status")), result=dump_json(row),
                          key=result_key)
        return cur.rowcount == 1

    def archived(self, sha256: str, location: str) -> None:
        self._write("archived", sha=sha256, to=location)

    def claims(self) -> list[dict[str, Any]]:
        cols = ("sha256", "source", "state", "run_id", "attempts", "status", "result_key", "archived_to", "reported_in")
        return [dict(zip(cols, r)) for r in self.conn.execute(SQL["claims"], self._args()).fetchall()]

    # ------------------------------------------------------------------------------------- runs
    def start_run(self, run: str, dest: str) -> None:
        self._write("start_run", run=run, dest=dest)

    def assign_report(self, run: str) -> int:
        """Give every finished, unreported document of the inbox to `run`'s report; how many."""
        total = 0
        while True:
            n = self._write("assign_report", run=run, batch=REPORT_BATCH).rowcount
            total += n
            if n < REPORT_BATCH:
                return total

    def report_rows(self, run: str) -> list[dict[str, Any]]:
        """The rows `run`'s report lists, in the order they finished."""
        return [load_json(r[0]) for r in self.conn.execute(SQL["report_rows"], self._args(run=run)).fetchall()]

    def finish_run(self, run: str, report_key: str, summary: dict[str, Any]) -> None:
        self._write("finish_run", run=run, key=report_key, summary=json.dumps(summary, default=str))

    def unwritten_reports(self, run: str) -> list[str]:
        """Earlier runs of this inbox that ended before writing their report (they died)."""
        return [str(r[0]) for r in self.conn.execute(SQL["unwritten_reports"], self._args(run=run)).fetchall()]
