"""`docassay extract --retry-from RESULTS`: rerun only the documents that did not end well.

A row of RESULTS whose status is in RETRY_STATUSES is processed again; every other row is kept as
it is, so the new results.jsonl again describes the whole batch. A run killed before it committed
(flows/output.py) left its rows and its input list beside RESULTS: its rows are newer than those
of RESULTS and win, and every input of it that never got a row is processed too, so a retry after
a crash loses no document.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from docassay.flows.output import OutputBusy, is_being_written, leftover_of
from docassay.flows.results import Row, row_from_json, rows_from_text
from docassay.infra.errors import ConfigError

__all__ = ["RETRY_STATUSES", "RetryPlan", "plan_retry", "row_from_json", "read_rows"]

RETRY_STATUSES = ("quota_exceeded", "error", "needs_review", "failed")


@dataclass
class RetryPlan:
    sources: list[str]            # to process again (ended badly, or never got a row), in batch order
    kept: list[Row]               # rows that ended well, copied unchanged
    missing: int = 0              # inputs of a killed run that had no row


def read_rows(path: str | Path) -> list[Row]:
    """Every row of a results.jsonl file; ConfigError (usage) when it is missing or malformed."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read --retry-from {p}: {exc.strerror or exc}", path=str(p)) from exc
    return rows_from_text(text, p)


def plan_retry(path: str | Path, *, folder_held: bool = False) -> RetryPlan:
    """Which documents of `path` to process again and which rows to keep. `folder_held`: the caller
    holds the lock of `path`'s folder (an in-place retry), so its leftover is not a live run's."""
    p = Path(path)
    if not folder_held and is_being_written(p):
        raise OutputBusy(f"a docassay run is still writing {p}; retry once it has finished", path=str(p))
    left = leftover_of(p)
    rows = read_rows(p) if p.exists() or left is None else []
    merged = {r.source: r for r in rows}
    order = [r.source for r in rows]
    if left is not None:
        merged.update(left.by_source)
        order = (left.sources or []) + order + [r.source for r in left.rows]
    plan = RetryPlan([], [])
    for source in dict.fromkeys(order):
        row = merged.get(source)
        if row is None:
            plan.missing += 1
            plan.sources.append(source)
        elif row.status in RETRY_STATUSES:
            plan.sources.append(source)
        else:
            plan.kept.append(row)
    return plan
