"""Token budgets in the pipeline (real PostgreSQL, real quota machinery; the model call is the
metered stand-in of budget_support): a quota that runs out midway stops model calls only."""
from __future__ import annotations

from pathlib import Path

import pytest
from budget_support import MeteredBaselineScorer, header_schema, write_invoices

from docassay.extractors.instructions.generator import estimate_tokens
from docassay.extractors.parsers import parse, read_source
from docassay.flows.batch import load_rule_pack, load_schema, run_batch
from docassay.flows.context import Job, open_context
from docassay.infra import store
from docassay.infra.config import Settings
from docassay.infra.db import Database
from docassay.infra.quota import QuotaBudget, Subject, subjects_for, usage

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = load_schema(ROOT / "examples/invoices/schema.json")
RULES = ROOT / "examples/invoices/rules"


def _settings(tmp_path: Path, dsn: str, **kw) -> Settings:
    return Settings.load(home=tmp_path / "home", db=dsn, concurrency=2, quota_project="acme", quota_user="ada", **kw)


def _cost(path: Path, settings: Settings, schema: dict = SCHEMA) -> tuple[int, int]:
    doc = parse(str(path), read_source(str(path), settings.limits.max_bytes), settings=settings)
    return estimate_tokens(doc, schema, MeteredBaselineScorer())


@pytest.mark.slow
def test_quota_running_out_midway_stops_model_calls_only(tmp_path: Path, pg_fresh_dsn: str) -> None:
    known_docs = write_invoices(tmp_path / "known", n_formats=2, n_docs=2, seed=3)
    new_docs = write_invoices(tmp_path / "new", n_formats=5, n_docs=1, seed=41)
    plain = _settings(tmp_path, pg_fresh_dsn)
    rules: list = []                             # budgets are under test here, not how well items are read
    schema = header_schema(SCHEMA)
    with open_context(plain) as ctx:             # learn the first formats, unmetered
        # min_confidence 0: the gates alone decide which formats are learned (budgets are under test)
        first = run_batch([str(p) for p in known_docs], Job(schema=schema, rules=rules, settings=plain,
                                                            min_confidence=0.0, generator="baseline"), ctx)
    known_ok = [r.source for r in first if r.status in ("passed", "repaired")]
    assert known_ok, [r.status for r in first]

    costs = {str(p): _cost(p, plain, schema) for p in new_docs}
    limit = max(c[0] for c in costs.values()) + 50
    assert sum(c[0] for c in costs.values()) > 2 * limit, "the quota must run out midway"
    settings = _settings(tmp_path, pg_fresh_dsn, quota_user_input_tokens=limit)
    budget = QuotaBudget(Database(pg_fresh_dsn), settings, subjects_for(settings))
    job = Job(schema=schema, rules=rules, settings=settings, generator="model", scorer=MeteredBaselineScorer(),
              budget=budget, min_confidence=0.0)
    sources = [s for pair in zip(known_ok, list(costs)) for s in pair] + list(costs)[len(known_ok):]
    with open_context(settings) as ctx:
        rows = run_batch(sources, job, ctx)
        by = {r.source: r for r in rows}
        stored = {r.source: store.get_document(ctx.conn, r.sha256) for r in rows}
    budget.close()

    for src in known_ok:                             # known formats keep being processed, with no model
        r = by[src]
        assert r.status in ("passed", "repaired") and r.format["match"] == "known", (r.status, r.error)
        assert r.model_tokens == {"input": 0, "output": 0} and "generate" not in r.timings_ms
    refused = [by[s] for s in costs if by[s].status == "quota_exceeded"]
    called = [by[s] for s in costs if by[s].model_tokens["input"] > 0]
    assert refused and called, [by[s].status for s in costs]
    assert len(refused) + len(called) == len(costs)
    for r in refused:
        assert r.error["kind"] == "quota_exceeded" and "user 'ada'" in r.error["message"]
        assert "generate" not in r.timings_ms, "no model call may start without a reservation"
        assert stored[r.source]["status"] == "quota_exceeded", "the status is in the database too"
    for r in called:
        assert tuple(r.model_tokens.values()) == costs[r.source], "the row reports what the call cost"

    with Database(pg_fresh_dsn).connect() as conn:
        u = usage(conn, settings, Subject("user", "ada"))
        p = usage(conn, settings, Subject("project", "acme"))
    spent = sum(r.model_tokens["input"] for r in called)
    assert u.used_input == spent == p.used_input <= limit, "overspend"
    assert (u.reserved_input, u.reserved_output, u.calls) == (0, 0, len(called))
    assert u.refused >= len(refused)
    # Nobody was refused while the call still fitted: what is left is less than each refused call.
    assert all(u.remaining_input < costs[r.source][0] for r in refused)


def test_unmetered_generator_never_touches_the_budget(tmp_path: Path, pg_fresh_dsn: str) -> None:
    docs = write_invoices(tmp_path / "in", n_formats=1, n_docs=1, seed=5)
    settings = _settings(tmp_path, pg_fresh_dsn, quota_user_input_tokens=0)
    budget = QuotaBudget(Database(pg_fresh_dsn), settings, subjects_for(settings))
    job = Job(schema=SCHEMA, rules=load_rule_pack(RULES), settings=settings, budget=budget,
              generator="baseline")   # baseline: 0 tokens
    with open_context(settings) as ctx:
        rows = run_batch([str(p) for p in docs], job, ctx)
    assert rows[0].status != "quota_exceeded" and "generate" in rows[0].timings_ms
    assert budget.usages()[1].calls == 0
    budget.close()
