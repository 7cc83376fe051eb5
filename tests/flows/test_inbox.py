"""Inbox runs as plain functions on real PostgreSQL: claim once by content hash, process, store,
move, report; every point where a run can die, replayed deterministically; the lease."""
from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import psycopg
import pytest

from docassay.extractors.synth import generate, to_pdf
from docassay.flows.inbox import ARCHIVE, Inbox, InboxSpec, handle_entry, resources, run_inbox
from docassay.flows.workers import close_all
from docassay.infra import store
from docassay.infra.db import Database, apply_migrations
from docassay.infra.db.dsql import dsql_violations
from docassay.infra.inbox_ledger import SQL, InboxLedger

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "examples/invoices/schema.json"
RULES = ROOT / "examples/invoices/rules"


@pytest.fixture(autouse=True)
def _fresh_workers():
    yield
    close_all()
    from docassay.flows import inbox
    inbox._resources.clear()


def drop_invoices(folder: Path, n_formats: int, n_docs: int, seed: int = 21) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for sd in generate(n_formats, n_docs, kind="invoice", seed=seed, split="dev"):
        p = folder / f"{sd.doc_id}.pdf"
        p.write_bytes(to_pdf(sd))
        out.append(p)
    return out


def make_spec(tmp_path: Path, dsn: str, **kw) -> InboxSpec:
    base = dict(inbox=str(tmp_path / "inbox"), schema=str(SCHEMA), dest=str(tmp_path / "results"),
                rules=str(RULES), home=str(tmp_path / "home"), db=dsn, settle_s=0.0, lease_s=30.0)
    return InboxSpec.of(**{**base, **kw})


def reports(dest: Path) -> dict[str, list[dict]]:
    return {p.parent.name: [json.loads(line) for line in p.read_text().splitlines()]
            for p in sorted((dest / "runs").glob("*/results.jsonl"))}


def waiting(inbox: Path) -> list[str]:
    return sorted(p.name for p in inbox.rglob("*") if p.is_file() and ARCHIVE not in p.parts
                  and not p.name.startswith("."))


def test_a_run_claims_processes_stores_moves_and_reports(tmp_path: Path, pg_fresh_dsn: str) -> None:
    docs = drop_invoices(tmp_path / "inbox", 1, 3)
    (tmp_path / "inbox" / ".partial.pdf").write_bytes(b"%PDF- being copied")      # hidden: left alone
    spec = make_spec(tmp_path, pg_fresh_dsn)
    s = run_inbox(spec, run_id="run-1")
    assert s.skipped is None and s.listed == 3 and s.outcomes == {"processed": 3} and s.reported == 3
    assert sum(s.by_status.values()) == 3 and not s.failures
    assert waiting(tmp_path / "inbox") == [], "every document was moved out of the inbox"
    assert (tmp_path / "inbox" / ".partial.pdf").exists()
    moved = sorted(p.name for p in (tmp_path / "inbox" / ARCHIVE / "run-1").iterdir())
    assert moved == sorted(p.name for p in docs)
    (rows,) = reports(tmp_path / "results").values()
    assert sorted(Path(r["source"]).name for r in rows) == moved
    for r in rows:
        obj = json.loads((tmp_path / "results" / "documents" / f"{r['sha256']}.json").read_text())
        assert obj == r, "one object per document, the same row as in results.jsonl"
    with psycopg.connect(pg_fresh_dsn) as conn:
        for r in rows:                                    # records and verdicts are in PostgreSQL
            stored = store.get_document(conn, r["sha256"])
            assert stored is not None and stored["status"] == r["status"] and stored["record"] == r["record"]
        claims = InboxLedger(conn, Inbox.open(spec.inbox).url).claims()
    assert [c["state"] for c in claims] == ["done"] * 3 and {c["reported_in"] for c in claims} == {"run-1"}
    assert all(c["archived_to"] and ARCHIVE in c["archived_to"] for c in claims)

    again = run_inbox(spec, run_id="run-2")
    assert again.listed == 0 and again.report is None and again.reported == 0
    assert list(reports(tmp_path / "results")) == ["run-1"], "an empty run writes no report"


