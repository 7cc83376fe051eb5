"""Token budgets with the real MoE model behind `--generator model` (skipped until its weights
ship): the quota reserves exactly what the model reports, and refuses the call that does not fit."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from budget_support import write_invoices

from docassay.flows.batch import run_batch
from docassay.flows.context import open_context
from docassay.flows.estimate import estimate_batch
from docassay.flows.jobs import JobOptions, build_job
from docassay.infra.db import Database
from docassay.infra.quota import QuotaBudget, Subject, usage

ms = pytest.importorskip("docassay.extractors.instructions.model_scorer", reason="the MoE model is not in this tree")
WEIGHTS = Path(os.environ.get(ms.WEIGHTS_ENV) or ms.DEFAULT_WEIGHTS)
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not WEIGHTS.is_file(), reason=f"model weights not shipped yet ({WEIGHTS})")


@pytest.mark.slow
def test_real_model_calls_are_reserved_exactly_and_refused_when_over(tmp_path: Path, pg_fresh_dsn: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    docs = write_invoices(tmp_path / "in", n_formats=2, n_docs=1, seed=61)
    opts = JobOptions(schema=ROOT / "examples/invoices/schema.json", rules=ROOT / "examples/invoices/rules",
                      home=str(tmp_path / "home"), db=pg_fresh_dsn, generator="model", project="acme", user="ada")
    job = build_job(opts)
    assert isinstance(job.budget, QuotaBudget), "the MoE model must be metered"
    with open_context(job.settings) as ctx:
        est = estimate_batch([str(p) for p in docs], job, ctx)
    cost = {d.source: (d.input_tokens, d.output_tokens) for d in est.documents}
    assert all(c[0] > 0 and c[1] > 0 for c in cost.values()), cost
    job.budget.close()

    limit = max(c[0] for c in cost.values())          # one call fits, never both
    monkeypatch.setenv("DOCASSAY_QUOTA_USER_INPUT_TOKENS", str(limit))
    job = build_job(opts)
    with open_context(job.settings) as ctx:
        rows = run_batch([str(p) for p in docs], job, ctx, concurrency=1)
    job.budget.close()
    called = [r for r in rows if r.model_tokens["input"] > 0]
    refused = [r for r in rows if r.status == "quota_exceeded"]
    assert len(called) == 1 and len(refused) == 1, [(r.status, r.model_tokens) for r in rows]
    assert tuple(called[0].model_tokens.values()) == cost[called[0].source], "the model reports what was reserved"
    with Database(pg_fresh_dsn).connect() as conn:
        u = usage(conn, job.settings, Subject("user", "ada"))
    assert u.used_input == called[0].model_tokens["input"] <= limit and u.reserved_input == 0
