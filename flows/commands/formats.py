"""`docassay formats list|show` — the format library."""
from __future__ import annotations

import argparse
import json

from flows.commands.common import add_store_options, settings_from
from infra import store
from infra.db import connect
from infra.errors import ConfigError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("formats", help="inspect the format library")
    fsub = p.add_subparsers(dest="formats_command", metavar="ACTION")
    fsub.required = True
    ls = fsub.add_parser("list", help="formats with status and versions")
    add_store_options(ls)
    ls.add_argument("--status", choices=store.FORMAT_STATUSES)
    ls.set_defaults(run=run_list)
    show = fsub.add_parser("show", help="a format's instructions (latest active version, or --version)")
    add_store_options(show)
    show.add_argument("format_id")
    show.add_argument("--version", type=int)
    show.set_defaults(run=run_show)


def run_list(args: argparse.Namespace) -> int:
    with connect(settings_from(args)) as conn:
        rows = store.list_formats(conn, args.status)
        for f in rows:
            versions = store.list_versions(conn, f.id)
            active = next((v.version for v in reversed(versions) if v.status == "active"), None)
            print(f"{f.id}  {f.status:<14}  versions={len(versions)} active={active}  "
                  f"{f.meta.get('source', '')}  {f.created_at:%Y-%m-%d %H:%M}")
        if not rows:
            print("no formats yet")
    return 0


def run_show(args: argparse.Namespace) -> int:
    with connect(settings_from(args)) as conn:
        versions = store.list_versions(conn, args.format_id)
        if not versions:
            raise ConfigError(f"no format {args.format_id!r}")
        if args.version is not None:
            chosen = next((v for v in versions if v.version == args.version), None)
            if chosen is None:
                raise ConfigError(f"format {args.format_id!r} has no version {args.version}")
        else:
            chosen = next((v for v in reversed(versions) if v.status == "active"), versions[-1])
        print(json.dumps({"format": args.format_id, "version": chosen.version, "status": chosen.status,
                          "produced_by": chosen.produced_by, "created_at": chosen.created_at.isoformat(),
                          "instructions": chosen.instructions}, indent=2, ensure_ascii=False))
    return 0
