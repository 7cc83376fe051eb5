"""Review decisions on a real PostgreSQL (flows.review_actions, shared by `docassay review` and
the review station): a correction is stored, joins the golden set and teaches the format — a
known format gets a repaired version through the reference gate, a layout never learned is
learned from the corrected record — and the next document of the layout reads right. Rejecting
keeps a record out of the golden set."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from docassay.extractors.synth.generator import make_document, make_format
from docassay.flows import lifecycle
from docassay.flows import review_actions as ra
from docassay.flows.batch import load_rule_pack, load_schema, run_batch
from docassay.flows.cli import main
from docassay.flows.context import open_context
from docassay.flows.pipeline import process_document
from docassay.infra import store
from docassay.infra.config import Settings
from tests.flows.review_fixtures import gates_job
from tests.flows.test_lifecycle import FORMAT_SEED, RENAMED, ROOT, header_schema, write

DRIFTED = dataclasses.replace(make_format(FORMAT_SEED), style=dataclasses.replace(
    make_format(FORMAT_SEED).style, labels={**make_format(FORMAT_SEED).style.labels, **RENAMED}))


def printed_truth(seed: int, fields) -> dict:
    """The ground truth of the drifted layout's document `seed` for `fields` (seller_name left
    out: the synthetic layout prints the street inside the name's line)."""
    truth = make_document(DRIFTED, seed).truth
    return {k: truth[k] for k in fields if k != "seller_name" and truth.get(k) is not None}


