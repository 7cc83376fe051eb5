"""OCR engines and settings, chosen by measurement: time per image, CPU time, peak memory and
accuracy against the SROIE line boxes of the dev receipts that have a scan.

    python -m bench.ocr_settings [--split dev-tune] [--limit 12] [--repeat 3]
        [--grid "rapidocr,rapidocr:det=960:cls=0,tesseract:psm=6"]
    python -m bench.ocr_settings --a4 [--repeat 3] [--grid ...]      # synthetic A4 pages instead

A setting is `engine[:key=value...]`: engine `rapidocr` (keys det = detection max side, cls = 0/1
the line classifier, threads = onnxruntime threads, batch = recogniser batch, recw = its minimum
input width, simplify = 0/1 the simplified model graphs, spin = 0/1 onnxruntime's spinning worker
threads; see extractors.parsers.ocr.OcrSettings) or `tesseract` (keys psm, max_side, threads =
OMP_THREAD_LIMIT, min_conf, junk; see extractors.parsers.ocr_tesseract.TesseractSettings); both take
draft = 0/1, a large JPEG decoded reduced (extractors.parsers.image.ocr_frame). Each setting runs in a fresh
process over the same images (`--repeat` rounds, interleaved, so load falls on every setting alike):
the engine is loaded first (timed apart), then each image is decoded and read as the image parser
reads it (`ocr_frame`, then `ocr_words`; the decode is timed with it): wall seconds and CPU seconds (user + system, all threads, the process and its children:
Tesseract runs as a child; on a shared machine the CPU time is the steadier figure). Peak RSS is
the larger of the process's and its largest child's. Timings are medians over images, then the
median over rounds; the load average (1 min) is printed beside them. Accuracy, per ground-truth
line (text + quadrilateral, `receipts/<id>.ocr.json`): the OCR words whose centre lies in the
line's box (grown by a quarter of its height), in reading order, joined with spaces, against the
line's text:
  char acc   1 - edit distance / length (spaces count), mean over lines
  word acc   share of the line's words found as whole words (a lost or extra space costs it)
  line hit   share of lines with any OCR word in their box
With `--a4`, the images are A4 pages of synthetic invoices rendered at 200 dpi (the PDF parser's
`ocr_render_dpi`) by extractors.synth, scored against the words of the same page's text layer (one
ground-truth "line" per text-layer line). Settings are chosen on dev-tune; the chosen one is
reported on dev-holdout too (never looked at per document).
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

DEFAULT_GRID = "rapidocr:det=2000:cls=1:recw=320,rapidocr,tesseract"   # before issue 15, the defaults


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
import json, os, sys, time, resource
from PIL import Image
from docassay.extractors.parsers import ocr
from docassay.extractors.parsers.image import ocr_frame, scale_words
items, engine, mode = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
def usage():
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime
t = time.perf_counter()
if engine == "rapidocr":
    ocr._get_engine("rapidocr")
load_s = time.perf_counter() - t
out = []
for image, _ in items:
    t, c = time.perf_counter(), usage()
    img, (width, height) = ocr_frame(Image.open(image), engine)
    words = scale_words(ocr.ocr_words(img if img.mode == mode else img.convert(mode), engine),
                        width / img.width, height / img.height)
    out.append({"s": time.perf_counter() - t, "cpu_s": usage() - c, "words": [(w.text, w.bbox.x0, w.bbox.y0, w.bbox.x1, w.bbox.y1) for w in words]})
rss = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({"load_s": load_s, "images": out, "rss_mb": rss / 1024, "self_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

RAPID_KEYS = {"det": "DOCASSAY_OCR_DET_MAX_SIDE", "cls": "DOCASSAY_OCR_USE_CLS", "threads": "DOCASSAY_OCR_THREADS",
              "batch": "DOCASSAY_OCR_REC_BATCH", "recw": "DOCASSAY_OCR_REC_WIDTH",
              "simplify": "DOCASSAY_OCR_SIMPLIFY", "spin": "DOCASSAY_OCR_SPIN",
              "draft": "DOCASSAY_OCR_JPEG_DRAFT"}
TESS_KEYS = {"psm": "DOCASSAY_OCR_TESSERACT_PSM", "max_side": "DOCASSAY_OCR_TESSERACT_MAX_SIDE",
             "threads": "DOCASSAY_OCR_TESSERACT_THREADS", "min_conf": "DOCASSAY_OCR_TESSERACT_MIN_CONF",
             "junk": "DOCASSAY_OCR_TESSERACT_JUNK_CONF", "draft": "DOCASSAY_OCR_JPEG_DRAFT"}
ENV_KEYS = {"rapidocr": RAPID_KEYS, "tesseract": TESS_KEYS}


def setting_env(spec: str, rapid_threads: int) -> tuple[str, dict[str, str]]:
    """(engine, environment overrides) of a setting `engine[:key=value...]`."""
    engine, *pairs = spec.split(":")
    if engine not in ENV_KEYS:
        raise SystemExit(f"unknown engine in {spec!r}: one of {', '.join(ENV_KEYS)}")
    env = {"DOCASSAY_OCR_THREADS": str(rapid_threads)} if engine == "rapidocr" else {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        if key not in ENV_KEYS[engine]:
            raise SystemExit(f"unknown key {key!r} in {spec!r}: one of {', '.join(ENV_KEYS[engine])}")
        env[ENV_KEYS[engine][key]] = value
    return engine, env


def run_setting(spec: str, items: list[tuple[str, Path, Path]], threads: int, mode: str = "RGB") -> dict:
    """One fresh process reading `items` with setting `spec`: timings, memory and per-image words."""
    engine, overrides = setting_env(spec, threads)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCASSAY_OCR")}
    env.update({"PYTHONPATH": str(ROOT), **overrides})
    arg = json.dumps([[str(i), str(o)] for _, i, o in items])
    load = os.getloadavg()[0]
    proc = subprocess.run([sys.executable, "-c", WORKER, arg, engine, mode], capture_output=True, text=True,
                          env=env, cwd=ROOT, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{spec}: the worker failed:\n{proc.stderr[-3000:]}")
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["load_avg"] = (load + os.getloadavg()[0]) / 2
    return res


def score_run(items: list[tuple[str, Path, Path]], res: dict) -> dict:
    scores = [score_lines(json.loads(o.read_text())["lines"], [tuple(w) for w in r["words"]])
              for (_, _, o), r in zip(items, res["images"])]
    return {k: statistics.mean(s[k] for s in scores) for k in ("char_acc", "word_acc", "line_hit")}


def summarise(spec: str, runs: list[dict], items: list) -> dict:
    """Median over rounds of each round's median over images; accuracy from the first round (the
    engines are deterministic: every round gives the same words)."""
    def med(key: str) -> float:
        return statistics.median(statistics.median(r[key] for r in run["images"]) for run in runs)
    return {"setting": spec, "images": len(items), "rounds": len(runs),
            "load_s": statistics.median(r["load_s"] for r in runs),
            "median_s": med("s"), "median_cpu_s": med("cpu_s"),
            "max_s": statistics.median(max(i["s"] for i in r["images"]) for r in runs),
            "peak_rss_mb": max(r["rss_mb"] for r in runs),
            "load_avg": [round(r["load_avg"], 1) for r in runs], **score_run(items, runs[0])}


def a4_pages(n: int, out: Path, seed: int = 15) -> list[tuple[str, Path, Path]]:
    """First pages of `n` synthetic invoices (one per format, split `unseen`) rendered as the PDF parser
    renders a scanned page (200 dpi, `ocr_render_dpi`), with the seeded rotation and noise of a scan,
    and their text-layer lines as ground truth."""
    from docassay.extractors.synth.generator import generate
    from docassay.extractors.synth.render import to_ocr_lines, to_png
    from docassay.infra.config import Limits
    dpi = Limits().ocr_render_dpi
    out.mkdir(parents=True, exist_ok=True)
    items = []
    for sd in generate(n, 1, kind="invoice", seed=seed, split="unseen"):
        png = to_png(sd, dpi, augment=True)[0]
        lines = [ln for ln in to_ocr_lines(sd, dpi, augment=True)["lines"] if ln.get("page", 1) == 1]
        img, gt = out / f"{sd.doc_id}.png", out / f"{sd.doc_id}.ocr.json"
        img.write_bytes(png)
        gt.write_text(json.dumps({"lines": lines}))
        items.append((sd.doc_id, img, gt))
    return items


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--split", choices=SPLITS, default="dev-tune")
    ap.add_argument("--a4", type=int, default=0, metavar="N", help="N synthetic A4 pages instead of the receipts")
    ap.add_argument("--limit", type=int, default=0, help="first N images of the split (0: all)")
    ap.add_argument("--grid", default=DEFAULT_GRID, help="comma-separated engine[:key=value...] settings")
    ap.add_argument("--threads", type=int, default=2, help="onnxruntime threads (the 2-core target) unless a "
                                                           "setting names them")
    ap.add_argument("--repeat", type=int, default=1, help="rounds; timings are the median over rounds")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    tmp = None
    if args.a4:
        import tempfile
        tmp = tempfile.TemporaryDirectory(prefix="docassay-ocr-a4-")
        items, mode = a4_pages(args.a4, Path(tmp.name)), "L"        # the PDF parser renders in grey
    else:
        items, mode = images_of(args.data, args.split), "RGB"
    if args.limit:
        items = items[:args.limit]
    specs = [x.strip() for x in args.grid.split(",") if x.strip()]
    runs: dict[str, list[dict]] = {spec: [] for spec in specs}
    for rnd in range(args.repeat):
        for spec in specs:
            t = time.perf_counter()
            runs[spec].append(run_setting(spec, items, args.threads, mode))
            print(f"round {rnd + 1} {spec}: {time.perf_counter() - t:.1f} s", file=sys.stderr)
    results = [summarise(spec, runs[spec], items) for spec in specs]
    if tmp is not None:
        tmp.cleanup()
    print(md_table(["setting", "images", "rounds", "median s/image", "max s", "median CPU s/image", "load (per round)",
                    "peak RSS MB", "char acc", "word acc", "line hit"],
                   [[r["setting"], r["images"], r["rounds"], f"{r['median_s']:.2f}", f"{r['max_s']:.2f}",
                     f"{r['median_cpu_s']:.2f}", " / ".join(f"{x:.1f}" for x in r["load_avg"]),
                     f"{r['peak_rss_mb']:.0f}", f"{r['char_acc']:.3f}", f"{r['word_acc']:.3f}", f"{r['line_hit']:.3f}"]
                    for r in results]))
    if args.out:
        args.out.write_text(json.dumps({"split": "a4" if args.a4 else args.split, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
