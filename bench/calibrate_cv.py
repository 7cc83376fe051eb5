"""Choose the calibrator's settings by cross-validation on dev-tune, grouped by sender/format.

    python -m bench.calibrate_cv --data /tmp/calib2-data [--folds 5] [--target 0.9]

Folds are built over *groups*, never documents: a dev invoice's group is its ZUGFeRD content
group (the same invoice rendered by several generators stays in one fold; the invoice2data
samples are their own groups), a receipt's is its vendor (`vendor_key` in the dev manifest, so a
shop's receipts never sit on both sides). Each fold's model is fitted on the synthetic train parts
plus the other folds' dev-tune documents and scores the held-out fold; the out-of-fold
confidences then give ECE per family and the risk-coverage of each optional-field policy. Only
dev-tune and synthetic documents are read: dev-holdout is never loaded here.

Settings compared (`CANDIDATES`): the L2 penalty, the minimum feature count, and feature groups
left out. Optional-field policies (`POLICIES`, verifiers.confidence.decision):

    required   a record passes when its required fields are verified; a doubtful optional value
               stays in the record (the shipped behaviour before issue 12's second round)
    present    every field holding a value must be verified (an optional field's doubt holds
               the record back)
    omit       a record passes when its required fields are verified; a doubtful optional value
               is left out of the record (`missing`, its reading kept in the row's fields)

Verified precision counts a document right when every annotated header field it *delivers* is
right; under `omit`, a left-out field is not delivered (it is counted in `omitted`).
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping

from bench.calibrate import (
    REQUIRED,
    TRAIN_PARTS,
    DocFields,
    _label,
    also_examples,
    examples,
    incomplete,
    load_part,
    noise_floor,
)
from bench.calibrate import confidences as _confidences
from bench.datasets import DEFAULT_DATA
from bench.scoring import field_correct
from bench.splits import TUNE
from docassay.verifiers.confidence import FAMILIES, Calibrator, Example, ece, reliability
from docassay.verifiers.confidence.decision import DEFAULT_MISSING_PRINTED

SYNTH_TRAIN = ("synth-invoices-train", "synth-receipts-train")
DEV_TUNE = (f"dev-invoices.{TUNE}", f"dev-receipts.{TUNE}")
POLICIES = ("required", "present", "omit")
DEFAULT_FOLDS = 5
DEFAULT_TARGETS = (0.8, 0.9, 0.95, 0.98)


@dataclass(frozen=True)
class Setting:
    name: str
    l2: float = 1e-3
    min_count: int = 5
    drop: tuple[str, ...] = ()          # feature-name prefixes left out
    l2_by_family: tuple[tuple[str, float], ...] = ()
    unseen_fail: str = "prior"          # verifiers.confidence.calibrator.UNSEEN_FAIL
    items_also: bool = True             # items_report: the --also collections' lists train (always scored)

    def strip(self, feats: Mapping[str, float]) -> dict[str, float]:
        return {k: v for k, v in feats.items() if not any(k.startswith(p) for p in self.drop)} if self.drop \
            else dict(feats)


CANDIDATES = (
    Setting("l2=1e-3 (first round)"),
    Setting("unseen fails ignored (rounds 1-2)", unseen_fail="ignore"),
    Setting("no checks:pass_n", drop=("checks:pass_n",)),
    Setting("no checks:pass_n/fail_n", drop=("checks:pass_n", "checks:fail_n")),
    Setting("no checks:pass_n, no record:*", drop=("checks:pass_n", "record:")),
    Setting("l2=1e-4", l2=1e-4),
    Setting("l2=3e-3", l2=3e-3),
    Setting("l2=1e-2", l2=1e-2),
    Setting("min_count=10", min_count=10),
    Setting("min_count=3", min_count=3),
    Setting("items l2=1e-2", l2_by_family=(("items", 1e-2),)),
    Setting("items l2=1e-1", l2_by_family=(("items", 1e-1),)),
    Setting("no record:*", drop=("record:",)),
    Setting("no place:*/shape:*", drop=("place:", "shape:")),
    Setting("no alternatives", drop=("alternatives",)),
    Setting("no line_arithmetic:*", drop=("line_arithmetic:",)),
    Setting("no line_arithmetic:*, items l2=1e-2", drop=("line_arithmetic:",), l2_by_family=(("items", 1e-2),)),
)


def manifest_groups(data: Path) -> dict[str, str]:
    """doc id -> its sender/format group, from the dev manifest."""
    out = {}
    p = data / "manifest.jsonl"
    if not p.exists():
        return out
    for line in p.read_text("utf-8").splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        g = r.get("content_group") or r.get("vendor_key") or r.get("vendor") or r["id"]
        out[r["id"]] = f"{r.get('set')}:{g}"
    return out


def synth_group(doc_id: str) -> str:
    """A synthetic document's format: its id without the document number ("inv-<format>-<n>")."""
    head, _, _ = doc_id.rpartition("-")
    return head or doc_id


