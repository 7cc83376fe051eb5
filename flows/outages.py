"""The database going away in the middle of a batch, and coming back.

A document whose processing lost its connection (the server was killed or restarted, the socket
went away) is not a bad document: it is processed again once the database answers, at most
`OutagePolicy.document_attempts` times. `infra.db.Database.connect` reconnects with a bounded
backoff and restarts the embedded server on the way. A document that still cannot be done ends as
an `error` row of kind `database` that says so; the batch goes on with the next one. Once the
database stayed away for a whole wait, later documents try once and fail fast instead of each
waiting again (`Outage.down`), until a connection succeeds.

A local write that fails under a document (the disk holding --home full: the format index, the
kept document bytes) is not retried: the document ends as an `error` row of kind `storage` with
the operating system's reason, and the batch goes on.

`run_bookkeeping` does the same for the batch's own writes (runs, run_documents): they are retried,
and when the database is gone for good the batch still commits its results.jsonl, with a warning.
"""
from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable, TypeVar

import psycopg
import psycopg.errors

from docassay.extractors.document import Document
from docassay.flows.context import Job, RunContext
from docassay.flows.pipeline import process_document
from docassay.flows.results import Row
from docassay.infra.db.errors import MigrationError
from docassay.infra.errors import DatabaseError

__all__ = ["OutagePolicy", "DEFAULT_OUTAGE", "Outage", "process_with_reconnect", "run_bookkeeping",
           "is_outage"]

T = TypeVar("T")
OUTAGE_KINDS = ("database", "embedded_db")


@dataclass(frozen=True)
class OutagePolicy:
    document_attempts: int = 3         # tries of one document across a database outage
    wait_s: float = 30.0               # how long a document waits for the database to answer again
    poll_s: float = 0.5                # between two tries of a connection while waiting


DEFAULT_OUTAGE = OutagePolicy()


class Outage:
    """A batch's view of its database: whether it is known to be down right now (thread-safe)."""

    def __init__(self, policy: OutagePolicy = DEFAULT_OUTAGE) -> None:
        self.policy = policy
        self.down = False
        self.seen = 0                   # documents that met an outage (for the summary)
        self._lock = threading.Lock()

    def met(self) -> None:
        with self._lock:
            self.seen += 1

    def wait(self, ctx: RunContext) -> bool:
        """Wait (bounded) until a fresh connection answers; False when it did not."""
        deadline = time.monotonic() + (self.policy.poll_s if self.down else self.policy.wait_s)
        while True:
            try:
                ctx.conn.execute("SELECT 1")
                with self._lock:
                    self.down = False
                return True
            except (psycopg.Error, DatabaseError):
                if time.monotonic() >= deadline:
                    with self._lock:
                        self.down = True
                    return False
                time.sleep(self.policy.poll_s)


def is_outage(exc: BaseException) -> bool:
    """A lost or refused connection (not a bad statement, not a failed migration)."""
    if isinstance(exc, (psycopg.errors.QueryCanceled, psycopg.errors.DiskFull)):
        return False                                        # the server answered: waiting will not help
    if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)):
        return True
    return isinstance(exc, DatabaseError) and not isinstance(exc, MigrationError)


def _outage_row(row: Row) -> bool:
    return row.status == "error" and row.error is not None and row.error.get("kind") in OUTAGE_KINDS


def process_with_reconnect(source: str, job: Job, ctx: RunContext, outage: Outage, *,
                           document: Document | None = None) -> Row:
    """`process_document`, processed again after a database outage (see the module docstring)."""
    last = ""
    attempts = outage.policy.document_attempts
    for attempt in range(1, attempts + 1):
        try:
            row = process_document(source, job, ctx, document=document)
            if not _outage_row(row):
                return row
            last = row.error["message"] if row.error else ""
        except OSError as exc:              # a local write under --home failed (disk full, I/O error)
            row = Row(source=source)
            row.fail("error", "storage", f"could not write under the docassay home: {exc.strerror or exc}"
                                         + (f" ({exc.filename})" if exc.filename else ""))
            return row
        except Exception as exc:            # only outages are caught; anything else propagates
            if not is_outage(exc):
                raise
            last = f"{type(exc).__name__}: {exc}"
        if attempt == 1:
            outage.met()
        if attempt < attempts and not outage.wait(ctx):
            break
    row = Row(source=source)
    row.fail("error", "database", f"the database was unavailable while this document was processed "
                                  f"({last.strip()}); rerun to process it")
    return row


def run_bookkeeping(what: str, fn: Callable[[psycopg.Connection], T], ctx: RunContext, outage: Outage) -> T | None:
    """The batch's own database write `fn(conn)`, tried again after an outage; None (and a warning on
    stderr) when the database stayed away: results.jsonl does not depend on it."""
    for attempt in range(2):
        try:
            return fn(ctx.conn)
        except Exception as exc:
            if not is_outage(exc):
                raise
            if attempt == 0 and outage.wait(ctx):
                continue
            print(f"docassay: warning: could not record {what} in the database ({exc}); "
                  "results.jsonl is complete", file=sys.stderr)
            return None
    return None
