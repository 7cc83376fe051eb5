"""How far `passed` can be trusted: pass rate and verified precision of one first batch (learn
formats as they come), with the verifier gates as configured, and what sent documents to review.

    python bench/gates_bench.py --set invoices                       # ../shared/data invoices (75)
    python bench/gates_bench.py --set receipts --limit 150           # SROIE OCR lines
    python bench/gates_bench.py --set synth-invoices --formats 15 --docs 4    # unseen formats
    options: --no-repair (Job(repair=False): no fixer, no troubleshooter)
             --no-history (no stale-value / consistency checks against accepted documents)

Verified precision: of the documents marked passed or repaired, the share whose fields are all
right (bench/scoring.py). Figures: bench/results/gates.md.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.scoring import aggregate, score_document  # noqa: E402
from docassay.flows.batch import load_rule_pack, load_schema, run_batch  # noqa: E402
from docassay.flows.context import Job, open_context  # noqa: E402
from docassay.flows.lifecycle import LifecyclePolicy  # noqa: E402
from docassay.infra.config import Settings  # noqa: E402

DATA = ROOT.parent / "shared" / "data"


def dev_items(set_name: str, limit: int | None) -> list[tuple[str, str, dict]]:
    out = []
    for line in (DATA / "manifest.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["set"] == set_name:
            doc = (row.get("ocr") or row["document"]) if set_name == "receipts" else row["document"]
            out.append((row["id"], str(DATA / doc), json.loads((DATA / row["ground_truth"]).read_text())))
    out.sort(key=lambda t: t[0])
    return out[:limit] if limit else out


def synth_items(formats: int, docs: int, folder: Path) -> list[tuple[str, str, dict]]:
    from docassay.extractors.synth import generate, to_pdf
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for sd in generate(formats, docs, kind="invoice", seed=0, split="unseen"):
        p = folder / f"{sd.doc_id}.pdf"
        p.write_bytes(to_pdf(sd))
        out.append((sd.doc_id, str(p), sd.truth))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", choices=("invoices", "receipts", "synth-invoices"), default="invoices")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--formats", type=int, default=15)
    ap.add_argument("--docs", type=int, default=4)
    ap.add_argument("--no-repair", action="store_true")
    ap.add_argument("--no-history", action="store_true")
    ap.add_argument("--out", type=Path, help="write one JSON line per document here")
    args = ap.parse_args(argv)

    base = Path(tempfile.mkdtemp(prefix="docassay-gates-", dir="/var/tmp"))
    items = synth_items(args.formats, args.docs, base / "synth") if args.set == "synth-invoices" \
        else dev_items(args.set, args.limit)
    kind = "receipts" if args.set == "receipts" else "invoices"
    home = base / "home"
    home.mkdir()
    job = Job(schema=load_schema(ROOT / "examples" / kind / "schema.json"),
              rules=load_rule_pack(ROOT / "examples" / kind / "rules"),
              settings=Settings.load(home=home, concurrency=1), repair=not args.no_repair,
              policy=LifecyclePolicy.load(history=not args.no_history), generator="baseline")
    with open_context(job.settings) as ctx:
        t = time.perf_counter()
        rows = run_batch([p for _, p, _ in items], job, ctx, concurrency=1)
        wall = time.perf_counter() - t
    truth = {p: (i, tr) for i, p, tr in items}
    scores = [score_document(truth[r.source][0], r.status, r.record, truth[r.source][1], fuzzy=kind == "receipts")
              for r in rows]
    rep = aggregate(scores)
    why = Counter(f"{v['gate']}/{v['rule']}" for r in rows if r.status == "needs_review"
                  for v in r.verification.get("violations", []) if v.get("severity") == "error")
    vp = "-" if rep.verified_precision is None else f"{rep.verified_precision:.3f}"
    print(f"{args.set}: documents {rep.n}; pass rate {rep.pass_rate:.3f} ({rep.accepted}); verified precision {vp}; "
          f"micro field accuracy {rep.micro:.3f}; document exact {rep.exact:.3f}; {wall:.0f} s")
    print("statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(rep.statuses.items())))
    print("why documents went to review (error findings): " + ", ".join(f"{k} {v}" for k, v in why.most_common(12)))
    if args.out:
        with args.out.open("w") as f:
            for r, s in zip(rows, scores):
                f.write(json.dumps({"id": s.doc_id, "status": r.status, "exact": s.exact, "fields": s.fields,
                                    "verification": r.verification, "format": r.format}, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
