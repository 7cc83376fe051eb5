"""`docassay review list|show|accept|correct` — a person looks at documents that did not pass.

    list [--status needs_review]      documents waiting for review, each with why it failed
    show SHA                          the record, every failure (gate or rule, field, expected and
                                      actual values, the alternatives the document offers), what
                                      repair tried, and where each value was printed
    accept SHA [--by NAME]            the record is right as extracted
    correct SHA --set FIELD=VALUE...  the record with a person's values (VALUE is JSON when it
                                      parses as JSON, else a string; --unset FIELD removes one)

Accepted and corrected documents become golden references of their format (the bytes kept when
the document went to review let a proposed version be replayed on them) and count as accepted
for the stale-value gate. SHA may be a unique prefix of the document's sha256 (6+ characters).
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from flows.commands.common import add_store_options, settings_from
from infra import store
from infra.db import connect
from infra.errors import ConfigError

REVIEWABLE = ("needs_review", "failed", "quota_exceeded", "passed", "repaired")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("review", help="review documents that did not pass: see why, accept or correct them")
    rsub = p.add_subparsers(dest="review_command", metavar="ACTION")
    rsub.required = True
    ls = rsub.add_parser("list", help="documents waiting for review, with why they failed")
    add_store_options(ls)
    ls.add_argument("--status", default="needs_review", help="document status to list (default needs_review)")
    ls.add_argument("--format", dest="format_id")
    ls.add_argument("--limit", type=int, default=50)
    ls.set_defaults(run=run_list)
    show = rsub.add_parser("show", help="a document's record, failures with expected/actual/alternatives, repairs")
    add_store_options(show)
    show.add_argument("sha256")
    show.add_argument("--json", action="store_true", help="print the stored outcome as JSON")
    show.set_defaults(run=run_show)
    for name, helptext in (("accept", "accept the record as extracted"),
                           ("correct", "correct values; the corrected record becomes a golden reference")):
        a = rsub.add_parser(name, help=helptext)
        add_store_options(a)
        a.add_argument("sha256")
        a.add_argument("--by", default="reviewer", help="who reviews (recorded)")
        a.add_argument("--note")
        a.add_argument("--schema", help="target JSON Schema: validates corrections, registers unique values")
        if name == "correct":
            a.add_argument("--set", dest="sets", action="append", default=[], metavar="FIELD=VALUE")
            a.add_argument("--unset", action="append", default=[], metavar="FIELD")
        a.set_defaults(run=run_accept if name == "accept" else run_correct)


def _document(conn, sha: str) -> dict:
    doc = store.get_document(conn, sha)
    if doc is None:
        raise ConfigError(f"no single document matches {sha!r} (see `docassay review list`)")
    return doc


def _reasons(verification: dict, limit: int = 3) -> list[str]:
    out = [f"doubtful [{f}]" for f in verification.get("doubtful") or []]
    for v in verification.get("violations") or []:
        if v.get("severity") != "error":
            continue
        out.append(f"{v.get('gate')}/{v.get('rule')}" + (f" [{v['field']}]" if v.get("field") else ""))
    return out[:limit] + ([f"+{len(out) - limit} more"] if len(out) > limit else [])


def run_list(args: argparse.Namespace) -> int:
    with connect(settings_from(args)) as conn:
        rows = store.list_documents(conn, status=args.status, format_id=args.format_id, limit=args.limit,
                                    with_verification=True)
        for d in rows:
            print(f"{d['sha256'][:12]}  {d['status']:<12}  {d['format_id'] or '-':<16}  "
                  f"{'; '.join(_reasons(d['verification'])) or '-'}  {d['source']}")
        if not rows:
            print(f"no documents with status {args.status}")
    return 0


def _fmt(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, default=str) if not isinstance(v, str) else repr(v)


def run_show(args: argparse.Namespace) -> int:
    with connect(settings_from(args)) as conn:
        doc = _document(conn, args.sha256)
        reviews = store.list_reviews(conn, doc["sha256"])
    if args.json:
        print(json.dumps({**doc, "reviews": reviews}, indent=2, ensure_ascii=False, default=str))
        return 0
    ver = doc.get("verification") or {}
    print(f"document  {doc['sha256']}\nsource    {doc['source']}\nstatus    {doc['status']}\n"
          f"format    {doc['format_id'] or '-'} version {doc['format_version'] or '-'}\n"
          f"score     {ver.get('score')}   attempts {doc.get('attempts')}")
    failed = [k for k, g in (ver.get("gates") or {}).items() if not g.get("passed")]
    print(f"gates     failed: {', '.join(failed) or 'none'}")
    fields = ver.get("fields") or {}
    if ver.get("doubtful"):
        print(f"doubtful  {', '.join(ver['doubtful'])} (below the confidence target)")
    print("\nrecord:")
    prov = doc.get("provenance") or {}
    for k, v in (doc.get("record") or {}).items():
        where = prov.get(k)
        at = f"   <- p.{where['page']} {where.get('anchor', '')!s} {where.get('text', '')!r}" if where else ""
        f = fields.get(k) or {}
        conf = f"   [{f['status']} {f['confidence']:.2f}]" if f.get("confidence") is not None else ""
        print(f"  {k}: {_fmt(v) if not isinstance(v, list) else f'<{len(v)} items>'}{conf}{at}")
    print("\nwhy it did not pass:" if failed else "\nfindings:")
    for v in ver.get("violations") or []:
        line = f"  [{v.get('severity')}] {v.get('gate')}/{v.get('rule')}"
        if v.get("field"):
            line += f" field {v['field']}"
        print(line + f": {v.get('message')}")
        if "expected" in v or "actual" in v:
            print(f"      expected {_fmt(v.get('expected'))}, actual {_fmt(v.get('actual'))}")
        for a in v.get("alternatives") or []:
            print(f"      the document also offers {a.get('field', '')}={_fmt(a.get('value'))} ({a.get('how', '')}"
                  + (f", printed {a['text']!r}" if a.get("text") else "") + ")")
    if doc.get("repairs"):
        print("\nrepair attempts:")
        for r in doc["repairs"][:20]:
            mark = "kept" if r.get("adopted", True) else "tried"
            print(f"  #{r.get('attempt')} {mark}: {r.get('field')} {_fmt(r.get('from'))} -> {_fmt(r.get('to'))} "
                  f"({r.get('how')})" + (f", errors after {r['errors']}" if "errors" in r else ""))
    for rv in reviews:
        print(f"\nreviewed: {rv['action']} by {rv['reviewer']} at {rv['created_at']:%Y-%m-%d %H:%M}"
              + (f": {rv['corrections']}" if rv.get("corrections") else ""))
    return 0


def _parse_value(raw: str, current: Any, prop: Any) -> Any:
    """A --set value: a string for a string field (or one holding a string now), else JSON when it
    parses as JSON, else the string."""
    t = prop.get("type") if isinstance(prop, dict) else None
    if t == "string" or (t is None and isinstance(current, str)):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _decide(args: argparse.Namespace, *, action: str, corrections: dict[str, dict] | None) -> int:
    from flows import lifecycle
    settings = settings_from(args)
    with connect(settings) as conn:
        doc = _document(conn, args.sha256)
        if action == "accept" and doc["status"] not in REVIEWABLE:
            raise ConfigError(f"document {doc['sha256'][:12]} is {doc['status']}: nothing to accept")
        record = dict(doc.get("record") or {})
        for f, ch in (corrections or {}).items():
            if ch["to"] is None:
                record.pop(f, None)
            else:
                record[f] = ch["to"]
        job = None
        if args.schema:
            from flows.batch import load_schema
            from flows.pipeline import Job
            from verifiers.context import VerifyContext
            from verifiers.gates import format as format_gate
            job = Job(schema=load_schema(args.schema), settings=settings)
            res = format_gate.check(VerifyContext(schema=job.schema, record=record))
            if not res.passed:
                print(f"docassay: the {'corrected ' if corrections else ''}record does not match the schema:",
                      file=sys.stderr)
                for v in res.violations:
                    print(f"  {v.message}", file=sys.stderr)
                return 2
        status = "corrected" if action == "correct" else "reviewed"
        store.set_document_outcome(conn, doc["sha256"], status=status, record=record)
        store.add_review(conn, doc["sha256"], action=action, reviewer=args.by, corrections=corrections, note=args.note)
        if job is not None:
            store.remember_values(conn, schema_key=job.key, sha256=doc["sha256"], format_id=doc["format_id"],
                                  entries=lifecycle.unique_entries(job, record))
        golden = ""
        if doc["format_id"]:
            lifecycle.add_golden_document(conn, None, doc["format_id"], doc["sha256"], record,
                                          f"{'corrected' if corrections else 'reviewed'} by {args.by}",
                                          object_key=doc.get("object_key"), added_by=args.by)
            golden = f"; golden reference of {doc['format_id']}" + \
                     ("" if doc.get("object_key") else " (bytes not kept: not replayable)")
        print(f"{doc['sha256'][:12]}: {status}{golden}")
    return 0


def run_accept(args: argparse.Namespace) -> int:
    return _decide(args, action="accept", corrections=None)


def run_correct(args: argparse.Namespace) -> int:
    if not args.sets and not args.unset:
        raise ConfigError("give at least one --set FIELD=VALUE or --unset FIELD")
    with connect(settings_from(args)) as conn:
        record = _document(conn, args.sha256).get("record") or {}
    props: dict = {}
    if args.schema:
        from flows.batch import load_schema
        props = load_schema(args.schema).get("properties") or {}
    corrections: dict[str, dict] = {}
    for item in args.sets:
        if "=" not in item:
            raise ConfigError(f"--set wants FIELD=VALUE, not {item!r}")
        f, raw = item.split("=", 1)
        f = f.strip()
        if not f:
            raise ConfigError(f"--set wants FIELD=VALUE, not {item!r}")
        corrections[f] = {"from": record.get(f), "to": _parse_value(raw, record.get(f), props.get(f))}
    for f in args.unset:
        corrections[f] = {"from": record.get(f), "to": None}
    return _decide(args, action="correct", corrections=corrections)
