"""Faults under one document (flows/outages.py), on a real PostgreSQL: a connection the server cut
is reconnected and the document processed again; a database that stays away is an `error` row
that says so; a local write that fails is a `storage` row. The batch-level scenarios (the server
killed mid-batch) are in test_faults.py."""
from __future__ import annotations

from pathlib import Path

import psycopg
from budget_support import write_invoices

from docassay.flows.context import open_context
from docassay.flows.jobs import JobOptions, build_job
from docassay.flows.outages import Outage, OutagePolicy, process_with_reconnect

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = str(ROOT / "examples/invoices/schema.json")


def _job(tmp_path: Path, dsn: str):
    return build_job(JobOptions(schema=SCHEMA, home=tmp_path / "home", db=dsn, generator="baseline"))


def test_a_cut_connection_is_reconnected_and_the_document_processed(tmp_path: Path, pg_fresh_dsn: str) -> None:
    doc = write_invoices(tmp_path / "in", n_formats=1, n_docs=1, seed=3)[0]
    job = _job(tmp_path, pg_fresh_dsn)
    outage = Outage()
    with open_context(job.settings) as ctx:
        pid = ctx.conn.info.backend_pid
        with psycopg.connect(pg_fresh_dsn, autocommit=True) as admin:     # the server ends our session
            assert admin.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone() == (True,)
        row = process_with_reconnect(str(doc), job, ctx, outage)
    assert row.status in ("passed", "repaired", "needs_review"), row.error
    assert outage.seen == 1 and not outage.down


def test_a_database_that_stays_away_is_an_error_row(tmp_path: Path, pg_fresh_dsn: str) -> None:
    doc = write_invoices(tmp_path / "in", n_formats=1, n_docs=1, seed=3)[0]
    job = _job(tmp_path, pg_fresh_dsn)
    outage = Outage(OutagePolicy(document_attempts=2, wait_s=0.5, poll_s=0.1))
    with open_context(job.settings) as ctx:
        conn = ctx.conn
        ctx.db.dsn = "host=/nonexistent-socket-dir dbname=x user=x"        # the server is gone for good
        conn.close()
        row = process_with_reconnect(str(doc), job, ctx, outage)
    assert row.status == "error" and row.error["kind"] == "database"
    assert "the database was unavailable" in row.error["message"] and "rerun" in row.error["message"]
    assert outage.down


def test_a_failed_local_write_is_a_storage_row(tmp_path: Path, pg_fresh_dsn: str) -> None:
    doc = write_invoices(tmp_path / "in", n_formats=1, n_docs=1, seed=3)[0]
    job = _job(tmp_path, pg_fresh_dsn)
    with open_context(job.settings) as ctx:
        index = tmp_path / "home" / "index"
        if index.exists():
            index.rmdir()
        index.parent.mkdir(parents=True, exist_ok=True)
        index.write_text("not a folder")               # the format index can no longer be written
        row = process_with_reconnect(str(doc), job, ctx, Outage())
    assert row.status == "error" and row.error["kind"] == "storage", row.error
    assert "could not write under the docassay home" in row.error["message"]
