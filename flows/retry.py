"""`docassay extract --retry-from RESULTS`: rerun only the documents that did not end well.

A row of RESULTS whose status is in RETRY_STATUSES is processed again; every other row is kept as
it is, so the new results.jsonl again describes the whole batch.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path

from flows.results import Row
from infra.errors import ConfigError

__all__ = ["RETRY_STATUSES", "RetryPlan", "plan_retry", "row_from_json", "read_rows"]

RETRY_STATUSES = ("quota_exceeded", "error", "needs_review", "failed")
_ROW_FIELDS = {f.name for f in fields(Row)}


@dataclass
class RetryPlan:
    sources: list[str]            # to process again, in RESULTS order
    kept: list[Row]               # rows that ended well, copied unchanged


def row_from_json(d: dict) -> Row:
    """A results.jsonl row back as a `Row` (unknown keys ignored)."""
    if not isinstance(d, dict) or not isinstance(d.get("source"), str) or not isinstance(d.get("status"), str):
        raise ValueError("not a results row (needs 'source' and 'status')")
    return Row(**{k: v for k, v in d.items() if k in _ROW_FIELDS})


def read_rows(path: str | Path) -> list[Row]:
    """Every row of a results.jsonl file; ConfigError (usage) when it is missing or malformed."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read --retry-from {p}: {exc.strerror or exc}", path=str(p)) from exc
    rows: list[Row] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(row_from_json(json.loads(line)))
        except ValueError as exc:
            raise ConfigError(f"{p} line {n} is not a results row: {exc}", path=str(p), line=n) from exc
    return rows


def plan_retry(path: str | Path) -> RetryPlan:
    """Which rows of `path` to process again (status in RETRY_STATUSES) and which to keep."""
    plan = RetryPlan([], [])
    for row in read_rows(path):
        if row.status in RETRY_STATUSES:
            if row.source not in plan.sources:
                plan.sources.append(row.source)
        else:
            plan.kept.append(row)
    return plan
