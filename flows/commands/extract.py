"""`docassay extract PATH... --schema SCHEMA.json [--rules RULES] --out DIR`"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from flows.commands.common import add_store_options

GENERATORS = ("baseline", "model")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("extract", help="extract verified records from documents",
                       description="Read documents (files, folders, s3://bucket/prefix), match or learn their "
                                   "formats, extract and verify records; write DIR/results.jsonl.")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--schema", required=True, help="JSON Schema of the record to extract")
    p.add_argument("--rules", help="SQL rule pack: a .sql file or a folder of them")
    p.add_argument("--out", required=True, help="output folder for results.jsonl")
    add_store_options(p)
    p.add_argument("--model-url", help="URL of a running `docassay model serve` (default: in-process)")
    p.add_argument("--generator", choices=GENERATORS, default="baseline",
                   help="how instructions for new formats are written")
    p.add_argument("--concurrency", type=int, default=2, help="documents processed at once (default 2)")
    p.add_argument("--max-error-ratio", type=float, default=None,
                   help="fail (exit 1) when more than this share of documents end failed/error/quota_exceeded")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.max_error_ratio is not None and not 0.0 <= args.max_error_ratio <= 1.0:
        print("docassay: error: --max-error-ratio must be between 0 and 1", file=sys.stderr)
        return 2
    if args.concurrency < 1:
        print("docassay: error: --concurrency must be at least 1", file=sys.stderr)
        return 2
    from flows.prefect_env import quiet_prefect
    quiet_prefect()                                            # before Prefect is imported
    from flows.extract_flow import BatchFailed, run_extract   # Prefect loads only when needed
    from flows.jobs import JobOptions

    opts = JobOptions(schema=args.schema, rules=args.rules, home=args.home, db=args.db,
                      generator=args.generator, concurrency=args.concurrency)
    out = Path(args.out)
    try:
        summary = run_extract(args.paths, opts, out, quiet=args.quiet, max_error_ratio=args.max_error_ratio)
    except BatchFailed as exc:
        print(f"docassay: batch failed: {exc.message}", file=sys.stderr)
        print(f"docassay: results kept in {out / 'results.jsonl'}", file=sys.stderr)
        return 1
    if not args.quiet:
        counts = ", ".join(f"{k} {v}" for k, v in summary["by_status"].items())
        print(f"{summary['total']} documents: {counts or 'none'} -> {out / 'results.jsonl'}", file=sys.stderr)
        for e in summary["errors"]:
            print(f"  error: {e}", file=sys.stderr)
    return 0
