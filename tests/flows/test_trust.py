"""Learning only from trust, on a real PostgreSQL with synthetic invoices (baseline generator):

* a record below the confidence target is not learned from: no format, no golden record, no
  stale-value history; an accepted record with a doubtful optional field passes but is not golden;
* a person's correction survives a re-run and a --retry-from of the batch;
* the same bytes under another name in another batch name their first sighting (`duplicate_of`).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from test_lifecycle import write as write_format

from docassay.extractors.synth.generator import make_format
from docassay.flows.batch import load_schema, run_batch
from docassay.flows.cli import main as cli
from docassay.flows.context import Job, open_context
from docassay.flows.pipeline import process_document
from docassay.flows.results import ResultsWriter
from docassay.flows.retry import plan_retry
from docassay.infra import store
from docassay.infra.config import Settings

ROOT = Path(__file__).resolve().parents[2]
FORMAT_SEED = 1946619406                  # a dev-split synthetic format (never a training format)


def schema(optional_target: float | None = None) -> dict:
    full = load_schema(ROOT / "examples/invoices/schema.json")
    keep = ["invoice_number", "issue_date", "seller_name", "gross_total", "currency"]
    props = {k: full["properties"][k] for k in keep}
    if optional_target is not None:
        props["net_total"] = {"type": "number", "x-docassay": {"min_confidence": optional_target}}
    return dict(full, required=keep, properties=props)


def write(folder: Path, seeds) -> list[str]:
    return write_format(folder, make_format(FORMAT_SEED), seeds)


def job_for(tmp_path: Path, dsn: str, target: float, sch: dict | None = None) -> Job:
    settings = Settings.load(home=tmp_path / "home", db=dsn, concurrency=1)
    return Job(schema=sch or schema(), settings=settings, min_confidence=target, generator="baseline")


def test_below_the_target_nothing_is_learned(tmp_path: Path, pg_fresh_dsn: str) -> None:
    docs = write(tmp_path / "in", [0, 1])
    job = job_for(tmp_path, pg_fresh_dsn, 1.0)                # no estimate reaches 1.0
    with open_context(job.settings) as ctx:
        rows = run_batch(docs, job, ctx, concurrency=1)
        assert [r.status for r in rows] == ["needs_review"] * 2
        assert all(r.doubtful for r in rows) and all(r.format["id"] is None for r in rows)
        assert rows[0].fields["gross_total"]["status"] == "doubtful"
        assert rows[0].record.get("gross_total") is not None                      # values kept
        assert store.list_formats(ctx.conn) == []
        n = ctx.conn.execute("SELECT count(*) FROM accepted_values").fetchone()[0]
        assert n == 0 and ctx.conn.execute("SELECT count(*) FROM golden").fetchone()[0] == 0
        # the same documents at a target they reach: learned, golden, remembered
        job.min_confidence = 0.0
        rows = run_batch(docs, job, ctx, concurrency=1)
        assert [r.status for r in rows] == ["passed"] * 2, [r.verification["violations"] for r in rows]
        assert store.count_golden(ctx.conn, rows[0].format["id"]) == 2
        assert ctx.conn.execute("SELECT count(DISTINCT sha256) FROM accepted_values").fetchone()[0] == 2


def test_a_doubtful_optional_field_passes_but_is_not_golden(tmp_path: Path, pg_fresh_dsn: str) -> None:
    docs = write(tmp_path / "in", [0])
    job = job_for(tmp_path, pg_fresh_dsn, 0.0, schema(optional_target=1.0))
    with open_context(job.settings) as ctx:
        row = process_document(docs[0], job, ctx)
        assert row.status == "passed" and row.fields["net_total"]["status"] == "doubtful"
        assert row.format["id"] is not None and store.count_golden(ctx.conn, row.format["id"]) == 0


def test_a_correction_survives_a_rerun_and_retry_from(tmp_path: Path, pg_fresh_dsn: str, capsys) -> None:
    docs = write(tmp_path / "in", [0])
    job = job_for(tmp_path, pg_fresh_dsn, 1.0)
    out = tmp_path / "out" / "results.jsonl"
    with open_context(job.settings) as ctx:
        first = process_document(docs[0], job, ctx)
        assert first.status == "needs_review"
        w = ResultsWriter(out)
        w.write(first)
        w.close()
        store_args = ["--db", pg_fresh_dsn, "--home", str(tmp_path / "home")]
        capsys.readouterr()
        assert cli(["review", "list", *store_args]) == 0
        assert f"doubtful [{first.doubtful[0]}]" in capsys.readouterr().out
        assert cli(["review", "show", first.sha256, *store_args]) == 0
        assert "doubtful  " in capsys.readouterr().out
        assert cli(["review", "correct", first.sha256, "--set", "invoice_number=FIXED-1", "--by", "ada",
                    "--db", pg_fresh_dsn, "--home", str(tmp_path / "home")]) == 0
        job.min_confidence = 0.0                               # a run that would auto-accept what it reads
        again = process_document(docs[0], job, ctx)
        assert again.status == "corrected" and again.record["invoice_number"] == "FIXED-1"
        assert again.review["action"] == "correct" and again.review["by"] == "ada"
        assert again.fields["invoice_number"]["confidence"] == 1.0
        assert again.fields["invoice_number"]["checks"][0]["check"] == "review"
        assert store.get_document(ctx.conn, first.sha256)["record"]["invoice_number"] == "FIXED-1"
        # --retry-from the first results: the needs_review row is rerun and keeps the correction
        plan = plan_retry(out)
        assert plan.sources == [docs[0]]
        (retried,) = run_batch(plan.sources, job, ctx, concurrency=1)
        assert retried.status == "corrected" and retried.record["invoice_number"] == "FIXED-1"
        assert json.loads(json.dumps(retried.to_json()))["review"]["action"] == "correct"


def test_the_same_bytes_under_another_name_in_another_batch(tmp_path: Path, pg_fresh_dsn: str) -> None:
    (doc,) = write(tmp_path / "in", [0])
    copy = tmp_path / "other" / "copy-of-invoice.pdf"
    copy.parent.mkdir()
    shutil.copy(doc, copy)
    job = job_for(tmp_path, pg_fresh_dsn, 0.0)
    with open_context(job.settings) as ctx:
        (a,) = run_batch([doc], job, ctx, concurrency=1)
        assert a.status == "passed" and a.duplicate_of is None
        (b,) = run_batch([str(copy)], job, ctx, concurrency=1)
        assert b.sha256 == a.sha256
        assert b.duplicate_of["source"] == doc and b.duplicate_of["sha256"] == a.sha256
        assert b.duplicate_of["first_seen"] and b.duplicate_of["status"] == "passed"
        assert b.to_json()["duplicate_of"]["source"] == doc
        (c,) = run_batch([str(copy)], job, ctx, concurrency=1)      # the first sighting stays the first
        assert c.duplicate_of["source"] == doc


def test_min_confidence_out_of_range_is_a_usage_error(tmp_path: Path, capsys) -> None:
    schema_path = tmp_path / "schema.json"
    schema_path.write_text(json.dumps(schema()))
    assert cli(["extract", str(tmp_path), "--schema", str(schema_path), "--out", str(tmp_path / "out"),
                "--min-confidence", "1.5"]) == 2
    assert "--min-confidence must be between 0 and 1" in capsys.readouterr().err
