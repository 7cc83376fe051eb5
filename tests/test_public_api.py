"""The public API (`docassay/__init__.py`): its names pinned, its defaults the CLI's, the README's
example run for real, and `import docassay` kept light."""
from __future__ import annotations

import dataclasses
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import docassay

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "invoices"

PUBLIC = [
    "BatchFailed", "BatchInterrupted", "ConfigError", "DatabaseError", "DocassayError", "Job", "JobOptions",
    "OutputExists", "ParseError", "QuotaExceeded", "ResultsIncomplete", "Row", "RulesError", "Status",
    "StorageError", "VerifyError", "__version__", "extract",
]


def test_all_is_pinned_and_every_name_resolves() -> None:
    assert docassay.__all__ == PUBLIC
    for name in PUBLIC:
        assert getattr(docassay, name) is not None, name
    with pytest.raises(AttributeError):
        docassay.not_a_public_name  # noqa: B018


def test_names_are_the_internal_objects_not_copies() -> None:
    from docassay.flows.context import Job
    from docassay.flows.jobs import JobOptions
    from docassay.flows.results import Row, Status
    from docassay.infra.errors import DocassayError
    assert (docassay.Job, docassay.JobOptions, docassay.Row, docassay.Status) == (Job, JobOptions, Row, Status)
    errors = set(PUBLIC) - {"Job", "JobOptions", "Row", "Status", "__version__", "extract"}
    for name in errors:
        assert issubclass(getattr(docassay, name), DocassayError), name


def test_status_enum_is_the_one_list_of_statuses() -> None:
    from docassay.flows.results import FAILED_STATUSES, STATUSES
    assert STATUSES == tuple(s.value for s in docassay.Status)
    assert set(STATUSES) == {"passed", "repaired", "reviewed", "corrected", "needs_review", "failed",
                             "quota_exceeded", "error"}
    assert set(FAILED_STATUSES) == {"failed", "error", "quota_exceeded"}
    assert docassay.Status.NEEDS_REVIEW == "needs_review" and str(docassay.Status.ERROR) == "error"
    assert json.dumps({"status": docassay.Status.PASSED}) == '{"status": "passed"}'


def test_the_wheel_ships_the_docassay_package(monkeypatch) -> None:
    import runpy

    import setuptools
    seen: dict = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kw: seen.update(kw))
    monkeypatch.chdir(ROOT)
    runpy.run_path(str(ROOT / "setup.py"))
    assert {p.split(".")[0] for p in seen["packages"]} == {"docassay"}
    assert {"docassay", "docassay.flows", "docassay.extractors.parsers", "docassay.infra.db"} <= set(seen["packages"])
    assert seen["package_dir"]["docassay.flows"] == "flows"


def test_version_is_the_cli_version() -> None:
    out = subprocess.run([sys.executable, "-m", "docassay.flows.cli", "--version"], cwd=ROOT, capture_output=True,
                         text=True, check=True, env=_env())
    assert out.stdout.strip() == f"docassay {docassay.__version__}"
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", docassay.__version__)


def test_defaults_equal_the_cli_defaults() -> None:
    from docassay.flows.cli import build_parser
    from docassay.flows.jobs import LazyModelScorer
    args = build_parser().parse_args(["extract", "x.pdf", "--schema", "s.json", "--out", "o"])
    params = inspect.signature(docassay.extract).parameters
    shared = [n for n in params if hasattr(args, n) and n not in ("paths", "schema", "out")]
    assert {"rules", "home", "db", "generator", "concurrency", "parser", "index", "model_url", "project", "user",
            "follow_links", "einvoice", "min_confidence", "max_error_ratio", "overwrite", "quiet"} <= set(shared)
    for name in shared:
        if name == "quiet":                # a library prints no progress unless asked
            assert params[name].default is True and args.quiet is False
            continue
        assert params[name].default == getattr(args, name), name
    options = {f.name: f.default for f in dataclasses.fields(docassay.JobOptions)}
    for name, default in options.items():
        if name in params and name != "schema":
            assert params[name].default == default, name
    assert args.generator == options["generator"] == "model"
    job = docassay.Job(schema={"type": "object", "properties": {}})
    assert job.generator == "model" and isinstance(job.scorer, LazyModelScorer)
    assert job.scorer._scorer is None      # not loaded until a new format needs it
    assert docassay.Job(schema={}, generator="baseline").scorer is None


