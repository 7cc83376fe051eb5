"""One row of `results.jsonl` (the contract in ARCHITECTURE.md) and the batch summary."""
from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterable

STATUSES = ("passed", "repaired", "reviewed", "corrected", "needs_review", "failed", "quota_exceeded", "error")
FAILED_STATUSES = ("failed", "error", "quota_exceeded")


@dataclass
class Row:
    source: str
    sha256: str | None = None
    status: str = "failed"
    format: dict = field(default_factory=lambda: {"id": None, "version": None, "match": None, "similarity": None})
    record: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)
    verification: dict = field(default_factory=dict)
    attempts: int = 0
    model_tokens: dict = field(default_factory=lambda: {"input": 0, "output": 0})
    timings_ms: dict = field(default_factory=dict)
    error: dict | None = None
    repairs: list = field(default_factory=list)
    pages: int | None = None
    fields: dict = field(default_factory=dict)          # field -> {value, confidence, status, checks}
    doubtful: list = field(default_factory=list)        # required fields not verified (why it needs review)
    duplicate_of: dict | None = None                    # the same bytes seen before: {sha256, source, first_seen}
    review: dict | None = None                          # a person's decision this row keeps: {action, by, at}
    features: dict = field(default_factory=dict, repr=False)   # field -> calibrator features (not written)

    def fail(self, status: str, kind: str, message: str) -> None:
        self.status = status
        self.error = {"kind": kind, "message": _clean(message)}

    def finish(self, result, *, repaired: bool) -> None:  # result: extractors.instructions.repair.RepairResult
        self.record = result.extraction.record
        self.provenance = result.extraction.provenance_json()
        self.verification = result.verdict.to_json()
        self.attempts = result.attempts
        self.repairs = [c.to_json() for c in result.changes]
        v = result.verdict
        self.fields = {k: f.to_json() for k, f in v.fields.items()}
        self.features = {k: dict(b.features) for k, b in v.bases.items() if b.present}
        self.doubtful = v.doubtful if v.passed else []
        if v.accepted:
            self.status = "repaired" if repaired else "passed"
        else:
            self.status = "needs_review"

    def to_json(self) -> dict:
        d = {"source": self.source, "sha256": self.sha256, "status": self.status, "format": self.format,
             "record": self.record, "provenance": self.provenance, "verification": self.verification,
             "attempts": self.attempts, "model_tokens": self.model_tokens, "timings_ms": self.timings_ms,
             "error": self.error}
        if self.repairs:
            d["repairs"] = self.repairs
        if self.pages is not None:
            d["pages"] = self.pages
        if self.fields:
            d["fields"] = self.fields
        if self.doubtful:
            d["doubtful"] = self.doubtful
        if self.duplicate_of:
            d["duplicate_of"] = self.duplicate_of
        if self.review:
            d["review"] = self.review
        return d


def _clean(message: str, limit: int = 500) -> str:
    """Messages end up in terminals and logs: no control characters, bounded length."""
    m = "".join(ch if ch.isprintable() else " " for ch in str(message))
    return m if len(m) <= limit else m[:limit] + "…"


class ResultsWriter:
    """Appends rows to results.jsonl as they finish (flushed and fsynced: nothing accepted is lost)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._f: IO[str] = open(path, "w", encoding="utf-8")

    def write(self, row: Row) -> None:
        self._f.write(json.dumps(row.to_json(), ensure_ascii=False, default=str) + "\n")
        self._f.flush()
        os.fsync(self._f.fileno())

    def close(self) -> None:
        self._f.close()


@dataclass
class Summary:
    total: int
    by_status: dict[str, int]
    failed: int
    error_ratio: float
    errors: list[str]               # distinct error messages, first few, truncated
    duplicates: int = 0             # rows whose bytes were seen before (`duplicate_of`)

    def to_json(self) -> dict:
        d = {"total": self.total, "by_status": self.by_status, "failed": self.failed,
             "error_ratio": round(self.error_ratio, 4), "errors": self.errors}
        if self.duplicates:
            d["duplicates"] = self.duplicates
        return d


def summarize(rows: Iterable[Row], max_errors: int = 5) -> Summary:
    rows = list(rows)
    counts = Counter(r.status for r in rows)
    failed = sum(counts.get(s, 0) for s in FAILED_STATUSES)
    distinct: list[str] = []
    for r in rows:
        if r.error and r.status in FAILED_STATUSES:
            msg = f"{r.error['kind']}: {r.error['message']}"[:160]
            if msg not in distinct:
                distinct.append(msg)
    return Summary(len(rows), {s: counts[s] for s in STATUSES if counts.get(s)}, failed,
                   failed / len(rows) if rows else 0.0, distinct[:max_errors],
                   sum(1 for r in rows if r.duplicate_of))
