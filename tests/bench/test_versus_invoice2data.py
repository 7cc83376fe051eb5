"""docassay vs invoice2data on a tiny input; skipped when invoice2data's virtualenv is absent
(bash bench/setup_invoice2data.sh makes it)."""
from __future__ import annotations

from pathlib import Path

import pytest

from bench import invoice2data_runner as i2d
from bench import versus_invoice2data
from bench.datasets import DEFAULT_DATA, SynthSize
from bench.session import Session, SessionConfig

pytestmark = pytest.mark.skipif(not i2d.available(), reason="bench/.venv-i2d absent (bench/setup_invoice2data.sh)")

AWS = DEFAULT_DATA / "invoices" / "i2d-AmazonWebServices.pdf"


@pytest.mark.skipif(not AWS.exists(), reason="dev data absent")
def test_invoice2data_reads_a_document_it_has_a_template_for():
    run = i2d.run_invoice2data([str(AWS)], repeat=2)
    res = run.results[str(AWS)]
    assert res.template and res.error is None and len(res.ms) == 2
    rec = i2d.to_canonical(res.output)
    assert rec["invoice_number"] == "42183017" and rec["gross_total"] == pytest.approx(4.11)
    assert run.templates > 10


def test_comparison_runs_on_synthetic_invoices(pg_dsn: str, tmp_path: Path):
    cfg = SessionConfig(db=pg_dsn, synth=SynthSize(1, 2, 0), isolate=False, scratch=tmp_path / "scratch")
    with Session(cfg) as s:
        c = versus_invoice2data.compare(s, "synth-invoices-unseen", repeat=1)
    assert c.ours.n == c.theirs.n == 2
    assert c.matched_ids == []                     # no built-in template knows a synthetic issuer
    assert c.theirs.accepted == 0 and c.theirs.verified_precision is None
    assert any(k.startswith("invoice2data") and v.documents == 2 for k, v in c.speed.items())
    text = versus_invoice2data.render([c])
    assert "matched no template" in text and "docassay" in text
