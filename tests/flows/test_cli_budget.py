"""`docassay extract` and `docassay quota` end to end (real PostgreSQL, real Prefect flow, the real
CLI in this process): refusal before the run, exhaustion midway, per-document status in every
place, --retry-from, --max-error-ratio, --estimate. `--generator model` is the metered stand-in of
budget_support (only the model call is stood in for)."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Iterator

import psycopg
import pytest
from budget_support import MeteredBaselineScorer, write_invoices

from docassay.flows import jobs
from docassay.flows.batch import run_batch
from docassay.flows.cli import main
from docassay.flows.context import open_context
from docassay.flows.jobs import JobOptions, build_job
from docassay.infra.config import Settings
from docassay.infra.db import Database
from docassay.infra.quota import Subject, usage

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = str(ROOT / "examples/invoices/schema.json")
RULES = str(ROOT / "examples/invoices/rules")
pytestmark = pytest.mark.prefect                     # every batch here runs as a Prefect flow (prefect_home)


@pytest.fixture(scope="module", autouse=True)
def prefect_home() -> Iterator[None]:
    """These tests read the Prefect run's artifacts: batches run as Prefect flows
    (`--orchestrator prefect`); Prefect's ephemeral API keeps its state in a temporary home
    (started once for this module)."""
    with tempfile.TemporaryDirectory(prefix="docassay-prefect-") as d, pytest.MonkeyPatch.context() as mp:
        mp.setenv("DOCASSAY_ORCHESTRATOR", "prefect")
        if "PREFECT_API_URL" not in os.environ:
            mp.setenv("PREFECT_HOME", d)
        yield


@pytest.fixture(autouse=True)
def metered_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(jobs.GENERATORS, "model", MeteredBaselineScorer)


def _cli(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _store(tmp_path: Path, dsn: str) -> list[str]:
    return ["--home", str(tmp_path / "home"), "--db", dsn]


def _rows(path: Path) -> dict[str, dict]:
    return {r["source"]: r for r in map(json.loads, path.read_text().splitlines())}


def _count(dsn: str, table: str) -> int:
    with psycopg.connect(dsn) as c:
        return c.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def _latest_artifact(key: str):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
    from prefect.client.schemas.sorting import ArtifactSort
    with get_client(sync_client=True) as client:
        arts = client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key])),
                                     sort=ArtifactSort.CREATED_DESC, limit=1)
        assert arts, f"no {key} artifact"
        run = client.read_flow_run(arts[0].flow_run_id)
    data = arts[0].data
    return (json.loads(data) if isinstance(data, str) else data), run


def test_spent_quota_refuses_the_batch_before_it_starts(tmp_path: Path, pg_fresh_dsn: str,
                                                       capsys: pytest.CaptureFixture) -> None:
    docs = write_invoices(tmp_path / "in", n_formats=1, n_docs=1, seed=7)
    store = _store(tmp_path, pg_fresh_dsn)
    rc, out, _ = _cli(capsys, "quota", "set", "--user", "ada", "--output-tokens", "0", *store)
    assert rc == 0 and "user 'ada'" in out and "output 0 (set; default 1,000,000)" in out
    rc, _, err = _cli(capsys, "extract", str(docs[0].parent), "--schema", SCHEMA, "--out", str(tmp_path / "out"),
                      "--generator", "model", "--project", "acme", "--user", "ada", *store)
    assert rc == 1
    assert "quota_exceeded" in err and "output (0 tokens) quota of user 'ada' is spent" in err
    assert "nothing was processed" in err and "resets at midnight UTC" in err
    assert not (tmp_path / "out").exists(), "a refused batch writes nothing"
    assert _count(pg_fresh_dsn, "documents") == 0 and _count(pg_fresh_dsn, "runs") == 0
    # The flow itself refuses too (scheduled deployments do not go through the CLI).
    from docassay.flows.extract_flow import extract_flow
    from docassay.infra.quota import QuotaExceeded
    with pytest.raises(QuotaExceeded):
        extract_flow.fn(paths=[str(docs[0])], out=str(tmp_path / "out"),
                        options={"schema": str(SCHEMA), "home": str(tmp_path / "home"), "db": pg_fresh_dsn,
                                 "generator": "model", "user": "ada"})
    assert not (tmp_path / "out").exists()
    # Limits above the default are refused as bad usage.
    rc, _, err = _cli(capsys, "quota", "set", "--project", "acme", "--input-tokens", "60000000", *store)
    assert rc == 2 and "at most to the default" in err
    rc, out, _ = _cli(capsys, "quota", "show", "--user", "ada", "--json", *store)
    assert json.loads(out)[0]["effective"] == {"input": 10_000_000, "output": 0}


def test_estimate_reports_model_work_without_calling_it(tmp_path: Path, pg_fresh_dsn: str,
                                                       capsys: pytest.CaptureFixture) -> None:
    docs = write_invoices(tmp_path / "in", n_formats=3, n_docs=1, seed=23)
    store = _store(tmp_path, pg_fresh_dsn)
    rc, out, err = _cli(capsys, "extract", str(tmp_path / "in"), "--schema", SCHEMA, "--estimate",
                        "--generator", "model", "--project", "acme", "--user", "ada", *store)
    assert rc == 0, err
    est = json.loads(out)
    assert (est["documents"], est["known"], est["need_model"], est["new_formats"]) == (3, 0, 3, 3)
    per_doc = {d["source"]: d for d in est["per_document"]}
    assert set(per_doc) == {str(p) for p in docs}
    assert est["expected_tokens"]["input"] == sum(d["input_tokens"] for d in per_doc.values()) > 0
    assert est["fits_quota"] is True and "expected model tokens" in err
    settings = Settings.load(db=pg_fresh_dsn, home=tmp_path / "home")
    with Database(pg_fresh_dsn).connect() as conn:
        assert usage(conn, settings, Subject("project", "acme")).calls == 0, "an estimate calls no model"
        assert conn.execute("SELECT count(*) FROM formats").fetchone()[0] == 0, "an estimate learns nothing"
    # The estimate is what the batch then spends (one call per new format); afterwards the
    # estimate finds the learned formats known.
    job = build_job(JobOptions(schema=SCHEMA, rules=RULES, home=str(tmp_path / "home"), db=pg_fresh_dsn,
                               generator="model", project="acme", user="ada"))
    with open_context(job.settings) as ctx:
        rows = {r.source: r for r in run_batch([str(p) for p in docs], job, ctx)}
    job.budget.close()
    for src, r in rows.items():
        assert (r.model_tokens["input"], r.model_tokens["output"]) == \
            (per_doc[src]["input_tokens"], per_doc[src]["output_tokens"])
    with Database(pg_fresh_dsn).connect() as conn:
        assert usage(conn, settings, Subject("user", "ada")).used_input == est["expected_tokens"]["input"]
    learned = [s for s, r in rows.items() if r.status in ("passed", "repaired")]
    assert learned
    rc, out, _ = _cli(capsys, "extract", str(tmp_path / "in"), "--schema", SCHEMA, "--estimate", "--quiet",
                      "--generator", "model", "--project", "acme", "--user", "ada", *store)
    again = {d["source"]: d for d in json.loads(out)["per_document"]}
    assert all(again[s]["outcome"] == "known" and again[s]["input_tokens"] == 0 for s in learned)


@pytest.mark.slow
def test_exhaustion_midway_status_everywhere_then_retry(tmp_path: Path, pg_fresh_dsn: str,
                                                       capsys: pytest.CaptureFixture) -> None:
    folder = tmp_path / "in"
    write_invoices(folder, n_formats=4, n_docs=1, seed=31)
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\n" + b"\x00garbage" * 20)
    store = _store(tmp_path, pg_fresh_dsn)
    ident = ["--generator", "model", "--project", "acme", "--user", "ada"]
    rc, out, _ = _cli(capsys, "extract", str(folder), "--schema", SCHEMA, "--estimate", "--quiet", *ident, *store)
    est = json.loads(out)
    costs = sorted(d["input_tokens"] for d in est["per_document"] if d["outcome"] == "new")
    limit = costs[-1] + costs[0] // 2               # room for one call or two, never for all four
    assert sum(costs[:2]) > limit or sum(costs[:3]) > limit
    assert _cli(capsys, "quota", "set", "--project", "acme", "--input-tokens", str(limit), *store)[0] == 0

    out1 = tmp_path / "out"
    rc, _, err = _cli(capsys, "extract", str(folder), "--schema", SCHEMA, "--rules", RULES, "--out", str(out1),
                      *ident, *store)
    assert rc == 0, err
    rows = _rows(out1 / "results.jsonl")
    statuses = {s: r["status"] for s, r in rows.items()}
    assert statuses[str(folder / "broken.pdf")] == "error"
    refused = [s for s, st in statuses.items() if st == "quota_exceeded"]
    assert refused and len(refused) < 4, statuses
    spent = sum(r["model_tokens"]["input"] for r in rows.values())
    settings = Settings.load(db=pg_fresh_dsn, home=tmp_path / "home")
    with Database(pg_fresh_dsn).connect() as conn:
        u = usage(conn, settings, Subject("project", "acme"))
        run_id = conn.execute("SELECT id FROM runs ORDER BY started_at DESC LIMIT 1").fetchone()[0]
        in_db = dict(conn.execute("SELECT source, status FROM run_documents WHERE run_id = %s", (run_id,)).fetchall())
        doc_status = dict(conn.execute("SELECT source, status FROM documents").fetchall())
    assert u.used_input == spent <= limit and u.reserved_input == 0
    # Per-document status everywhere: CLI output, results rows, database, Prefect artifact.
    assert "documents that did not pass:" in err
    for s in refused:
        assert f"quota_exceeded {s}: daily input-token quota of project 'acme'" in err
        assert doc_status[s] == "quota_exceeded"
    assert in_db == statuses
    table, flow_run = _latest_artifact("docassay-documents")
    assert {t["document"]: t["status"] for t in table} == statuses
    assert flow_run.state.is_completed()

    # More quota, then rerun only what did not end well, writing over the same results file.
    assert _cli(capsys, "quota", "set", "--project", "acme", "--input-tokens", "default", *store)[0] == 0
    rc, _, err = _cli(capsys, "extract", "--retry-from", str(out1 / "results.jsonl"), "--schema", SCHEMA,
                      "--rules", RULES, "--out", str(out1), "--quiet", *ident, *store)
    assert rc == 0, err
    again = _rows(out1 / "results.jsonl")
    assert set(again) == set(rows)
    for s, r in rows.items():
        if r["status"] in ("passed", "repaired"):
            assert again[s] == r, "a row that ended well is copied, not recomputed"
        else:
            assert again[s]["timings_ms"] != r["timings_ms"], f"{s} was not retried"
    assert all(again[s]["status"] != "quota_exceeded" for s in refused)
    assert again[str(folder / "broken.pdf")]["status"] == "error"
    with Database(pg_fresh_dsn).connect() as conn:
        u2 = usage(conn, settings, Subject("project", "acme"))
    retried_tokens = sum(again[s]["model_tokens"]["input"] for s, r in rows.items()
                         if r["status"] not in ("passed", "repaired"))
    assert u2.used_input == spent + retried_tokens


@pytest.mark.slow
def test_max_error_ratio_fails_after_persisting_everything(tmp_path: Path, pg_fresh_dsn: str,
                                                          capsys: pytest.CaptureFixture) -> None:
    folder = tmp_path / "in"
    good = write_invoices(folder, n_formats=1, n_docs=1, seed=5)
    for i in range(7):                               # seven distinct messages (each names its file)
        (folder / f"notes-{i}.pdf").write_text(f"plain text {i}, not a PDF")
    store = _store(tmp_path, pg_fresh_dsn)
    out = tmp_path / "out"
    rc, _, err = _cli(capsys, "extract", str(folder), "--schema", SCHEMA, "--rules", RULES, "--out", str(out),
                      "--max-error-ratio", "0.5", "--quiet", *store)
    assert rc == 1
    assert "batch failed: 7 of 8 documents failed (87.5% > max error ratio 50.0%)" in err
    assert "the first 5 distinct errors:" in err
    listed = [line for line in err.splitlines() if line.startswith("  error: unsupported:")]
    assert len(listed) == 5 and all(len(line) <= 170 for line in listed)
    assert f"results kept in {out / 'results.jsonl'}" in err
    rows = _rows(out / "results.jsonl")
    assert len(rows) == 8 and rows[str(good[0])]["status"] in ("passed", "repaired", "needs_review")
    with psycopg.connect(pg_fresh_dsn) as c:
        assert c.execute("SELECT status FROM documents WHERE source = %s", (str(good[0]),)).fetchone()
        summary = json.loads(c.execute("SELECT summary FROM runs WHERE finished_at IS NOT NULL").fetchone()[0])
        errors_in_db = c.execute("SELECT count(*) FROM run_documents WHERE status = 'error'").fetchone()[0]
    assert summary["failed"] == 7 and errors_in_db == 7
    table, flow_run = _latest_artifact("docassay-documents")
    assert len(table) == 8 and flow_run.state.is_failed(), "the Prefect flow run fails too"
    # At or under the ratio the same batch succeeds.
    rc, _, err = _cli(capsys, "extract", str(folder), "--schema", SCHEMA, "--out", str(out), "--overwrite",
                      "--max-error-ratio", "0.875", "--quiet", *store)
    assert rc == 0, err
