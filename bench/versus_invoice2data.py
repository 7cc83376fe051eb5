"""docassay and invoice2data side by side: the same documents, the same run, the same scorer.

    bash bench/setup_invoice2data.sh                # once: invoice2data in bench/.venv-i2d
    python -m bench.versus_invoice2data [--sets dev-invoices,synth-invoices-unseen] [--repeat 3]

invoice2data runs with its built-in templates (one YAML/JSON template per issuer) in its own
virtualenv, as a subprocess; its output keys are mapped to the canonical ones and scored exactly
like docassay's records. invoice2data has no verification step: a document counts as accepted
when a template matched and it returned a result, so its "pass rate" is its template coverage and
its verified precision is the share of its returned results with every field right.

Both systems are reported on every document and on the subset where invoice2data matched a
template (it only knows issuers it has templates for). Speed: docassay's first batch, its known
and new paths (medians over --repeat passes), invoice2data per document (median over --repeat
runs in one process, templates loaded once and timed apart; it reads PDFs with pdftotext).
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from bench import invoice2data_runner as i2d
from bench.cli import add_common, print_and_save, session_from
from bench.evaluate import score_records, score_rows
from bench.scoring import DocScore, Report, aggregate
from bench.session import VARIANTS, Session
from bench.speed import PathSpeed, latency_speed, median_speed, path_speed, speed_table
from bench.speed import measure as measure_speed
from bench.tables import side_by_side

DEFAULT_SETS = ("dev-invoices", "synth-invoices-unseen")
OURS, THEIRS = "docassay", "invoice2data"


@dataclass
class Comparison:
    set_name: str
    ours: Report
    theirs: Report
    matched_ids: list[str]
    ours_matched: Report | None
    theirs_matched: Report | None
    templates: dict[str, str]                   # doc id -> invoice2data template
    speed: dict[str, PathSpeed]
    i2d_meta: dict

    def to_json(self) -> dict:
        return {"all": {OURS: self.ours.to_json(), THEIRS: self.theirs.to_json()},
                "invoice2data_matched": {"documents": self.matched_ids, "templates": self.templates,
                                         OURS: self.ours_matched.to_json() if self.ours_matched else None,
                                         THEIRS: self.theirs_matched.to_json() if self.theirs_matched else None},
                "speed": {k: v.to_json() for k, v in self.speed.items()}, "invoice2data": self.i2d_meta,
                "wins": wins(self.ours, self.theirs)}


def wins(ours: Report, theirs: Report) -> dict[str, list[str]]:
    """Fields (and headline figures) where each system is ahead, on the same documents."""
    out: dict[str, list[str]] = {OURS: [], THEIRS: [], "tie": []}
    for k in sorted(set(ours.per_field) | set(theirs.per_field)):
        a, b = ours.per_field.get(k, (0, 0)), theirs.per_field.get(k, (0, 0))
        if not a[1] and not b[1]:
            continue
        x, y = (a[0] / a[1] if a[1] else 0.0), (b[0] / b[1] if b[1] else 0.0)
        out[OURS if x > y else THEIRS if y > x else "tie"].append(k)
    for name, x, y in (("micro field accuracy", ours.micro, theirs.micro),
                       ("document exact match", ours.exact, theirs.exact),
                       ("verified precision", ours.verified_precision, theirs.verified_precision)):
        if x is not None and y is not None:
            out[OURS if x > y else THEIRS if y > x else "tie"].append(name)
    return out


def i2d_speed(run: i2d.I2DRun, docs) -> PathSpeed:
    """invoice2data's figures per repeat, then the median over repeats."""
    per_doc = [run.results[d.path] for d in docs if d.path in run.results]
    repeats = max((len(r.ms) for r in per_doc), default=0)
    runs = [latency_speed([r.ms[k] for r in per_doc if k < len(r.ms)], [d.pages for d in docs]) for k in range(repeats)]
    sp = median_speed(runs)
    sp.peak_rss_mb = run.peak_rss_mb
    return sp


