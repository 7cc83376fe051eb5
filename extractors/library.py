"""The format library: the vector index of fingerprints plus the formats and instruction versions
stored in the database.

    match(vector, schema_key)          -> nearest known format for this target schema, or None
    learn(vector, instructions, ...)   -> a new format with instructions version 1
    add_exemplar(format_id, vector)    -> remember another fingerprint of a known format

Formats are kept per target schema (`schema_key`): the same layout read into two different
schemas needs two sets of instructions.
"""
from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

import numpy as np
import psycopg

from docassay.extractors.format_index import FormatIndex, FormatIndexBase
from docassay.extractors.instructions.language import Instructions
from docassay.infra import store
from docassay.infra.config import Settings

SCHEME = "s3vectors://"

__all__ = ["FormatMatch", "FormatLibrary", "LearnHold", "LearnLock", "schema_key"]

MAX_EXEMPLARS = 8


def schema_key(schema: Mapping[str, object]) -> str:
    """A short stable id of a target schema's content."""
    return hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class FormatMatch:
    format_id: str
    similarity: float
    status: str
    version: int
    instructions: Instructions


class LearnLock:
    """One new format learned at a time: across this process's threads (a lock) and, given
    `connect`, across every process on the same database (the claim row of migration 0018, held
    by a connection of its own; see infra.store.claim_learning). Whoever holds it matches again
    before learning, so a layout another process has just learned is matched, not learned twice."""

    def __init__(self, connect: Callable[[], psycopg.Connection] | None = None) -> None:
        self._thread = threading.Lock()
        self._connect = connect
        self._conn: psycopg.Connection | None = None
        self._holder = f"{socket.gethostname()}:{os.getpid()}"

    def __enter__(self) -> "LearnLock":
        self._thread.acquire()
        if self._connect is None:
            return self
        try:
            if self._conn is None or self._conn.closed:
                self._conn = self._connect()
            store.claim_learning(self._conn, self._holder)
        except BaseException:
            self._drop()
            self._thread.release()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self._conn is not None:
                store.release_learning(self._conn)
        except psycopg.Error:
            self._drop()                         # the claim went with the connection
        finally:
            self._thread.release()

    def _drop(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except psycopg.Error:
                pass
        self._conn = None

    def close(self) -> None:
        with self._thread:
            self._drop()


class LearnHold:
    """One document's hold on a `LearnLock`, from its learning until its row is stored. A format's
    first document joins the format's history (and golden set) only when that document's row is
    stored; a worker that matched the fresh format before then verified against a history without
    it and passed what it would not pass a moment later. So a format learned under a hold joins the
    index only at `release` (after the row is stored), and the lock stays held until then: other
    workers neither match it early nor learn the layout again. `release` is idempotent; a document
    that matched a known format after all releases at once."""

    def __init__(self, lock: LearnLock) -> None:
        self._lock = lock
        self.held = False
        self._publish: list[Callable[[], None]] = []

    def acquire(self) -> None:
        if not self.held:
            self._lock.__enter__()
            self.held = True

    def on_release(self, publish: Callable[[], None]) -> None:
        """Run `publish` at release, before the lock is let go."""
        self._publish.append(publish)

    def release(self) -> None:
        if not self.held:
            return
        self.held = False
        try:
            while self._publish:
                self._publish.pop(0)()
        finally:
            self._publish.clear()
            self._lock.__exit__(None, None, None)


class FormatLibrary:
    def __init__(self, index: FormatIndexBase, *, connect: Callable[[], psycopg.Connection] | None = None) -> None:
        self.index = index
        self.learn_lock = LearnLock(connect)    # one new format learned at a time, per database with `connect`

    @classmethod
    def open(cls, home: Path, index: str | None = None) -> "FormatLibrary":
        """The library whose index is `index`: `s3vectors://bucket/index` (Amazon S3 Vectors), a
        folder (faiss), or None for faiss under `home/index`."""
        if index and index.startswith(SCHEME):
            from docassay.extractors.format_index_s3vectors import S3VectorsFormatIndex  # boto3 only when asked
            return cls(S3VectorsFormatIndex.from_url(index))
        return cls(FormatIndex(Path(index) if index else Path(home) / "index"))

    @classmethod
    def from_settings(cls, settings: Settings) -> "FormatLibrary":
        """The library of `settings`, its learning claimed in the configured database."""
        lib = cls.open(settings.home, settings.index)
        from docassay.infra.db import Database
        lib.learn_lock = LearnLock(lambda: Database.from_settings(settings).connect())
        return lib

    def nearest(self, vector: np.ndarray, key: str) -> tuple[str, float] | None:
        hits = self.index.search(vector, k=1, filter={"schema": key})
        return (hits[0].format_id, float(hits[0].similarity)) if hits else None

    def match(self, conn: psycopg.Connection, vector: np.ndarray, key: str, threshold: float,
              *, allow_pending: bool = True) -> tuple[FormatMatch | None, float]:
        """The known format above `threshold` with a usable version, and the best similarity seen."""
        hits = self.index.search(vector, k=3, filter={"schema": key})
        best = float(hits[0].similarity) if hits else 0.0
        for h in hits:
            if h.similarity < threshold:
                break
            row = store.get_format(conn, h.format_id)
            if row is None or row.status == "archived" or (row.status == "pending_review" and not allow_pending):
                continue
            ver = store.active_version(conn, h.format_id)
            if ver is None:
                continue
            return FormatMatch(h.format_id, float(h.similarity), row.status, ver.version,
                               Instructions.from_json(ver.instructions)), best
        return None, best

    def learn(self, conn: psycopg.Connection, vector: np.ndarray, key: str, instructions: Instructions, *,
              produced_by: str, status: str = "active", meta: Mapping[str, object] | None = None,
              hold: LearnHold | None = None) -> tuple[str, int]:
        """Store a new format and its first version; it joins the index now, or, under a held
        `hold`, when the hold is released (after the learning document's row is stored)."""
        fid = store.new_format_id()
        store.create_format(conn, fid, fingerprint=vector.astype("<f4").tobytes(),
                            meta={"schema": key, **(meta or {})}, status=status)
        version = store.add_version(conn, fid, instructions.to_json(), produced_by=produced_by)
        if hold is not None and hold.held:
            hold.on_release(lambda: self.index.add(fid, vector, {"schema": key}))
        else:
            self.index.add(fid, vector, {"schema": key})
        return fid, version

    def add_exemplar(self, format_id: str, vector: np.ndarray, key: str) -> None:
        """Keep a few fingerprints per format so its variants (1 page, 3 pages) all match."""
        if len(self.index.exemplars(format_id)) < MAX_EXEMPLARS:
            self.index.add(format_id, vector, {"schema": key})
