"""`docassay review serve`: the review station on the CLI's database.

    docassay review serve [--host 127.0.0.1] [--port 8790] [--schema S --rules R] [--reviewer NAME]
                          [--token T | $DOCASSAY_REVIEW_TOKEN]

Bound to 127.0.0.1 by default (no token needed there; the Host header must name it). Any other
address needs a token (given, from the environment, or generated and printed once in the
address to open). With --schema (and --rules) corrections are validated and teach the format.
"""
from __future__ import annotations

import argparse
import getpass
import os
import secrets
import sys

from docassay.flows.commands.common import add_store_options, settings_from

__all__ = ["register_serve", "run_serve", "DEFAULT_PORT"]

DEFAULT_PORT = 8790


def register_serve(rsub: argparse._SubParsersAction) -> None:
    s = rsub.add_parser("serve", help="the review station in the browser: queue, pages with boxes, accept/correct/reject")
    add_store_options(s)
    s.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; others need a token)")
    s.add_argument("--port", type=int, default=DEFAULT_PORT)
    s.add_argument("--schema", help="target JSON Schema: corrections are validated and teach the format")
    s.add_argument("--rules", help="SQL rule pack the repaired instructions are verified with")
    s.add_argument("--reviewer", default=None, help="who reviews (recorded; default: the login name)")
    s.add_argument("--token", default=None, help="access token (default: $DOCASSAY_REVIEW_TOKEN; generated when "
                                                 "--host is not loopback)")
    s.add_argument("--allow-host", action="append", default=[], help="another Host name to answer (a proxy's)")
    s.set_defaults(run=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from docassay.flows.context import Job
    from docassay.flows.review_app.app import AppConfig, create_app
    from docassay.flows.review_app.security import SecurityConfig, is_loopback
    settings = settings_from(args)
    job = None
    if args.schema:
        from docassay.flows.batch import load_rule_pack, load_schema
        job = Job(schema=load_schema(args.schema), rules=load_rule_pack(args.rules), settings=settings)
    token = args.token or os.environ.get("DOCASSAY_REVIEW_TOKEN") or None
    if token is None and not is_loopback(args.host):
        token = secrets.token_urlsafe(24)
    sec = SecurityConfig(host=args.host, port=args.port, token=token, allowed_hosts=tuple(args.allow_host))
    reviewer = args.reviewer or _login()
    app = create_app(AppConfig(settings=settings, job=job, reviewer=reviewer, security=sec))
    shown = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{shown}:{args.port}/" + (f"?token={token}" if token else "")
    print(f"docassay review: open {url}  (Ctrl-C stops)", file=sys.stderr, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)
    return 0


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "reviewer"
