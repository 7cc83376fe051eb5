"""`docassay review list|show|accept|correct|reject|serve` — a person looks at documents that did not pass.

    list [--status needs_review]      documents waiting for review, each with why it failed
    show SHA                          the record, every failure (gate or rule, field, expected and
                                      actual values, the alternatives the document offers), what
                                      repair tried, and where each value was printed
    accept SHA [--by NAME]            the record is right as extracted
    correct SHA --set FIELD=VALUE...  the record with a person's values (VALUE is JSON when it
                                      parses as JSON, else a string; --unset FIELD removes one);
                                      with --schema the format learns from it (flows.review_actions)
    reject SHA                        the record is not to be used (never golden)
    serve [--host H] [--port P]       the review station in the browser (flows.review_app)

Accepted and corrected documents become golden references of their format (the bytes kept when
the document went to review let a proposed version be replayed on them) and count as accepted
for the stale-value gate. SHA may be a unique prefix of the document's sha256 (6+ characters).
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from docassay.flows.commands.common import add_store_options, connect, lazy_module, settings_from
from docassay.infra.display import printable
from docassay.infra.errors import ConfigError

store = lazy_module("docassay.infra.store")   # the database layer loads when a sub-command runs, not for --help


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("review", help="review documents that did not pass: see why, accept or correct them")
    rsub = p.add_subparsers(dest="review_command", metavar="ACTION")
    rsub.required = True
    ls = rsub.add_parser("list", help="documents waiting for review, with why they failed")
    add_store_options(ls)
    ls.add_argument("--status", default="needs_review", help="document status to list (default needs_review)")
    ls.add_argument("--format", dest="format_id")
    ls.add_argument("--limit", type=int, default=50)
    ls.add_argument("--json", action="store_true", help="one JSON array of documents instead of lines")
    ls.set_defaults(run=run_list)
    show = rsub.add_parser("show", help="a document's record, failures with expected/actual/alternatives, repairs")
    add_store_options(show)
    show.add_argument("sha256")
    show.add_argument("--json", action="store_true", help="print the stored outcome as JSON")
    show.set_defaults(run=run_show)
    actions = {"accept": ("accept the record as extracted", run_accept),
               "correct": ("correct values; the corrected record becomes a golden reference and teaches the format",
                           run_correct),
               "reject": ("reject the record: it is not used and never becomes a golden reference", run_reject)}
    for name, (helptext, fn) in actions.items():
        a = rsub.add_parser(name, help=helptext)
        add_store_options(a)
        a.add_argument("sha256")
        a.add_argument("--by", default="reviewer", help="who reviews (recorded)")
        a.add_argument("--note")
        a.add_argument("--schema", help="target JSON Schema: validates corrections, registers unique values; "
                                        "with it a correction teaches the format, and an accept a layout never learned")
        a.add_argument("--rules", help="SQL rule pack the format's repaired instructions are verified with")
        if name == "correct":
            a.add_argument("--set", dest="sets", action="append", default=[], metavar="FIELD=VALUE")
            a.add_argument("--unset", action="append", default=[], metavar="FIELD")
            a.add_argument("--no-teach", action="store_true",
                           help="record the correction only; do not repair or learn the format's instructions")
        a.set_defaults(run=fn)
    from docassay.flows.review_app.command import register_serve
    register_serve(rsub)


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
        if getattr(args, "json", False):
            print(json.dumps([{"sha256": d["sha256"], "status": d["status"], "format_id": d["format_id"],
                               "source": d["source"], "reasons": _reasons(d["verification"])} for d in rows],
                             ensure_ascii=False, default=str))
            return 0
        for d in rows:
            print(f"{d['sha256'][:12]}  {d['status']:<12}  {d['format_id'] or '-':<16}  "
                  f"{printable('; '.join(_reasons(d['verification'])) or '-')}  {printable(d['source'])}")
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
    print(f"document  {doc['sha256']}\nsource    {printable(doc['source'])}\nstatus    {doc['status']}\n"
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
        print(printable(line + f": {v.get('message')}"))
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


def _session(args: argparse.Namespace):
    """A review session on the CLI's database: the job when --schema is given (then corrections
    are validated and teach the format), the format library and the document bytes under --home."""
    from docassay.flows.context import Job, open_context
    settings = settings_from(args)
    job = None
    if getattr(args, "schema", None):
        from docassay.flows.batch import load_rule_pack, load_schema
        job = Job(schema=load_schema(args.schema), rules=load_rule_pack(getattr(args, "rules", None)),
                  settings=settings)
    cm = open_context(settings)
    return cm, job


def _run_action(args: argparse.Namespace, act) -> int:
    from docassay.flows.review_actions import Session
    cm, job = _session(args)
    with cm as ctx:
        decision = act(Session(ctx, job))
    if decision.errors:
        print(f"docassay: the {'corrected ' if args.review_command == 'correct' else ''}record does not match the schema:",
              file=sys.stderr)
        for e in decision.errors:
            print(f"  {e}", file=sys.stderr)
        return 2
    print(decision.summary())
    return 0


def run_accept(args: argparse.Namespace) -> int:
    from docassay.flows import review_actions as ra
    return _run_action(args, lambda s: ra.accept(s, args.sha256, by=args.by, note=args.note))


def run_reject(args: argparse.Namespace) -> int:
    from docassay.flows import review_actions as ra
    return _run_action(args, lambda s: ra.reject(s, args.sha256, by=args.by, note=args.note))


def run_correct(args: argparse.Namespace) -> int:
    from docassay.flows import review_actions as ra
    if not args.sets and not args.unset:
        raise ConfigError("give at least one --set FIELD=VALUE or --unset FIELD")
    sets: dict[str, str] = {}
    for item in args.sets:
        f, sep, raw = item.partition("=")
        if not sep or not f.strip():
            raise ConfigError(f"--set wants FIELD=VALUE, not {item!r}")
        sets[f.strip()] = raw

    def act(s):
        doc = ra.load_document(s.conn, args.sha256)
        corrections = ra.corrections_from(doc.get("record") or {}, sets, args.unset, s.job.schema if s.job else None,
                                          locale=ra.locale_of(s.conn, doc))
        if not corrections:
            raise ConfigError("every --set value equals the stored one: nothing to correct")
        return ra.correct(s, args.sha256, corrections, by=args.by, note=args.note, teach_format=not args.no_teach)
    return _run_action(args, act)
