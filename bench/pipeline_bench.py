"""Quick end-to-end look at one set: accuracy and speed of the learn / replay / new passes.

    python bench/pipeline_bench.py --set invoices            # ../shared/data invoices (75 PDFs)
    python bench/pipeline_bench.py --set receipts [--limit N] [--images]
    python bench/pipeline_bench.py --set synth-invoices --formats 20 --docs 4 [--split unseen]

  learn    reuse on, empty library: the first document of a format takes the new-format path
  replay   the library from `learn`: every document whose format was learned takes the known path
  new      reuse off: every document takes the new-format path (generator + fixer)

A tuning aid kept for its short command line; the figures of BENCHMARKS.md come from the
`python -m bench.<command>` modules (this script runs on the same session code: one embedded
PostgreSQL for the run, stopped at the end, passes in this process).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.datasets import DEFAULT_DATA, SynthSize  # noqa: E402
from bench.evaluate import score_rows  # noqa: E402
from bench.scoring import aggregate, format_report  # noqa: E402
from bench.session import VARIANTS, Session, SessionConfig, Variant  # noqa: E402
from bench.speed import path_speed, speed_table  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", choices=("invoices", "receipts", "synth-invoices", "synth-receipts"), default="invoices")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--images", action="store_true", help="receipts: read the scans (OCR) where present")
    ap.add_argument("--formats", type=int, default=20)
    ap.add_argument("--docs", type=int, default=4)
    ap.add_argument("--split", choices=("train", "unseen"), default="unseen")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--db", help="PostgreSQL DSN (default: an embedded server for this run)")
    ap.add_argument("--generator", choices=("baseline", "model"), default="baseline")
    ap.add_argument("--passes", default="learn,replay,new")
    ap.add_argument("--out", type=Path, help="write the JSON report here")
    args = ap.parse_args(argv)

    set_name = f"dev-{args.set}" if args.set in ("invoices", "receipts") else f"{args.set}-{args.split}"
    variant = Variant("full", generator=args.generator) if args.generator != "baseline" else VARIANTS["full"]
    cfg = SessionConfig(data=args.data, db=args.db, synth=SynthSize(args.formats, args.docs, args.seed),
                        limit=args.limit, images=args.images, isolate=False)
    passes = args.passes.split(",")
    report: dict = {"set": set_name, "generator": args.generator}
    speeds = {}
    with Session(cfg) as s:
        docs = s.docs(set_name)
        report["documents"] = len(docs)
        runs = []
        if "learn" in passes or "replay" in passes:
            runs.append(("learn", "first batch (learn formats as they come)", s.first_batch(set_name, variant)))
        if "replay" in passes:
            runs.append(("replay", "second batch (formats known)", s.replay(set_name, variant)))
        if "new" in passes:
            runs.append(("new", "every document as a new format", s.all_new(set_name, variant)))
        for key, title, res in runs:
            rep = aggregate(score_rows(docs, res.rows))
            print(format_report(f"{set_name}: {title}", rep), "\n")
            report[key] = {"accuracy": rep.to_json(), "wall_s": res.wall_s,
                           "speed_new": path_speed(res.rows, "new", res).to_json(),
                           "speed_known": path_speed(res.rows, "known", res).to_json()}
            if key in ("replay", "new"):
                speeds[f"{key}: {'known' if key == 'replay' else 'new'} format"] = \
                    path_speed(res.rows, "known" if key == "replay" else "new", res)
    if speeds:
        print("## speed (sequential, one document at a time)\n")
        print(speed_table(speeds))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