def test_cli_correction_repairs_the_known_format(tmp_path: Path, pg_fresh_dsn: str, capsys) -> None:
    schema_path = tmp_path / "schema.json"
    schema_path.write_text(json.dumps(header_schema()))
    settings = Settings.load(home=tmp_path / "home", db=pg_fresh_dsn, concurrency=1)
    job = gates_job(schema=header_schema(), settings=settings, policy=lifecycle.LifecyclePolicy(drift_threshold=10))
    originals = write(tmp_path / "in", make_format(FORMAT_SEED), [0, 1])
    drifted = write(tmp_path / "drift", DRIFTED, [10, 11])
    with open_context(settings) as ctx:
        assert [r.status for r in run_batch(originals, job, ctx, concurrency=1)] == ["passed", "passed"]
        first = process_document(drifted[0], job, ctx)
        fid = first.format["id"]
        assert first.status == "needs_review" and first.format["match"] == "known"
        truth = printed_truth(10, header_schema()["properties"])
        wrong = {k: v for k, v in truth.items() if first.record.get(k) != v}
        assert "invoice_number" in wrong and "gross_total" in wrong          # the renamed labels were not read
    sets = [f"--set={k}={v}" for k, v in wrong.items()]
    capsys.readouterr()
    assert main(["review", "correct", first.sha256[:12], *sets, "--by", "carol", "--schema", str(schema_path),
                 "--home", str(tmp_path / "home"), "--db", pg_fresh_dsn]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "corrected" in out and f"taught {fid} version 2 (patched)" in out
    with open_context(settings) as ctx:
        doc = store.get_document(ctx.conn, first.sha256)
        assert doc["status"] == "corrected" and all(doc["record"][k] == v for k, v in wrong.items())
        assert doc["format_version"] == 2
        assert [r["action"] for r in store.list_reviews(ctx.conn, first.sha256)] == ["correct"]
        golden = {g["sha256"]: g for g in store.golden_set(ctx.conn, fid)}
        assert golden[first.sha256]["record"] == doc["record"] and golden[first.sha256]["object_key"]
        v2 = store.active_version(ctx.conn, fid)
        assert v2.version == 2 and v2.produced_by == "review:carol" and v2.meta["reason"] == "correction"
        assert v2.meta["reference"]["new_failures"] == 0 and v2.meta["reference"]["improved"] == 1
        # The next document of the renamed layout reads right with version 2; the old layout still does.
        nxt = process_document(drifted[1], job, ctx)
        assert nxt.status == "passed" and nxt.format["version"] == 2
        assert all(nxt.record[k] == v for k, v in printed_truth(11, wrong).items())
        assert process_document(originals[1], job, ctx).status == "passed"


def test_correction_learns_a_layout_never_learned(tmp_path: Path, pg_fresh_dsn: str) -> None:
    settings = Settings.load(home=tmp_path / "home", db=pg_fresh_dsn, concurrency=1)
    schema = load_schema(ROOT / "examples/invoices/schema.json")
    job = gates_job(schema=schema, rules=load_rule_pack(ROOT / "examples/invoices/rules"), settings=settings)
    docs = write(tmp_path / "drift", DRIFTED, [10, 11])
    with open_context(settings) as ctx:
        row = process_document(docs[0], job, ctx)
        assert row.status == "needs_review" and row.format["id"] is None      # nothing verified: not learned
        truth = printed_truth(10, ["invoice_number", "issue_date", "due_date", "net_total", "gross_total"])
        wrong = {k: v for k, v in truth.items() if row.record.get(k) != v}
        assert wrong, row.record
        session = ra.Session(ctx, job)
        decision = ra.correct(session, row.sha256, ra.corrections_from(row.record, wrong, typed=True), by="dan")
        assert decision.ok and decision.teaching is not None, decision.summary()
        assert decision.teaching.taught and decision.teaching.how == "new_format", decision.summary()
        fid = decision.teaching.format_id
        doc = store.get_document(ctx.conn, row.sha256)
        assert doc["status"] == "corrected" and doc["format_id"] == fid and decision.golden == fid
        assert [g["sha256"] for g in store.golden_set(ctx.conn, fid)] == [row.sha256]
        assert store.active_version(ctx.conn, fid).produced_by == "review:dan"
        nxt = process_document(docs[1], job, ctx)
        assert nxt.format["id"] == fid and nxt.format["match"] == "known"
        assert nxt.status in ("passed", "repaired"), nxt.verification["violations"][:3]
        assert all(nxt.record[k] == v for k, v in printed_truth(11, wrong).items())


def test_reject_and_accept_and_refused_values(tmp_path: Path, pg_fresh_dsn: str, capsys) -> None:
    settings = Settings.load(home=tmp_path / "home", db=pg_fresh_dsn, concurrency=1)
    policy = lifecycle.LifecyclePolicy(new_format_status="pending_review", pending_may_pass=False)
    job = gates_job(schema=header_schema(), settings=settings, policy=policy)
    docs = write(tmp_path / "in", make_format(FORMAT_SEED), [0, 1, 2])
    with open_context(settings) as ctx:
        rows = run_batch(docs, job, ctx, concurrency=1)
        assert [r.status for r in rows] == ["needs_review"] * 3
        fid = rows[0].format["id"]
        s = ra.Session(ctx, job)
        assert main(["review", "reject", rows[2].sha256[:10], "--by", "erin", "--note", "not an invoice of ours",
                     "--home", str(tmp_path / "home"), "--db", pg_fresh_dsn]) == 0
        assert "rejected" in capsys.readouterr().out
        assert store.get_document(ctx.conn, rows[2].sha256)["status"] == "rejected"
        assert rows[2].sha256 not in {g["sha256"] for g in store.golden_set(ctx.conn, fid)}
        assert store.list_reviews(ctx.conn, rows[2].sha256)[0]["action"] == "reject"
        d = ra.accept(s, rows[0].sha256, by="erin")
        assert d.status == "reviewed" and d.golden == fid and d.teaching is None
        # A value the schema refuses is not stored.
        bad = ra.corrections_from(rows[1].record, {"gross_total": "a lot"}, schema=job.schema)
        d = ra.correct(s, rows[1].sha256, bad, by="erin")
        assert not d.ok and d.errors and store.get_document(ctx.conn, rows[1].sha256)["status"] == "needs_review"
        assert ra.corrections_from(rows[1].record, {"gross_total": str(rows[1].record["gross_total"])},
                                   schema=job.schema) == {}


def test_accept_learns_a_layout_never_learned(tmp_path: Path, pg_fresh_dsn: str) -> None:
    """A held document of a new layout leaves no format; a person's accept of it learns one from
    the accepted record, so the sender's next document is known (and finds the decision)."""
    settings = Settings.load(home=tmp_path / "home", db=pg_fresh_dsn, concurrency=1)
    job = gates_job(schema=header_schema(), settings=settings, min_confidence=1.0)    # nothing verifies: held
    docs = write(tmp_path / "in", make_format(FORMAT_SEED), [0, 1, 2])
    with open_context(settings) as ctx:
        rows = [process_document(p, job, ctx) for p in docs[:2]]
        assert [(r.status, r.format["id"]) for r in rows] == [("needs_review", None)] * 2
        # Without the job's schema (`docassay review accept` without --schema) nothing is learned.
        d0 = ra.accept(ra.Session(ctx, None), rows[1].sha256, by="fay")
        assert d0.status == "reviewed" and d0.teaching is None
        assert store.get_document(ctx.conn, rows[1].sha256)["format_id"] is None
        d = ra.accept(ra.Session(ctx, job), rows[0].sha256, by="fay")
        assert d.status == "reviewed" and d.teaching is not None, d.summary()
        assert d.teaching.taught and d.teaching.how == "new_format", d.summary()
        fid = d.teaching.format_id
        doc = store.get_document(ctx.conn, rows[0].sha256)
        assert doc["status"] == "reviewed" and doc["format_id"] == fid and d.golden == fid
        assert store.active_version(ctx.conn, fid).produced_by == "review:fay"
        assert [g["sha256"] for g in store.golden_set(ctx.conn, fid)] == [rows[0].sha256]
        nxt = process_document(docs[2], job, ctx)
        assert nxt.format["id"] == fid and nxt.format["match"] == "known"
