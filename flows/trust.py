"""Learning only from trust, and the same document again.

    prior_outcome(conn, sha256)           what the database knows of this document already
    keep_review(row, prior, reviews)      a person's decision survives a re-run (and --retry-from): a
                                          document accepted or corrected in review stays `reviewed` /
                                          `corrected`, with the person's values, whatever this run read
    mark_duplicate(row, prior)            the same bytes seen before (another name, or a document
                                          already accepted): `duplicate_of` names the first sighting
    golden_worthy(row)                    may this row's record become a golden reference: accepted and
                                          no field doubtful at the target

What learns from a row: a new format's first version, a drift version, the golden set and the
stale-value history take only records accepted at the confidence target (`passed` / `repaired`,
which now require every required field verified) or decided by a person. An auto-accepted
record never replaces a person's: a reviewed document keeps its status and values on every re-run.
"""
from __future__ import annotations

from datetime import date
from typing import Any

from docassay.flows.results import Row
from docassay.infra import store

__all__ = ["REVIEWED", "AUTO_ACCEPTED", "prior_outcome", "keep_review", "mark_duplicate", "golden_worthy",
           "apply_prior", "stored_verification"]

REVIEWED = ("reviewed", "corrected")          # a person's decision (flows/commands/review.py)
AUTO_ACCEPTED = ("passed", "repaired")


def prior_outcome(conn: Any, sha256: str | None) -> dict | None:
    return store.first_sighting(conn, sha256) if sha256 else None


def keep_review(row: Row, prior: dict | None, reviews: list[dict]) -> bool:
    """Restore a person's decision on `row`; True when one was kept."""
    if prior is None or prior.get("status") not in REVIEWED:
        return False
    record = prior.get("record")
    if isinstance(record, dict):
        changed = {k for k in set(record) | set(row.record) if record.get(k) != row.record.get(k)}
        row.record = dict(record)
        for name, f in row.fields.items():
            if name in record:
                f.update(value=record[name], confidence=1.0, status="verified",
                         checks=[{"check": "review", "outcome": "pass",
                                  "detail": "corrected by a person" if name in changed else "accepted by a person"}])
            elif name in changed:
                f.update(value=None, confidence=None, status="missing", checks=[])
    last = reviews[-1] if reviews else {}
    row.status = prior["status"]
    row.doubtful = []
    row.error = None
    row.review = {"action": last.get("action", "accept" if prior["status"] == "reviewed" else "correct"),
                  "by": last.get("reviewer"), "at": str(last["created_at"]) if last.get("created_at") else None}
    return True


def mark_duplicate(row: Row, prior: dict | None) -> bool:
    """Flag the same bytes seen before under another name, or already accepted (booked) once."""
    if prior is None:
        return False
    if prior.get("source") == row.source and prior.get("status") not in AUTO_ACCEPTED + REVIEWED:
        return False                              # the same file again after it was not accepted: a retry
    first = prior.get("first_seen")
    row.duplicate_of = {"sha256": prior["sha256"], "source": prior.get("source"),
                        "first_seen": first.isoformat() if isinstance(first, date) else first,
                        "status": prior.get("status")}
    return True


def golden_worthy(row: Row) -> bool:
    return row.status in AUTO_ACCEPTED and all(f.get("status") != "doubtful" for f in row.fields.values())


def stored_verification(row: Row) -> dict:
    """The verification a document is stored with: the row's, with its fields' confidence and the
    doubtful fields, so that `docassay review` shows why a record that passed its gates waits."""
    if not row.fields:
        return row.verification
    return {**row.verification, "fields": row.fields, "doubtful": row.doubtful}


def apply_prior(conn: Any, row: Row) -> None:
    """Before a row is stored: keep a person's decision, and flag a duplicate."""
    if not row.sha256 or row.status == "error":
        return
    prior = prior_outcome(conn, row.sha256)
    if prior is None:
        return
    mark_duplicate(row, prior)
    if prior.get("status") in REVIEWED:
        keep_review(row, prior, store.list_reviews(conn, row.sha256))
