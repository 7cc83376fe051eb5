"""How much each independent check (verifiers.checks) is worth: over the rows of a first batch,
per check and outcome, how often it fires and the share of RIGHT fields among the fields it fired
on. A check is useful when its `fail` mostly hits wrong values (low right share) and its `pass`
mostly right ones (high right share), compared with the base rate of the fields it can judge.

    python -m bench.checks_bench --sets dev-invoices,dev-receipts --split dev-tune
    python -m bench.checks_bench --sets synth-invoices-unseen --formats 10 --docs 3
    python -m bench.checks_bench --sets dev-invoices --save /tmp/ck.pkl    # keep the captured contexts
    python -m bench.checks_bench --load /tmp/ck.pkl --show-wrong           # re-score without the pipeline
    python -m bench.checks_bench --load /tmp/a.pkl /tmp/b.pkl --combined   # one table over the sets
    python -m bench.checks_bench --load /tmp/ck.pkl --signals-out s.jsonl  # per field: right?, its signals

The pipeline runs in this process (a fresh embedded database and format library per set), and
every record it verifies is captured with what the checks see (record, extraction, document,
evidence, the format's previous accepted document); the checks then run on the context of each
row's final record and their signals are scored against the ground truth (bench.scoring).
`--split` picks the dev documents BEFORE anything runs (dev-tune: the split we may read;
dev-holdout: figures only, and `--show-wrong` refuses it). Synthetic sets ignore the split.
"""
from __future__ import annotations

import argparse
import json
import pickle
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.datasets import DEFAULT_DATA, DEV_SETS, BenchDoc, SynthSize, load_set  # noqa: E402
from bench.scoring import field_correct  # noqa: E402
from bench.splits import HOLDOUT, SPLITS, TUNE, select  # noqa: E402
from docassay.verifiers.checks import CHECKS, Signal, run_checks  # noqa: E402
from docassay.verifiers.checks.page import doc_text  # noqa: E402
from docassay.verifiers.context import VerifyContext  # noqa: E402
from docassay.verifiers.history import MemoryHistory  # noqa: E402

# Checks whose `fail` lands mostly on right values on dev-tune (BENCHMARKS.md): the summary also
# counts the fails of the other checks alone. A reading aid, not a decision (the calibrator weighs).
WEAK_ON_DEV_TUNE = ("alternative_agrees", "reading_ambiguous", "vat_checksum", "history_agrees", "history_repeats")


@dataclass
class Captured:
    """One scored row: the document's ground truth, its final status and the context checked."""
    set_name: str
    doc_id: str
    status: str
    truth: dict
    ctx: VerifyContext | None                   # None: the record was never verified (an error row)


@dataclass
class Tally:
    fired: int = 0
    right: int = 0
    examples: list[str] = field(default_factory=list)


def _snapshot(ctx: VerifyContext) -> VerifyContext:
    """The context without its database handles; the history reduced to the previous document."""
    hist = MemoryHistory()
    prev = ctx.history.previous() if ctx.history is not None else None
    if prev is not None:
        hist.documents.append(prev)
    return replace(ctx, conn=None, rules=[], history=hist if ctx.history is not None else None)


def _keeps(verified: Any, row: Any) -> bool:
    """The row's record is the verified one with some values left out (an accepted record drops
    its doubtful optional values): every value the row keeps is the verified one."""
    if not isinstance(verified, dict) or not isinstance(row, dict):
        return False
    return all(v in (None, "", []) or verified.get(k) == v for k, v in row.items())