def test_same_content_twice_is_one_document(tmp_path: Path, pg_fresh_dsn: str) -> None:
    (doc,) = drop_invoices(tmp_path / "inbox", 1, 1)
    shutil.copy(doc, tmp_path / "inbox" / "copy-of-it.pdf")
    spec = make_spec(tmp_path, pg_fresh_dsn)
    first = run_inbox(spec, run_id="r1")
    assert first.outcomes == {"processed": 1, "already_done": 1} and waiting(tmp_path / "inbox") == []
    assert [len(rows) for rows in reports(tmp_path / "results").values()] == [1]
    # while the first copy is still being processed, the second is a duplicate of this run: left for later
    shutil.copy(tmp_path / "inbox" / ARCHIVE / "r1" / doc.name, tmp_path / "inbox" / "third.pdf")
    res = resources(spec)
    (entry,) = res.inbox.entries()
    with psycopg.connect(pg_fresh_dsn, autocommit=True) as conn:
        ledger = InboxLedger(conn, res.inbox.url)
        assert ledger.acquire("r2", 30)
        conn.execute("UPDATE inbox_claims SET state = 'claimed', run_id = 'r2'")
        assert handle_entry(entry, res, "r2").outcome == "duplicate"
        assert waiting(tmp_path / "inbox") == ["third.pdf"]


def _die(conn: psycopg.Connection, inbox_url: str) -> None:
    """What the death of the lease holder looks like to the next run: its lease has expired."""
    conn.execute("UPDATE inbox_leases SET expires_at = now() - interval '1 second' WHERE inbox = %s", (inbox_url,))


def test_every_point_of_death_loses_nothing_and_duplicates_nothing(tmp_path: Path, pg_fresh_dsn: str) -> None:
    docs = drop_invoices(tmp_path / "inbox", 2, 2, seed=33)
    spec = make_spec(tmp_path, pg_fresh_dsn)
    res = resources(spec)
    entries = res.inbox.entries()
    url = res.inbox.url
    with psycopg.connect(pg_fresh_dsn, autocommit=True) as conn:
        apply_migrations(conn)
        ledger = InboxLedger(conn, url)
        assert ledger.acquire("dead", 30)
        ledger.start_run("dead", res.dest.url)
        # entry 0: claimed, then the run died mid-document
        sha0, _ = res.inbox.read(entries[0], 10**8)
        assert ledger.claim(sha0, entries[0].url, "dead").state == "claimed"
        # entry 1: finished and stored, then the run died before moving the file
        res_spec = spec
        out1 = handle_entry(entries[1], res, "dead")
        assert out1.outcome == "processed"
        shutil.copy(Path(out1.archived_to), entries[1].url)           # as if the move had not happened
        with conn.transaction():
            conn.execute("UPDATE inbox_claims SET archived_to = NULL WHERE sha256 = %s", (out1.sha256,))
        # entry 2: finished, moved, and assigned to the dead run's report, which was never written
        out2 = handle_entry(entries[2], res, "dead")
        assert ledger.assign_report("dead") == 2                       # entries 1 and 2
        _die(conn, url)
        assert res_spec.max_attempts == 3

        nxt = run_inbox(spec, run_id="next")
        assert nxt.recovered_reports == ["dead"]
        assert nxt.outcomes == {"processed": 2, "already_done": 1}, nxt.outcomes  # entry 0 again, entry 3 new
        claims = {c["sha256"]: c for c in ledger.claims()}
        assert claims[sha0]["attempts"] == 2 and claims[sha0]["run_id"] == "next"
        assert claims[out1.sha256]["run_id"] == "dead" and claims[out1.sha256]["archived_to"], "moved, not redone"
    got = reports(tmp_path / "results")
    assert sorted(got) == ["dead", "next"]
    listed = [r["sha256"] for rows in got.values() for r in rows]
    assert len(listed) == len(set(listed)) == len(docs), "every document in exactly one report"
    assert {r["sha256"] for r in got["dead"]} == {out1.sha256, out2.sha256}
    assert waiting(tmp_path / "inbox") == []