def compare(session: Session, set_name: str, repeat: int, speeds: dict[str, PathSpeed] | None = None) -> Comparison:
    docs = [d for d in session.docs(set_name) if d.kind == "invoice" and d.path.endswith(".pdf")]
    first = session.first_batch(set_name, VARIANTS["full"])
    ours_scores = score_rows(docs, first.rows)
    run = i2d.run_invoice2data([d.path for d in docs], repeat=repeat)
    records = {d.doc_id: (i2d.to_canonical(run.results[d.path].output) if run.results[d.path].output else None)
               for d in docs}
    theirs_scores = score_records(docs, records)
    templates = {d.doc_id: run.results[d.path].template for d in docs if run.results[d.path].template}
    matched = sorted(templates)

    def sub(scores: list[DocScore]) -> Report | None:
        sel = [s for s in scores if s.doc_id in templates]
        return aggregate(sel) if sel else None

    speed: dict[str, PathSpeed] = {f"{OURS}: first batch (new + known)": path_speed(first.rows, None, first)}
    if speeds is None:
        speeds = measure_speed(session, set_name, repeat)
    for k, v in speeds.items():
        speed[f"{OURS}: {k.split(' / ', 1)[1]}"] = v
    speed[f"{THEIRS} (templates loaded once)"] = i2d_speed(run, docs)
    meta = {"version": run.version, "templates": run.templates, "template_load_s": run.template_load_s,
            "peak_rss_mb": run.peak_rss_mb, "errors": {d.doc_id: run.results[d.path].error for d in docs
                                                       if run.results[d.path].error}}
    return Comparison(set_name, aggregate(ours_scores), aggregate(theirs_scores), matched, sub(ours_scores),
                      sub(theirs_scores), templates, speed, meta)


def render(comps: list[Comparison]) -> str:
    parts = ["## docassay vs invoice2data (same documents, same run, same scorer)"]
    for c in comps:
        parts += ["", f"### {c.set_name}: every document", "", side_by_side({OURS: c.ours, THEIRS: c.theirs})]
        if c.ours_matched and c.theirs_matched:
            tpl = ", ".join(sorted(set(c.templates.values())))
            parts += ["", f"### {c.set_name}: the {len(c.matched_ids)} documents where invoice2data matched a "
                          f"template ({tpl})", "",
                      side_by_side({OURS: c.ours_matched, THEIRS: c.theirs_matched})]
        else:
            parts += ["", f"invoice2data matched no template on {c.set_name} "
                          f"({c.i2d_meta['templates']} built-in templates, version {c.i2d_meta['version']})."]
        w = wins(c.ours, c.theirs)
        parts += ["", "Ahead on every document: " + "; ".join(f"{k}: {', '.join(v) or '-'}" for k, v in w.items())]
        if c.ours_matched and c.theirs_matched:
            w = wins(c.ours_matched, c.theirs_matched)
            parts += ["Ahead where invoice2data has a template: " +
                      "; ".join(f"{k}: {', '.join(v) or '-'}" for k, v in w.items())]
        parts += ["", f"### {c.set_name}: speed", "", speed_table(c.speed)]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common(ap, default_sets=DEFAULT_SETS)
    ap.add_argument("--repeat", type=int, default=3, help="speed: runs per system and path (default 3)")
    args = ap.parse_args(argv)
    if not i2d.available():
        print(f"invoice2data is not installed at {i2d.python_path()}: run bash bench/setup_invoice2data.sh",
              file=sys.stderr)
        return 2
    bad = [s for s in args.sets if "receipts" in s]
    if bad:
        print(f"invoice2data reads invoices only; drop {', '.join(bad)}", file=sys.stderr)
        return 2
    with session_from(args) as s:
        comps = [compare(s, name, args.repeat) for name in args.sets]
    print_and_save(args, "versus_invoice2data", render(comps), {"sets": {c.set_name: c.to_json() for c in comps}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
