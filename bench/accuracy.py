"""Accuracy of a first batch, per set: accuracy per field, micro field accuracy, document exact
match, line-item precision / recall / F1 (items matched by description), pass rate and verified
precision (of the documents marked passed or repaired, the share whose fields are all right).

    python -m bench.accuracy [--sets synth-invoices-train,synth-invoices-unseen,dev-invoices,dev-receipts]
                             [--generator baseline|model] [--einvoice ignore|use|check] [--formats 10 --docs 3]
                             [--out FILE]

Each set runs as a first batch on an empty format library (what a user gets the first time): the
first document of a format takes the new-format path, later ones of that format the known path;
the table also splits by path. `--einvoice` (default `ignore`: the layout path, as every
figure before e-invoices) reads the XML of e-invoice hybrids with `use`, or compares the print with
it with `check` (flows/einvoice.py). Sets are reported on their own and never pooled: synthetic TRAIN
formats vs UNSEEN formats; the dev invoices (invoice2data samples and ZUGFeRD apart, ZUGFeRD also
as a mean over its content groups); the dev receipts.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from bench.cli import add_common, print_and_save, session_from
from bench.evaluate import SetReport, score_rows, set_report
from bench.passes import model_status
from bench.session import VARIANTS, Session, Variant
from bench.tables import group_mean_table, side_by_side

DEFAULT_SETS = ("synth-invoices-train", "synth-invoices-unseen", "dev-invoices", "dev-receipts")


def measure(session: Session, set_name: str, variant: Variant = VARIANTS["full"]) -> SetReport:
    docs = session.docs(set_name)
    result = session.first_batch(set_name, variant)
    return set_report(docs, score_rows(docs, result.rows))


def render(reports: dict[str, SetReport]) -> str:
    """The tables: one summary side by side over sets, then each set's breakdown."""
    parts = ["## Accuracy: first batch on an empty format library, per set", "",
             side_by_side({k: r.overall for k, r in reports.items()})]
    for name, r in reports.items():
        cols = {"all": r.overall}
        cols.update({f"{p} path": rep for p, rep in r.by_path.items()})
        cols.update({o: rep for o, rep in r.by_origin.items()})
        parts += ["", f"### {name}: by path" + (" and origin" if r.by_origin else ""), "",
                  side_by_side(cols, fields=bool(r.by_origin))]
        if r.groups:
            parts += ["", f"### {name}: ZUGFeRD, mean over content groups", "", group_mean_table(r.groups)]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common(ap, default_sets=DEFAULT_SETS)
    ap.add_argument("--generator", choices=("baseline", "model"), default="baseline")
    ap.add_argument("--einvoice", choices=("ignore", "use", "check"), default="ignore",
                    help="e-invoice XML in hybrids: ignore (the layout path, default), use or check")
    args = ap.parse_args(argv)
    if args.generator == "model":
        ok, why = model_status()
        if not ok:
            print(f"--generator model cannot run: {why}", file=sys.stderr)
            return 2
    variant = VARIANTS["full"] if args.generator == "baseline" else VARIANTS["model"]
    if args.einvoice != "ignore":
        variant = replace(variant, name=f"{variant.name}-einvoice-{args.einvoice}", einvoice=args.einvoice)
    with session_from(args) as s:
        reports = {name: measure(s, name, variant) for name in args.sets}
    print_and_save(args, "accuracy", render(reports),
                   {"generator": args.generator, "einvoice": args.einvoice, "sets": {k: v.to_json() for k, v in reports.items()}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
