"""The pipeline against a model server that scales while the batch runs gives the rows of an in-process run.

Real parts throughout: PostgreSQL (one fresh database per run), the pipeline's `run_batch`, a
4-process server on loopback, a freshly initialised residual ranker with the pipeline's feature sizes (its
choices are poor, which does not matter: both runs must make the same ones). Documents are processed
one at a time so that which format each learns does not depend on thread timing; a second client
keeps sending documents meanwhile, so the pipeline's calls are batched with other callers' while
the server scales 1 -> 2 -> 4 -> 2 -> 1 and round again.
"""
from __future__ import annotations

import itertools
import threading
from pathlib import Path

import pytest
import torch
from serve_helpers import ServerProcess, random_docs, write_weights

from docassay.extractors.instructions.model_scorer import model_scorer
from docassay.flows.batch import collect_sources, ground_truth_sidecar, load_rule_pack, load_schema, run_batch
from docassay.flows.context import Job, open_context
from docassay.flows.remote_scorer import RemoteScorer
from docassay.infra.config import Settings
from docassay.infra.serve.errors import ServeError
from tests.conftest import fresh_database

pytestmark = [pytest.mark.distributed, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "examples/invoices/schema.json"
RULES = ROOT / "examples/invoices/rules"
COMPARED = ("status", "sha256", "record", "provenance", "attempts", "model_tokens", "repairs")


def _run(sources: list[str], scorer, home: Path, dsn: str, generator: str = "model") -> dict[str, dict]:
    settings = Settings.load(home=home, db=dsn, concurrency=1)
    job = Job(schema=load_schema(SCHEMA), rules=load_rule_pack(RULES), settings=settings, generator=generator)
    job.scorer = scorer
    with open_context(settings) as ctx:
        rows = run_batch(sources, job, ctx, concurrency=1)
    out = {}
    for r in rows:
        d = r.to_json()
        out[r.source] = {k: d.get(k) for k in COMPARED} | {
            "match": r.format.get("match"), "version": r.format.get("version"),
            "score": r.verification.get("score"), "gates": r.verification.get("gates")}
    return out


def test_pipeline_batch_against_a_scaling_server_equals_in_process(tmp_path: Path, pg_dsn: str) -> None:
    from docassay.extractors.instructions.model_features import N_BUCKETS, N_NUMERIC
    from docassay.extractors.synth import generate, to_pdf

    folder = tmp_path / "in"
    folder.mkdir()
    for sd in generate(2, 2, kind="invoice", seed=5, split="dev"):
        (folder / f"{sd.doc_id}.pdf").write_bytes(to_pdf(sd))
    sources = collect_sources([str(folder)], skip=ground_truth_sidecar)
    weights = write_weights(tmp_path / "tiny.pt", seed=3, residual=0.3)      # residual, as shipped

    threads_before = torch.get_num_threads()
    torch.set_num_threads(1)                    # the server's ranks run with one thread each
    try:
        with fresh_database(pg_dsn) as dsn:
            local = _run(sources, model_scorer(weights), tmp_path / "home-local", dsn)
    finally:
        torch.set_num_threads(threads_before)

    srv = ServerProcess(weights, max_ranks=4, ranks=1, token="t0ken", log=tmp_path / "server.log")
    done = threading.Event()
    scales: list[dict] = []
    errors: list[str] = []

    def scale_forever() -> None:
        admin = srv.client()
        for k in itertools.cycle((2, 4, 2, 1)):
            if done.wait(0.3):
                return
            try:
                scales.append(admin.scale(k))
            except ServeError as exc:
                errors.append(f"scale {k}: {exc}")
                return

    def other_caller() -> None:
        c = srv.client()
        docs = random_docs(8, N_BUCKETS, N_NUMERIC, seed=9)
        for d in itertools.cycle(docs):
            if done.is_set():
                return
            try:
                c.score([d])
            except ServeError as exc:
                errors.append(f"other caller: {exc}")
                return

    background = [threading.Thread(target=scale_forever), threading.Thread(target=other_caller)]
    try:
        for t in background:
            t.start()
        with fresh_database(pg_dsn) as dsn:
            remote = _run(sources, RemoteScorer(srv.client(timeout_s=120)), tmp_path / "home-remote", dsn)
        done.set()
        for t in background:
            t.join(120)
        status = srv.client().status()
    finally:
        done.set()
        assert srv.stop() == 0, srv.log.read_text()[-3000:]

    assert errors == []
    assert len(scales) >= 2, "the server scaled while the batch ran"
    assert all(s["phase"] == "done" for s in scales)
    assert status.counters.failed == 0 and status.counters.timeouts == 0
    assert any(row["model_tokens"]["input"] > 0 for row in local.values()), "the model was called"
    assert set(remote) == set(local)
    for src in sources:
        assert remote[src] == local[src], src


def test_pipeline_with_the_layout_reader_against_a_scaling_server_equals_in_process(tmp_path: Path, pg_dsn: str) -> None:
    """`--generator layout --model-url URL` against `docassay model serve --model layout` (the shipped
    layout.pt) while it scales 1 -> 2 -> 3 -> 2 -> 1: the rows of the in-process layout scorer."""
    from docassay.extractors.instructions.layout_scorer import DEFAULT_LAYOUT_WEIGHTS, LayoutScorer
    from docassay.extractors.synth import generate, to_pdf
    from docassay.flows.job_options import JobOptions
    from docassay.flows.jobs import _scorer
    from docassay.flows.remote_scorer import RemoteLayoutScorer
    from docassay.infra.model.checkpoint import load_layout

    folder = tmp_path / "in"
    folder.mkdir()
    for sd in generate(2, 2, kind="invoice", seed=6, split="dev"):
        (folder / f"{sd.doc_id}.pdf").write_bytes(to_pdf(sd))
    sources = collect_sources([str(folder)], skip=ground_truth_sidecar)

    threads_before = torch.get_num_threads()
    torch.set_num_threads(1)                    # the server's ranks run with one thread each
    try:
        model, meta = load_layout(DEFAULT_LAYOUT_WEIGHTS)
        with fresh_database(pg_dsn) as dsn:
            local = _run(sources, LayoutScorer(model, meta, DEFAULT_LAYOUT_WEIGHTS), tmp_path / "home-local", dsn,
                         "layout")
    finally:
        torch.set_num_threads(threads_before)

    srv = ServerProcess(DEFAULT_LAYOUT_WEIGHTS, max_ranks=3, ranks=1, token="t0ken", extra=("--model", "layout"),
                        log=tmp_path / "server.log")
    done = threading.Event()
    scales: list[dict] = []
    errors: list[str] = []

    def scale_forever() -> None:
        admin = srv.client()
        for k in itertools.cycle((2, 3, 2, 1)):
            if done.wait(0.3):
                return
            try:
                scales.append(admin.scale(k))
            except ServeError as exc:
                errors.append(f"scale {k}: {exc}")
                return

    scaler = threading.Thread(target=scale_forever)
    try:
        scorer = _scorer(JobOptions(schema=str(SCHEMA), generator="layout", model_url=srv.url))  # as `extract` builds it
        assert isinstance(scorer, RemoteLayoutScorer)
        scaler.start()
        with fresh_database(pg_dsn) as dsn:
            remote = _run(sources, scorer, tmp_path / "home-remote", dsn, "layout")
        done.set()
        scaler.join(120)
        status = srv.client().status()
    finally:
        done.set()
        assert srv.stop() == 0, srv.log.read_text()[-3000:]

    assert errors == []
    assert len(scales) >= 2, "the server scaled while the batch ran"
    assert all(s["phase"] == "done" for s in scales)
    assert status.model.kind == "layout" and status.counters.failed == 0 and status.counters.timeouts == 0
    assert status.counters.documents > 0
    assert any(row["model_tokens"]["input"] > 0 for row in local.values()), "the model was called"
    assert set(remote) == set(local)
    for src in sources:
        assert remote[src] == local[src], src
