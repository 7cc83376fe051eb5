"""`docassay formats list|show|diff|promote|archive|propose` — the format library and its lifecycle.

    list                      formats with status, versions, golden set and health
    show FORMAT [--version N] the instructions of a version, its history (who/what, when, why),
                              golden documents and health
    diff FORMAT [A [B]]       what changed between two versions (default: the two latest)
    promote FORMAT            pending_review -> active; with --version N, make version N the active
                              one through the reference gate (needs --schema; --force skips the gate)
    archive FORMAT            active -> archived: its documents no longer match it
    propose FORMAT --instructions FILE --schema S
                              a person's edited instructions as the next version, through the
                              reference gate (stored `active`, or `rejected` with the reasons)
"""
from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path

from docassay.flows.commands.common import add_store_options, connect, lazy_module, settings_from
from docassay.infra.display import printable
from docassay.infra.errors import ConfigError

store = lazy_module("docassay.infra.store")   # the database layer loads when a sub-command runs, not for --help
FORMAT_STATUSES = ("pending_review", "active", "archived")   # = infra.store.FORMAT_STATUSES (a test pins it)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("formats", help="inspect the format library and manage formats' lifecycle")
    fsub = p.add_subparsers(dest="formats_command", metavar="ACTION")
    fsub.required = True
    ls = fsub.add_parser("list", help="formats with status, versions, golden set and health")
    add_store_options(ls)
    ls.add_argument("--status", choices=FORMAT_STATUSES)
    ls.add_argument("--json", action="store_true", help="one JSON array of formats instead of lines")
    ls.set_defaults(run=run_list)
    show = fsub.add_parser("show", help="a format's instructions (latest active version, or --version), "
                                        "its versions, golden documents and health")
    add_store_options(show)
    show.add_argument("format_id")
    show.add_argument("--version", type=int)
    show.set_defaults(run=run_show)
    diff = fsub.add_parser("diff", help="what changed between two versions of a format's instructions")
    add_store_options(diff)
    diff.add_argument("format_id")
    diff.add_argument("a", type=int, nargs="?", help="older version (default: the one before B)")
    diff.add_argument("b", type=int, nargs="?", help="newer version (default: the latest)")
    diff.set_defaults(run=run_diff)
    pr = fsub.add_parser("promote", help="make a format active; with --version N, make version N the active one")
    add_store_options(pr)
    pr.add_argument("format_id")
    pr.add_argument("--version", type=int, help="activate this version (through the reference gate)")
    pr.add_argument("--schema", help="the target JSON Schema (needed to replay golden documents for --version)")
    pr.add_argument("--rules", help="SQL rule pack used when replaying golden documents")
    pr.add_argument("--force", action="store_true", help="activate --version without the reference gate")
    pr.add_argument("--by", default="cli", help="who decides (recorded with the version)")
    pr.set_defaults(run=run_promote)
    ar = fsub.add_parser("archive", help="archive a format: documents no longer match it")
    add_store_options(ar)
    ar.add_argument("format_id")
    ar.set_defaults(run=run_archive)
    pp = fsub.add_parser("propose", help="propose edited instructions as the next version (reference gate decides)")
    add_store_options(pp)
    pp.add_argument("format_id")
    pp.add_argument("--instructions", required=True, help="a JSON file of instructions (as `formats show` prints them)")
    pp.add_argument("--schema", required=True)
    pp.add_argument("--rules")
    pp.add_argument("--by", default="person", help="who wrote them")
    pp.set_defaults(run=run_propose)


def _versions_or_fail(conn, format_id: str):
    if store.get_format(conn, format_id) is None:
        raise ConfigError(f"no format {format_id!r} (see `docassay formats list`)")
    return store.list_versions(conn, format_id)


def run_list(args: argparse.Namespace) -> int:
    with connect(settings_from(args)) as conn:
        rows = store.list_formats(conn, args.status)
        listing = []
        for f in rows:
            versions = store.list_versions(conn, f.id)
            active = next((v.version for v in reversed(versions) if v.status == "active"), None)
            health = store.get_health(conn, f.id)
            golden = store.count_golden(conn, f.id)
            if getattr(args, "json", False):
                listing.append({"id": f.id, "status": f.status, "versions": len(versions), "active_version": active,
                                "golden": golden, "consecutive_failures": health.consecutive_failures if health else 0,
                                "source": f.meta.get("source"), "created_at": f.created_at.isoformat()})
                continue
            drift = f" failing={health.consecutive_failures}" if health and health.consecutive_failures else ""
            print(f"{f.id}  {f.status:<14}  versions={len(versions)} active={active} "
                  f"golden={golden}{drift}  {printable(f.meta.get('source', ''))}  "
                  f"{f.created_at:%Y-%m-%d %H:%M}")
        if getattr(args, "json", False):
            print(json.dumps(listing, ensure_ascii=False))
        elif not rows:
            print("no formats yet")
    return 0


