"""`extract --report`: report.html beside results.jsonl — self-contained (no address outside the
page: CSS and script inline under a hash-pinned CSP, page images as data: URIs), the batch summary,
and every document's pages with its boxes; hostile document text escaped."""
from __future__ import annotations

import base64
import hashlib
import json
import re
from html import unescape
from pathlib import Path

import pytest

from docassay.extractors.synth.generator import make_format
from docassay.flows.batch import run_batch
from docassay.flows.cli import main
from docassay.flows.context import open_context
from docassay.flows.report import REPORT_NAME, SCRIPT, STYLE, summarize_rows, write_report
from docassay.flows.results import ResultsWriter, Row
from docassay.flows.review_view import field_states
from docassay.infra.config import Settings
from tests.flows.review_fixtures import gates_job
from tests.flows.test_lifecycle import FORMAT_SEED, header_schema, write

HOSTILE = '<script>alert("x")</script>"><img src=x onerror=alert(1)>'


def sha256_csp(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def assert_self_contained(html: str) -> None:
    assert not re.search(r'(?:src|href)\s*=\s*"(?!data:|#)', html), "the report loads something from outside"
    assert "http://" not in html.split("<body>", 1)[1].replace('xmlns="http://www.w3.org/2000/svg"', "")
    csp = unescape(re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html).group(1))
    assert sha256_csp(STYLE.read_text("utf-8")) in csp and sha256_csp(SCRIPT.read_text("utf-8")) in csp
    assert "unsafe-inline" not in csp and "default-src 'none'" in csp


def test_report_of_a_batch(tmp_path: Path, pg_fresh_dsn: str) -> None:
    settings = Settings.load(home=tmp_path / "home", db=pg_fresh_dsn, concurrency=1)
    job = gates_job(schema=header_schema(), settings=settings)
    docs = write(tmp_path / "in", make_format(FORMAT_SEED), [0, 1, 2])
    with open_context(settings) as ctx:
        rows = run_batch(docs, job, ctx, concurrency=1)
    broken = tmp_path / "in" / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7 not really")
    hostile = Row(source=str(tmp_path / f"{HOSTILE}.txt"), sha256="cd" * 32, status="needs_review",
                  record={"invoice_number": HOSTILE},
                  verification={"score": 0.2, "violations": [{"gate": "rules", "rule": HOSTILE, "field": "invoice_number",
                                                              "severity": "error", "message": HOSTILE}]},
                  timings_ms={"parse": 1.0, "total": 2.0})
    err = Row(source=str(broken))
    err.fail("error", "corrupt", f"cannot read {HOSTILE}")
    out = tmp_path / "out"
    w = ResultsWriter(out / "results.jsonl")
    for r in [*rows, hostile, err]:
        w.write(r)
    w.close()
    info = write_report(out / "results.jsonl", settings, header_schema())
    assert info.path == out / REPORT_NAME and info.documents == 5 and info.pages_drawn == 3
    html = info.path.read_text("utf-8")
    assert_self_contained(html)
    assert html.count('<image href="data:image/jpeg;base64,') == 3
    assert html.count('<article class="doc"') == 5
    for r in rows:                                                  # every field's box on its page
        assert html.count('<g class="fbox tone-') >= sum(len(x.provenance) for x in rows)
        assert r.source in html
    assert "<script>alert" not in html and "<img src=x" not in html and "&lt;script&gt;alert" in html
    assert "error/corrupt" in html and "time per stage" in html
    summary = summarize_rows([r.to_json() for r in [*rows, hostile, err]])
    assert dict(summary["statuses"]) == {"passed": 3, "needs_review": 1, "error": 1}
    confidences = [st for r in rows for st in field_states(r.to_json()).values() if st.get("confidence") is not None]
    if confidences:                                                 # rows with calibrated per-field confidence
        assert summary["confidence"]["what"] == "field confidence" and summary["confidence"]["n"] == len(confidences)
    else:
        assert summary["confidence"]["what"] == "verification score" and summary["confidence"]["n"] == 4
    assert {t["stage"] for t in summary["timing"]} >= {"parse", "extract", "verify"}
    # Per-field confidence, when the rows carry it, is what the distribution counts.
    with_conf = dict(rows[0].to_json(), fields={"invoice_number": {"value": "1", "confidence": 0.97, "status": "verified"},
                                                "gross_total": {"value": 2, "confidence": 0.41, "status": "doubtful"}})
    s = summarize_rows([with_conf])
    assert s["confidence"]["what"] == "field confidence" and s["confidence"]["bins"][9] == 1 and s["confidence"]["bins"][4] == 1


@pytest.mark.slow
def test_extract_report_flag(tmp_path: Path, pg_fresh_dsn: str, capsys) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(header_schema()))
    write(tmp_path / "in", make_format(FORMAT_SEED), [0, 1])
    out = tmp_path / "out"
    assert main(["extract", str(tmp_path / "in"), "--schema", str(schema), "--out", str(out), "--home",
                 str(tmp_path / "home"), "--db", pg_fresh_dsn, "--generator", "baseline", "--report"]) == 0
    assert "report: " in capsys.readouterr().err
    html = (out / REPORT_NAME).read_text("utf-8")
    assert_self_contained(html)
    assert html.count('<image href="data:image/jpeg;base64,') == 2
    assert main(["extract", str(tmp_path / "in"), "--schema", str(schema), "--out", "s3://b/p", "--report"]) == 2
