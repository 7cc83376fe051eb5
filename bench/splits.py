"""The named splits of the dev data: `dev-tune`, which we look at, and `dev-holdout`, which nothing
is tuned on.

    dev-holdout   never looked at while building: no training, no threshold, no rule, label or
                  lexicon entry is written while looking at its documents or its errors. Every
                  headline figure is reported on it beside `dev-tune`.
    dev-tune      everything else: what calibrators are trained on, thresholds chosen on, and what
                  engineers read the errors of.

How a document is assigned (fixed, by hashing; no document is picked by hand):
  * invoices: by *content group* (ZUGFeRD renders one invoice with several generators; the
    group never splits, so no holdout invoice has a twin in the tune split); a document without a
    group is its own group. A group is holdout when sha256("docassay-holdout/" + group) is even.
  * receipts: only among the receipts after the first 300 by id (the first 300 were read while
    the shipped model was chosen, BENCHMARKS.md "selection"); of those, a receipt is holdout when
    sha256("docassay-holdout/" + id) is even.

Caveat, stated once: the ZUGFeRD groups whose `fx22` members were in the earlier model-selection
set keep those members in the holdout (a group never splits); they were looked at for the model's
accuracy before this split existed, never for confidence, checks or thresholds.
"""
from __future__ import annotations

import hashlib
from typing import Iterable, TypeVar

__all__ = ["HOLDOUT", "TUNE", "SPLITS", "split_of", "select", "RECEIPT_SELECTION_SIZE"]

HOLDOUT = "dev-holdout"
TUNE = "dev-tune"
SPLITS = (TUNE, HOLDOUT)
RECEIPT_SELECTION_SIZE = 300          # the first 300 receipts by id: read during model selection

T = TypeVar("T")


def _even(key: str) -> bool:
    return int(hashlib.sha256(f"docassay-holdout/{key}".encode()).hexdigest(), 16) % 2 == 0


def split_of(kind: str, doc_id: str, group: str | None = None, *, receipt_rank: int | None = None) -> str:
    """`dev-holdout` or `dev-tune` for one dev document. `kind` is invoice | receipt; receipts need
    their rank among all receipts sorted by id (0-based)."""
    if kind == "invoice":
        return HOLDOUT if _even(group or doc_id) else TUNE
    if receipt_rank is None:
        raise ValueError("a receipt's split needs its rank by id (receipt_rank)")
    if receipt_rank < RECEIPT_SELECTION_SIZE:
        return TUNE
    return HOLDOUT if _even(doc_id) else TUNE


def select(docs: Iterable[T], split: str) -> list[T]:
    """The documents of `split` among bench `BenchDoc`s of one dev set (sorted by id, as load_dev
    returns them)."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; one of {', '.join(SPLITS)}")
    docs = list(docs)
    ranked = sorted(docs, key=lambda d: d.doc_id)            # type: ignore[attr-defined]
    rank = {d.doc_id: i for i, d in enumerate(ranked)}       # type: ignore[attr-defined]
    return [d for d in docs if split_of(d.kind, d.doc_id, d.group,                      # type: ignore[attr-defined]
                                         receipt_rank=rank[d.doc_id]) == split]  # type: ignore[attr-defined]
