"""Shared set-up of the review station tests: a database with documents waiting for review."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from docassay.extractors.synth.generator import make_format
from docassay.flows import lifecycle
from docassay.flows.batch import run_batch
from docassay.flows.context import Job, open_context
from docassay.flows.review_app.app import AppConfig, create_app
from docassay.flows.review_app.security import SecurityConfig
from docassay.infra.config import Settings
from tests.flows.test_lifecycle import FORMAT_SEED, header_schema, write


def gates_job(**kw) -> Job:
    """A job whose gates alone decide: these tests are about review, not confidence, so a
    per-field confidence target (Job.min_confidence, where the calibrated confidence is merged)
    is pinned to 0, as the lifecycle tests do."""
    if "min_confidence" in {f.name for f in dataclasses.fields(Job)}:
        kw.setdefault("min_confidence", 0.0)
    kw.setdefault("generator", "baseline")
    return Job(**kw)


PENDING = lifecycle.LifecyclePolicy(new_format_status="pending_review", pending_may_pass=False)
BASE_URL = "http://127.0.0.1:8790"


def waiting_documents(tmp_path: Path, dsn: str, n: int = 3, *, seed: int = FORMAT_SEED) -> tuple[Settings, Job, list]:
    """`n` synthetic invoices of one format, all `needs_review` (their format is pending review)."""
    settings = Settings.load(home=tmp_path / "home", db=dsn, concurrency=1)
    job = gates_job(schema=header_schema(), settings=settings, policy=PENDING)
    docs = write(tmp_path / "in", make_format(seed), list(range(n)))
    with open_context(settings) as ctx:
        rows = run_batch(docs, job, ctx, concurrency=1)
    assert [r.status for r in rows] == ["needs_review"] * n
    return settings, job, rows


def app_for(settings: Settings, job: Job | None, ctx, **security) -> object:
    sec = SecurityConfig(**security) if security else SecurityConfig()
    return create_app(AppConfig(settings=settings, job=job, reviewer="tester", security=sec), ctx)
