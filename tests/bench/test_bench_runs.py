"""The benchmark commands run end to end on a tiny synthetic input (2 documents of 1 format) on a
real PostgreSQL server. Nothing is timed: the tests check that the figures are there and agree
with the rows they come from."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import ablations, accuracy, speed
from bench.datasets import SynthSize
from bench.session import VARIANTS, Session, SessionConfig

TINY = SynthSize(formats=1, docs=2, seed=0)


@pytest.fixture
def session(pg_dsn: str, tmp_path: Path):
    s = Session(SessionConfig(db=pg_dsn, synth=TINY, isolate=False, scratch=tmp_path / "scratch"))
    yield s
    s.close()


def test_first_batch_learns_then_replays(session: Session):
    docs = session.docs("synth-invoices-unseen")
    assert len(docs) == 2 and all(Path(d.path).exists() for d in docs)
    assert {d.origin for d in docs} == {"synth-unseen"} and len({d.group for d in docs}) == 1
    rep = accuracy.measure(session, "synth-invoices-unseen")
    first = session.first_batch("synth-invoices-unseen")
    assert [r.source for r in first.rows] == [d.path for d in docs]
    assert first.rows[0].match == "new"
    assert rep.overall.n == 2 and sum(rep.overall.statuses.values()) == 2
    assert sum(r.n for r in rep.by_path.values()) == sum(1 for r in first.rows if r.match)
    assert 0.0 <= rep.overall.micro <= 1.0
    assert "invoice_number" in rep.overall.per_field
    replay = session.replay("synth-invoices-unseen")
    if first.rows[0].status in ("passed", "repaired"):         # a learned format is replayed
        assert replay.rows[0].match == "known"
    assert session.first_batch("synth-invoices-unseen") is first   # memoised


def test_ablation_variants_switch_their_part_off(session: Session):
    report, res = ablations.run_variant(session, "synth-invoices-unseen", "no-reuse")
    assert report.n == 2 and all(r.match in ("new", None) for r in res.rows)
    report, res = ablations.run_variant(session, "synth-invoices-unseen", "no-repair")
    assert report.n == 2 and not any(r.status == "repaired" for r in res.rows)
    assert res.spec.repair is False and VARIANTS["no-repair"].reuse_formats
    report, res = ablations.run_variant(session, "synth-invoices-unseen", "no-fixer")
    assert res.spec.fixer is False and res.spec.troubleshooter and res.spec.repair
    assert not any(r.status == "repaired" for r in res.rows if r.match == "new")


def test_speed_measure_reports_both_paths(session: Session):
    figures = speed.measure(session, "synth-invoices-unseen", repeat=1)
    new = figures["synth-invoices-unseen / new format"]
    assert new.documents == 2 and new.repeats == 1 and new.p50_ms is not None
    assert "generate" in new.stage_median_ms
    assert new.peak_rss_mb and new.peak_rss_mb >= new.start_rss_mb
    assert "synth-invoices-unseen / known format" in figures
    assert "|" in speed.speed_table(figures)


def test_receipts_set_runs(session: Session):
    rep = accuracy.measure(session, "synth-receipts-unseen")
    assert rep.overall.n == 2 and {"company", "total"} <= set(rep.overall.per_field)


@pytest.mark.slow
def test_accuracy_command_writes_json_from_an_isolated_pass(pg_dsn: str, tmp_path: Path, capsys):
    out = tmp_path / "acc.json"
    rc = accuracy.main(["--sets", "synth-invoices-train", "--formats", "1", "--docs", "2", "--db", pg_dsn,
                        "--out", str(out)])
    assert rc == 0
    assert "verified precision" in capsys.readouterr().out
    doc = json.loads(out.read_text())
    overall = doc["sets"]["synth-invoices-train"]["overall"]
    assert overall["documents"] == 2 and "verified_precision" in overall
    assert doc["machine"]["nproc"] >= 1 and doc["machine"]["python"]