def capture(set_name: str, docs: list[BenchDoc], scratch: Path, generator: str) -> list[Captured]:
    """Run `docs` as a first batch with the pipeline's verification tapped."""
    import docassay.flows.verification as fv
    from bench.passes import PassSpec, build_job
    from bench.session import Session, SessionConfig
    from docassay.flows.batch import run_batch
    from docassay.flows.context import open_context

    seen: dict[str, list[VerifyContext]] = defaultdict(list)
    real_verify = fv.verify

    def tapped(ctx: VerifyContext, *a: Any, **kw: Any):
        src = getattr(ctx.document, "source", None)
        if src is not None:
            seen[str(src)].append(_snapshot(ctx))
        return real_verify(ctx, *a, **kw)

    kind = docs[0].kind if docs else "invoice"
    with Session(SessionConfig(scratch=scratch / "session", keep=False, isolate=False)) as s:
        home = scratch / f"home-{set_name}"
        home.mkdir(parents=True, exist_ok=True)
        spec = PassSpec(f"checks-{set_name}", kind, [d.path for d in docs], str(home), s.fresh_dsn(),
                        generator=generator)
        job = build_job(spec)
        fv.verify = tapped
        try:
            with open_context(job.settings) as rc:
                rows = run_batch(list(spec.sources), job, rc, concurrency=1)
        finally:
            fv.verify = real_verify
    out = []
    for d, r in zip(docs, rows):
        tried = seen.get(r.source, [])
        final = [c for c in tried if c.record == r.record] or [c for c in tried if _keeps(c.record, r.record)]
        out.append(Captured(set_name, d.doc_id, r.status, d.truth, final[-1] if final else None))
    return out


def _is_right(name: str, record: dict, truth: dict, fuzzy: bool) -> bool | None:
    """Whether a record's field is right; None when the ground truth does not annotate it."""
    if name not in truth:
        return None
    got, want = record.get(name), truth[name]
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return False
        return all(isinstance(g, dict) and all(field_correct(k, g.get(k), v, fuzzy=fuzzy) for k, v in w.items())
                   for g, w in zip(got, want))
    return field_correct(name, got, want, fuzzy=fuzzy)


def score(captured: list[Captured]) -> tuple[dict[tuple[str, str], Tally], dict[str, int], dict[str, float]]:
    """Per (check, outcome): fired and right counts; per set the base counts; per check the CPU
    milliseconds per record (process time, so that other processes on the machine do not count;
    "(document index)" is the shared per-document text index the checks read, built once)."""
    tallies: dict[tuple[str, str], Tally] = defaultdict(Tally)
    base = {"fields": 0, "right": 0, "wrong_failed": 0, "right_failed": 0, "wrong_failed_strong": 0,
            "right_failed_strong": 0}
    cpu: dict[str, float] = defaultdict(float)
    n = 0
    for c in captured:
        if c.ctx is None or not isinstance(c.ctx.record, dict):
            continue
        fuzzy = "receipt" in c.set_name
        t = time.process_time()
        doc_text(c.ctx.document)
        cpu["(document index)"] += time.process_time() - t
        signals: list[Signal] = []
        for name, check in CHECKS:
            t = time.process_time()
            signals += run_checks(c.ctx, ((name, check),))
            cpu[name] += time.process_time() - t
        n += 1
        failed = {sg.field for sg in signals if sg.outcome == "fail"}
        failed_strong = {sg.field for sg in signals if sg.outcome == "fail" and sg.check not in WEAK_ON_DEV_TUNE}
        for f in c.ctx.record:
            ok = _is_right(f, c.ctx.record, c.truth, fuzzy)
            if ok is not None:
                base["fields"] += 1
                base["right"] += int(ok)
                base["right_failed" if ok else "wrong_failed"] += int(f in failed)
                base["right_failed_strong" if ok else "wrong_failed_strong"] += int(f in failed_strong)
        for sg in signals:
            ok = _is_right(sg.field, c.ctx.record, c.truth, fuzzy)
            if ok is None:
                continue
            tl = tallies[(sg.check, sg.outcome)]
            tl.fired += 1
            tl.right += int(ok)
            if not ok and len(tl.examples) < 6:
                tl.examples.append(f"{c.doc_id} {sg.field}={c.ctx.record.get(sg.field)!r} "
                                   f"(truth {c.truth.get(sg.field)!r}): {sg.detail}")
    return tallies, base, {k: 1000 * v / n for k, v in cpu.items()} if n else {}


