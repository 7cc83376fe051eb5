"""The value of each part, measured: the full pipeline against the same pipeline with one part off.

    python -m bench.ablations [--sets synth-invoices-unseen,dev-invoices] [--variants full,no-repair,no-fixer,no-troubleshooter,no-reuse,model]

  full        format reuse + repair, baseline generator (label-similarity scorer)
  no-repair   no fixer (new formats) and no troubleshooter (known formats): the first verdict stands
  no-fixer    the troubleshooter only: a new format's first instructions stand as generated
  no-troubleshooter  the fixer only: a known format's failed replay is not troubleshot
  no-reuse    every document treated as a new format (no stored instructions replayed)
  model       the MoE model generator (`--generator model`, extractors.instructions.model_scorer)
              instead of the baseline; reported as pending while that module is not in the checkout

Each variant is a first batch on an empty library over the same documents; the table shows its
accuracy, pass rate, verified precision and speed side by side (differences are the part's value:
repair should raise the pass rate without lowering verified precision; reuse should make the batch
faster at equal or better accuracy).
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter

from bench.cli import add_common, print_and_save, session_from
from bench.evaluate import score_rows
from bench.passes import PassResult, model_status
from bench.scoring import Report, aggregate
from bench.session import VARIANTS, Session
from bench.speed import path_speed
from bench.tables import md_table, side_by_side

DEFAULT_SETS = ("synth-invoices-unseen", "dev-invoices")
DEFAULT_VARIANTS = ("full", "no-repair", "no-reuse", "model")


def pending_text(why: str) -> str:
    return f"pending, not measured ({why})"


def run_variant(session: Session, set_name: str, variant: str) -> tuple[Report, PassResult]:
    docs = session.docs(set_name)
    result = session.first_batch(set_name, VARIANTS[variant])
    return aggregate(score_rows(docs, result.rows)), result


def run_variants(session: Session, set_name: str, variants: list[str]
                 ) -> tuple[dict[str, Report], dict[str, PassResult], dict[str, str]]:
    """Every variant on one set; a variant whose pass crashes is reported as failed (with the last
    line of its error) instead of ending the run."""
    reports, results, failed = {}, {}, {}
    for v in variants:
        try:
            reports[v], results[v] = run_variant(session, set_name, v)
        except RuntimeError as exc:
            lines = [ln for ln in str(exc).strip().splitlines() if ln.strip()]
            failed[v] = lines[-1][:300] if lines else "failed"
    return reports, results, failed


def ops_table(results: dict[str, PassResult]) -> str:
    rows = []
    for name, res in results.items():
        paths = Counter(r.match or "-" for r in res.rows)
        statuses = Counter(r.status for r in res.rows)
        sp = path_speed(res.rows, None, res)
        rows.append([name, paths.get("new", 0), paths.get("known", 0), statuses.get("repaired", 0),
                     statuses.get("needs_review", 0)] + [f"{x:g}" if x is not None else "-" for x in
                                                         (sp.docs_per_s, sp.p50_ms, sp.p95_ms, round(res.wall_s, 1))])
    return md_table(["variant", "new path", "known path", "repaired", "needs review", "docs/s", "p50 ms", "p95 ms",
                     "batch s"], rows)


def render(tables: dict[str, tuple[dict[str, Report], dict[str, PassResult], dict[str, str]]],
           pending: str | None) -> str:
    parts = ["## Ablations: first batch on an empty library, one part switched off"]
    for set_name, (reports, results, failed) in tables.items():
        parts += ["", f"### {set_name}", "", side_by_side(reports), "", ops_table(results)]
        parts += [f"\nVariant {v} FAILED on {set_name}: {why}" for v, why in failed.items()]
    if pending:
        parts += ["", "Model generator (`--generator model`): " + pending + "."]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common(ap, default_sets=DEFAULT_SETS)
    ap.add_argument("--variants", default=",".join(DEFAULT_VARIANTS),
                    help=f"comma-separated, from {', '.join(VARIANTS)}")
    args = ap.parse_args(argv)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    bad = [v for v in variants if v not in VARIANTS]
    if bad:
        ap.error(f"unknown variant(s): {', '.join(bad)}")
    pending = None
    if "model" in variants:
        ok, why = model_status()
        if not ok:
            pending = pending_text(why)
            variants.remove("model")
    tables = {}
    with session_from(args) as s:
        for set_name in args.sets:
            tables[set_name] = run_variants(s, set_name, variants)
    payload = {"variants": variants, "model": pending or ("measured" if "model" in variants else "not run"),
               "sets": {k: {v: {"accuracy": r.to_json(), "speed": path_speed(res[v].rows, None, res[v]).to_json(),
                                "wall_s": res[v].wall_s}
                            for v, r in reps.items()} for k, (reps, res, _) in tables.items()},
               "failed": {k: f for k, (_, _, f) in tables.items() if f}}
    print_and_save(args, "ablations", render(tables, pending), payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
