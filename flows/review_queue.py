"""The review queue: documents waiting for a person, in the order a person should take them.

    build_queue(conn, QueueFilter(...)) -> list[QueueItem]

`needs_review` (and `failed`) documents first, oldest first; then accepted documents with
doubtful fields (per-field confidence when the rows carry it, else warnings naming a field), the
most doubtful first. Filters: format, batch (run id), reason ("gate/rule", or a gate alone).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from docassay.flows.review_view import doubtful, reasons
from docassay.infra import review_store

__all__ = ["QueueFilter", "QueueItem", "build_queue", "WAITING", "MAY_BE_DOUBTFUL", "QUEUE_LIMIT"]

WAITING = ("needs_review", "failed")
MAY_BE_DOUBTFUL = ("passed", "repaired")
QUEUE_LIMIT = 500


@dataclass(frozen=True)
class QueueFilter:
    format_id: str | None = None
    run_id: str | None = None
    reason: str | None = None
    limit: int = QUEUE_LIMIT


@dataclass
class QueueItem:
    sha256: str
    source: str
    status: str
    format_id: str | None
    format_version: int | None
    reasons: list[str] = field(default_factory=list)
    doubtful: list[str] = field(default_factory=list)
    score: float | None = None
    replayable: bool = False

    @property
    def name(self) -> str:
        return str(self.source).replace("\\", "/").rsplit("/", 1)[-1]


def _matches(reason: str, item: QueueItem) -> bool:
    wanted = reason.strip()
    return any(r == wanted or r.split("/")[0] == wanted for r in item.reasons) or \
        (wanted == "doubtful" and bool(item.doubtful))


def build_queue(conn: Any, flt: QueueFilter = QueueFilter()) -> list[QueueItem]:
    items: list[QueueItem] = []
    for status_group in (WAITING, MAY_BE_DOUBTFUL):
        rows = review_store.queue(conn, statuses=status_group, format_id=flt.format_id, run_id=flt.run_id,
                                  limit=flt.limit)
        group = []
        for r in rows:
            it = QueueItem(r["sha256"], r["source"], r["status"], r["format_id"], r["format_version"],
                           reasons(r) + [f"warning:{x}" for x in reasons(r, "warning")], doubtful(r),
                           (r.get("verification") or {}).get("score"), bool(r.get("object_key")))
            if status_group is MAY_BE_DOUBTFUL and not it.doubtful:
                continue
            if flt.reason and not _matches(flt.reason, it):
                continue
            group.append(it)
        if status_group is MAY_BE_DOUBTFUL:
            group.sort(key=lambda i: -len(i.doubtful))
        items.extend(group)
    return items[:flt.limit]
