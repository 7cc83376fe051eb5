"""`DbHistory.reviewed()`: the format's last document a person decided (the `confirm` policy of
`missing_printed`, verifiers.confidence.decision), read from the database."""
from __future__ import annotations

import psycopg

from docassay.infra import store
from docassay.infra.db.migrate import apply_migrations
from docassay.verifiers.history import DbHistory


def _doc(conn, sha: str, status: str, record: dict, format_id: str = "fmt-a") -> None:
    store.save_document(conn, sha256=sha, source=f"{sha}.pdf", status=status, format_id=format_id, format_version=1,
                        record=record, verification={}, provenance={})


def test_reviewed_is_the_formats_last_person_decided_document_never_an_auto_accepted_one(pg_fresh_dsn: str) -> None:
    with psycopg.connect(pg_fresh_dsn, autocommit=True) as conn:
        apply_migrations(conn)
        store.create_format(conn, "fmt-a", fingerprint=None, meta={})
        store.create_format(conn, "fmt-b", fingerprint=None, meta={})
        _doc(conn, "auto", "passed", {"invoice_number": "1"})
        assert DbHistory(conn, schema_key="k", format_id="fmt-a", sha256="new").reviewed() is None
        _doc(conn, "other-format", "reviewed", {"invoice_number": "9"}, format_id="fmt-b")
        _doc(conn, "held", "needs_review", {"invoice_number": "2"})
        assert DbHistory(conn, schema_key="k", format_id="fmt-a", sha256="new").reviewed() is None
        store.set_document_outcome(conn, "held", status="corrected", record={"invoice_number": "2", "due_date": None})
        got = DbHistory(conn, schema_key="k", format_id="fmt-a", sha256="new").reviewed()
        assert got is not None and got.sha256 == "held" and got.record["due_date"] is None
        assert DbHistory(conn, schema_key="k", format_id="fmt-a", sha256="held").reviewed() is None   # not itself
        assert DbHistory(conn, schema_key="k", format_id=None, sha256="new").reviewed() is None
