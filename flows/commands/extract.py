"""`docassay extract PATH... --schema SCHEMA.json [--rules RULES] --out DIR`

    --estimate            how many documents need the model and how many tokens, without calling it
    --retry-from RESULTS  rerun only the rows of RESULTS that ended quota_exceeded, error or needs_review
                          (and the inputs of a killed run that never got a row)
    --overwrite           replace an existing DIR/results.jsonl (refused otherwise) and start afresh
                          instead of resuming the rows a killed run left in DIR
    --project / --user    whose daily token quotas the model calls are charged to (infra/quota.py)

The job options (--schema, --rules, --home, --generator, ...) are flows/job_options.py's one list.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from docassay.flows.job_options import add_job_options
from docassay.infra.display import printable


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("extract", help="extract verified records from documents",
                       description="Read documents (files, folders, s3://bucket/prefix), match or learn their "
                                   "formats, extract and verify records; write DIR/results.jsonl.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (not with --retry-from)")
    add_job_options(p)                                         # flows/job_options.py: --schema, --rules, ...
    p.add_argument("--out", help="output folder for results.jsonl (required unless --estimate)")
    p.add_argument("--report", action="store_true",
                   help="also write DIR/report.html: the batch summary and every document's pages with its boxes "
                        "(one self-contained offline page; flows/report.py)")
    p.add_argument("--max-error-ratio", type=float, default=None,
                   help="fail (exit 1) when more than this share of documents end failed/error/quota_exceeded")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.add_argument("--estimate", action="store_true",
                   help="report how many documents would need the model and the expected tokens; call nothing")
    p.add_argument("--retry-from", metavar="RESULTS",
                   help="rerun only the documents whose rows in RESULTS (a results.jsonl) ended "
                        "quota_exceeded, error or needs_review, and those of a killed run that never got a row; "
                        "the other rows are copied")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing DIR/results.jsonl (without it the run is refused) and do not resume "
                        "the rows a killed run left in DIR")
    p.add_argument("--task-runner", default="threads",
                   help="threads (default), dask, dask:N (local cluster of N processes) or tcp://scheduler:port")
    p.add_argument("--orchestrator", choices=("auto", "local", "prefect"), default=None,
                   help="auto (default, $DOCASSAY_ORCHESTRATOR): a Prefect flow run when a Prefect server is "
                        "configured (PREFECT_API_URL) or the task runner is Dask, else a thread pool in this "
                        "process with no server; prefect: always a flow run (Prefect starts a temporary server "
                        "when none is configured)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    """Usage errors first, in this order and before anything starts (exit 2): flags, inputs, the
    schema, the rule pack (parsed, then every rule planned against the schema's relations on the
    database). Then the batch, under SIGTERM/SIGINT handling (flows/signals.py)."""
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
    from docassay.flows.job_options import JobOptions
    from docassay.flows.orchestration import choose
    from docassay.rules.errors import RulesError

    orchestrator = choose(args.orchestrator, args.task_runner)
    opts = JobOptions.from_args(args)
    out = _out_location(args.out) if args.out else None
    if isinstance(out, Path) and not args.estimate:            # busy or existing output: refused at once
        from docassay.flows.output import preflight
        preflight(out, overwrite=args.overwrite, replaces=Path(args.retry_from) if args.retry_from else None)
    try:
        job = _preflight(opts, check_quota=not args.estimate)  # schema, rules, quota: before anything is read
    except RulesError as exc:
        print(f"docassay: error: {exc.message}", file=sys.stderr)
        return 2
    if args.estimate:
        return _estimate(args, job)
    from docassay.flows.extract_batch import BatchFailed, BatchInterrupted
    from docassay.flows.signals import StopRequest, exit_status, hard_exit, stop_on_signals
    assert out is not None                                     # _check_inputs: --out is required here
    stop = StopRequest()
    try:
        with stop_on_signals(stop):
            summary = _run_batch(args, opts, job, orchestrator, stop)
    except BatchInterrupted as exc:
        print(f"docassay: {exc.message}", file=sys.stderr)
        abandoned = exc.context.get("abandoned")
        if isinstance(abandoned, list) and abandoned:
            print(f"docassay: not finished: {', '.join(map(str, abandoned))}", file=sys.stderr)
        hard_exit(exit_status(stop.signum))                    # abandoned threads must not hold the exit up
    except BatchFailed as exc:
        print(f"docassay: batch failed: {exc.message}", file=sys.stderr)
        failed = exc.context.get("summary")
        _print_failure(failed if isinstance(failed, dict) else {})
        print(f"docassay: results kept in {out / 'results.jsonl'}", file=sys.stderr)
        _report(args, out)
        return 1
    if not args.quiet:
        counts = ", ".join(f"{k} {v}" for k, v in summary["by_status"].items())
        dup = f" ({summary['duplicates']} seen before: see duplicate_of)" if summary.get("duplicates") else ""
        print(f"{summary['total']} documents: {counts or 'none'}{dup} -> {out / 'results.jsonl'}", file=sys.stderr)
        for e in summary["errors"]:
            print(f"  error: {printable(e)}", file=sys.stderr)
        if isinstance(out, Path):
            _print_problems(out / "results.jsonl")
    _report(args, out)
    return 0


def _run_batch(args: argparse.Namespace, opts, job, orchestrator: str, stop) -> dict:
    if orchestrator == "local":
        from docassay.flows.extract_batch import ThreadDispatch, extract_batch
        return extract_batch(args.paths, opts, args.out, dispatch=ThreadDispatch(args.concurrency), quiet=args.quiet,
                             max_error_ratio=args.max_error_ratio, retry_from=args.retry_from, stop=stop, job=job,
                             overwrite=args.overwrite)
    _close_budget(job)                                         # the flow builds its own job
    from docassay.flows.reaper import guard
    guard()                                                    # no Prefect server outlives a killed run
    from docassay.flows.prefect_env import quiet_prefect
    quiet_prefect(quiet=args.quiet)                            # before Prefect is imported
    from docassay.flows.extract_flow import run_extract  # Prefect loads only when needed
    return run_extract(args.paths, opts, args.out, quiet=args.quiet, max_error_ratio=args.max_error_ratio,
                       retry_from=args.retry_from, task_runner=args.task_runner, stop=stop, overwrite=args.overwrite)


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
    missing = [p for p in args.paths if not p.startswith("s3://") and not Path(p).exists()]
    if missing:
        return f"input not found: {', '.join(missing)}"
    if args.retry_from and not Path(args.retry_from).is_file():
        return f"--retry-from: no such results file: {args.retry_from}"
    if not Path(args.schema).is_file():
        return f"--schema: no such file: {args.schema}"
    if args.rules and not Path(args.rules).exists():
        return f"--rules: no such file or folder: {args.rules}"
    if getattr(args, "report", False) and (args.estimate or str(args.out or "").startswith("s3://")):
        return "--report writes report.html into a local --out folder (not with --estimate or s3://)"
    return None


def _preflight(opts, *, check_quota: bool = True):
    """The job, once its schema and rule pack were read, every rule was planned against the schema's
    relations on the database (rules.check_rules), and a spent quota refused the batch (exit 1,
    nothing is read). ConfigError (bad schema) and RulesError (bad rule) are usage errors."""
    from docassay.flows.jobs import build_job
    from docassay.infra.db import Database
    from docassay.rules import check_rules
    job = build_job(opts)
    try:
        if job.rules:                  # no migrations yet: a login that may not run rules sandboxed is told first
            with Database.from_settings(job.settings, migrate=False).connect() as conn:
                check_rules(conn, job.schema, job.rules, sandbox=job.settings.rule_sandbox != "off",
                            timeout_ms=job.settings.rule_timeout_ms)
        if check_quota and job.budget is not None:
            job.budget.check()
    except BaseException:
        _close_budget(job)
        raise
    return job


def _close_budget(job) -> None:
    if job.budget is not None:
        job.budget.close()


def _estimate(args: argparse.Namespace, job) -> int:
    from docassay.flows.batch import collect_sources, ground_truth_sidecar
    from docassay.flows.context import open_context
    from docassay.flows.estimate import estimate_batch

    try:
        sources = collect_sources(args.paths, skip=ground_truth_sidecar, follow_links=job.settings.follow_links)
        with open_context(job.settings) as ctx:
            est = estimate_batch(sources, job, ctx, concurrency=args.concurrency)
    finally:
        _close_budget(job)
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
        print(f"  error: {printable(e)}", file=sys.stderr)


def _print_problems(results: Path) -> None:
    """Per-document status of the documents that did not pass (first 20)."""
    from docassay.flows.retry import read_rows
    from docassay.flows.status import problem_lines
    from docassay.infra.errors import ConfigError
    try:
        rows = read_rows(results)
    except ConfigError:     # the batch ran; a listing problem must not change its exit status
        return
    lines = problem_lines(rows)
    if lines:
        print("documents that did not pass:", file=sys.stderr)
    for line in lines:
        print(line, file=sys.stderr)


def _report(args: argparse.Namespace, out) -> None:
    """--report: report.html beside results.jsonl (a failure to write it is said, not fatal)."""
    if getattr(args, "report", False):
        from docassay.flows.report import report_for_batch
        report_for_batch(args, out)
