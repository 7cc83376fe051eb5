"""OCR settings, chosen by measurement: time per image, peak memory and accuracy against the SROIE
line boxes of the dev receipts that have a scan.

    python -m bench.ocr_settings [--split dev-tune] [--limit 12] [--grid 960:1,1280:1,1600:1,2000:1]

Each setting (`det_max_side:use_cls`, see extractors.parsers.ocr.OcrSettings) runs in a fresh
process over the same images: the engine is loaded first (timed apart), then each image is read
by `ocr_words` as the pipeline reads it: wall seconds and CPU seconds (user + system, all threads;
on a shared machine the CPU time is the steadier figure: on two idle cores the wall time is at
least half of it). Peak RSS is the process's. Accuracy, per ground-truth
line (text + quadrilateral, `receipts/<id>.ocr.json`): the OCR words whose centre lies in the
line's box (grown by a quarter of its height), in reading order, joined with spaces, against the
line's text:
  char acc   1 - edit distance / length (spaces count), mean over lines
  word acc   share of the line's words found as whole words (a lost or extra space costs it)
  line hit   share of lines with any OCR word in their box
Settings are chosen on dev-tune; the chosen one is reported on dev-holdout too (never looked at
per document).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Sequence

from bench.splits import SPLITS, split_of
from bench.tables import md_table
from bench.whole_process import DEFAULT_DATA, ROOT

DEFAULT_GRID = "960:1,1280:1,1600:1,2000:1,1280:0"


def images_of(data: Path, split: str) -> list[tuple[str, Path, Path]]:
    """(id, image, ocr lines) of the receipts with a scan in `split`, by id."""
    rows = [json.loads(x) for x in (data / "manifest.jsonl").read_text().splitlines() if x.strip()]
    receipts = sorted((r for r in rows if r["set"] == "receipts"), key=lambda r: r["id"])
    out = []
    for rank, r in enumerate(receipts):
        if r.get("image") and split_of("receipt", r["id"], receipt_rank=rank) == split:
            out.append((r["id"], data / r["image"], data / r["ocr"]))
    return out


def edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def score_lines(gt_lines: list[dict], words: list[tuple[str, float, float, float, float]]) -> dict:
    """Accuracy of OCR `words` (text, x0, y0, x1, y1) against ground-truth lines (see the docstring)."""
    chars, wacc, hits = [], [], 0
    for ln in gt_lines:
        text = " ".join(ln["text"].split())
        if not text:
            continue
        xs, ys = ln["quad"][0::2], ln["quad"][1::2]
        x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
        pad = (y1 - y0) / 4
        inside = sorted((w for w in words if x0 - pad <= (w[1] + w[3]) / 2 <= x1 + pad
                         and y0 - pad <= (w[2] + w[4]) / 2 <= y1 + pad), key=lambda w: w[1])
        got = " ".join(w[0] for w in inside)
        hits += bool(inside)
        chars.append(max(0.0, 1 - edit_distance(text, got) / len(text)))
        want, have = Counter(text.split()), Counter(got.split())
        wacc.append(sum((want & have).values()) / sum(want.values()))
    n = max(1, len(chars))
    return {"lines": len(chars), "char_acc": sum(chars) / n, "word_acc": sum(wacc) / n, "line_hit": hits / n}


WORKER = r"""
import json, sys, time, resource
from PIL import Image
from docassay.extractors.parsers import ocr
items = json.loads(sys.argv[1])
t = time.perf_counter(); ocr._get_engine("rapidocr"); load_s = time.perf_counter() - t
out = []
for image, _ in items:
    img = Image.open(image); img.load(); img = img.convert("RGB")
    t, c = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    words = ocr.ocr_words(img)
    c2 = resource.getrusage(resource.RUSAGE_SELF)
    out.append({"s": time.perf_counter() - t, "cpu_s": (c2.ru_utime - c.ru_utime) + (c2.ru_stime - c.ru_stime), "words": [(w.text, w.bbox.x0, w.bbox.y0, w.bbox.x1, w.bbox.y1) for w in words]})
print(json.dumps({"load_s": load_s, "images": out, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run_setting(det: int, cls: bool, items: list[tuple[str, Path, Path]], threads: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DOCASSAY_OCR_DET_MAX_SIDE": str(det),
           "DOCASSAY_OCR_USE_CLS": "1" if cls else "0", "DOCASSAY_OCR_THREADS": str(threads)}
    arg = json.dumps([[str(i), str(o)] for _, i, o in items])
    proc = subprocess.run([sys.executable, "-c", WORKER, arg], capture_output=True, text=True, env=env, cwd=ROOT,
                          check=True)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    scores = [score_lines(json.loads(o.read_text())["lines"], [tuple(w) for w in r["words"]])
              for (_, _, o), r in zip(items, res["images"])]
    secs = [r["s"] for r in res["images"]]
    cpu = [r["cpu_s"] for r in res["images"]]
    return {"det_max_side": det, "use_cls": cls, "images": len(items), "load_s": res["load_s"],
            "median_s": statistics.median(secs), "max_s": max(secs), "median_cpu_s": statistics.median(cpu),
            "peak_rss_mb": res["rss_mb"], "load_avg": os.getloadavg()[0],
            "char_acc": statistics.mean(s["char_acc"] for s in scores),
            "word_acc": statistics.mean(s["word_acc"] for s in scores),
            "line_hit": statistics.mean(s["line_hit"] for s in scores)}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--split", choices=SPLITS, default="dev-tune")
    ap.add_argument("--limit", type=int, default=0, help="first N images of the split (0: all)")
    ap.add_argument("--grid", default=DEFAULT_GRID, help="comma-separated det_max_side:use_cls")
    ap.add_argument("--threads", type=int, default=2, help="onnxruntime threads (the 2-core target)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    items = images_of(args.data, args.split)
    if args.limit:
        items = items[:args.limit]
    results = []
    for spec in args.grid.split(","):
        det, cls = spec.split(":")
        t = time.perf_counter()
        results.append(run_setting(int(det), cls == "1", items, args.threads))
        print(f"{spec}: {time.perf_counter() - t:.1f} s", file=sys.stderr)
    print(md_table(["det max side", "cls", "images", "median s/image", "max s", "median CPU s/image", "load",
                    "peak RSS MB", "char acc", "word acc", "line hit"],
                   [[r["det_max_side"], "on" if r["use_cls"] else "off", r["images"], f"{r['median_s']:.2f}",
                     f"{r['max_s']:.2f}", f"{r['median_cpu_s']:.2f}", f"{r['load_avg']:.1f}", f"{r['peak_rss_mb']:.0f}", f"{r['char_acc']:.3f}", f"{r['word_acc']:.3f}",
                     f"{r['line_hit']:.3f}"] for r in results]))
    if args.out:
        args.out.write_text(json.dumps({"split": args.split, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
