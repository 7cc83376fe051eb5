"""`docassay deploy serve|run-once` — scheduled inbox runs (flows/deploy.py, flows/inbox.py).

    docassay deploy serve --cron "*/5 * * * *" --inbox PATH|s3://bucket/prefix --dest PATH|s3://... \\
        --schema SCHEMA.json [--rules RULES] [--inbox ... --dest ...]   serve until Ctrl-C
    docassay deploy run-once --inbox ... --dest ... --schema ...       one run now; prints its summary
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from docassay.flows.job_options import JobOptions, absolute_path, add_job_options


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("deploy", help="scheduled runs over an inbox (folder or S3 prefix)",
                       description="Serve Prefect deployments that process what arrives in an inbox on a cron "
                                   "schedule, or run an inbox once.")
    cmds = p.add_subparsers(dest="deploy_command", metavar="ACTION")
    cmds.required = True

    serve = cmds.add_parser("serve", help="register deployments and run them on their schedule (blocks)",
                            description="Each --inbox pairs with the --dest given in the same position. Schedules "
                                        "are fired by the Prefect server in PREFECT_API_URL (start one with "
                                        "`prefect server start`).")
    serve.add_argument("--cron", required=True, help="cron schedule, e.g. '*/5 * * * *'; six fields put seconds last: '* * * * * */30'")
    serve.add_argument("--timezone", default="UTC", help="time zone of the cron schedule (default UTC)")
    serve.add_argument("--name", action="append", help="deployment name (one per --inbox; default from the inbox)")
    serve.add_argument("--collision", choices=("cancel_new", "enqueue"), default="cancel_new",
                       help="a run that comes due while the previous one works: cancel it (default) or queue it")
    serve.add_argument("--limit", type=int, default=None, help="most runs this process executes at once")
    _inbox_options(serve, repeat=True)
    serve.set_defaults(run=run_serve)

    once = cmds.add_parser("run-once", help="process an inbox once, now, and print the run's summary")
    _inbox_options(once, repeat=False)
    once.set_defaults(run=run_once)


def _inbox_options(p: argparse.ArgumentParser, *, repeat: bool) -> None:
    action = "append" if repeat else "store"
    p.add_argument("--inbox", required=True, action=action, help="folder or s3://bucket/prefix documents arrive in")
    p.add_argument("--dest", required=True, action=action,
                   help="where results go (folder or s3://bucket/prefix): runs/<run>/results.jsonl, documents/<sha256>.json")
    add_job_options(p)                                # flows/job_options.py: --schema, --rules, ...
    p.add_argument("--task-runner", default="threads",
                   help="threads (default), dask, dask:N (local cluster of N processes) or tcp://scheduler:port")
    p.add_argument("--after", choices=("move", "keep"), default="move",
                   help="processed documents: move under <inbox>/.processed/<run>/ (default) or leave them")
    p.add_argument("--lease-s", type=float, default=120.0, help="inbox lease, renewed while a run works (seconds)")
    p.add_argument("--settle-s", type=float, default=2.0,
                   help="leave files younger than this for the next run (still being written)")
    p.add_argument("--max-attempts", type=int, default=3, help="runs that may die on one document before it is given up")


def _specs(args: argparse.Namespace) -> list:
    from docassay.flows.inbox import InboxSpec
    inboxes = args.inbox if isinstance(args.inbox, list) else [args.inbox]
    dests = args.dest if isinstance(args.dest, list) else [args.dest]
    if len(inboxes) != len(dests):
        raise _usage(f"give one --dest per --inbox ({len(inboxes)} inboxes, {len(dests)} destinations)")
    if not Path(args.schema).is_file():
        raise _usage(f"schema not found: {args.schema}")
    job = JobOptions.from_args(args).absolute()       # a deployment runs in another working directory
    return [InboxSpec(inbox=absolute_path(i), dest=absolute_path(d), job=job, after=args.after, lease_s=args.lease_s,
                      settle_s=args.settle_s, max_attempts=args.max_attempts)
            for i, d in zip(inboxes, dests)]


def _usage(message: str) -> Exception:
    from docassay.infra.errors import ConfigError
    return ConfigError(message)


def _prefect() -> None:
    from docassay.flows.prefect_env import quiet_prefect
    quiet_prefect()                                   # before Prefect is imported


def run_serve(args: argparse.Namespace) -> int:
    _prefect()
    from docassay.flows.deploy import InboxDeployment, serve

    specs = _specs(args)
    names = args.name or []
    if names and len(names) != len(specs):
        raise _usage("give one --name per --inbox, or none")
    deployments = [InboxDeployment(spec=s, cron=args.cron, name=names[i] if names else None, timezone=args.timezone,
                                   task_runner=args.task_runner, collision=args.collision)
                   for i, s in enumerate(specs)]
    if not os.environ.get("PREFECT_API_URL"):
        print("docassay: warning: PREFECT_API_URL is not set; Prefect's temporary server does not fire schedules. "
              "Start `prefect server start` and set PREFECT_API_URL=http://127.0.0.1:4200/api", file=sys.stderr)
    for d in deployments:
        print(f"docassay: serving {d.deployment_name}: {d.spec.inbox} -> {d.spec.dest} on '{d.cron}' ({d.timezone})",
              file=sys.stderr)
    serve(deployments, limit=args.limit, announce=False)
    return 0


def run_once(args: argparse.Namespace) -> int:
    _prefect()
    from docassay.flows.deploy import run_once as run

    (spec,) = _specs(args)
    summary = run(spec, task_runner=args.task_runner)
    print(json.dumps(summary, indent=2, default=str))
    return 0
