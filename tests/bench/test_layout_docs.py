"""bench/layout_docs.py lists only dev-tune documents for the layout reader's training."""
from __future__ import annotations

import json

import pytest

from bench.layout_docs import tune_listing
from bench.splits import HOLDOUT, TUNE, split_of


def _data(tmp_path, n: int = 12):
    rows = []
    for i in range(n):
        doc_id = f"zugferd-g{i}-a"
        (tmp_path / f"{doc_id}.json").write_text(json.dumps({"invoice_number": str(i)}))
        rows.append({"id": doc_id, "set": "invoices", "document": f"{doc_id}.pdf", "ground_truth": f"{doc_id}.json",
                     "content_group": f"g{i}"})
    (tmp_path / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


def test_listing_holds_every_tune_document_and_no_holdout_one(tmp_path):
    rows = _data(tmp_path)
    got = {r["id"] for r in tune_listing(tmp_path)}
    want = {r["id"] for r in rows if split_of("invoice", r["id"], r["content_group"]) == TUNE}
    assert got == want and 0 < len(got) < len(rows)
    assert all(r["kind"] == "invoice" and r["truth"].endswith(".json") for r in tune_listing(tmp_path))


def test_holdout_is_refused(tmp_path):
    _data(tmp_path)
    with pytest.raises(ValueError, match="never trained on"):
        tune_listing(tmp_path, HOLDOUT)
