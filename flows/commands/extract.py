"""`docassay extract PATH... --schema SCHEMA.json [--rules RULES] --out DIR`

    --estimate            how many documents need the model and how many tokens, without calling it
    --retry-from RESULTS  rerun only the rows of RESULTS that ended quota_exceeded, error or needs_review
    --project / --user    whose daily token quotas the model calls are charged to (infra/quota.py)
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from flows.commands.common import add_min_confidence, add_store_options

GENERATORS = ("baseline", "model")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("extract", help="extract verified records from documents",
                       description="Read documents (files, folders, s3://bucket/prefix), match or learn their "
                                   "formats, extract and verify records; write DIR/results.jsonl.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (not with --retry-from)")
    p.add_argument("--schema", required=True, help="JSON Schema of the record to extract")
    p.add_argument("--rules", help="SQL rule pack: a .sql file or a folder of them")
    p.add_argument("--out", help="output folder for results.jsonl (required unless --estimate)")
    add_store_options(p)
    p.add_argument("--model-url", help="URL of a running `docassay model serve` (default: $DOCASSAY_MODEL_URL, "
                                       "else the model runs in-process); used by --generator model, the default")
    p.add_argument("--generator", choices=GENERATORS, default="model",
                   help="how instructions for new formats are written: the MoE model (default; on the server of "
                        "--model-url if given, else in-process) or the baseline (label similarity, no model tokens)")
    p.add_argument("--concurrency", type=int, default=2, help="documents processed at once (default 2)")
    p.add_argument("--max-error-ratio", type=float, default=None,
                   help="fail (exit 1) when more than this share of documents end failed/error/quota_exceeded")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.add_argument("--estimate", action="store_true",
                   help="report how many documents would need the model and the expected tokens; call nothing")
    p.add_argument("--retry-from", metavar="RESULTS",
                   help="rerun only the documents whose rows in RESULTS (a results.jsonl) ended "
                        "quota_exceeded, error or needs_review; the other rows are copied")
    p.add_argument("--project", help="project charged for model tokens (default: $DOCASSAY_QUOTA_PROJECT or 'default')")
    p.add_argument("--user", help="user charged for model tokens (default: $DOCASSAY_QUOTA_USER or the login name)")
    p.add_argument("--parser", choices=("local", "textract"), default="local",
                   help="who reads images and scanned PDFs: the local OCR (default) or Amazon Textract")
    p.add_argument("--index", help="format index: s3vectors://bucket/index (default: faiss under --home)")
    add_min_confidence(p)
    p.add_argument("--task-runner", default="threads",
                   help="threads (default), dask, dask:N (local cluster of N processes) or tcp://scheduler:port")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    if args.max_error_ratio is not None and not 0.0 <= args.max_error_ratio <= 1.0:
        print("docassay: error: --max-error-ratio must be between 0 and 1", file=sys.stderr)
        return 2
    if args.concurrency < 1:
        print("docassay: error: --concurrency must be at least 1", file=sys.stderr)
        return 2
    if args.min_confidence is not None and not 0.0 <= args.min_confidence <= 1.0:
        print("docassay: error: --min-confidence must be between 0 and 1", file=sys.stderr)
        return 2
    usage_error = _check_inputs(args)
    if usage_error:
        print(f"docassay: error: {usage_error}", file=sys.stderr)
        return 2
    from flows.prefect_env import quiet_prefect
    quiet_prefect()                                            # before Prefect is imported
    from flows.jobs import JobOptions

    opts = JobOptions(schema=args.schema, rules=args.rules, home=args.home, db=args.db,
                      generator=args.generator, concurrency=args.concurrency, project=args.project, user=args.user,
                      model_url=args.model_url, parser=args.parser, index=args.index,
                      min_confidence=args.min_confidence)
    if args.estimate:
        return _estimate(args, opts)
    _refuse_spent_quota(opts)                                  # before Prefect starts: nothing is processed
    from flows.extract_flow import BatchFailed, run_extract   # Prefect loads only when needed
    out = _out_location(args.out)
    try:
        summary = run_extract(args.paths, opts, args.out, quiet=args.quiet, max_error_ratio=args.max_error_ratio,
                              retry_from=args.retry_from, task_runner=args.task_runner)
    except BatchFailed as exc:
        print(f"docassay: batch failed: {exc.message}", file=sys.stderr)
        _print_failure(exc.context.get("summary") or {})
        print(f"docassay: results kept in {out / 'results.jsonl'}", file=sys.stderr)
        return 1
    if not args.quiet:
        counts = ", ".join(f"{k} {v}" for k, v in summary["by_status"].items())
        dup = f" ({summary['duplicates']} seen before: see duplicate_of)" if summary.get("duplicates") else ""
        print(f"{summary['total']} documents: {counts or 'none'}{dup} -> {out / 'results.jsonl'}", file=sys.stderr)
        for e in summary["errors"]:
            print(f"  error: {e}", file=sys.stderr)
        if isinstance(out, Path):
            _print_problems(out / "results.jsonl")
    return 0


def _out_location(out: str) -> "Path | _Remote":
    """The --out location, printable as `out / 'results.jsonl'` for a folder or an s3:// prefix."""
    return _Remote(out) if out.startswith("s3://") else Path(out)


