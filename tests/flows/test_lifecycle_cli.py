"""`docassay formats ...` and `docassay review ...` on a real PostgreSQL: a person sees why a
document did not pass, promotes a pending format, accepts and corrects records (which become golden
references), diffs and archives versions. Also the lifecycle helpers that need no database."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from docassay.extractors.instructions.language import FieldRule, Instructions, Locale, Locator
from docassay.extractors.synth.generator import make_format
from docassay.flows import lifecycle
from docassay.flows.batch import run_batch
from docassay.flows.cli import main
from docassay.flows.context import Job, open_context
from docassay.infra import store
from docassay.infra.config import Settings
from docassay.infra.errors import ConfigError
from tests.flows.test_lifecycle import header_schema, write

FORMAT_SEED = 1946619406


@pytest.mark.slow
def test_review_and_formats_commands(tmp_path: Path, pg_fresh_dsn: str, capsys) -> None:
    schema_path = tmp_path / "schema.json"
    schema_path.write_text(json.dumps(header_schema()))
    settings = Settings.load(home=tmp_path / "home", db=pg_fresh_dsn, concurrency=1)
    policy = lifecycle.LifecyclePolicy(new_format_status="pending_review", pending_may_pass=False)
    job = Job(schema=header_schema(), settings=settings, policy=policy, min_confidence=0.0,
              generator="baseline")   # the gates decide
    docs = write(tmp_path / "in", make_format(FORMAT_SEED), [0, 1])
    with open_context(settings) as ctx:
        rows = run_batch(docs, job, ctx, concurrency=1)
    assert [r.status for r in rows] == ["needs_review", "needs_review"]
    assert all(("lifecycle", "format_pending_review") in
               [(v["gate"], v["rule"]) for v in r.verification["violations"]] for r in rows)
    fid = rows[0].format["id"]
    store_args = ["--home", str(tmp_path / "home"), "--db", pg_fresh_dsn]

    def run(*argv: str) -> str:
        capsys.readouterr()
        assert main(list(argv) + store_args) == 0, capsys.readouterr().err
        return capsys.readouterr().out

    out = run("review", "list")
    assert rows[0].sha256[:12] in out and "lifecycle/format_pending_review" in out
    out = run("review", "show", rows[1].sha256[:10])
    assert "why it did not pass" in out and "pending review" in out and "invoice_number" in out
    assert "pending_review" in run("formats", "list")

    run("formats", "promote", fid)
    assert store_status(pg_fresh_dsn, settings, fid) == "active"

    out = run("review", "accept", rows[0].sha256, "--by", "alice", "--schema", str(schema_path))
    assert "reviewed" in out and "golden reference" in out
    name = rows[1].record["seller_name"]
    out = run("review", "correct", rows[1].sha256, "--set", f"seller_name={name} AG", "--by", "bob",
              "--schema", str(schema_path))
    assert "corrected" in out
    shown = json.loads(run("formats", "show", fid))
    assert shown["status"] == "active" and shown["version"] == 1 and shown["why"]["reason"] == "first document"
    reasons = sorted(g["reason"] for g in shown["golden"])
    assert reasons == ["corrected by bob", "reviewed by alice"] and all(g["replayable"] for g in shown["golden"])
    out = run("review", "show", rows[1].sha256, "--json")
    doc = json.loads(out)
    assert doc["status"] == "corrected" and doc["record"]["seller_name"] == f"{name} AG"
    assert doc["reviews"][0]["corrections"]["seller_name"] == {"from": name, "to": f"{name} AG"}
    assert "(no difference)" in run("formats", "diff", fid)
    run("formats", "archive", fid)
    assert "archived" in run("formats", "list")
    # A correction that breaks the schema is refused; an unknown document is a usage error.
    assert main(["review", "correct", rows[1].sha256, "--set", "currency=euro", "--schema", str(schema_path)]
                + store_args) == 2
    assert main(["review", "show", "0" * 12] + store_args) == 2


def store_status(dsn: str, settings: Settings, fid: str) -> str:
    from docassay.infra.db import connect
    with connect(settings) as conn:
        return store.get_format(conn, fid).status


def _ins(**fields: FieldRule) -> Instructions:
    return Instructions(locale=Locale(), fields=fields)


def test_merged_instructions_read_both_layouts() -> None:
    old = _ins(invoice_number=FieldRule("identifier", Locator(by="anchor", label="Invoice No", relation="right")),
               currency=FieldRule("currency", Locator(by="detect", what="currency")))
    new = _ins(invoice_number=FieldRule("identifier", Locator(by="anchor", label="Belegkennung", relation="right")),
               issue_date=FieldRule("date", Locator(by="anchor", label="Datum", relation="right")))
    m = lifecycle.merge_instructions(old, new)
    assert m.fields["invoice_number"].locator.label == "Invoice No"
    assert [f.label for f in m.fields["invoice_number"].fallbacks] == ["Belegkennung"]
    assert set(m.fields) == {"invoice_number", "currency", "issue_date"}
    assert Instructions.from_json(m.to_json()) == m                       # still valid instructions
    assert lifecycle.merge_instructions(m, new).fields["invoice_number"].fallbacks == m.fields["invoice_number"].fallbacks


def test_policy_settings_and_document_keys(monkeypatch) -> None:
    monkeypatch.setenv("DOCASSAY_DRIFT_THRESHOLD", "4")
    monkeypatch.setenv("DOCASSAY_PENDING_MAY_PASS", "no")
    p = lifecycle.LifecyclePolicy.load()
    assert p.drift_threshold == 4 and p.pending_may_pass is False and p.new_format_status == "active"
    monkeypatch.setenv("DOCASSAY_DRIFT_THRESHOLD", "often")
    with pytest.raises(ConfigError):
        lifecycle.LifecyclePolicy.load()
    with pytest.raises(ConfigError):
        lifecycle.LifecyclePolicy.load(new_format_status="maybe", drift_threshold=2)
    assert lifecycle.document_key("ab" * 32, "/x/inv 1.PDF") == f"documents/{'ab' * 32}.pdf"
    assert lifecycle.document_key("ab" * 32, "r.ocr.json") == f"documents/{'ab' * 32}.ocr.json"
    assert lifecycle.document_key("ab" * 32, "noext") == f"documents/{'ab' * 32}"