def test_import_docassay_loads_no_torch_and_no_prefect() -> None:
    code = ("import sys, docassay\n"
            "light = sorted(m for m in ('torch', 'prefect', 'docassay.flows.pipeline', 'numpy') if m in sys.modules)\n"
            "for name in docassay.__all__:\n"
            "    getattr(docassay, name)\n"
            "used = sorted(m for m in ('torch', 'prefect', 'starlette') if m in sys.modules)\n"
            "print(light, used)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                         env=_env())
    assert out.stdout.strip() == "[] []", out.stdout + out.stderr


def test_bad_options_are_config_errors_before_anything_starts(tmp_path: Path) -> None:
    with pytest.raises(docassay.ConfigError, match="no documents"):
        docassay.extract([], schema=EXAMPLES / "schema.json", home=tmp_path)
    with pytest.raises(docassay.ConfigError, match="concurrency"):
        docassay.extract(EXAMPLES / "documents", schema=EXAMPLES / "schema.json", home=tmp_path, concurrency=0)
    with pytest.raises(docassay.ConfigError, match="unknown generator"):
        docassay.extract(EXAMPLES / "documents", schema=EXAMPLES / "schema.json", home=tmp_path, generator="gpt")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "results.jsonl").write_text('{"source": "a", "status": "passed"}\n')
    with pytest.raises(docassay.OutputExists):
        docassay.extract(EXAMPLES / "documents", schema=EXAMPLES / "schema.json", home=tmp_path,
                         out=tmp_path / "out")
    assert (tmp_path / "out" / "results.jsonl").read_text() == '{"source": "a", "status": "passed"}\n'


def _readme_example() -> str:
    text = (ROOT / "README.md").read_text("utf-8")
    section = text.split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def test_readme_example_runs(tmp_path: Path, pg_fresh_dsn: str, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    """The README's code, unchanged, on the bundled invoices (its defaults: home and database from
    the environment, here a temporary home and a fresh database)."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("DOCASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DOCASSAY_DB", pg_fresh_dsn)
    namespace: dict = {}
    exec(compile(_readme_example(), "README.md#python-api", "exec"), namespace)
    rows = namespace["rows"]
    docs = sorted(str(p.relative_to(ROOT)) for p in (EXAMPLES / "documents").iterdir() if p.suffix != ".json")
    assert [type(r) for r in rows] == [docassay.Row] * len(docs)
    assert sorted(r.source for r in rows) == docs            # the ground-truth sidecars are skipped
    assert all(r.status in set(docassay.Status) for r in rows)
    accepted = [r for r in rows if r.status in (docassay.Status.PASSED, docassay.Status.REPAIRED)]
    assert accepted, [(r.source, r.status, r.error) for r in rows]
    for r in accepted:                                        # what was accepted is what the document says
        truth = json.loads((ROOT / r.source).with_suffix(".json").read_text("utf-8"))
        assert r.record["invoice_number"] == truth["invoice_number"], r.source
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == len(rows)
    assert not list(tmp_path.rglob("results.jsonl"))          # no out=: no results file written

    again = docassay.extract(["examples/invoices/documents"], schema="examples/invoices/schema.json",
                             rules="examples/invoices/rules", generator="baseline", out=tmp_path / "out")
    written = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text("utf-8").splitlines()]
    assert [r.source for r in again] == [r.source for r in rows]            # input order, as the first run
    assert {w["source"]: w for w in written} == {r.source: r.to_json() for r in again}  # the CLI's lines
    learned = {r.source for r in accepted if r.format["match"] == "new"}
    assert learned and {r.source for r in again if r.format["match"] == "known"} >= learned   # kept under home


def test_an_embedded_server_the_call_started_stops_with_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As each CLI command does: no PostgreSQL left running behind a library call."""
    from docassay.infra.db import embedded
    monkeypatch.delenv("DOCASSAY_DB", raising=False)
    monkeypatch.delenv(embedded.KEEP_ENV, raising=False)
    home = tmp_path / "home"
    doc = next(p for p in sorted((EXAMPLES / "documents").glob("*.pdf")))
    try:
        rows = docassay.extract(doc, schema=EXAMPLES / "schema.json", home=home, generator="baseline")
        assert [r.source for r in rows] == [str(doc)] and rows[0].status != docassay.Status.ERROR, rows[0].error
        assert (embedded.data_dir_for(home) / "PG_VERSION").exists()       # it did run there
        assert not embedded.status(embedded.data_dir_for(home)).running
    finally:
        embedded.stop(embedded.data_dir_for(home))


def _env() -> dict:
    import os
    return {**os.environ, "PYTHONPATH": str(ROOT)}