class _Remote(str):
    def __truediv__(self, name: str) -> str:
        return self.rstrip("/") + "/" + name


def _check_inputs(args: argparse.Namespace) -> str | None:
    if args.retry_from and args.paths:
        return "give either PATHs or --retry-from RESULTS, not both"
    if args.retry_from and args.estimate:
        return "--estimate takes PATHs, not --retry-from"
    if not args.retry_from and not args.paths:
        return "no input: give PATHs (files or folders) or --retry-from RESULTS"
    if not args.out and not args.estimate:
        return "--out DIR is required (except with --estimate)"
    return None


def _refuse_spent_quota(opts) -> None:
    """Raise QuotaExceeded (exit 1, clear message) when the job's generator is metered and a quota
    that applies is already spent; the flow checks again, this only spares starting Prefect."""
    from flows.jobs import build_job
    job = build_job(opts)
    if job.budget is not None:
        try:
            job.budget.check()
        finally:
            job.budget.close()


def _estimate(args: argparse.Namespace, opts) -> int:
    from flows.batch import collect_sources, ground_truth_sidecar
    from flows.estimate import estimate_batch
    from flows.jobs import build_job
    from flows.pipeline import open_context

    job = build_job(opts)
    try:
        sources = collect_sources(args.paths, skip=ground_truth_sidecar)
        with open_context(job.settings) as ctx:
            est = estimate_batch(sources, job, ctx, concurrency=args.concurrency)
    finally:
        if job.budget is not None:
            job.budget.close()
    print(json.dumps(est.to_json(), ensure_ascii=False))
    if not args.quiet:
        for line in est.summary_lines():
            print(line, file=sys.stderr)
    return 0


def _print_failure(summary: dict) -> None:
    errors = summary.get("errors") or []
    if summary:
        which = f"the first {len(errors)} distinct errors" if len(errors) >= 5 else f"{len(errors)} distinct error(s)"
        print(f"docassay: {summary.get('failed', 0)} of {summary.get('total', 0)} documents failed; {which}:",
              file=sys.stderr)
    for e in errors:
        print(f"  error: {e}", file=sys.stderr)


def _print_problems(results: Path) -> None:
    """Per-document status of the documents that did not pass (first 20)."""
    from flows.retry import read_rows
    from flows.status import problem_lines
    from infra.errors import ConfigError
    try:
        rows = read_rows(results)
    except ConfigError:     # the batch ran; a listing problem must not change its exit status
        return
    lines = problem_lines(rows)
    if lines:
        print("documents that did not pass:", file=sys.stderr)
    for line in lines:
        print(line, file=sys.stderr)