def render(title: str, tallies: dict[tuple[str, str], Tally], base: dict[str, int], ms: dict[str, float],
           show_wrong: bool) -> str:
    share = base["right"] / base["fields"] if base["fields"] else 0.0
    total = sum(ms.values())
    lines = [f"### {title}", "",
             f"{base['fields']} annotated fields in the final records, {share:.3f} right. CPU per record: "
             f"{total:.2f} ms for all {len(CHECKS)} checks, of which {ms.get('(document index)', 0.0):.2f} ms "
             f"the shared document index; slowest check {max((v for k, v in ms.items() if k[0] != '('), default=0):.2f} ms.",
             f"Wrong fields with at least one `fail`: {base['wrong_failed']} of {base['fields'] - base['right']}; "
             f"right fields with at least one `fail`: {base['right_failed']} of {base['right']}. Without the "
             f"checks weak on dev-tune ({', '.join(WEAK_ON_DEV_TUNE)}): {base['wrong_failed_strong']} and "
             f"{base['right_failed_strong']}.",
             "",
             "| check | pass fired | right among pass | fail fired | right among fail | CPU ms |",
             "|---|---:|---:|---:|---:|---:|"]
    names = [n for n, _ in CHECKS]
    for name in names:
        p, f = tallies.get((name, "pass"), Tally()), tallies.get((name, "fail"), Tally())
        def r(t: Tally) -> str:
            return f"{t.right / t.fired:.3f}" if t.fired else "-"
        lines.append(f"| {name} | {p.fired} | {r(p)} | {f.fired} | {r(f)} | {ms.get(name, 0.0):.3f} |")
    if show_wrong:
        lines += ["", "Wrong fields a check fired on (first of each):"]
        for (name, outcome), t in sorted(tallies.items()):
            for e in t.examples:
                lines.append(f"* {name}/{outcome}: {e}")
    return "\n".join(lines)


def render_combined(results: list[tuple[str, dict[tuple[str, str], Tally], dict[str, int], dict[str, float]]]) -> str:
    """One table over sets: per check, `pass` and `fail` as "fired (right share)"."""
    head = "| check | " + " | ".join(f"{t} pass | {t} fail" for t, *_ in results) + " |"
    lines = [head, "|---|" + "---:|---:|" * len(results)]
    def cell(t: Tally) -> str:
        return f"{t.fired} ({t.right / t.fired:.2f})" if t.fired else "-"
    for name, _ in CHECKS:
        row = [cell(tl.get((name, "pass"), Tally())) + " | " + cell(tl.get((name, "fail"), Tally()))
               for _, tl, _, _ in results]
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    lines.append("")
    for t, _, base, ms in results:
        share = base["right"] / base["fields"] if base["fields"] else 0.0
        lines.append(f"* {t}: {base['fields']} fields, {share:.3f} right; wrong fields with a `fail` "
                     f"{base['wrong_failed']} of {base['fields'] - base['right']}, right fields with a `fail` "
                     f"{base['right_failed']} of {base['right']} (without the weak checks: "
                     f"{base['wrong_failed_strong']} and {base['right_failed_strong']}); "
                     f"CPU {sum(ms.values()):.2f} ms per record "
                     f"(slowest check {max((v for k, v in ms.items() if k[0] != '('), default=0):.2f} ms)")
    return "\n".join(lines)


