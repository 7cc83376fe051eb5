"""The whole path on real PostgreSQL: documents in, rows out; a second run reuses formats."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from docassay.extractors.synth import generate, to_pdf
from docassay.flows.batch import collect_sources, ground_truth_sidecar, load_rule_pack, load_schema, run_batch
from docassay.flows.context import Job, open_context
from docassay.flows.results import ResultsWriter, summarize
from docassay.infra.config import Settings

ROOT = Path(__file__).resolve().parents[2]
INVOICE_SCHEMA = ROOT / "examples/invoices/schema.json"
INVOICE_RULES = ROOT / "examples/invoices/rules"
DATA = ROOT.parent / "shared" / "data"


def _job(tmp_path: Path, dsn: str, **kw) -> Job:
    settings = Settings.load(home=tmp_path / "home", db=dsn, concurrency=2)
    return Job(schema=load_schema(INVOICE_SCHEMA), rules=load_rule_pack(INVOICE_RULES), settings=settings,
               **{"generator": "baseline", **kw})


def _write_synth(folder: Path, n_formats: int, n_docs: int, seed: int = 7) -> list[Path]:
    """Synthetic invoices with ground truth. Seed 7: dev formats whose records the baseline generator
    reads completely enough for the gates (items that reconcile with the totals)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for sd in generate(n_formats, n_docs, kind="invoice", seed=seed, split="dev"):
        p = folder / f"{sd.doc_id}.pdf"
        p.write_bytes(to_pdf(sd))
        (folder / f"{sd.doc_id}.json").write_text(json.dumps(sd.truth))
        paths.append(p)
    return paths


def test_batch_learns_then_reuses_formats(tmp_path: Path, pg_fresh_dsn: str) -> None:
    docs = _write_synth(tmp_path / "in", n_formats=3, n_docs=3)
    sources = collect_sources([str(tmp_path / "in")], skip=ground_truth_sidecar)
    assert sorted(sources) == sorted(str(p) for p in docs), "ground-truth sidecars are not documents"
    job = _job(tmp_path, pg_fresh_dsn)
    with open_context(job.settings) as ctx:
        writer = ResultsWriter(tmp_path / "out" / "results.jsonl")
        first = run_batch(sources, job, ctx, writer=writer)
        writer.close()
        second = run_batch(sources, job, ctx)
    lines = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    assert len(lines) == len(sources) == len(first)
    assert all(json.loads(l)["sha256"] for l in lines)
    passed = [r for r in first if r.status in ("passed", "repaired")]
    assert passed, f"nothing verified: {[r.status for r in first]}"
    for r in passed:
        assert r.format["id"] and set(r.record) and r.provenance
        for prov in r.provenance.values():
            assert prov["page"] >= 1 and len(prov["bbox"]) == 4
    by_source = {r.source: r for r in second}
    for r in passed:
        again = by_source[r.source]
        assert again.format["match"] == "known", (r.source, again.format)
        assert "generate" not in again.timings_ms, "a known format must not call the generator"
        assert again.record == r.record


def test_bad_inputs_become_error_rows_and_the_batch_goes_on(tmp_path: Path, pg_fresh_dsn: str) -> None:
    folder = tmp_path / "in"
    good = _write_synth(folder, n_formats=1, n_docs=1)
    (folder / "empty.pdf").write_bytes(b"")
    (folder / "not-a-pdf.pdf").write_text("hello, I am plain text")
    (folder / "truncated.pdf").write_bytes(good[0].read_bytes()[:300])
    (folder / "binary.bin").write_bytes(bytes(range(256)) * 4)
    sources = collect_sources([str(folder)], skip=ground_truth_sidecar)
    job = _job(tmp_path, pg_fresh_dsn)
    with open_context(job.settings) as ctx:
        rows = run_batch(sources, job, ctx)
    by_name = {Path(r.source).name: r for r in rows}
    assert len(rows) == 5
    for name, kind in [("empty.pdf", "empty"), ("not-a-pdf.pdf", "unsupported"), ("truncated.pdf", "corrupt"),
                       ("binary.bin", "unsupported")]:
        r = by_name[name]
        assert r.status == "error", (name, r.status, r.error)
        assert r.error["kind"] == kind, (name, r.error)
        assert r.error["message"] and "\n" not in r.error["message"]
    assert by_name[good[0].name].status != "error"
    s = summarize(rows)
    assert s.failed == 4 and s.error_ratio == pytest.approx(0.8)


def test_ablation_switches(tmp_path: Path, pg_fresh_dsn: str) -> None:
    docs = _write_synth(tmp_path / "in", n_formats=1, n_docs=2)
    job = _job(tmp_path, pg_fresh_dsn, reuse_formats=False, repair=False)
    with open_context(job.settings) as ctx:
        rows = run_batch([str(p) for p in docs], job, ctx)
    assert all(r.format["match"] in ("new", None) for r in rows)
    assert all("repair" not in r.timings_ms for r in rows)


def test_fixer_switch_leaves_new_formats_unrepaired(tmp_path: Path, pg_fresh_dsn: str) -> None:
    """fixer=False: a new format's first instructions stand, so nothing on the new path is repaired,
    where the same documents with the fixer get at least one repair attempt."""
    docs = [str(p) for p in _write_synth(tmp_path / "in", n_formats=2, n_docs=1, seed=11)]
    timings = {}
    for fixer in (True, False):
        job = _job(tmp_path / str(fixer), pg_fresh_dsn, reuse_formats=False, fixer=fixer)
        with open_context(job.settings) as ctx:
            rows = run_batch(docs, job, ctx)
        assert all(r.format["match"] in ("new", None) for r in rows)
        timings[fixer] = ["repair" in r.timings_ms for r in rows]
        if not fixer:
            assert not any(r.status == "repaired" for r in rows)
    assert any(timings[True]) and not any(timings[False])


@pytest.mark.slow
@pytest.mark.skipif(not (DATA / "invoices").exists(), reason="shared dev data not present")
def test_dev_invoices_one_row_each_and_reuse(tmp_path: Path, pg_fresh_dsn: str) -> None:
    sources = collect_sources([str(DATA / "invoices")], skip=ground_truth_sidecar)
    pdfs = sorted(str(p) for p in (DATA / "invoices").glob("*.pdf"))
    assert sorted(sources) == pdfs
    job = _job(tmp_path, pg_fresh_dsn)
    with open_context(job.settings) as ctx:
        first = run_batch(sources, job, ctx)
        second = run_batch(sources, job, ctx)
    assert len(first) == len(pdfs)
    assert not [r for r in first if r.status == "error"], [r.error for r in first if r.status == "error"]
    passed = [r for r in first if r.status in ("passed", "repaired")]
    assert passed
    again = {r.source: r for r in second}
    for r in passed:
        assert again[r.source].format["match"] == "known"
        assert "generate" not in again[r.source].timings_ms
