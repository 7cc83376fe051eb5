"""bench/field_errors.py counts wrong values per field in a part file's rows."""
from __future__ import annotations

import json
from pathlib import Path

from bench.field_errors import field_errors


def test_counts_wrong_and_missing_values(tmp_path: Path) -> None:
    rows = [
        {"doc_id": "a", "kind": "receipt", "truth": {"company": "NORTHWIND SDN BHD", "total": 4.0},
         "fields": {"company": {"value": "NORTHWIND SDN BHD"}, "total": {"value": 0.23}}},
        {"doc_id": "b", "kind": "receipt", "truth": {"company": "BLUE CAFE", "total": 9.5},
         "fields": {"total": {"value": 9.5}}},
    ]
    p = tmp_path / "part.json"
    p.write_text(json.dumps({"part": "dev-receipts.dev-tune", "rows": rows}))
    assert field_errors(p) == ("dev-receipts.dev-tune", 2, {"company": 1, "total": 1})