def write_signals(captured: list[Captured], path: Path) -> int:
    """One JSON line per scored record: its set, id, status, and per annotated field whether it is
    right and the signals the checks gave it (what a calibrator trains on). Returns the rows written."""
    n = 0
    with path.open("w", encoding="utf-8") as out:
        for c in captured:
            if c.ctx is None or not isinstance(c.ctx.record, dict):
                continue
            signals = run_checks(c.ctx)
            fuzzy = "receipt" in c.set_name
            fields = {}
            for f in c.ctx.record:
                ok = _is_right(f, c.ctx.record, c.truth, fuzzy)
                if ok is not None:
                    fields[f] = {"right": ok, "signals": [s.to_json() for s in signals if s.field == f]}
            out.write(json.dumps({"set": c.set_name, "id": c.doc_id, "status": c.status, "fields": fields},
                                 ensure_ascii=False, default=str) + "\n")
            n += 1
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", help="sets to run (default dev-invoices,dev-receipts); with --load, the sets to keep")
    ap.add_argument("--split", choices=SPLITS, default=TUNE, help="dev documents to run (default dev-tune)")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the dev data folder (manifest.jsonl)")
    ap.add_argument("--generator", choices=("baseline", "model"), default="model")
    ap.add_argument("--formats", type=int, default=10)
    ap.add_argument("--docs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0, help="synthetic seed (never 7: kept unseen)")
    ap.add_argument("--limit", type=int, help="first N documents of each set (after the split)")
    ap.add_argument("--save", type=Path, help="pickle the captured contexts here")
    ap.add_argument("--load", type=Path, nargs="+", help="score contexts captured earlier (one or more --save files) "
                                                        "instead of running the pipeline")
    ap.add_argument("--show-wrong", action="store_true", help="list wrong fields each check fired on (not on holdout)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder (documents, database, formats)")
    ap.add_argument("--signals-out", type=Path, help="write each record's fields (right or not) and signals "
                                                     "as JSON lines (not for dev-holdout)")
    ap.add_argument("--combined", action="store_true", help="one table over all sets instead of one per set")
    args = ap.parse_args(argv)

    if args.load:
        splits, captured = set(), []
        for path in args.load:                   # a set captured in two files: the first file's run counts
            payload = pickle.loads(path.read_bytes())
            splits.add(payload["split"])
            have = {c.set_name for c in captured}
            captured += [x for x in (c if isinstance(c, Captured) else Captured(**c) for c in payload["captured"])
                         if x.set_name not in have]
        split = HOLDOUT if HOLDOUT in splits else TUNE
        if args.sets:
            keep = set(args.sets.split(","))
            captured = [c for c in captured if c.set_name in keep]
    else:
        split, captured = args.split, []
        scratch = Path(tempfile.mkdtemp(prefix="docassay-checks-", dir="/var/tmp"))
        try:
            for set_name in [s for s in (args.sets or "dev-invoices,dev-receipts").split(",") if s]:
                docs = load_set(set_name, data=args.data, folder=scratch / "docs",
                                size=SynthSize(args.formats, args.docs, args.seed))
                if set_name in DEV_SETS:
                    docs = select(docs, split)
                docs = docs[:args.limit] if args.limit else docs
                captured += capture(set_name, docs, scratch, args.generator)
        finally:
            if not args.keep:
                shutil.rmtree(scratch, ignore_errors=True)
        if args.save:
            args.save.write_bytes(pickle.dumps({"split": split, "captured": [vars(c) for c in captured]}))
    if (args.show_wrong or args.signals_out) and split == HOLDOUT and any(c.set_name in DEV_SETS for c in captured):
        print("--show-wrong and --signals-out are refused on dev-holdout: its errors are never inspected",
              file=sys.stderr)
        return 2
    if args.signals_out:
        print(f"{write_signals(captured, args.signals_out)} records written to {args.signals_out}", file=sys.stderr)
    results = []
    for set_name in dict.fromkeys(c.set_name for c in captured):
        rows = [c for c in captured if c.set_name == set_name]
        tallies, base, ms = score(rows)
        label = f"{set_name} ({split}, {len(rows)} documents)" if set_name in DEV_SETS else \
            f"{set_name} ({len(rows)} documents)"
        if args.combined:
            results.append((set_name, tallies, base, ms))
            continue
        print(render(label, tallies, base, ms, args.show_wrong))
        print()
    if args.combined:
        print(render_combined(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
