"""Write the dev data's `dev-tune` documents as a training listing for the layout reader.

    python bench/layout_docs.py --out /tmp/dev-tune.jsonl [--split dev-tune]

One JSON line per document: {"id", "path", "truth", "kind"} (receipts: their OCR line file). Only
`dev-tune` may be trained on (bench/splits.py); asking for `dev-holdout` is refused. The listing
names files where they lie in ../shared/data; nothing is copied.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from datasets import DEFAULT_DATA, load_dev  # noqa: E402
from splits import HOLDOUT, TUNE, select  # noqa: E402


def tune_listing(data: Path = DEFAULT_DATA, split: str = TUNE) -> list[dict]:
    if split == HOLDOUT:
        raise ValueError("dev-holdout is never trained on")
    rows = []
    manifest = {json.loads(l)["id"]: json.loads(l) for l in (data / "manifest.jsonl").read_text().splitlines() if l.strip()}
    for set_name, kind in (("invoices", "invoice"), ("receipts", "receipt")):
        for d in select(load_dev(data, set_name), split):
            rows.append({"id": d.doc_id, "path": d.path, "truth": str(data / manifest[d.doc_id]["ground_truth"]), "kind": kind})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--split", default=TUNE, choices=(TUNE,))
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = ap.parse_args(argv)
    rows = tune_listing(args.data, args.split)
    args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    kinds = {k: sum(r["kind"] == k for r in rows) for k in ("invoice", "receipt")}
    print(f"{len(rows)} documents ({kinds}) -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
