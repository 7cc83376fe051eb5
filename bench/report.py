"""Every figure in one run: accuracy per set, speed per path, docassay vs invoice2data, ablations.
This is the run whose tables BENCHMARKS.md quotes.

    python -m bench.report [--repeat 3] [--formats 10 --docs 3] [--out bench/results/report.json]

Writes the JSON report and, beside it, the same tables as Markdown (`report.md`). One session:
the first-batch pass of each set is run once and shared by the accuracy table, the ablation
baseline and the invoice2data comparison; the speed passes feed both the speed table and the
comparison. invoice2data is skipped (and the report says so) when bench/.venv-i2d is absent.
"""
from __future__ import annotations

import argparse
import sys
import time

from bench import ablations, accuracy, invoice2data_runner, speed, versus_invoice2data
from bench.cli import add_common, machine, save, session_from
from bench.passes import model_status

ACCURACY_SETS = ("synth-invoices-train", "synth-invoices-unseen", "synth-receipts-train", "synth-receipts-unseen",
                 "dev-invoices", "dev-receipts")
SPEED_SETS = ("synth-invoices-unseen", "dev-invoices", "synth-receipts-unseen")
VERSUS_SETS = ("dev-invoices", "synth-invoices-unseen")
ABLATION_SETS = ("synth-invoices-train", "synth-invoices-unseen", "dev-invoices", "dev-receipts")


def machine_text(m: dict) -> str:
    return (f"Machine: {m['nproc']} CPUs ({m['cpu']}), {m['memory_gib']} GiB RAM, Python {m['python']}, "
            f"{m['platform']}; commit {m['commit']}; {m['date']}.")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common(ap, default_sets=ACCURACY_SETS)
    ap.add_argument("--repeat", type=int, default=3, help="speed: runs per path; figures are medians (default 3)")
    ap.add_argument("--speed-sets", default=",".join(SPEED_SETS))
    ap.add_argument("--versus-sets", default=",".join(VERSUS_SETS))
    ap.add_argument("--ablation-sets", default=",".join(ABLATION_SETS))
    args = ap.parse_args(argv)

    def pick(text: str) -> list[str]:
        """The sets named for a figure, kept to those the run covers (`--sets`)."""
        return [x for x in text.split(",") if x in args.sets]
    speed_sets, versus_sets, ablation_sets = pick(args.speed_sets), pick(args.versus_sets), pick(args.ablation_sets)
    model_ok, model_why = model_status()
    variants = ["full", "no-repair", "no-reuse"] + (["model"] if model_ok else [])
    t0 = time.perf_counter()
    parts: list[str] = []

    def emit(*lines: str) -> None:
        """Keep the lines for report.md and show them now (a long run shows each figure as it lands)."""
        parts.extend(lines)
        print("\n".join(lines), flush=True)

    at_start = machine()                        # the commit the run started from (HEAD may move during it)
    emit("# docassay benchmark report", "", machine_text(at_start), "")
    payload: dict = {"machine": at_start, "repeat": args.repeat}
    with session_from(args) as s:
        reports = {name: accuracy.measure(s, name) for name in args.sets}
        emit(accuracy.render(reports))
        payload["accuracy"] = {k: v.to_json() for k, v in reports.items()}

        speeds: dict[str, dict] = {name: speed.measure(s, name, args.repeat) for name in speed_sets}
        flat = {k: v for d in speeds.values() for k, v in d.items()}
        emit("", "## Speed (medians over runs; sequential, one document at a time)", "", speed.speed_table(flat))
        payload["speed"] = {k: v.to_json() for k, v in flat.items()}

        if invoice2data_runner.available():
            comps = [versus_invoice2data.compare(s, name, args.repeat, speeds.get(name)) for name in versus_sets]
            emit("", versus_invoice2data.render(comps))
            payload["versus_invoice2data"] = {c.set_name: c.to_json() for c in comps}
        else:
            emit("", "## docassay vs invoice2data", "",
                 "Not run: bench/.venv-i2d is absent (bash bench/setup_invoice2data.sh).")
            payload["versus_invoice2data"] = None

        tables = {name: ablations.run_variants(s, name, variants) for name in ablation_sets}
        emit("", ablations.render(tables, None if model_ok else ablations.pending_text(model_why)))
        payload["ablations"] = {k: {v: r.to_json() for v, r in reps.items()} for k, (reps, _, _) in tables.items()}
        payload["ablations_failed"] = {k: f for k, (_, _, f) in tables.items() if f}
        payload["model"] = f"measured ({model_why})" if model_ok else ablations.pending_text(model_why)
    payload["elapsed_s"] = round(time.perf_counter() - t0, 1)
    emit("", f"Whole run: {payload['elapsed_s']} s.")
    text = "\n".join(parts)
    out = save(args, "report", payload)
    out.with_suffix(".md").write_text(text + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
