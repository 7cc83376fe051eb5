"""Distinct invoices: what a finance team could book at all.

The `stale` gate refuses an invoice number already accepted for the same seller (issue 12: "an
invoice number already accepted for the same seller stays a `stale` error"). The dev invoices
repeat (invoice number, seller) pairs — a ZUGFeRD content group is one invoice rendered by several
generators, and several groups reuse the specification's sample numbers — so in one batch every
document after an accepted one of its pair is refused, rightly, and a pass rate over all documents
cannot reach what the reading allows. `invoices` groups the documents by that pair (from the
ground truth, not from what docassay read), in batch order, so "invoices booked" — the share of
distinct invoices of which one document passed — is the pass rate that counts each invoice once.
Receipts and documents without both fields in their truth are each their own group.
"""
from __future__ import annotations

from typing import Protocol, Sequence, TypeVar

__all__ = ["invoices", "booked"]


class _HasTruth(Protocol):
    truth: dict
    status: str


D = TypeVar("D", bound=_HasTruth)
PASSED = ("passed", "repaired")


def _key(truth: dict) -> tuple[str, str] | None:
    number, seller = truth.get("invoice_number"), truth.get("seller_name")
    if not number or not seller:
        return None
    return " ".join(str(number).split()).casefold(), " ".join(str(seller).split()).casefold()


def invoices(docs: Sequence[D]) -> list[list[D]]:
    """The documents grouped by their (invoice number, seller) pair, groups in order of first sighting."""
    groups: dict[object, list[D]] = {}
    for i, d in enumerate(docs):
        k = _key(d.truth)
        groups.setdefault(k if k is not None else ("#", i), []).append(d)
    return list(groups.values())


def booked(docs: Sequence[D]) -> tuple[int, int]:
    """(distinct invoices of which a document passed, distinct invoices)."""
    groups = invoices(docs)
    return sum(any(d.status in PASSED for d in g) for g in groups), len(groups)
