"""End-to-end benchmark: accuracy, pass rate, verified precision and speed of the pipeline.

    python bench/pipeline_bench.py --set invoices            # ../shared/data/invoices (75 PDFs)
    python bench/pipeline_bench.py --set receipts [--limit N] [--images]
    python bench/pipeline_bench.py --set synth --formats 20 --docs 4 [--split unseen]

Three passes over the same documents, each on an empty format library except the second:
  learn    reuse on:  the first document of a format takes the new-format path, later ones replay
  replay   the library from `learn`: every document whose format was learned takes the known path
  new      reuse off: every document takes the new-format path (generator + fixer)
Accuracy is scored on `learn` (what a user gets on a first batch) and on `new`; speed is reported
per path from the rows' timings: documents/s and pages/s (1 / median latency), p50/p95 latency,
and where the time goes (median ms per stage). Runs sequentially (one document at a time) so that
latencies are not mixed; a JSON report goes to --out.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from scoring import aggregate, format_report, score_document  # noqa: E402

from flows.batch import load_rule_pack, load_schema, run_batch  # noqa: E402
from flows.pipeline import Job, open_context  # noqa: E402
from infra.config import Settings  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data"


def load_dev(data: Path, set_name: str, limit: int | None, images: bool) -> list[tuple[str, str, dict]]:
    """(doc id, input path, truth) from the dev manifest."""
    out = []
    for line in (data / "manifest.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["set"] != set_name:
            continue
        doc = row["document"]
        if set_name == "receipts" and not images:
            doc = row.get("ocr") or doc
        out.append((row["id"], str(data / doc), json.loads((data / row["ground_truth"]).read_text())))
    out.sort(key=lambda t: t[0])
    return out[:limit] if limit else out


def load_synth(kind: str, formats: int, docs: int, split: str, seed: int, tmp: Path) -> list[tuple[str, str, dict]]:
    from extractors.synth import generate, to_ocr_lines, to_pdf
    folder = tmp / "synth"
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for sd in generate(formats, docs, kind=kind, seed=seed, split=split):
        if kind == "invoice":
            p = folder / f"{sd.doc_id}.pdf"
            p.write_bytes(to_pdf(sd))
        else:
            p = folder / f"{sd.doc_id}.ocr.json"
            p.write_text(json.dumps(to_ocr_lines(sd)))
        out.append((sd.doc_id, str(p), sd.truth))
    return out


def run_pass(items, job: Job) -> tuple[list, float]:
    with open_context(job.settings) as ctx:
        t = time.perf_counter()
        rows = run_batch([p for _, p, _ in items], job, ctx, concurrency=1)
        return rows, time.perf_counter() - t


def speed(rows, path: str) -> dict:
    sel = [r for r in rows if r.status != "error" and (r.format.get("match") == path)]
    if not sel:
        return {"documents": 0}
    lat = sorted(r.timings_ms["total"] for r in sel)
    pages = sum(r.pages or 1 for r in sel)
    stages: dict[str, list[float]] = {}
    for r in sel:
        for k, v in r.timings_ms.items():
            if k != "total":
                stages.setdefault(k, []).append(v)
    med = statistics.median(lat)
    return {"documents": len(sel), "docs_per_s": round(1000 / med, 2) if med else None,
            "pages_per_s": round(1000 * pages / len(sel) / med, 2) if med else None,
            "p50_ms": round(med, 1), "p95_ms": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 1),
            "stage_median_ms": {k: round(statistics.median(v), 1) for k, v in sorted(stages.items())},
            "stage_share": {k: round(sum(v) / sum(lat), 3) for k, v in sorted(stages.items())}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", choices=("invoices", "receipts", "synth-invoices", "synth-receipts"), default="invoices")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--images", action="store_true", help="receipts: read the scans (OCR) where present")
    ap.add_argument("--formats", type=int, default=20)
    ap.add_argument("--docs", type=int, default=4)
    ap.add_argument("--split", default="unseen")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--db", help="PostgreSQL DSN (default: embedded, in a temporary home)")
    ap.add_argument("--generator", default="baseline")
    ap.add_argument("--passes", default="learn,replay,new")
    ap.add_argument("--out", type=Path, help="write the JSON report here")
    args = ap.parse_args(argv)

    kind = "receipt" if "receipts" in args.set else "invoice"
    schema_dir = ROOT / "examples" / ("receipts" if kind == "receipt" else "invoices")
    base = Path(tempfile.mkdtemp(prefix="docassay-bench-", dir="/var/tmp"))
    if args.set.startswith("synth"):
        items = load_synth(kind, args.formats, args.docs, args.split, args.seed, base)
    else:
        items = load_dev(args.data, args.set, args.limit, args.images)
    truth = {p: (i, t) for i, p, t in items}
    fuzzy = kind == "receipt"

    def job(home: Path, **kw) -> Job:
        s = Settings.load(home=home, db=args.db, concurrency=1)
        j = Job(schema=load_schema(schema_dir / "schema.json"), rules=load_rule_pack(schema_dir / "rules"),
                settings=s, generator=args.generator, **kw)
        if args.generator == "model":
            from extractors.instructions.model_scorer import model_scorer
            j.scorer = model_scorer()
        return j

    report: dict = {"set": args.set, "documents": len(items), "generator": args.generator}
    passes = args.passes.split(",")
    home = base / "home-learn"
    if args.db is None:
        home.mkdir(parents=True)
    rows_learn = rows_replay = rows_new = None
    if "learn" in passes:
        rows_learn, wall = run_pass(items, job(home))
        rep = aggregate(score_document(truth[r.source][0], r.status, r.record, truth[r.source][1], fuzzy=fuzzy)
                        for r in rows_learn)
        print(format_report(f"{args.set}: first batch (learn formats as they come)", rep), "\n")
        report["learn"] = {"accuracy": rep.to_json(), "wall_s": round(wall, 2),
                           "speed_new": speed(rows_learn, "new"), "speed_known": speed(rows_learn, "known")}
    if "replay" in passes and rows_learn is not None:
        rows_replay, wall = run_pass(items, job(home))
        rep = aggregate(score_document(truth[r.source][0], r.status, r.record, truth[r.source][1], fuzzy=fuzzy)
                        for r in rows_replay)
        print(format_report(f"{args.set}: second batch (formats known)", rep), "\n")
        report["replay"] = {"accuracy": rep.to_json(), "wall_s": round(wall, 2), "speed_known": speed(rows_replay, "known")}
    if "new" in passes:
        home_new = base / "home-new"
        home_new.mkdir(parents=True)
        rows_new, wall = run_pass(items, job(home_new, reuse_formats=False))
        rep = aggregate(score_document(truth[r.source][0], r.status, r.record, truth[r.source][1], fuzzy=fuzzy)
                        for r in rows_new)
        print(format_report(f"{args.set}: every document as a new format", rep), "\n")
        report["new"] = {"accuracy": rep.to_json(), "wall_s": round(wall, 2), "speed_new": speed(rows_new, "new")}
    print("## speed (sequential, one document at a time)\n")
    print("| path | documents | docs/s | pages/s | p50 ms | p95 ms | where the time goes (median ms) |")
    print("|---|---|---|---|---|---|---|")
    for label, sp in (("new format", (report.get("new") or {}).get("speed_new")),
                      ("known format", (report.get("replay") or {}).get("speed_known"))):
        if sp and sp.get("documents"):
            stages = ", ".join(f"{k} {v}" for k, v in sp["stage_median_ms"].items())
            print(f"| {label} | {sp['documents']} | {sp['docs_per_s']} | {sp['pages_per_s']} | {sp['p50_ms']} | "
                  f"{sp['p95_ms']} | {stages} |")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
