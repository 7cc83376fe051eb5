"""Issue 17: SIGTERM and SIGINT stop a running `docassay extract` batch: no new document starts,
every row written is kept (whole JSON lines, in the output folder's partial file, which the same
command resumes: flows/output.py), the run is recorded as interrupted in the database, and the
process exits 128 + the signal (143, 130) instead of hanging or aborting."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from docassay.flows.cli import main
from docassay.flows.output import partial_path

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "examples/invoices/schema.json"
WAIT_S = 120          # generous bounds so a busy machine never fails the test; nothing here is timed


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("signal-docs")
    assert main(["synth", "--out", str(out), "--formats", "8", "--docs", "3", "--split", "unseen"]) == 0
    return out


def _rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]   # every line whole JSON


@pytest.mark.parametrize("signum, status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_the_batch_and_keeps_every_row(signum: int, status: int, documents: Path, tmp_path: Path,
                                                      pg_fresh_dsn: str) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PREFECT_API_URL", None)
    command = [sys.executable, "-m", "docassay.flows.cli", "extract", str(documents), "--schema", str(SCHEMA),
               "--out", str(out), "--home", str(tmp_path / "home"), "--db", pg_fresh_dsn,
               "--generator", "baseline", "--concurrency", "1", "--quiet"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    partial = partial_path(out / "results.jsonl")
    deadline = time.monotonic() + WAIT_S
    while not _rows(partial) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, f"the batch ended before it could be stopped: {proc.communicate()[1]}"
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == status, err
    assert f"stopped by {signal.Signals(signum).name}" in err
    assert "Traceback" not in err and "terminate called" not in err
    rows = _rows(partial)
    total = len(list(documents.rglob("*.pdf")))
    assert 1 <= len(rows) < total, "stopped early, and what was finished is kept"
    assert not (out / "results.jsonl").exists(), "results.jsonl is only ever a whole batch"
    with psycopg.connect(pg_fresh_dsn) as conn:
        (summary,) = conn.execute("SELECT summary FROM runs WHERE finished_at IS NOT NULL").fetchone()
        n_docs = conn.execute("SELECT count(*) FROM run_documents").fetchone()[0]
        stored = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    summary = summary if isinstance(summary, dict) else json.loads(summary)
    assert summary["interrupted"]["signal"] == signal.Signals(signum).name
    assert summary["total"] == len(rows) == n_docs
    assert stored >= len(rows)
    if signum == signal.SIGTERM:          # the same command again resumes: the stopped run's rows kept as they were
        again = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=10 * WAIT_S)
        assert again.returncode == 0, again.stderr
        final = _rows(out / "results.jsonl")
        assert len(final) == total and len({r["source"] for r in final}) == total
        assert all(r in final for r in rows)


def test_a_stop_request_ends_the_local_batch_early(documents: Path, tmp_path: Path, pg_fresh_dsn: str) -> None:
    """In-process: the dispatcher starts nothing after the request and the batch raises
    BatchInterrupted with the rows it wrote."""
    from docassay.flows.extract_batch import BatchInterrupted, ThreadDispatch, extract_batch
    from docassay.flows.jobs import JobOptions
    from docassay.flows.results import Row
    from docassay.flows.signals import StopRequest

    stop = StopRequest()

    class StopAfterFirst(ThreadDispatch):
        def run(self, sources, job, ctx, stop_):
            for i, row in super().run(sources, job, ctx, stop_):
                stop.set(signal.SIGTERM)
                yield i, row

    opts = JobOptions(schema=SCHEMA, home=tmp_path / "home", db=pg_fresh_dsn, generator="baseline", concurrency=1)
    with pytest.raises(BatchInterrupted) as exc:
        extract_batch([str(documents)], opts, str(tmp_path / "out"), dispatch=StopAfterFirst(1), stop=stop)
    assert exc.value.context["done"] == 1 and exc.value.context["signal"] == signal.SIGTERM
    rows = _rows(partial_path(tmp_path / "out/results.jsonl"))
    assert len(rows) == 1 and Row(**{k: v for k, v in rows[0].items() if k in Row.__dataclass_fields__})


@pytest.mark.slow
def test_sigint_during_ocr_of_a_scan_exits_130_without_aborting(tmp_path: Path, pg_fresh_dsn: str) -> None:
    """The document in flight is an OCR call in native code: it is abandoned after the grace period
    and the process exits 130, not 134 (`terminate called without an active exception`)."""
    scans = tmp_path / "scans"
    assert main(["synth", "--out", str(scans), "--kind", "receipt", "--formats", "2", "--docs", "2",
                 "--render", "png"]) == 0
    images = sorted(scans.rglob("*.png"))
    assert images
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PREFECT_API_URL", None)
    proc = subprocess.Popen([sys.executable, "-m", "docassay.flows.cli", "extract", *map(str, images), "--schema",
                             str(ROOT / "examples/receipts/schema.json"), "--out", str(tmp_path / "out"),
                             "--home", str(tmp_path / "home"), "--db", pg_fresh_dsn, "--generator", "baseline",
                             "--concurrency", "1", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    deadline = time.monotonic() + WAIT_S
    partial = partial_path(tmp_path / "out/results.jsonl")
    while not partial.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)                     # the first image is being read (model loading or OCR)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 130, err
    assert "terminate called" not in err and "Traceback" not in err
    assert len(_rows(partial)) < len(images) and not (tmp_path / "out/results.jsonl").exists()
