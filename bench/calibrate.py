"""Train and measure the field-confidence calibrator (verifiers/confidence).

    python -m bench.calibrate collect --data-out /tmp/calib      # run the pipeline, keep features + truth
    python -m bench.calibrate train --data /tmp/calib            # fit, write verifiers/confidence/weights.json
    python -m bench.calibrate report --data /tmp/calib           # risk-coverage, reliability, ECE (markdown)
    python -m bench.calibrate evaluate --data-out /tmp/calib-eval   # passes at the shipped target, for real

`collect` runs one first-batch pass (model generator, format reuse, repair) per part, each on an
empty library and database, at target 0 (every field `verified`, so what the pipeline learns does
not depend on the weights being trained):

    synth-invoices-train, synth-receipts-train   synthetic documents of train formats   -> training
    dev-invoices/dev-tune, dev-receipts/dev-tune the tune split (bench/splits.py)       -> training
    synth-*-unseen                               unseen synthetic formats               -> measured
    dev-*/dev-holdout                            never tuned on                         -> measured
    dev-invoices-print/<split>                   the split's invoices, attachments removed (opt-in,
                                                 `--parts dev-invoices-print.dev-tune`; in no default)

Each part is its own pass, so no holdout document is learned from and replayed on a tune one.
`train` fits on the training parts only; the seed fixes the synthetic documents, the fit has no
randomness (same data, same weights). A field is an example when it holds a value and its key is
annotated in the ground truth; its label is bench.scoring.field_correct (fuzzy for receipts, as
the accuracy benchmark scores them).

`report` re-decides every document offline at each target from the stored features and the
weights: accepted = the gates passed (the pass's status at target 0) and every required field's
confidence reaches the target; verified precision = the share of accepted documents whose every
annotated header field is right. The live pipeline at a non-zero target also learns formats only
from accepted records, which the offline figures do not model; `evaluate` runs the real passes
at the shipped default for the headline figures.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Iterable

from bench.datasets import DEFAULT_DATA, BenchDoc, SynthSize
from bench.passes import PassSpec, model_available, run_isolated
from bench.scoring import field_correct, score_items
from bench.session import Session, SessionConfig
from bench.sightings import booked
from bench.splits import HOLDOUT, TUNE, select
from docassay.verifiers.confidence import FAMILIES, Calibrator, Example, ece, load, reliability
from docassay.verifiers.confidence.calibrator import DEFAULT_WEIGHTS
from docassay.verifiers.confidence.decision import (
    DEFAULT_MIN_CONFIDENCE,
    DEFAULT_MISSING_PRINTED,
    DOUBT_CAP,
    DOUBT_CHECKS,
    INCOMPLETE_CHECKS,
)

TRAIN_PARTS = ("synth-invoices-train", "synth-receipts-train", f"dev-invoices.{TUNE}", f"dev-receipts.{TUNE}")
MEASURE_PARTS = ("synth-invoices-unseen", "synth-receipts-unseen", f"dev-invoices.{HOLDOUT}",
                 f"dev-receipts.{HOLDOUT}")
PARTS = TRAIN_PARTS + MEASURE_PARTS
# `train --also DIR...`: the synthetic invoice parts of other collections (other seeds' train and
# unseen formats) add examples of these families only (issue 12: line items, one per invoice).
ALSO_PARTS = ("synth-invoices-train", "synth-invoices-unseen")
ALSO_FAMILIES = ("items",)
# Family L2 penalties (verifiers.confidence.calibrator; others: DEFAULT_L2), chosen by grouped CV.
L2_BY_FAMILY: tuple[tuple[str, float], ...] = ()
TARGETS = (0.0, 0.5, 0.7, 0.8, 0.9, 0.95, 0.98)
SCOPE_TITLES = {"required": "required fields verified (doubtful optional values kept)",
                "present": "present fields verified",
                "omit": "required fields verified, doubtful optional values left out"}
REQUIRED = {"invoice": ("invoice_number", "issue_date", "seller_name", "gross_total", "currency"),
            "receipt": ("company", "date", "total")}


@dataclass
class DocFields:
    """What `collect` keeps of one document."""
    doc_id: str
    kind: str
    status: str
    truth: dict
    fields: dict          # field -> {value, confidence, status, family, checks}
    features: dict        # field -> features
    error: str | None = None          # the row's error kind (a gate that refused the record), if any
    match: str | None = None          # new | known | None: how the format was found
    flags: list = field(default_factory=list)   # rules of the row's error-severity violations


# `dev-invoices-print.<split>`: the dev invoices of the split with their e-invoice attachments
# removed (the print-only copies bench/einvoice.py makes), so only the printed page is read.
PRINT_SUFFIX = "-print"


def part_set(part: str) -> tuple[str, str, bool]:
    """(set name, split or "", print-only?) of a part name such as `dev-invoices-print.dev-tune`."""
    set_name, _, split = part.partition(".")
    printed = set_name.endswith(PRINT_SUFFIX)
    return (set_name[: -len(PRINT_SUFFIX)] if printed else set_name), split, printed


def print_only(docs: list[BenchDoc], folder: Path) -> list[BenchDoc]:
    """Copies of `docs` in `folder` without their attachments (a PDF that carries none is kept)."""
    from docassay.extractors.synth.einvoice import strip_attachments
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for d in docs:
        if not d.path.lower().endswith(".pdf"):
            out.append(d)
            continue
        p = folder / Path(d.path).name
        p.write_bytes(strip_attachments(Path(d.path).read_bytes()))
        out.append(replace(d, path=str(p)))
    return out


def _parts_docs(s: Session, part: str) -> list[BenchDoc]:
    set_name, split, printed = part_set(part)
    docs = s.docs(set_name)
    docs = select(docs, split) if split else docs
    return print_only(docs, s.scratch / "print-only" / (split or set_name)) if printed else docs


def collect(out: Path, *, synth: SynthSize, generator: str, parts: tuple[str, ...], limit: int | None,
            target: float = 0.0, data: Path = DEFAULT_DATA, doubt_repair: bool = False) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with Session(SessionConfig(data=data, synth=synth, limit=limit)) as s:
        for part in parts:
            t = time.perf_counter()
            docs = _parts_docs(s, part)
            kind = docs[0].kind if docs else "invoice"
            tag = f"{part}.{int(time.time() * 1000) % 100000}"
            spec = PassSpec(tag, kind, [d.path for d in docs], str(s.scratch / "homes" / tag), s.fresh_dsn(),
                            generator=generator, min_confidence=target, doubt_repair=doubt_repair)
            res = run_isolated(spec, s.scratch / "passes")
            by_path = {r.source: r for r in res.rows}
            rows = []
            for d in docs:
                r = by_path.get(d.path)
                if r is None:
                    continue
                rows.append(asdict(DocFields(d.doc_id, d.kind, r.status, d.truth, r.fields, r.features,
                                              r.error, r.match, list(r.flags))))
            (out / f"{part}.json").write_text(json.dumps({"part": part, "target": target, "generator": generator,
                                                          "synth": asdict(synth), "rows": rows},
                                                         ensure_ascii=False, default=str), "utf-8")
            print(f"{part}: {len(rows)} documents in {time.perf_counter() - t:.0f} s", file=sys.stderr)


def load_part(data: Path, part: str) -> list[DocFields]:
    p = data / f"{part}.json"
    if not p.exists():
        return []
    return [DocFields(**r) for r in json.loads(p.read_text("utf-8"))["rows"]]


def _label(name: str, value, truth: dict, kind: str) -> bool | None:
    if name not in truth:
        return None
    want = truth[name]
    if isinstance(want, list):
        s = score_items(value if isinstance(value, list) else None, want)
        return s.matched == s.expected == s.predicted and s.fields_right == s.fields_total
    return field_correct(name, value, want, fuzzy=kind == "receipt")


def examples(docs: list[DocFields]) -> list[tuple[Example, str, str]]:
    """(example, field, doc_id) for every annotated field that holds a value."""
    out = []
    for d in docs:
        for name, f in d.fields.items():
            feats = d.features.get(name)
            if f.get("status") == "missing" or not feats:
                continue
            y = _label(name, f.get("value"), d.truth, d.kind)
            if y is None:
                continue
            out.append((Example(f.get("family", "text"), feats, bool(y)), name, d.doc_id))
    return out


def also_examples(folders: Iterable[Path], families: Iterable[str] = ALSO_FAMILIES) -> dict[str, list[Example]]:
    """Training examples of `families` only from the synthetic parts (ALSO_PARTS) collected in
    other folders (`collect --seed N --parts synth-invoices-train synth-invoices-unseen`): more
    formats for a family the main parts give few examples of (line items: one list per invoice).
    Other families keep their training data. Never pass a folder of seed 7 (kept unseen)."""
    fams = set(families)
    out: dict[str, list[Example]] = {}
    for folder in folders:
        for part in ALSO_PARTS:
            e = [x for x, _, _ in examples(load_part(folder, part)) if x.family in fams]
            if e:
                out[f"{folder}/{part}"] = e
    return out


def train(data: Path, out: Path, *, parts: tuple[str, ...] = TRAIN_PARTS, also: Iterable[Path] = ()) -> Calibrator:
    ex: list[Example] = []
    sizes = {}
    for part in parts:
        e = [x for x, _, _ in examples(load_part(data, part))]
        sizes[part] = len(e)
        ex += e
    for key, e in also_examples(also).items():
        sizes[key] = len(e)
        ex += e
    cal = Calibrator.fit(ex, l2_by_family=dict(L2_BY_FAMILY) or None,
                         meta={"trained_on": sizes, "command": "python -m bench.calibrate train"})
    cal.save(out)
    print(f"calibrator: {len(ex)} examples {sizes} -> {out}", file=sys.stderr)
    return cal


# -- measuring ---------------------------------------------------------------------------------

def confidences(cal: Calibrator, d: DocFields, strip=None) -> dict[str, float | None]:
    """field -> calibrated confidence (None for a missing field); `strip` maps the features first
    (a cross-validation setting's dropped features)."""
    out = {}
    for name, f in d.fields.items():
        feats = d.features.get(name)
        if f.get("status") == "missing" or not feats:
            out[name] = None
        elif feats.get("how:person"):
            out[name] = 1.0
        else:
            out[name] = cal.predict(f.get("family", "text"), strip(feats) if strip else feats)
            if any(feats.get(f"{c}:fail") for c in DOUBT_CHECKS):     # the decision's veto (DOUBT_CHECKS)
                out[name] = min(out[name], DOUBT_CAP)
    return out


def _header_right(d: DocFields, omitted: frozenset[str] | set[str] = frozenset()) -> bool:
    """Every annotated header field the record delivers is right: a field the record left out
    (`omitted`, or marked so in a live row's fields) is not delivered."""
    gone = set(omitted) | {k for k, f in d.fields.items() if (f or {}).get("omitted")}
    return all(field_correct(k, (d.fields.get(k) or {}).get("value"), v, fuzzy=d.kind == "receipt")
               for k, v in d.truth.items() if not isinstance(v, list) and k not in gone)


def incomplete(d: DocFields) -> list[str]:
    """Empty fields of a collected row whose label is printed with a value (INCOMPLETE_CHECKS)."""
    return [k for k, f in d.fields.items() if (f or {}).get("status") == "missing"
            and any(s.get("check") in INCOMPLETE_CHECKS and s.get("outcome") == "fail" for s in f.get("checks") or [])]


def risk_coverage(cal: Calibrator, docs: list[DocFields], targets=TARGETS, *, live: bool = False,
                  scope: str = "required", missing_printed: str = DEFAULT_MISSING_PRINTED) -> list[dict]:
    """Pass rate and verified precision per target. `live`: the documents' own statuses (a pass
    run at one target) instead of re-deciding. `scope`: which fields must reach the target,
    `required` ones (a doubtful optional value kept in the record), every field that holds a
    value (`present`), or `omit`: required ones, a doubtful optional value left out of the record
    (verifiers.confidence.decision; not delivered, so not counted against the record).
    `missing_printed`: "review" holds back a record with an empty field whose label is printed
    (`incomplete`), "report" does not (the decision's setting of the same name)."""
    rows = []
    for t in targets:
        acc = right = 0
        for d in docs:
            gone: set[str] = set()
            if live:
                ok = d.status in ("passed", "repaired")
            else:
                conf = confidences(cal, d)
                req = [r for r in REQUIRED[d.kind] if r in d.fields]
                ok = d.status in ("passed", "repaired") and all(
                    conf.get(r) is not None and conf[r] + 1e-12 >= t for r in req)
                ok = ok and not (missing_printed != "report" and incomplete(d))   # offline: no person, nothing confirms
                doubtful = {n for n, c in conf.items() if c is not None and c + 1e-12 < t and n not in req}
                if scope == "present":
                    ok = ok and not doubtful
                elif scope == "omit":
                    gone = doubtful
            if ok:
                acc += 1
                right += _header_right(d, gone)
        rows.append({"target": t, "docs": len(docs), "accepted": acc, "pass_rate": acc / len(docs) if docs else None,
                     "verified_precision": right / acc if acc else None})
        if live:
            break
    return rows


def noise_floor(conf: list[float], draws: int = 1000) -> float:
    """The median ECE of a perfectly calibrated model with these confidences (outcomes drawn at
    each confidence): what so few examples show by chance alone."""
    rng = random.Random(0)
    sims = sorted(ece(conf, [rng.random() < c for c in conf]) for _ in range(draws))
    return sims[len(sims) // 2] if sims else 0.0


def family_calibration(cal: Calibrator, docs: list[DocFields]) -> dict[str, dict]:
    by: dict[str, tuple[list[float], list[bool]]] = {}
    for d in docs:
        conf = confidences(cal, d)
        for name, f in d.fields.items():
            c = conf.get(name)
            y = _label(name, f.get("value"), d.truth, d.kind) if c is not None else None
            if y is None:
                continue
            fam = f.get("family", "text")
            for key in (fam, "all"):
                cs, ys = by.setdefault(key, ([], []))
                cs.append(c)
                ys.append(bool(y))
    return {k: {"n": len(cs), "accuracy": sum(ys) / len(ys), "mean_confidence": sum(cs) / len(cs),
                "ece": ece(cs, ys), "noise_floor": noise_floor(cs), "table": reliability(cs, ys)}
            for k, (cs, ys) in by.items()}


def _f(x) -> str:
    return "-" if x is None else f"{x:.3f}"


def report(data: Path, weights: Path, *, targets=TARGETS) -> str:
    cal = load(weights)
    lines = [f"weights: `{weights}` ({sum(m.n for k, m in cal.families.items() if k != '*')} family examples)", ""]
    for kind_set in ("dev-invoices", "dev-receipts"):
        tune, hold = load_part(data, f"{kind_set}.{TUNE}"), load_part(data, f"{kind_set}.{HOLDOUT}")
        for scope in ("required", "present", "omit"):
            a, b = risk_coverage(cal, tune, targets, scope=scope), risk_coverage(cal, hold, targets, scope=scope)
            lines += [f"#### {kind_set}: risk-coverage, {SCOPE_TITLES[scope]} "
                      f"(dev-tune {len(tune)} docs | dev-holdout {len(hold)} docs)", "",
                      "| target | tune pass rate | tune verified precision | holdout pass rate | holdout verified precision |",
                      "|---|---|---|---|---|"]
            for x, y in zip(a, b):
                lines.append(f"| {x['target']:.2f} | {_f(x['pass_rate'])} ({x['accepted']}) | {_f(x['verified_precision'])} "
                             f"| {_f(y['pass_rate'])} ({y['accepted']}) | {_f(y['verified_precision'])} |")
            lines.append("")
    for part in ("synth-invoices-unseen", "synth-receipts-unseen"):
        docs = load_part(data, part)
        if not docs:
            continue
        lines += [f"#### {part}: risk-coverage ({len(docs)} docs)", "",
                  "| target | pass rate (required) | verified precision (required) | pass rate (present) | "
                  "verified precision (present) |", "|---|---|---|---|---|"]
        for x, y in zip(risk_coverage(cal, docs, targets), risk_coverage(cal, docs, targets, scope="present")):
            lines.append(f"| {x['target']:.2f} | {_f(x['pass_rate'])} ({x['accepted']}) | {_f(x['verified_precision'])} "
                         f"| {_f(y['pass_rate'])} ({y['accepted']}) | {_f(y['verified_precision'])} |")
        lines.append("")
    for split in (TUNE, HOLDOUT):
        docs = load_part(data, f"dev-invoices.{split}") + load_part(data, f"dev-receipts.{split}")
        fc = family_calibration(cal, docs)
        lines += [f"#### ECE per field family, dev invoices + receipts, {split}", "",
                  "| family | fields | accuracy | mean confidence | ECE (10 bins) | ECE noise floor |",
                  "|---|---|---|---|---|---|"]
        for fam in (*FAMILIES, "all"):
            if fam in fc:
                c = fc[fam]
                lines.append(f"| {fam} | {c['n']} | {c['accuracy']:.3f} | {c['mean_confidence']:.3f} | {c['ece']:.3f} "
                             f"| {c['noise_floor']:.3f} |")
        lines.append("")
        if split == HOLDOUT and "all" in fc:
            lines += [f"#### Reliability, all fields, {split}", "", "| confidence | fields | mean confidence | accuracy |",
                      "|---|---|---|---|"]
            for bn in fc["all"]["table"]:
                lines.append(f"| {bn.lo:.1f}-{bn.hi:.1f} | {bn.n} | {bn.mean_confidence:.3f} | {bn.accuracy:.3f} |")
            lines.append("")
    return "\n".join(lines)


EVAL_PARTS = (f"dev-invoices.{TUNE}", f"dev-invoices.{HOLDOUT}", f"dev-receipts.{TUNE}", f"dev-receipts.{HOLDOUT}",
              "synth-invoices-unseen", "synth-receipts-unseen")


def evaluate(out: Path, *, synth: SynthSize, generator: str, limit: int | None, target: float,
             weights: Path, data: Path = DEFAULT_DATA, doubt_repair: bool = False,
             parts: tuple[str, ...] = EVAL_PARTS) -> str:
    """Real passes of `parts` (default: the dev splits and unseen synthetic formats) at `target`
    (formats learned only from accepted records)."""
    collect(out, synth=synth, generator=generator, limit=limit, target=target, data=data, doubt_repair=doubt_repair,
            parts=parts)
    cal = load(weights)
    lines = [f"live passes at target {target:.2f}" + (" with doubt repair" if doubt_repair else ""), "",
             "| part | docs | pass rate | verified precision | invoices booked (distinct number + seller) |", "|---|---|---|---|---|"]
    for part in parts:
        docs = load_part(out, part)
        x = risk_coverage(cal, docs, (target,), live=True)[0]
        got, distinct = booked(docs)     # a repeat of an accepted invoice is refused as stale, rightly
        lines.append(f"| {part} | {x['docs']} | {_f(x['pass_rate'])} ({x['accepted']}) | {_f(x['verified_precision'])} "
                     f"| {_f(got / distinct if distinct else None)} ({got} of {distinct}) |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.calibrate", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("collect", "evaluate"):
        c = sub.add_parser(name)
        c.add_argument("--data-out", type=Path, required=True)
        c.add_argument("--formats", type=int, default=12, help="synthetic formats per set (default 12)")
        c.add_argument("--docs", type=int, default=3, help="documents per synthetic format (default 3)")
        c.add_argument("--seed", type=int, default=0)
        c.add_argument("--generator", default="model", choices=("model", "baseline"))
        c.add_argument("--limit", type=int, default=None, help="first N documents of each set (smoke runs)")
        default_parts = EVAL_PARTS if name == "evaluate" else PARTS
        c.add_argument("--parts", nargs="*", default=list(default_parts), help=f"default: {' '.join(default_parts)}; also dev-invoices-print.<split> "
                            "(the split's invoices with their e-invoice attachments removed)")
        c.add_argument("--target", type=float, default=DEFAULT_MIN_CONFIDENCE if name == "evaluate" else 0.0)
        c.add_argument("--weights", type=Path, default=DEFAULT_WEIGHTS,
                       help="the calibrator the passes decide with ($DOCASSAY_CALIBRATOR in the pass processes)")
        c.add_argument("--dev-data", type=Path, default=DEFAULT_DATA, help=f"the dev data (default {DEFAULT_DATA})")
        c.add_argument("--doubt-repair", action="store_true",
                       help="try other readings of doubtful required fields (flows/doubt.py)")
    t = sub.add_parser("train")
    t.add_argument("--data", type=Path, required=True)
    t.add_argument("--out", type=Path, default=DEFAULT_WEIGHTS)
    t.add_argument("--also", nargs="*", type=Path, default=[],
                   help=f"collections of other seeds: their {' '.join(ALSO_PARTS)} add {', '.join(ALSO_FAMILIES)} "
                        "examples only")
    r = sub.add_parser("report")
    r.add_argument("--data", type=Path, required=True)
    r.add_argument("--weights", type=Path, default=DEFAULT_WEIGHTS)
    args = ap.parse_args(argv)
    if args.cmd in ("collect", "evaluate") and args.generator == "model" and not model_available():
        print("the model generator cannot run here (see bench.passes.model_status)", file=sys.stderr)
        return 2
    if args.cmd in ("collect", "evaluate") and args.weights != DEFAULT_WEIGHTS:
        os.environ["DOCASSAY_CALIBRATOR"] = str(args.weights.resolve())      # the passes run in subprocesses
    if args.cmd == "collect":
        collect(args.data_out, synth=SynthSize(args.formats, args.docs, args.seed), generator=args.generator,
                parts=tuple(args.parts), limit=args.limit, target=args.target, data=args.dev_data)
    elif args.cmd == "train":
        train(args.data, args.out, also=args.also)
    elif args.cmd == "report":
        print(report(args.data, args.weights))
    else:
        print(evaluate(args.data_out, synth=SynthSize(args.formats, args.docs, args.seed), generator=args.generator,
                       limit=args.limit, target=args.target, weights=args.weights, data=args.dev_data,
                       doubt_repair=args.doubt_repair, parts=tuple(args.parts)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