def fold_of(group: str, folds: int) -> int:
    return int(hashlib.sha256(f"docassay-cv/{group}".encode()).hexdigest(), 16) % folds


def _examples(docs: Iterable[DocFields], setting: Setting) -> list[Example]:
    """bench.calibrate's training examples, with the setting's features only."""
    return [Example(e.family, setting.strip(e.features), e.correct) for e, _, _ in examples(list(docs))]


def fit(docs: Iterable[DocFields], setting: Setting, also: Iterable[Example] = ()) -> Calibrator:
    """The setting's calibrator on `docs`' examples plus `also` (bench.calibrate.also_examples)."""
    ex = _examples(docs, setting) + [Example(e.family, setting.strip(e.features), e.correct) for e in also]
    return Calibrator.fit(ex, l2=setting.l2, min_count=setting.min_count,
                          l2_by_family=dict(setting.l2_by_family) or None, unseen_fail=setting.unseen_fail)


def confidences(cal: Calibrator, d: DocFields, setting: Setting) -> dict[str, float | None]:
    return _confidences(cal, d, setting.strip)


def decide(d: DocFields, conf: Mapping[str, float | None], target: float, policy: str,
           missing_printed: str = DEFAULT_MISSING_PRINTED) -> tuple[bool, set[str]]:
    """(accepted, the fields left out of the record) for one document under `policy`."""
    gates = d.status in ("passed", "repaired") and not (missing_printed != "report" and incomplete(d))
    req = [r for r in REQUIRED[d.kind] if r in d.fields]
    ok = gates and all(conf.get(r) is not None and conf[r] + 1e-12 >= target for r in req)
    doubtful_optional = {n for n, c in conf.items() if c is not None and c + 1e-12 < target and n not in req}
    if policy == "present":
        return ok and not doubtful_optional, set()
    if policy == "omit":
        return ok, doubtful_optional if ok else set()
    return ok, set()


def delivered_right(d: DocFields, omitted: set[str]) -> bool:
    return all(field_correct(k, (d.fields.get(k) or {}).get("value"), v, fuzzy=d.kind == "receipt")
               for k, v in d.truth.items() if not isinstance(v, list) and k not in omitted)


def risk(docs: list[DocFields], conf_of: ConfOf, target: float, policy: str) -> dict:
    acc = right = omitted = 0
    for d in docs:
        ok, left_out = decide(d, conf_of(d), target, policy)
        if ok:
            acc += 1
            right += delivered_right(d, left_out)
            omitted += len(left_out)
    return {"docs": len(docs), "accepted": acc, "pass_rate": acc / len(docs) if docs else None,
            "verified_precision": right / acc if acc else None, "omitted": omitted}


ConfOf = Callable[[DocFields], Mapping[str, float | None]]


def family_ece(docs: list[DocFields], conf_of: ConfOf) -> dict[str, tuple[int, float]]:
    by: dict[str, tuple[list[float], list[bool]]] = {}
    for d in docs:
        conf = conf_of(d)
        for name, f in d.fields.items():
            c = conf.get(name)
            y = _label(name, f.get("value"), d.truth, d.kind) if c is not None else None
            if y is None:
                continue
            for key in (f.get("family", "text"), "all"):
                cs, ys = by.setdefault(key, ([], []))
                cs.append(c)
                ys.append(bool(y))
    return {k: (len(cs), ece(cs, ys)) for k, (cs, ys) in by.items()}


