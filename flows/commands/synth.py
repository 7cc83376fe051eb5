"""`docassay synth` — write synthetic documents with exact ground truth (extractors.synth)."""
from __future__ import annotations

import argparse
import sys
import time

RENDERS = ("pdf", "png", "ocr")   # = extractors.synth.dataset.RENDERS (a test pins it; imported lazily)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("synth", help="generate synthetic invoices or receipts with ground truth",
                       description="Write N formats x M documents (seeded; a format shares layout and labels, "
                                   "documents differ in values) with <id>.json ground truth, <id>.spans.json "
                                   "span labels and manifest.jsonl.")
    p.add_argument("--out", required=True)
    p.add_argument("--kind", choices=("invoice", "receipt"), default="invoice")
    p.add_argument("--formats", type=int, default=5)
    p.add_argument("--docs", type=int, default=3, help="documents per format")
    p.add_argument("--split", choices=("train", "dev", "unseen"), default="train",
                   help="format seed range: splits never share a format")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--render", default="pdf", help=f"comma-separated subset of {','.join(RENDERS)}")
    p.add_argument("--dpi", type=int, default=150)
    p.add_argument("--augment", action="store_true", help="rotate and add noise to page images")
    p.add_argument("--families", default=None,
                   help="comma-separated layout families to draw (or 'all'); default: all on train/unseen, "
                        "classic on dev (see README 'Synthetic documents')")
    p.add_argument("--ocr-noise", default=None, choices=("none", "light", "medium", "heavy"),
                   help="misread the OCR line files (render ocr) as an OCR engine would: merged words, split "
                        "lines, confused and dropped characters, jittered boxes")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    render = tuple(r.strip() for r in args.render.split(",") if r.strip())
    if args.formats < 1 or args.docs < 1:
        print("docassay: error: --formats and --docs must be at least 1", file=sys.stderr)
        return 2
    from docassay.extractors.synth import write_dataset
    t = time.perf_counter()
    try:
        rows = write_dataset(args.out, args.formats, args.docs, kind=args.kind, split=args.split, seed=args.seed,
                             render=render, dpi=args.dpi, augment=args.augment, families=args.families,
                             ocr_noise=args.ocr_noise)
    except ValueError as exc:
        print(f"docassay: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {len(rows)} documents to {args.out} in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    return 0
