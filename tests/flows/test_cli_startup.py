"""Issue 15/17: what the CLI does before any document is read. `--help` and `--version` load no
heavy module; usage errors (missing input, bad schema, a rule that does not run against the
schema's relations) end with exit 2 before anything starts; one spelling of the model server
option; `model train` never overwrites the shipped weights unless asked."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from docassay.flows.cli import build_parser, main, version

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "examples/invoices/schema.json"
RULES = ROOT / "examples/invoices/rules"
DOC = next(p for p in sorted((ROOT / "examples/invoices/documents").glob("*.pdf")))
HEAVY = ("torch", "prefect", "faiss", "psycopg", "numpy", "onnxruntime", "pypdfium2")


def _python(code: str) -> str:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                          check=True).stdout


def test_help_and_version_import_no_heavy_module() -> None:
    out = _python("import sys, contextlib, io\n"
                  "from flows.cli import main\n"
                  "for argv in (['--help'], ['--version'], ['extract', '--help']):\n"
                  "    with contextlib.redirect_stdout(io.StringIO()):\n"
                  "        try: main(argv)\n"
                  "        except SystemExit: pass\n"
                  f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    assert out.strip() == "[]"


def test_version(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"docassay {version()}" and version() != "unknown"


def test_lazy_choices_agree_with_their_modules() -> None:
    from docassay.extractors.synth.dataset import RENDERS
    from docassay.flows.commands import formats, synth
    from docassay.infra.store import FORMAT_STATUSES
    assert formats.FORMAT_STATUSES == FORMAT_STATUSES and synth.RENDERS == RENDERS


@pytest.mark.parametrize("argv, message", [
    (["extract", "/nonexistent/docs", "--schema", str(SCHEMA), "--out", "OUT"], "input not found: /nonexistent/docs"),
    (["extract", str(DOC), "--schema", "/nonexistent/schema.json", "--out", "OUT"], "--schema: no such file"),
    (["extract", str(DOC), "--schema", str(SCHEMA), "--rules", "/nonexistent/rules", "--out", "OUT"],
     "--rules: no such file or folder"),
    (["extract", str(DOC), "--schema", str(SCHEMA)], "--out DIR is required"),
])
def test_usage_errors_exit_2_before_anything_starts(argv: list[str], message: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture) -> None:
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in argv]
    assert main([*argv, "--home", str(tmp_path / "home")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "home").exists() and not (tmp_path / "out").exists(), "nothing was started or written"


def test_bad_schema_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "schema.json"
    bad.write_text(json.dumps({"type": "array"}))
    assert main(["extract", str(DOC), "--schema", str(bad), "--out", str(tmp_path / "out"),
                 "--home", str(tmp_path / "home")]) == 2
    assert "must be a JSON Schema of type object" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("sql, why", [
    ("SELECT gross_totl AS actual FROM doc WHERE gross_totl < 0", 'column "gross_totl" does not exist'),
    ("SELECT idx FROM line_itemz", 'relation "line_itemz" does not exist'),
    ("SELECT gross_total FROM doc WHERE gross_total > DATE '2020-01-01'", "operator does not exist"),
    ("SELECT FROM doc WHERE", "syntax error"),
])
def test_a_rule_that_does_not_run_against_the_schema_is_refused_up_front(
        sql: str, why: str, tmp_path: Path, pg_fresh_dsn: str, capsys: pytest.CaptureFixture) -> None:
    rules = tmp_path / "rules.sql"
    rules.write_text(f"-- rule: broken\n-- severity: error\n{sql};\n")
    rc = main(["extract", str(DOC), "--schema", str(SCHEMA), "--rules", str(rules), "--out", str(tmp_path / "out"),
               "--home", str(tmp_path / "home"), "--db", pg_fresh_dsn, "--generator", "baseline", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert f"{rules}:1: rule 'broken'" in err and why in err
    assert not (tmp_path / "out").exists(), "no document was read"


def test_the_shipped_rules_pass_the_preflight(tmp_path: Path, pg_fresh_dsn: str, capsys: pytest.CaptureFixture) -> None:
    rc = main(["extract", str(DOC), "--schema", str(SCHEMA), "--rules", str(RULES), "--out", str(tmp_path / "out"),
               "--home", str(tmp_path / "home"), "--db", pg_fresh_dsn, "--generator", "baseline", "--quiet"])
    assert rc == 0, capsys.readouterr().err
    rows = [json.loads(line) for line in (tmp_path / "out/results.jsonl").read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["status"] in ("passed", "repaired", "needs_review")


def test_quiet_run_prints_nothing(tmp_path: Path, pg_fresh_dsn: str, capsys: pytest.CaptureFixture) -> None:
    rc = main(["extract", str(DOC), "--schema", str(SCHEMA), "--out", str(tmp_path / "out"),
               "--home", str(tmp_path / "home"), "--db", pg_fresh_dsn, "--generator", "baseline", "--quiet"])
    out, err = capsys.readouterr()
    assert rc == 0 and out == "" and err == ""


def test_model_url_is_one_spelling_everywhere_and_url_a_hidden_alias() -> None:
    parser = build_parser()
    for argv in (["model", "status"], ["model", "scale", "2"]):
        assert parser.parse_args([*argv, "--model-url", "http://h:1"]).url == "http://h:1"
        assert parser.parse_args([*argv, "--url", "http://h:2"]).url == "http://h:2"
    assert parser.parse_args(["extract", "x", "--schema", "s", "--model-url", "http://h:3"]).model_url == "http://h:3"
    from docassay.flows.commands import model_serve
    p = build_parser()._subparsers._group_actions[0].choices["model"]._subparsers._group_actions[0].choices["status"]
    assert "--url" not in p.format_help() and "--model-url" in p.format_help()
    assert model_serve.add_model_url is not None


def test_model_train_never_overwrites_the_shipped_weights_unless_asked(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture) -> None:
    from docassay.flows.commands.model import DEFAULT_WEIGHTS, train_target
    before = DEFAULT_WEIGHTS.stat().st_mtime_ns
    assert main(["model", "train", "--epochs", "1"]) == 2
    assert "needs --out FILE (or --force" in capsys.readouterr().err
    assert DEFAULT_WEIGHTS.stat().st_mtime_ns == before
    assert train_target(None, True) == DEFAULT_WEIGHTS
    assert train_target(tmp_path / "w.pt", False) == tmp_path / "w.pt"
    assert train_target(None, False) is None


def test_orchestrator_choice(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from docassay.flows.orchestration import choose, prefect_api_configured
    from docassay.infra.errors import ConfigError
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.delenv("DOCASSAY_ORCHESTRATOR", raising=False)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))
    monkeypatch.delenv("PREFECT_PROFILES_PATH", raising=False)
    assert choose(None) == "local" and choose("prefect") == "prefect" and choose(None, "dask:2") == "prefect"
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:4200/api")
    assert choose(None) == "prefect" and choose("local") == "local"
    monkeypatch.delenv("PREFECT_API_URL")
    (tmp_path / "profiles.toml").write_text('active = "mine"\n[profiles.mine]\nPREFECT_API_URL = "http://h:4200/api"\n')
    assert prefect_api_configured() and choose(None) == "prefect"
    with pytest.raises(ConfigError):
        choose("local", "dask")
    with pytest.raises(ConfigError):
        choose("elsewhere")
