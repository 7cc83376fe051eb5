"""`docassay quota set|show|usage`: daily model-token quotas per project and per user (infra/quota.py).

    docassay quota set (--project NAME | --user NAME) [--input-tokens N|default] [--output-tokens N|default]
    docassay quota show  [--project NAME] [--user NAME] [--json]
    docassay quota usage [--project NAME] [--user NAME] [--day YYYY-MM-DD] [--json]

Without --project/--user, `show` and `usage` report the subjects a batch run here is charged to.
"""
from __future__ import annotations

import argparse
import json
from datetime import date, datetime, timezone

from docassay.flows.commands.common import add_store_options, settings_from
from docassay.infra.errors import ConfigError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("quota", help="daily model-token quotas per project and user",
                       description="Daily input- and output-token quotas for model calls, per project and per "
                                   "user, reset at midnight in $DOCASSAY_QUOTA_TIMEZONE (default UTC).")
    qs = p.add_subparsers(dest="quota_command", metavar="ACTION")
    qs.required = True
    s = qs.add_parser("set", help="set a project's or user's daily limits (at most the default)")
    _who(s)
    s.add_argument("--input-tokens", type=_limit, default=argparse.SUPPRESS,
                   help="daily input-token limit, or 'default' (unchanged when left out)")
    s.add_argument("--output-tokens", type=_limit, default=argparse.SUPPRESS,
                   help="daily output-token limit, or 'default' (unchanged when left out)")
    add_store_options(s)
    s.set_defaults(run=run_set)
    for name, fn, text in (("show", run_show, "the limits that apply: default, set, effective"),
                           ("usage", run_usage, "tokens used, reserved and left today")):
        q = qs.add_parser(name, help=text)
        _who(q)
        if name == "usage":
            q.add_argument("--day", type=date.fromisoformat, help="a past quota day, YYYY-MM-DD (default today)")
        q.add_argument("--json", action="store_true", help="machine-readable output")
        add_store_options(q)
        q.set_defaults(run=fn)


def _who(p: argparse.ArgumentParser) -> None:
    p.add_argument("--project", help="project name")
    p.add_argument("--user", help="user name")


def _limit(text: str) -> int | None:
    if text.strip().lower() == "default":
        return None
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a token count: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("a token limit cannot be negative")
    return value


def _subjects(args: argparse.Namespace, settings):
    from docassay.infra.quota import Subject, subjects_for
    given = [Subject("project", args.project)] if args.project else []
    given += [Subject("user", args.user)] if args.user else []
    return given or subjects_for(settings)


def run_set(args: argparse.Namespace) -> int:
    from docassay.infra.db import connect
    from docassay.infra.quota import KEEP, Subject, set_limit
    if bool(args.project) == bool(args.user):
        raise ConfigError("quota set: give exactly one of --project NAME or --user NAME")
    if not hasattr(args, "input_tokens") and not hasattr(args, "output_tokens"):
        raise ConfigError("quota set: give --input-tokens and/or --output-tokens (a number or 'default')")
    settings = settings_from(args)
    subject = Subject("project", args.project) if args.project else Subject("user", args.user)
    with connect(settings) as conn:
        got = set_limit(conn, settings, subject, input_tokens=getattr(args, "input_tokens", KEEP),
                        output_tokens=getattr(args, "output_tokens", KEEP))
    print(_limits_line(got))
    return 0


def run_show(args: argparse.Namespace) -> int:
    from docassay.infra.db import connect
    from docassay.infra.quota import limits
    settings = settings_from(args)
    with connect(settings) as conn:
        found = [limits(conn, settings, s) for s in _subjects(args, settings)]
    if args.json:
        print(json.dumps([q.to_json() for q in found]))
    else:
        for q in found:
            print(_limits_line(q))
    return 0


def run_usage(args: argparse.Namespace) -> int:
    from docassay.infra.db import connect
    from docassay.infra.quota import next_reset, quota_day, release_expired, usage
    settings = settings_from(args)
    day = args.day or quota_day(settings)
    with connect(settings) as conn:
        release_expired(conn)
        found = [usage(conn, settings, s, day=day) for s in _subjects(args, settings)]
    if args.json:
        print(json.dumps([u.to_json() for u in found]))
        return 0
    now = datetime.now(timezone.utc)
    mins = int((next_reset(settings, now) - now).total_seconds() // 60)
    when = f"resets in {mins // 60} h {mins % 60:02d} min" if day == quota_day(settings, now) else "past day"
    print(f"quota day {day.isoformat()} ({settings.quota_timezone}; {when})")
    for u in found:
        print(f"{str(u.subject):<24} input  used {u.used_input:>14,}  reserved {u.reserved_input:>12,}  "
              f"left {u.remaining_input:>14,} of {u.limit.input_tokens:,}")
        print(f"{'':<24} output used {u.used_output:>14,}  reserved {u.reserved_output:>12,}  "
              f"left {u.remaining_output:>14,} of {u.limit.output_tokens:,}   calls {u.calls:,}  refused {u.refused:,}"
              + ("   SPENT" if u.spent else ""))
    return 0


def _limits_line(q) -> str:
    def one(what: str, set_value: int | None, default: int, effective: int) -> str:
        if set_value is None:
            return f"{what} {effective:,} (default)"
        if set_value > default:
            return f"{what} {effective:,} (set {set_value:,}, capped by the default)"
        return f"{what} {effective:,} (set; default {default:,})"
    return (f"{str(q.subject):<24} daily limits: "
            + one("input", q.set_input, q.default.input_tokens, q.effective.input_tokens) + ", "
            + one("output", q.set_output, q.default.output_tokens, q.effective.output_tokens))
