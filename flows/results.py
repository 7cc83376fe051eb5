"""One row of `results.jsonl` (the contract in ARCHITECTURE.md) and the batch summary."""
from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field, fields
from enum import StrEnum
from pathlib import Path
from typing import Any, Iterable, Literal, TypedDict

from docassay.infra.errors import ConfigError, StorageError


class Status(StrEnum):
    """A row's status (the one list of them; a member is the str written to results.jsonl)."""
    PASSED = "passed"                  # verified on the first try, every required field verified
    REPAIRED = "repaired"              # verified after the fixer or troubleshooter changed something
    REVIEWED = "reviewed"              # a person accepted it (kept by re-runs)
    CORRECTED = "corrected"            # a person corrected it (kept by re-runs)
    NEEDS_REVIEW = "needs_review"      # still failing after the attempt budget, or a required field doubtful
    FAILED = "failed"                  # a row not finished (Row's default)
    QUOTA_EXCEEDED = "quota_exceeded"  # the token quota could not cover the model call it needed
    ERROR = "error"                    # the document could not be read (its `error` says why)


Match = Literal["known", "new", "einvoice"]
"""How a row's document met its format: a stored format matched, a new one, or the e-invoice's XML."""

SIMILARITY_DIGITS = 4
"""Decimals of the fingerprint similarity written in a row's `format`."""


class RowFormat(TypedDict):
    """A row's `format`: the stored format that read the document and how it was found. A dict at
    run time (written to results.jsonl as it is); build it with `row_format`."""
    id: str | None                 # the format's id; None when no format was kept
    version: int | None            # its instruction version
    match: Match | None            # None: the document never reached format matching
    similarity: float | None       # to the nearest stored format (rounded); None when not compared


def row_format(format_id: str | None = None, version: int | None = None, match: Match | None = None,
               similarity: float | None = None) -> RowFormat:
    return {"id": format_id, "version": version, "match": match,
            "similarity": None if similarity is None else round(similarity, SIMILARITY_DIGITS)}


STATUSES = tuple(s.value for s in Status)
FAILED_STATUSES = (Status.FAILED.value, Status.ERROR.value, Status.QUOTA_EXCEEDED.value)


@dataclass
class Row:
    source: str
    sha256: str | None = None
    status: str = "failed"
    format: RowFormat = field(default_factory=row_format)
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
        self.record = result.verdict.delivered(result.extraction.record)   # doubtful optional values left out
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
        d: dict[str, Any] = {"source": self.source, "sha256": self.sha256, "status": self.status, "format": self.format,
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


_ROW_FIELDS = frozenset(f.name for f in fields(Row))


def row_from_json(d: dict) -> Row:
    """A results.jsonl row back as a `Row` (unknown keys ignored); ValueError when it is not one."""
    if not isinstance(d, dict) or not isinstance(d.get("source"), str) or not isinstance(d.get("status"), str):
        raise ValueError("not a results row (needs 'source' and 'status')")
    return Row(**{k: v for k, v in d.items() if k in _ROW_FIELDS})


def rows_from_text(text: str, path: Path | str) -> list[Row]:
    """The rows of results.jsonl text (blank lines skipped); ConfigError naming `path` and the line
    when a line is not a results row."""
    rows: list[Row] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(row_from_json(json.loads(line)))
        except ValueError as exc:
            raise ConfigError(f"{path} line {n} is not a results row: {exc}", path=str(path), line=n) from exc
    return rows


def _clean(message: str, limit: int = 500) -> str:
    """Messages end up in terminals and logs: no control characters, bounded length."""
    m = "".join(ch if ch.isprintable() else " " for ch in str(message))
    return m if len(m) <= limit else m[:limit] + "…"


class ResultsWriteError(StorageError):
    """A row could not be written (disk full, file too large, I/O error). The file is left as it
    was before the row: whole lines only."""
    kind = "storage"


class ResultsWriter:
    """Appends rows to a results file as they finish, each one fsynced before `write` returns, so
    nothing accepted is lost. A write that fails (ENOSPC, EFBIG, EIO) is undone: the file is cut
    back to the end of the previous line and ResultsWriteError is raised, never a half line.

    `append=True` continues an existing file (flows/output.py resumes a killed run that way)."""

    def __init__(self, path: Path, *, append: bool = False) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
        self._fd: int | None = os.open(path, flags, 0o644)
        self._size = os.fstat(self._fd).st_size
        self.written = 0

    def write(self, row: Row) -> None:
        if self._fd is None:
            raise ResultsWriteError(f"{self.path} is closed", path=str(self.path))
        data = (json.dumps(row.to_json(), ensure_ascii=False, default=str) + "\n").encode("utf-8")
        start = self._size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]
            os.fsync(self._fd)
        except OSError as exc:
            self._cut_back(start)
            raise ResultsWriteError(f"could not write the row of {row.source} to {self.path}: "
                                    f"{exc.strerror or exc}", path=str(self.path), source=row.source,
                                    errno=exc.errno) from exc
        self._size = start + len(data)
        self.written += 1

    def _cut_back(self, size: int) -> None:
        """Drop whatever part of a failed row reached the file (truncating needs no free space)."""
        assert self._fd is not None                   # called by write, on the open file
        try:
            os.ftruncate(self._fd, size)
            os.lseek(self._fd, size, os.SEEK_SET)
            os.fsync(self._fd)
        except OSError:
            pass

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


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
