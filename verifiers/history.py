"""What the stale-value gate compares a record with: values already accepted, and the previous
document of the same format.

    History.accepted_with(field, value_key, scope_key) -> sha256 of accepted documents holding it
    History.accepted_others(field, value_key, near_key) -> (sha256, value key) of accepted documents
                                                           whose near key (the scope plus the
                                                           `unique.near` fields) is this one's but
                                                           whose value differs: a possible duplicate
    History.previous()                                  -> the format's previous accepted document
    History.reviewed()                                  -> the format's last document a person decided
                                                           (reviewed / corrected): what the `confirm`
                                                           policy trusts (verifiers.confidence.decision)

`DbHistory` reads the database (infra.store: table `accepted_values`, migration 0002, and the
`documents` table); `MemoryHistory` holds the same in memory (unit tests, one-off checks).
Keys are normalised (`value_key`): case, accents and white space folded, so "RE-2024 001" and
"re-2024001" are the same invoice number.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol

from docassay.verifiers.tolerance import fold_text

__all__ = ["History", "PreviousDocument", "MemoryHistory", "DbHistory", "value_key", "scope_key", "near_key", "NEAR"]

NEAR = "~near"      # the field suffix under which a unique value is remembered by its near key


def value_key(v: object) -> str:
    """A value as the stale gate compares it: folded, without white space; numbers canonical."""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (int, float)):
        return repr(round(float(v), 6))
    return fold_text(v).replace(" ", "")


def scope_key(record: Mapping[str, Any], per: tuple[str, ...]) -> str | None:
    """The scope a unique value lives in ("" for a global one); None when a scope field is missing."""
    parts = []
    for p in per:
        v = record.get(p)
        if v is None or v == "":
            return None
        parts.append(value_key(v))
    return "|".join(parts)


def near_key(record: Mapping[str, Any], per: tuple[str, ...], near: tuple[str, ...]) -> str | None:
    """A unique value's scope together with its `near` fields (x-docassay `unique.near`: e.g. the
    seller, issue date and gross total of an invoice number); None without `near` or when one is missing."""
    return scope_key(record, (*per, *near)) if near else None


@dataclass(frozen=True)
class PreviousDocument:
    sha256: str
    record: Mapping[str, Any]


class History(Protocol):
    def accepted_with(self, field: str, value_key: str, scope_key: str) -> list[str]: ...
    def accepted_others(self, field: str, value_key: str, near_key: str) -> list[tuple[str, str]]: ...
    def previous(self) -> PreviousDocument | None: ...
    def reviewed(self) -> PreviousDocument | None: ...


@dataclass
class MemoryHistory:
    """Accepted values in memory. `accept(sha256, record, unique)` remembers a document;
    `accept(..., person=True)` one a person decided (reviewed / corrected)."""
    exclude_sha256: str | None = None
    values: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)
    documents: list[PreviousDocument] = field(default_factory=list)
    by_person: list[PreviousDocument] = field(default_factory=list)

    def accept(self, sha256: str, record: Mapping[str, Any], unique: Mapping[str, tuple[str, ...]],
               person: bool = False, near: Mapping[str, tuple[str, ...]] | None = None) -> None:
        for name, per in unique.items():
            sk = scope_key(record, per)
            if name in record and sk is not None:
                self.values.setdefault((name, value_key(record[name]), sk), []).append(sha256)
            nk = near_key(record, per, (near or {}).get(name, ()))
            if name in record and nk is not None:
                self.values.setdefault((name + NEAR, value_key(record[name]), nk), []).append(sha256)
        self.documents.append(PreviousDocument(sha256, dict(record)))
        if person:
            self.by_person.append(PreviousDocument(sha256, dict(record)))

    def accepted_with(self, field: str, value_key: str, scope_key: str) -> list[str]:
        return [s for s in self.values.get((field, value_key, scope_key), []) if s != self.exclude_sha256]

    def accepted_others(self, field: str, value_key: str, near_key: str) -> list[tuple[str, str]]:
        return [(s, vk) for (f, vk, nk), shas in self.values.items() if f == field + NEAR and nk == near_key
                and vk != value_key for s in shas if s != self.exclude_sha256]

    def previous(self) -> PreviousDocument | None:
        for d in reversed(self.documents):
            if d.sha256 != self.exclude_sha256:
                return d
        return None

    def reviewed(self) -> PreviousDocument | None:
        for d in reversed(self.by_person):
            if d.sha256 != self.exclude_sha256:
                return d
        return None


class DbHistory:
    """History from the database, for one document (`sha256`, excluded) of one format.

    A document seen again (a re-run) is judged against the history as it stood when it was first
    accepted, so that processing the same batch twice gives the same verdicts."""

    def __init__(self, conn: Any, *, schema_key: str, format_id: str | None, sha256: str | None) -> None:
        from docassay.infra import store
        self.conn = conn
        self.schema_key = schema_key
        self.format_id = format_id
        self.sha256 = sha256
        self.before = store.first_accepted_at(conn, sha256) if sha256 else None
        self._previous: PreviousDocument | None | bool = False
        self._reviewed: PreviousDocument | None | bool = False

    def accepted_with(self, field: str, value_key: str, scope_key: str) -> list[str]:
        from docassay.infra import store
        return store.find_accepted_values(self.conn, self.schema_key, field, value_key, scope_key,
                                          exclude_sha256=self.sha256, before=self.before)

    def accepted_others(self, field: str, value_key: str, near_key: str) -> list[tuple[str, str]]:
        from docassay.infra import store
        return store.find_accepted_others(self.conn, self.schema_key, field + NEAR, value_key, near_key,
                                          exclude_sha256=self.sha256, before=self.before)

    def previous(self) -> PreviousDocument | None:
        if self._previous is False:
            self._previous = self._document(lambda store: store.previous_accepted)
        return self._previous  # type: ignore[return-value]

    def reviewed(self) -> PreviousDocument | None:
        """One query per document, on first use (the `confirm` policy, only when a field is empty
        with its value printed)."""
        if self._reviewed is False:
            self._reviewed = self._document(lambda store: store.last_reviewed)
        return self._reviewed  # type: ignore[return-value]

    def _document(self, query: Callable[[Any], Callable[..., dict | None]]) -> PreviousDocument | None:
        """The format's document `query(store)` finds for this one (other than it, before it), or None."""
        if not self.format_id:
            return None
        from docassay.infra import store
        row = query(store)(self.conn, self.format_id, exclude_sha256=self.sha256 or "", before=self.before)
        return PreviousDocument(row["sha256"], row["record"]) if row and isinstance(row["record"], Mapping) else None
