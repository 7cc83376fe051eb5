"""Scoring extracted records against canonical ground truth (the format of ../shared/data/README.md).

One scorer for every system (docassay and invoice2data alike): `score_document` per document,
`aggregate` to a `Report`, `group_mean` for sets whose documents come in groups that must be
weighted equally (ZUGFeRD content groups).

Only keys present in the ground truth are scored (absent = not annotated). Numbers match within
0.01 absolute; dates as ISO strings; identifiers after dropping whitespace, case and a leading '#';
names and addresses after case and whitespace folding, fuzzily (similarity >= 0.85) for receipts,
whose ground truth carries transcription errors. Line items are matched by description
(Hungarian-free greedy on similarity) and scored as precision / recall / F1.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any, Iterable, Mapping

from docassay.extractors.normalize import fold

NUM_TOL = 0.011
FUZZY = 0.85
ID_FIELDS = {"invoice_number", "seller_vat_id"}
DATE_FIELDS = {"issue_date", "due_date", "date"}
NAME_FIELDS = {"seller_name", "buyer_name", "company", "address", "description"}
ITEM_MATCH = 0.6


def _id(v: str) -> str:
    return re.sub(r"\s+", "", str(v)).lstrip("#").casefold()


def _sim(a: str, b: str) -> float:
    fa, fb = fold(str(a)), fold(str(b))
    if fa == fb:
        return 1.0
    return SequenceMatcher(None, fa, fb).ratio()


def field_correct(name: str, got: Any, want: Any, *, fuzzy: bool = False) -> bool:
    if got is None:
        return False
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        return isinstance(got, (int, float)) and abs(float(got) - float(want)) <= NUM_TOL
    if name in DATE_FIELDS:
        return str(got) == str(want)
    if name in ID_FIELDS:
        return _id(got) == _id(want)
    if name in NAME_FIELDS or isinstance(want, str):
        return _sim(got, want) >= (FUZZY if fuzzy else 1.0) or fold(str(got)) == fold(str(want))
    return got == want


@dataclass
class ItemScore:
    matched: int = 0
    predicted: int = 0
    expected: int = 0
    fields_right: int = 0
    fields_total: int = 0


def score_items(got: list[Mapping[str, Any]] | None, want: list[Mapping[str, Any]]) -> ItemScore:
    got = list(got or [])
    s = ItemScore(predicted=len(got), expected=len(want))
    used: set[int] = set()
    for w in want:
        best, best_i = 0.0, -1
        for i, g in enumerate(got):
            if i in used:
                continue
            sim = _sim(g.get("description", ""), w.get("description", ""))
            if sim > best:
                best, best_i = sim, i
        if best_i >= 0 and best >= ITEM_MATCH:
            used.add(best_i)
            s.matched += 1
            g = got[best_i]
            for k, v in w.items():
                if k == "description":
                    continue
                s.fields_total += 1
                s.fields_right += field_correct(k, g.get(k), v)
        else:
            s.fields_total += sum(1 for k in w if k != "description")
    return s


@dataclass
class DocScore:
    doc_id: str
    status: str
    fields: dict[str, bool] = field(default_factory=dict)
    items: ItemScore | None = None
    path: str | None = None                         # docassay: "new" | "known" | None (not read)

    @property
    def header_exact(self) -> bool:
        """Every annotated scalar field right (line items not looked at)."""
        return all(self.fields.values())

    @property
    def exact(self) -> bool:
        """Every annotated field right, and the line items exactly: all matched, none extra, every
        item field right."""
        ok = self.header_exact
        if self.items is not None:
            ok = ok and self.items.matched == self.items.expected == self.items.predicted \
                and self.items.fields_right == self.items.fields_total
        return ok

    @property
    def accepted(self) -> bool:
        return self.status in ("passed", "repaired")


def score_document(doc_id: str, status: str, record: Mapping[str, Any], truth: Mapping[str, Any],
                   *, fuzzy: bool = False, path: str | None = None) -> DocScore:
    """Score the annotated keys of `truth` (absent keys are not annotated and never scored)."""
    d = DocScore(doc_id, status, path=path)
    for k, v in truth.items():
        if isinstance(v, list):
            d.items = score_items(record.get(k), v)
        else:
            d.fields[k] = field_correct(k, record.get(k), v, fuzzy=fuzzy)
    return d


@dataclass
class Report:
    n: int
    per_field: dict[str, tuple[int, int]]          # field -> (right, annotated)
    micro: float
    exact: float
    pass_rate: float
    verified_precision: float | None                # of accepted documents, share with every field right
    accepted: int
    verified_precision_header: float | None         # the same, scalar fields only (line items not looked at)
    header_exact: float
    item_precision: float | None
    item_recall: float | None
    item_f1: float | None
    statuses: dict[str, int]

    def to_json(self) -> dict:
        return {"documents": self.n, "per_field": {k: {"right": r, "annotated": a, "accuracy": round(r / a, 4) if a else None}
                                                   for k, (r, a) in self.per_field.items()},
                "micro_field_accuracy": round(self.micro, 4), "document_exact_match": round(self.exact, 4),
                "pass_rate": round(self.pass_rate, 4), "accepted": self.accepted,
                "verified_precision": None if self.verified_precision is None else round(self.verified_precision, 4),
                "verified_precision_header": _r(self.verified_precision_header),
                "header_exact_match": round(self.header_exact, 4),
                "line_items": {"precision": _r(self.item_precision), "recall": _r(self.item_recall), "f1": _r(self.item_f1)},
                "statuses": self.statuses}


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def aggregate(scores: Iterable[DocScore]) -> Report:
    scores = list(scores)
    per: dict[str, list[int]] = {}
    right = total = 0
    for s in scores:
        for k, ok in s.fields.items():
            per.setdefault(k, [0, 0])
            per[k][0] += ok
            per[k][1] += 1
            right += ok
            total += 1
        if s.items is not None:
            per.setdefault("line_items.fields", [0, 0])
            per["line_items.fields"][0] += s.items.fields_right
            per["line_items.fields"][1] += s.items.fields_total
    matched = sum(s.items.matched for s in scores if s.items)
    predicted = sum(s.items.predicted for s in scores if s.items)
    expected = sum(s.items.expected for s in scores if s.items)
    prec = matched / predicted if predicted else None
    rec = matched / expected if expected else None
    f1 = 2 * prec * rec / (prec + rec) if prec and rec else (0.0 if prec is not None and rec is not None else None)
    accepted = [s for s in scores if s.accepted]
    statuses: dict[str, int] = {}
    for s in scores:
        statuses[s.status] = statuses.get(s.status, 0) + 1
    return Report(len(scores), {k: (v[0], v[1]) for k, v in sorted(per.items())}, right / total if total else 0.0,
                  sum(s.exact for s in scores) / len(scores) if scores else 0.0,
                  len(accepted) / len(scores) if scores else 0.0,
                  sum(s.exact for s in accepted) / len(accepted) if accepted else None, len(accepted),
                  sum(s.header_exact for s in accepted) / len(accepted) if accepted else None,
                  sum(s.header_exact for s in scores) / len(scores) if scores else 0.0,
                  prec, rec, f1, statuses)


@dataclass
class GroupMean:
    """Metrics averaged over groups (each group weighs the same, whatever its number of documents)."""
    groups: int
    documents: int
    per_field: dict[str, float]                     # field -> mean accuracy over groups annotating it
    micro: float
    exact: float
    pass_rate: float
    verified_precision: float | None                # mean over groups with an accepted document
    item_f1: float | None                           # mean over groups with annotated line items

    def to_json(self) -> dict:
        return {"groups": self.groups, "documents": self.documents,
                "per_field": {k: round(v, 4) for k, v in self.per_field.items()},
                "micro_field_accuracy": round(self.micro, 4), "document_exact_match": round(self.exact, 4),
                "pass_rate": round(self.pass_rate, 4), "verified_precision": _r(self.verified_precision),
                "line_items_f1": _r(self.item_f1)}


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def group_mean(scores: Iterable[DocScore], group_of: Mapping[str, str]) -> GroupMean:
    """Aggregate each group (`group_of[doc_id]`) on its own, then take the mean over groups."""
    by: dict[str, list[DocScore]] = {}
    for s in scores:
        by.setdefault(group_of[s.doc_id], []).append(s)
    reps = [aggregate(v) for _, v in sorted(by.items())]
    fields = sorted({k for r in reps for k in r.per_field})
    per = {k: _mean([r.per_field[k][0] / r.per_field[k][1] for r in reps
                     if k in r.per_field and r.per_field[k][1]]) for k in fields}
    return GroupMean(len(reps), sum(r.n for r in reps), {k: v for k, v in per.items() if v is not None},
                     _mean([r.micro for r in reps]) or 0.0, _mean([r.exact for r in reps]) or 0.0,
                     _mean([r.pass_rate for r in reps]) or 0.0,
                     _mean([r.verified_precision for r in reps if r.verified_precision is not None]),
                     _mean([r.item_f1 for r in reps if r.item_f1 is not None]))


def format_report(title: str, r: Report) -> str:
    lines = [f"## {title}", "", "| field | accuracy | right / annotated |", "|---|---|---|"]
    for k, (right, ann) in r.per_field.items():
        lines.append(f"| {k} | {right / ann:.3f} | {right} / {ann} |" if ann else f"| {k} | - | 0 / 0 |")
    vp = "-" if r.verified_precision is None else f"{r.verified_precision:.3f}"
    vph = "-" if r.verified_precision_header is None else f"{r.verified_precision_header:.3f}"
    lines += ["", f"documents {r.n}; micro field accuracy {r.micro:.3f}; document exact match {r.exact:.3f} "
                  f"(header fields {r.header_exact:.3f}); pass rate {r.pass_rate:.3f} ({r.accepted}); "
                  f"**verified precision {vp}** (header fields {vph})"]
    if r.item_f1 is not None:
        lines.append(f"line items: precision {r.item_precision or 0:.3f} recall {r.item_recall or 0:.3f} F1 {r.item_f1:.3f}")
    lines.append("statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(r.statuses.items())))
    return "\n".join(lines)