def run_show(args: argparse.Namespace) -> int:
    with connect(settings_from(args)) as conn:
        versions = _versions_or_fail(conn, args.format_id)
        fmt = store.get_format(conn, args.format_id)
        if not versions:
            raise ConfigError(f"format {args.format_id!r} has no versions")
        if args.version is not None:
            chosen = next((v for v in versions if v.version == args.version), None)
            if chosen is None:
                raise ConfigError(f"format {args.format_id!r} has no version {args.version}")
        else:
            chosen = next((v for v in reversed(versions) if v.status == "active"), versions[-1])
        health = store.get_health(conn, args.format_id)
        out = {"format": args.format_id, "status": fmt.status if fmt else None,
               "version": chosen.version, "version_status": chosen.status, "produced_by": chosen.produced_by,
               "created_at": chosen.created_at.isoformat(), "why": chosen.meta,
               "versions": [{"version": v.version, "status": v.status, "produced_by": v.produced_by,
                             "created_at": v.created_at.isoformat(), "reason": v.meta.get("reason"),
                             **({"refused": v.meta["refused"]} if v.meta.get("refused") else {})} for v in versions],
               "golden": [{"sha256": g["sha256"], "reason": g["reason"], "added_by": g.get("added_by"),
                           "replayable": bool(g.get("object_key"))} for g in store.golden_set(conn, args.format_id)],
               "health": None if health is None else {"consecutive_failures": health.consecutive_failures,
                                                       "failures": health.failures, "passes": health.passes},
               "instructions": chosen.instructions}
        print(json.dumps(out, indent=2, ensure_ascii=False, default=str))
    return 0


def run_diff(args: argparse.Namespace) -> int:
    with connect(settings_from(args)) as conn:
        versions = {v.version: v for v in _versions_or_fail(conn, args.format_id)}
        if len(versions) < 1:
            raise ConfigError(f"format {args.format_id!r} has no versions")
        b = args.b if args.b is not None else max(versions)
        a = args.a if args.a is not None else max((v for v in versions if v < b), default=b)
        for v in (a, b):
            if v not in versions:
                raise ConfigError(f"format {args.format_id!r} has no version {v}")
        text = {v: json.dumps(versions[v].instructions, indent=2, sort_keys=True, ensure_ascii=False).splitlines()
                for v in (a, b)}
        print(f"# {args.format_id}: version {a} ({versions[a].status}, {versions[a].produced_by}) -> "
              f"version {b} ({versions[b].status}, {versions[b].produced_by})")
        lines = list(difflib.unified_diff(text[a], text[b], f"v{a}", f"v{b}", lineterm=""))
        print("\n".join(lines) if lines else "(no difference)")
    return 0


def _job(args: argparse.Namespace):
    from docassay.flows.batch import load_rule_pack, load_schema
    from docassay.flows.context import Job
    return Job(schema=load_schema(args.schema), rules=load_rule_pack(args.rules), settings=settings_from(args))


def run_promote(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    with connect(settings) as conn:
        versions = _versions_or_fail(conn, args.format_id)
        if args.version is None:
            store.set_format_status(conn, args.format_id, "active")
            print(f"{args.format_id}: active")
            return 0
        target = next((v for v in versions if v.version == args.version), None)
        if target is None:
            raise ConfigError(f"format {args.format_id!r} has no version {args.version}")
        if not args.force:
            if not args.schema:
                raise ConfigError("promoting a version replays the golden documents: give --schema (or --force)")
            from docassay.extractors.instructions.language import Instructions
            from docassay.flows import lifecycle
            job = _job(args)
            current = store.active_version(conn, args.format_id)
            gate = lifecycle.reference_check(job, conn, lifecycle.objects_for(settings), args.format_id,
                                             Instructions.from_json(current.instructions) if current else None,
                                             Instructions.from_json(target.instructions))
            if not gate.passed:
                print(f"{args.format_id}: version {args.version} refused by the reference gate:", file=sys.stderr)
                for v in gate.violations:
                    print(f"  {v.message}", file=sys.stderr)
                return 1
        store.set_version_status(conn, args.format_id, args.version, "active")
        store.set_version_meta(conn, args.format_id, args.version,
                               {"decided_by": args.by, "forced": bool(args.force)})
        store.set_format_status(conn, args.format_id, "active")
        print(f"{args.format_id}: version {args.version} active")
    return 0


def run_archive(args: argparse.Namespace) -> int:
    with connect(settings_from(args)) as conn:
        _versions_or_fail(conn, args.format_id)
        store.set_format_status(conn, args.format_id, "archived")
        print(f"{args.format_id}: archived")
    return 0


def run_propose(args: argparse.Namespace) -> int:
    from docassay.extractors.errors import InstructionError
    from docassay.extractors.instructions.language import Instructions
    from docassay.flows import lifecycle
    settings = settings_from(args)
    try:
        data = json.loads(Path(args.instructions).read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read instructions {args.instructions}: {exc}") from exc
    if isinstance(data, dict) and "instructions" in data and "docassay_instructions" not in data:
        data = data["instructions"]                     # the output of `formats show`
    try:
        proposed = Instructions.from_json(data)
    except InstructionError as exc:
        raise ConfigError(exc.message) from exc
    with connect(settings) as conn:
        _versions_or_fail(conn, args.format_id)
        prop = lifecycle.propose_version(_job(args), conn, lifecycle.objects_for(settings), args.format_id, proposed,
                                         produced_by=f"person:{args.by}", reason="person")
    d = prop.gate.details
    summary = f"golden documents {d.get('cases')}: kept {d.get('kept')}, improved {d.get('improved')}, " \
              f"new failures {d.get('new_failures')}, unavailable {d.get('unavailable')}"
    if prop.accepted:
        print(f"{args.format_id}: version {prop.version} active ({summary})")
        return 0
    print(f"{args.format_id}: version {prop.version} rejected ({summary})", file=sys.stderr)
    for v in prop.gate.violations:
        print(f"  {v.message}", file=sys.stderr)
    return 1