def cross_validate(data: Path, setting: Setting, *, folds: int = DEFAULT_FOLDS, dev_data: Path = DEFAULT_DATA,
                   also: Iterable[Path] = ()) -> dict[str, dict[str, float | None]]:
    """Out-of-fold confidences of every dev-tune document: {doc_id: {field: confidence}}. `also`:
    collections whose synthetic invoices' line-item examples join every fold's training (other
    formats than any dev document's: `train --also`)."""
    extra = [e for v in also_examples(also).values() for e in v]
    groups = manifest_groups(dev_data)
    synth = [d for p in SYNTH_TRAIN for d in load_part(data, p)]
    tune = [d for p in DEV_TUNE for d in load_part(data, p)]
    fold = {d.doc_id: fold_of(groups.get(d.doc_id, d.doc_id), folds) for d in tune}
    out: dict[str, dict[str, float | None]] = {}
    for k in range(folds):
        train = synth + [d for d in tune if fold[d.doc_id] != k]
        cal = fit(train, setting, extra)
        for d in tune:
            if fold[d.doc_id] == k:
                out[d.doc_id] = confidences(cal, d, setting)
    return out


def _f(x) -> str:
    return "-" if x is None else f"{x:.3f}"


def log_loss(docs: list[DocFields], conf_of: ConfOf) -> float:
    """Mean log loss of the out-of-fold confidences over every labelled field."""
    total, n = 0.0, 0
    for d in docs:
        conf = conf_of(d)
        for name, f in d.fields.items():
            c = conf.get(name)
            y = _label(name, f.get("value"), d.truth, d.kind) if c is not None else None
            if y is None:
                continue
            p = min(max(c, 1e-6), 1 - 1e-6)
            total -= math.log(p if y else 1 - p)
            n += 1
    return total / n if n else 0.0


def _getter(oof: Mapping[str, Mapping[str, float | None]]) -> ConfOf:
    def get(d: DocFields) -> Mapping[str, float | None]:
        return oof[d.doc_id]
    return get


def report(data: Path, *, folds: int = DEFAULT_FOLDS, targets=DEFAULT_TARGETS, dev_data: Path = DEFAULT_DATA,
           settings: tuple[Setting, ...] = CANDIDATES, detail: str | None = None, at: float = 0.9,
           also: tuple[Path, ...] = ()) -> str:
    inv, rec = load_part(data, DEV_TUNE[0]), load_part(data, DEV_TUNE[1])
    lines = [f"grouped {folds}-fold cross-validation on dev-tune ({len(inv)} invoices, {len(rec)} receipts; "
             f"folds by content group / vendor; synthetic train parts in every fold's training)", "",
             "| setting | log loss | " + " | ".join(f"ECE {f}" for f in (*FAMILIES, "all"))
             + f" | invoices pass / VP at {at} (omit) | receipts pass / VP at {at} (required) | "
               f"receipts pass / VP at {at} (present) | receipts pass / VP at {at} (omit) |",
             "|---|---|" + "---|" * (len(FAMILIES) + 1) + "---|---|---|---|"]
    oof_by = {}
    for s in settings:
        oof = cross_validate(data, s, folds=folds, dev_data=dev_data, also=also)
        oof_by[s.name] = oof
        get = _getter(oof)
        fe = family_ece(inv + rec, get)
        cells = []
        for docs, pol in ((inv, "omit"), (rec, "required"), (rec, "present"), (rec, "omit")):
            r = risk(docs, get, at, pol)
            cells.append(f"{_f(r['pass_rate'])} / {_f(r['verified_precision'])}")
        lines.append(f"| {s.name} | {log_loss(inv + rec, get):.4f} | "
                     + " | ".join(_f(fe[f][1]) if f in fe else "-" for f in (*FAMILIES, "all"))
                     + " | " + " | ".join(cells) + " |")
    lines.append("")
    for s in settings:
        if s.name != (detail or settings[0].name):
            continue
        get = _getter(oof_by[s.name])
        lines += [f"#### {s.name}: out-of-fold risk-coverage", "",
                  "| target | policy | invoices pass rate | invoices verified precision | receipts pass rate | "
                  "receipts verified precision | receipts fields left out |", "|---|---|---|---|---|---|---|"]
        for t in targets:
            for pol in POLICIES:
                a, b = risk(inv, get, t, pol), risk(rec, get, t, pol)
                lines.append(f"| {t:.2f} | {pol} | {_f(a['pass_rate'])} ({a['accepted']}) "
                             f"| {_f(a['verified_precision'])} | {_f(b['pass_rate'])} ({b['accepted']}) "
                             f"| {_f(b['verified_precision'])} | {b['omitted']} |")
        lines.append("")
    return "\n".join(lines)


UNSEEN_PARTS = ("synth-invoices-unseen", "synth-receipts-unseen")


