"""bench/checks_bench.py without the pipeline: scoring captured contexts, the tables, the holdout rule."""
from __future__ import annotations

import pickle

from bench import checks_bench as CB
from bench.splits import HOLDOUT
from tests.verifiers.checkkit import GOOD, at, ctx, page_doc


def _captured(record, truth):
    doc = page_doc()
    c = ctx(record, doc=doc, evidence={"buyer_name": at(doc, "buyer_name", "Kunden AG Mitte")})
    return CB.Captured("dev-invoices", "doc-1", "passed", truth, c)


def test_score_counts_right_and_wrong_fields():
    truth = {k: v for k, v in GOOD.items() if k != "line_items"}
    wrong = dict(GOOD, buyer_name="Kunden AG Mitte", gross_total=999.0)
    tallies, base, ms = CB.score([_captured(wrong, dict(truth, buyer_name="Kunden AG Mitte"))])
    assert base["fields"] == len(truth) and base["right"] == len(truth) - 1
    fails = tallies[("totals_add_up", "fail")]
    assert fails.fired == 3 and fails.right == 2                          # net and tax right, gross wrong
    assert base["wrong_failed"] == 1
    text = CB.render("t", tallies, base, ms, show_wrong=True)
    assert "| totals_add_up |" in text and "doc-1 gross_total=999.0" in text
    assert "| totals_add_up |" in CB.render_combined([("dev-invoices", tallies, base, ms)])


def test_show_wrong_is_refused_on_holdout(tmp_path):
    path = tmp_path / "h.pkl"
    path.write_bytes(pickle.dumps({"split": HOLDOUT, "captured": [vars(_captured(GOOD, {}))]}))
    assert CB.main(["--load", str(path), "--show-wrong"]) == 2
    assert CB.main(["--load", str(path), "--signals-out", str(tmp_path / "s.jsonl")]) == 2
    assert CB.main(["--load", str(path)]) == 0


def test_signals_out(tmp_path):
    import json
    path = tmp_path / "t.pkl"
    truth = {k: v for k, v in GOOD.items() if k != "line_items"}
    path.write_bytes(pickle.dumps({"split": "dev-tune", "captured": [vars(_captured(dict(GOOD, gross_total=1.0), truth))]}))
    assert CB.main(["--load", str(path), "--signals-out", str(tmp_path / "s.jsonl")]) == 0
    row = json.loads((tmp_path / "s.jsonl").read_text().splitlines()[0])
    assert row["fields"]["gross_total"]["right"] is False
    assert {"check": "totals_add_up", "outcome": "fail"} in [
        {k: s[k] for k in ("check", "outcome")} for s in row["fields"]["gross_total"]["signals"]]
