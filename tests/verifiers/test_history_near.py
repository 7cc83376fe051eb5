"""`DbHistory.accepted_others()`: accepted documents of the same seller, issue date and gross total
under another invoice number (x-docassay `unique.near`), remembered by `flows.lifecycle.unique_entries`
and read from the database."""
from __future__ import annotations

import copy

import psycopg

from docassay.flows import lifecycle
from docassay.flows.context import Job
from docassay.infra import store
from docassay.infra.db.migrate import apply_migrations
from docassay.verifiers.history import DbHistory, near_key, value_key
from tests.verifiers.conftest import GOOD, SCHEMA

NEAR_SCHEMA = copy.deepcopy(SCHEMA)
NEAR_SCHEMA["properties"]["invoice_number"]["x-docassay"]["unique"]["near"] = ["issue_date", "gross_total"]
PER, NEAR = ("seller_name",), ("issue_date", "gross_total")


def test_accepted_others_are_the_same_sellers_twins_under_another_number(pg_fresh_dsn: str) -> None:
    job = Job(schema=NEAR_SCHEMA, generator="baseline")
    entries = lifecycle.unique_entries(job, GOOD)
    assert len(entries) == 2                                        # the number per seller, and by its near key
    with psycopg.connect(pg_fresh_dsn, autocommit=True) as conn:
        apply_migrations(conn)
        store.remember_values(conn, schema_key=job.key, sha256="first", format_id="fmt-a", entries=entries)
        other_day = dict(GOOD, invoice_number="RE-2024-002", issue_date="2024-03-06")
        store.remember_values(conn, schema_key=job.key, sha256="next-day", format_id="fmt-a",
                              entries=lifecycle.unique_entries(job, other_day))

        def others(record: dict, sha: str = "new") -> list[tuple[str, str]]:
            h = DbHistory(conn, schema_key=job.key, format_id="fmt-b", sha256=sha)
            nk = near_key(record, PER, NEAR)
            assert nk is not None
            return h.accepted_others("invoice_number", value_key(record["invoice_number"]), nk)

        assert others(dict(GOOD, invoice_number="RE-2024-0O1")) == [("first", value_key("RE-2024-001"))]
        assert others(GOOD) == []                                   # the same number: a plain duplicate
        assert others(dict(GOOD, invoice_number="X", gross_total=120.0)) == []
        assert others(dict(GOOD, invoice_number="X"), sha="first") == []      # never itself
        plain = Job(schema=SCHEMA, generator="baseline")                      # no `near`: nothing extra kept
        assert [e[0] for e in lifecycle.unique_entries(plain, GOOD)] == ["invoice_number"]