def unseen_report(data: Path, unseen: list[Path], *, settings: tuple[Setting, ...] = CANDIDATES,
                  at: float = 0.9, also: tuple[Path, ...] = ()) -> str:
    """Each setting fitted on the training parts of `data`, scored on the unseen synthetic formats
    collected in `unseen` (other `--seed`s: formats no fold was trained on, so grouped by format by
    construction): log loss, and pass rate / verified precision at `at` under `omit`."""
    train = [d for p in TRAIN_PARTS for d in load_part(data, p)]
    parts = {p: [d for u in unseen for d in load_part(u, p)] for p in UNSEEN_PARTS}
    lines = [f"settings fitted on the training parts of {data}, scored on unseen formats of "
             f"{', '.join(str(u) for u in unseen)}", "",
             "| setting | log loss | " + " | ".join(f"{p} pass / VP at {at} (omit)" for p in UNSEEN_PARTS) + " |",
             "|---|---|" + "---|" * len(UNSEEN_PARTS)]
    for s in settings:
        cal = fit(train, s, [e for v in also_examples(also).values() for e in v])

        def get(d: DocFields, cal: Calibrator = cal, s: Setting = s) -> dict[str, float | None]:
            return confidences(cal, d, s)
        cells = []
        for p in UNSEEN_PARTS:
            r = risk(parts[p], get, at, "omit")
            cells.append(f"{r['accepted']} of {len(parts[p])} / {_f(r['verified_precision'])}")
        lines.append(f"| {s.name} | {log_loss([d for v in parts.values() for d in v], get):.4f} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)


ITEM_SETTINGS = (
    Setting("l2=1e-3 (first round)"),
    Setting("items: without the --also lists", items_also=False),
    Setting("items: without item_row_numbers, item_rows_printed, shape:items",
            drop=("item_row_numbers:", "item_rows_printed:", "shape:items")),
    Setting("items: main's (neither the --also lists nor the row checks)", items_also=False,
            drop=("item_row_numbers:", "item_rows_printed:", "shape:items")),
    Setting("items l2=3e-3", l2_by_family=(("items", 3e-3),)),
    Setting("items l2=1e-2", l2_by_family=(("items", 1e-2),)),
    Setting("min_count=10", min_count=10),
)


def _items_only(d: DocFields) -> DocFields:
    return dataclasses.replace(d, fields={k: v for k, v in d.fields.items() if (v or {}).get("family") == "items"})


def items_pool(data: Path, also: Iterable[Path], dev_data: Path = DEFAULT_DATA) -> list[tuple[DocFields, str, str, bool]]:
    """(document, group, source, from --also) for every invoice of the tuning data that can hold a
    line-item list: dev-tune (group: content group), the synthetic train formats of `data` and
    the train and unseen formats of `also` (group: format). Never dev-holdout, never `data`'s
    unseen part."""
    groups = manifest_groups(dev_data)
    out = [(d, groups.get(d.doc_id, d.doc_id), "dev-tune", False) for d in load_part(data, DEV_TUNE[0])]
    out += [(d, synth_group(d.doc_id), "synth-train", False) for d in load_part(data, SYNTH_TRAIN[0])]
    for folder in also:
        out += [(d, synth_group(d.doc_id), "synth-train", True) for d in load_part(folder, "synth-invoices-train")]
        out += [(d, synth_group(d.doc_id), "synth-unseen", True) for d in load_part(folder, "synth-invoices-unseen")]
    return out


def _items_pairs(docs: Iterable[DocFields], conf_of: ConfOf) -> tuple[list[float], list[bool]]:
    cs, ys = [], []
    for d in docs:
        conf = conf_of(d)
        for name, f in d.fields.items():
            c = conf.get(name)
            y = _label(name, f.get("value"), d.truth, d.kind) if c is not None and f.get("family") == "items" else None
            if y is not None:
                cs.append(c)
                ys.append(bool(y))
    return cs, ys


def items_report(data: Path, also: tuple[Path, ...], *, settings: tuple[Setting, ...] = ITEM_SETTINGS,
                 folds: int = DEFAULT_FOLDS, dev_data: Path = DEFAULT_DATA, table: str | None = None) -> str:
    """The items family out of fold over every line-item list of the tuning data (`items_pool`),
    folds over groups (a ZUGFeRD content group, a synthetic format), each fold's model fitted on
    the other folds plus every receipt of `data`'s training parts; lists from `also` train with
    their line-item examples only (as `train --also`). Per source and pooled: lists, accuracy,
    mean confidence, ECE (10 bins), the noise floor of that ECE, log loss, Brier score."""
    pool = items_pool(data, also, dev_data)
    receipts = [d for p in (SYNTH_TRAIN[1], DEV_TUNE[1]) for d in load_part(data, p)]
    lines = [f"items out of fold ({folds} folds over content groups and synthetic formats; {len(pool)} invoices: "
             f"dev-tune of {data}, synthetic train of {data}, train and unseen of "
             f"{', '.join(str(a) for a in also) or '-'})", "",
             "| setting | source | lists | accuracy | mean confidence | ECE | ECE noise floor | log loss | Brier |",
             "|---|---|---|---|---|---|---|---|---|"]
    tables = []
    for s in settings:
        conf: dict[tuple[str, str], Mapping[str, float | None]] = {}
        for k in range(folds):
            train = receipts + [_items_only(d) if x else d for d, g, _, x in pool
                                if fold_of(g, folds) != k and (s.items_also or not x)]
            cal = fit(train, s)
            for d, g, src, _ in pool:
                if fold_of(g, folds) == k:
                    conf[(src, d.doc_id)] = confidences(cal, d, s)
        everything: tuple[list[float], list[bool]] = ([], [])
        for src in ("dev-tune", "synth-train", "synth-unseen", "pooled"):
            if src == "pooled":
                cs, ys = everything
            else:
                cs, ys = _items_pairs([d for d, _, so, _ in pool if so == src],
                                      lambda d, src=src, conf=conf: conf[(src, d.doc_id)])
                everything[0].extend(cs)
                everything[1].extend(ys)
            if not cs:
                continue
            ll = -sum(math.log(min(max(c if y else 1 - c, 1e-6), 1.0)) for c, y in zip(cs, ys)) / len(cs)
            br = sum((c - y) ** 2 for c, y in zip(cs, ys)) / len(cs)
            lines.append(f"| {s.name} | {src} | {len(cs)} | {sum(ys) / len(ys):.3f} | {sum(cs) / len(cs):.3f} "
                         f"| {ece(cs, ys):.3f} | {noise_floor(cs):.3f} | {ll:.3f} | {br:.3f} |")
            if s.name == (table or settings[0].name):
                tables += [f"#### {s.name}: items reliability out of fold, {src}", "",
                           "| confidence | lists | mean confidence | accuracy |", "|---|---|---|---|"]
                tables += [f"| {b.lo:.1f}-{b.hi:.1f} | {b.n} | {b.mean_confidence:.3f} | {b.accuracy:.3f} |"
                           for b in reliability(cs, ys) if b.n]
                tables.append("")
    return "\n".join(lines + [""] + tables)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.calibrate_cv", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="a `bench.calibrate collect` folder")
    ap.add_argument("--folds", type=int, default=DEFAULT_FOLDS)
    ap.add_argument("--dev-data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--only", nargs="*", default=None, help="the settings to compare, by name (default: all)")
    ap.add_argument("--detail", default=None, help="the setting whose risk-coverage is printed (default: the first)")
    ap.add_argument("--unseen", nargs="*", type=Path, default=None,
                    help="`collect --seed N --parts synth-*-unseen` folders: score each setting on those unseen "
                         "formats instead of cross-validating")
    ap.add_argument("--also", nargs="*", type=Path, default=[],
                    help="collections of other seeds whose synthetic invoices' line-item examples join the training "
                         "(`bench.calibrate train --also`)")
    ap.add_argument("--items", action="store_true",
                    help="the items family out of fold over dev-tune and the synthetic invoices of --data and --also "
                         "(items_report; settings ITEM_SETTINGS)")
    args = ap.parse_args(argv)
    if args.items:
        isettings = tuple(s for s in ITEM_SETTINGS if args.only is None or s.name in args.only)
        print(items_report(args.data, tuple(args.also), settings=isettings, folds=args.folds, dev_data=args.dev_data,
                           table=args.detail))
        return 0
    settings = tuple(s for s in CANDIDATES if args.only is None or s.name in args.only)
    if args.unseen:
        print(unseen_report(args.data, args.unseen, settings=settings, also=tuple(args.also)))
        return 0
    print(report(args.data, folds=args.folds, dev_data=args.dev_data, settings=settings, detail=args.detail,
                 also=tuple(args.also)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