def test_a_document_that_kills_every_run_is_given_up(tmp_path: Path, pg_fresh_dsn: str) -> None:
    (doc,) = drop_invoices(tmp_path / "inbox", 1, 1, seed=44)
    spec = make_spec(tmp_path, pg_fresh_dsn, max_attempts=2)
    res = resources(spec)
    (entry,) = res.inbox.entries()
    sha, _ = res.inbox.read(entry, 10**8)
    with psycopg.connect(pg_fresh_dsn, autocommit=True) as conn:
        apply_migrations(conn)
        ledger = InboxLedger(conn, res.inbox.url)
        for run in ("a", "b"):                                          # two runs died on it
            assert ledger.acquire(run, 30)
            assert ledger.claim(sha, entry.url, run).state == "claimed"
            _die(conn, res.inbox.url)
    s = run_inbox(spec, run_id="c")
    (rows,) = reports(tmp_path / "results").values()
    assert s.by_status == {"error": 1} and rows[0]["error"]["kind"] == "crashed" and rows[0]["sha256"] == sha


def test_one_run_per_inbox(tmp_path: Path, pg_fresh_dsn: str) -> None:
    drop_invoices(tmp_path / "inbox", 1, 1, seed=55)
    spec = make_spec(tmp_path, pg_fresh_dsn)
    url = Inbox.open(spec.inbox).url
    with psycopg.connect(pg_fresh_dsn, autocommit=True) as conn:
        apply_migrations(conn)
        ledger = InboxLedger(conn, url)
        assert ledger.acquire("other", 30)
        busy = run_inbox(spec, run_id="mine")
        assert busy.skipped and "other" in busy.skipped and busy.listed == 0
        assert ledger.claim("f" * 64, "x", "mine").state == "no_lease", "no lease, no claim"
        assert ledger.renew("other", 30) and not ledger.renew("mine", 30)
        ledger.release("other")
        assert run_inbox(spec, run_id="mine").outcomes == {"processed": 1}
        assert ledger.holder() is None, "a finished run releases the inbox"


def test_concurrent_claims_under_optimistic_concurrency(pg_fresh_dsn: str) -> None:
    """Eight connections in REPEATABLE READ (how Aurora DSQL isolates) claim the same documents:
    conflicts are retried and each document is claimed exactly once."""
    Database(pg_fresh_dsn).connect().close()                           # migrate
    with psycopg.connect(pg_fresh_dsn, autocommit=True) as conn:
        assert InboxLedger(conn, "inbox/").acquire("run", 30)
    shas = [f"{i:064x}" for i in range(6)]
    results: list[tuple[str, str]] = []
    lock = threading.Lock()
    start = threading.Barrier(8)

    def worker() -> None:
        with psycopg.connect(pg_fresh_dsn, autocommit=True) as conn:
            conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            ledger = InboxLedger(conn, "inbox/")
            start.wait()
            for sha in shas:
                got = ledger.claim(sha, "src", "run")
                with lock:
                    results.append((sha, got.state))
    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for sha in shas:
        states = sorted(s for h, s in results if h == sha)
        assert states == ["claimed"] + ["duplicate"] * 7, states


def test_ledger_and_migration_sql_stay_inside_aurora_dsql() -> None:
    for name, text in SQL.items():
        assert dsql_violations(text) == [], name
    sql = (ROOT / "infra/db/migrations/0003_inbox.sql").read_text()
    assert dsql_violations(sql) == []
