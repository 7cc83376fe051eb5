"""Wrong values per field in the rows of a `bench.calibrate collect` / `evaluate` part file.

    python bench/field_errors.py /tmp/recread/eval/dev-receipts.dev-tune.json [...]

Counts only (no document is listed): a field is wrong when `scoring.field_correct` (receipts
fuzzy, as everywhere) says its value differs from the truth, a missing value included.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scoring import field_correct  # noqa: E402


def field_errors(path: Path) -> tuple[str, int, dict[str, int]]:
    d = json.loads(path.read_text())
    wrong: dict[str, int] = {}
    for r in d["rows"]:
        fuzzy = r.get("kind") == "receipt"
        for k, v in r["truth"].items():
            if isinstance(v, list):
                continue
            if not field_correct(k, (r["fields"].get(k) or {}).get("value"), v, fuzzy=fuzzy):
                wrong[k] = wrong.get(k, 0) + 1
    return d["part"], len(d["rows"]), dict(sorted(wrong.items()))


def main(argv: list[str]) -> int:
    for p in argv:
        part, n, wrong = field_errors(Path(p))
        print(f"{p}: {part}, {n} documents, wrong: " + ", ".join(f"{k} {v}" for k, v in wrong.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
