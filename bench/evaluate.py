"""From pass rows to scores: one `DocScore` per document, then the reports a set is shown with.

    scores = score_rows(docs, result.rows)
    report = set_report(docs, scores)       # overall, per path (new/known), per origin, per group
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from bench.datasets import BenchDoc
from bench.passes import BenchRow
from bench.scoring import DocScore, GroupMean, Report, aggregate, group_mean, score_document


def score_rows(docs: Sequence[BenchDoc], rows: Iterable[BenchRow]) -> list[DocScore]:
    """Score each row against its document's truth (rows matched to documents by input path)."""
    by_path = {d.path: d for d in docs}
    out = []
    for r in rows:
        d = by_path[r.source]
        out.append(score_document(d.doc_id, r.status, r.record or {}, d.truth, fuzzy=d.kind == "receipt",
                                  path=r.match if r.status != "error" else None))
    return out


def score_records(docs: Sequence[BenchDoc], records: Mapping[str, Mapping | None], *,
                  accepted_status: str = "passed") -> list[DocScore]:
    """Score another system's output (`records[doc_id]`, None when it returned nothing): a document
    with output counts as accepted (`accepted_status`), one without as `no_output`."""
    return [score_document(d.doc_id, accepted_status if records.get(d.doc_id) else "no_output",
                           records.get(d.doc_id) or {}, d.truth, fuzzy=d.kind == "receipt") for d in docs]


@dataclass
class SetReport:
    overall: Report
    by_path: dict[str, Report] = field(default_factory=dict)      # new | known
    by_origin: dict[str, Report] = field(default_factory=dict)    # i2d | zugferd | ... (only when mixed)
    groups: dict[str, GroupMean] = field(default_factory=dict)    # origin -> mean over its content groups

    def to_json(self) -> dict:
        return {"overall": self.overall.to_json(),
                "by_path": {k: v.to_json() for k, v in self.by_path.items()},
                "by_origin": {k: v.to_json() for k, v in self.by_origin.items()},
                "group_mean": {k: v.to_json() for k, v in self.groups.items()}}


def set_report(docs: Sequence[BenchDoc], scores: Sequence[DocScore]) -> SetReport:
    """Overall; per pipeline path; per origin when a set mixes origins; ZUGFeRD as a mean over
    content groups (the data README: never let one group's many renderings outweigh the others)."""
    rep = SetReport(aggregate(scores))
    for path in ("new", "known"):
        sel = [s for s in scores if s.path == path]
        if sel:
            rep.by_path[path] = aggregate(sel)
    origin = {d.doc_id: d.origin for d in docs}
    origins = sorted({origin[s.doc_id] for s in scores})
    if len(origins) > 1:
        for o in origins:
            rep.by_origin[o] = aggregate(s for s in scores if origin[s.doc_id] == o)
    group = {d.doc_id: d.group for d in docs if d.origin == "zugferd" and d.group}
    zs = [s for s in scores if s.doc_id in group]
    if zs:
        rep.groups["zugferd"] = group_mean(zs, group)
    return rep
