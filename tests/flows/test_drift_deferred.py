"""Issue 15: in a batch, drift is proposed after the last document instead of on the failing
document's path. The failing documents are read as matched (needs_review with the version they
matched, nothing inline); one proposal per format follows the batch, goes through the reference
gate, and its outcome is in the run's record; then the batch's held documents of that format are
read again with the new version, and an accepted second reading replaces the row (in results.jsonl
and the database); the next batch reads both layouts with the new version."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import psycopg
import pytest
from test_lifecycle import FORMAT_SEED, RENAMED, header_schema, write

from docassay.extractors.synth.generator import make_format
from docassay.flows import lifecycle
from docassay.flows.context import Job
from docassay.flows.extract_batch import ThreadDispatch, run_documents
from docassay.infra import store
from docassay.infra.config import Settings


@pytest.mark.slow
def test_drift_is_proposed_after_the_batch(tmp_path: Path, pg_fresh_dsn: str) -> None:
    settings = Settings.load(home=tmp_path / "home", db=pg_fresh_dsn, concurrency=1)
    # min_confidence 0: the gates alone decide (this test is about when drift is proposed, not
    # confidence; tests/flows/test_trust.py covers the target), as in test_lifecycle.gates_job
    job = Job(schema=header_schema(), settings=settings, policy=lifecycle.LifecyclePolicy(drift_threshold=2),
              generator="baseline", min_confidence=0.0)
    assert job.policy.drift_deferred, "the default for batches"
    fmt = make_format(FORMAT_SEED)
    drifted = dataclasses.replace(fmt, style=dataclasses.replace(fmt.style, labels={**fmt.style.labels, **RENAMED}))
    originals = write(tmp_path / "in", fmt, [0, 1, 2])
    drift_docs = write(tmp_path / "drift", drifted, [10, 11, 12])

    first = run_documents(originals, job, tmp_path / "out1", dispatch=ThreadDispatch(1), quiet=True)
    assert [r.status for r in first.rows] == ["passed"] * 3
    fid = first.rows[0].format["id"]

    held = run_documents(drift_docs, dataclasses.replace(job, repair=False), tmp_path / "out0",
                         dispatch=ThreadDispatch(1), quiet=True)
    assert [r.status for r in held.rows] == ["needs_review"] * 3, "as matched, without repair: no drift at all"

    second = run_documents(drift_docs, job, tmp_path / "out2", dispatch=ThreadDispatch(1), quiet=True)
    with psycopg.connect(pg_fresh_dsn) as conn:
        (summary,) = conn.execute("SELECT summary FROM runs WHERE id = %s", (second.run_id,)).fetchone()
        active = store.active_version(conn, fid)
        stored = dict(conn.execute("SELECT source, status FROM documents WHERE source = ANY(%s)",
                                   (drift_docs,)).fetchall())
    summary = summary if isinstance(summary, dict) else json.loads(summary)
    assert summary["drift"] == [{**summary["drift"][0], "format_id": fid, "outcome": "new_version"}]
    assert len(summary["drift"]) == 1, "one proposal per format"
    assert active.version == summary["drift"][0]["version"] > 1 and active.meta["reason"] == "drift"
    # the held rows were read again with the new version: accepted, and so in every record of them
    assert summary["drift_reread"] == {"documents": 3, "accepted": 3}
    assert [r.status for r in second.rows] == ["passed"] * 3
    assert all(r.format["id"] == fid and r.format["version"] == active.version for r in second.rows)
    assert all("drift" not in r.timings_ms for r in second.rows), "nothing proposed on a document's path"
    written = [json.loads(x) for x in second.results_path.read_text().splitlines()]
    assert [(r["source"], r["status"]) for r in written] == [(s, "passed") for s in drift_docs]
    assert stored == {s: "passed" for s in drift_docs} and summary["by_status"] == {"passed": 3}

    third = run_documents(drift_docs[:1] + originals[:1], job, tmp_path / "out3", dispatch=ThreadDispatch(1),
                          quiet=True)
    assert [r.status for r in third.rows] == ["passed", "passed"]
    assert {r.format["version"] for r in third.rows} == {active.version}
