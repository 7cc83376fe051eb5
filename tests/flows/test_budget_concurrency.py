"""Two batches in two processes at once, one project quota, one PostgreSQL: together they never
spend more than the quota, and every token spent is in some row. Each process builds its job as
`docassay extract --generator model` does (budget_batch.py; the model call is the metered stand-in)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from budget_support import MeteredBaselineScorer, write_invoices

from docassay.extractors.instructions.generator import estimate_tokens
from docassay.extractors.parsers import parse, read_source
from docassay.flows.batch import load_schema
from docassay.infra.config import Settings
from docassay.infra.db import Database
from docassay.infra.quota import Subject, usage

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "examples/invoices/schema.json"
BATCH = Path(__file__).with_name("budget_batch.py")


@pytest.mark.slow
def test_two_concurrent_batches_never_overspend(tmp_path: Path, pg_fresh_dsn: str) -> None:
    folders = {"a": tmp_path / "a", "b": tmp_path / "b"}
    docs = {k: write_invoices(f, n_formats=3, n_docs=1, seed=50 + i) for i, (k, f) in enumerate(folders.items())}
    settings = Settings.load(db=pg_fresh_dsn, home=tmp_path / "home")
    schema = load_schema(SCHEMA)
    costs = {}
    for p in docs["a"] + docs["b"]:
        doc = parse(str(p), read_source(str(p), settings.limits.max_bytes), settings=settings)
        costs[str(p)] = estimate_tokens(doc, schema, MeteredBaselineScorer())[0]
    limit = sum(costs.values()) // 2                         # room for about half of the model calls
    Database(pg_fresh_dsn).connect().close()         # migrate before the batches race
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "DOCASSAY_QUOTA_PROJECT_INPUT_TOKENS": str(limit)}
    start_at = time.time() + 12.0                     # both batches start their documents together
    procs = {k: subprocess.Popen(
        [sys.executable, str(BATCH), str(start_at), str(folder), str(tmp_path / f"out-{k}"), str(tmp_path / f"home-{k}"),
         pg_fresh_dsn, "shared", f"user-{k}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for k, folder in folders.items()}
    rows = []
    for k, p in procs.items():
        _, err = p.communicate(timeout=540)
        assert p.returncode == 0, err[-3000:]
        rows += [json.loads(line) for line in (tmp_path / f"out-{k}" / "results.jsonl").read_text().splitlines()]
    limited = Settings.load(db=pg_fresh_dsn, home=tmp_path / "home", quota_project_input_tokens=limit)
    with Database(pg_fresh_dsn).connect() as conn:
        u = usage(conn, limited, Subject("project", "shared"))
    spent = sum(r["model_tokens"]["input"] for r in rows)
    called = sum(1 for r in rows if r["model_tokens"]["input"] > 0)
    refused = [r for r in rows if r["status"] == "quota_exceeded"]
    overspend = max(0, u.used_input - limit)
    print(f"\ntwo concurrent batches: limit {limit}, used {u.used_input}, {called} model calls, "
          f"{len(refused)} quota_exceeded, overspend {overspend}")
    assert overspend == 0
    assert u.used_input == spent and u.calls == called and u.reserved_input == 0
    assert refused and called, "the quota must run out while both batches run"
    assert all(u.remaining_input < costs[r["source"]] for r in refused), "no call refused that still fitted"
