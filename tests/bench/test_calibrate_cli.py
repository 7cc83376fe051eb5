"""bench.calibrate's command line: `evaluate --parts` runs only those parts, `--weights` reaches the passes."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench import calibrate


@pytest.fixture
def recorded(monkeypatch):
    calls: list[dict] = []

    def fake_collect(out, **kw):
        calls.append({**kw, "calibrator": os.environ.get("DOCASSAY_CALIBRATOR")})

    monkeypatch.setattr(calibrate, "collect", fake_collect)
    monkeypatch.setattr(calibrate, "model_available", lambda: True)
    # setenv first: monkeypatch restores (here: removes) only what it recorded, and main() sets the
    # variable for the pass processes, which must not leak into later tests.
    monkeypatch.setenv("DOCASSAY_CALIBRATOR", "unset")
    monkeypatch.delenv("DOCASSAY_CALIBRATOR")
    return calls


def test_evaluate_runs_only_the_parts_asked_for(recorded, tmp_path, capsys):
    assert calibrate.main(["evaluate", "--data-out", str(tmp_path), "--parts", "synth-invoices-unseen"]) == 0
    assert recorded[0]["parts"] == ("synth-invoices-unseen",)
    table = capsys.readouterr().out
    assert "synth-invoices-unseen" in table and "dev-holdout" not in table


def test_evaluate_defaults_to_the_dev_splits_and_unseen_formats(recorded, tmp_path):
    calibrate.main(["evaluate", "--data-out", str(tmp_path)])
    assert recorded[0]["parts"] == calibrate.EVAL_PARTS


def test_weights_reach_the_pass_processes(recorded, tmp_path, monkeypatch):
    w = tmp_path / "w.json"
    w.write_text("{}")
    calibrate.main(["collect", "--data-out", str(tmp_path / "c"), "--parts", "synth-receipts-train",
                    "--weights", str(w)])
    assert recorded[0]["calibrator"] == str(Path(w).resolve())
    monkeypatch.delenv("DOCASSAY_CALIBRATOR")
    calibrate.main(["collect", "--data-out", str(tmp_path / "d"), "--parts", "synth-receipts-train"])
    assert recorded[1]["calibrator"] is None


def test_nothing_leaks_into_later_tests():
    assert "DOCASSAY_CALIBRATOR" not in os.environ
