"""Inbox runs: take what arrived in a folder or an S3 prefix, process each document once, leave
the results where other systems read them. A scheduled deployment (flows/deploy.py) runs
`inbox_flow` on a cron; `run_inbox` is the same run as a plain function.

One run, step by step:

    1. lease      take the inbox in the database (InboxLedger.acquire); another run holding it
                  -> this run ends at once as `skipped` (a heartbeat renews the lease while we run)
    2. recover    write the report of an earlier run that died after it claimed its rows
    3. list       documents in the inbox (hidden keys, `.processed/`, sidecars and files still
                  being written, younger than `settle_s`, are left alone)
    4. per document, as one task each (threads, or Dask worker processes):
         read + hash -> claim by content hash -> process_document -> write the result object
         `documents/<sha256>.json` under the destination -> mark the claim done (with its row)
         -> move the file to `.processed/<run id>/...` (or leave it, `after="keep"`)
    5. report     give every finished, unreported document of the inbox to this run and write
                  `runs/<run id>/results.jsonl` under the destination; records, verdicts and
                  formats are in PostgreSQL (the `documents` table) as for any batch

Crash safety (a run killed at any point, e.g. SIGKILL):
    * killed before a claim is done: the claim stays `claimed` by the dead run; the next lease
      holder takes it over and processes the document (`attempts` + 1; after `max_attempts`
      runs the document is given up as an `error` row, kind `crashed`, so one poisonous file
      cannot stop the inbox);
    * killed after done, before the move: the next run sees the content hash is done and only
      moves the file; it is not processed again;
    * killed before the report: the next run's report lists those documents; killed while
      writing it: the next run writes it again (a report is rebuilt from the database, so
      writing it twice gives the same object).
So every document that arrives ends up in exactly one run's `results.jsonl`, processed once.
Files with the same content are one document (the copy is moved as already done).
Nothing is local-only: the ledger and the records are in the database, results objects go to
the destination (an S3 prefix for an S3 inbox).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import psycopg
from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import wait

from docassay.extractors.errors import ParseError
from docassay.extractors.parsers.local_file import open_regular
from docassay.flows.batch import is_document_key
from docassay.flows.job_options import JobOptions
from docassay.flows.pipeline import process_document
from docassay.flows.results import Row
from docassay.flows.workers import close as close_context
from docassay.flows.workers import job_context
from docassay.infra.errors import ConfigError, DocassayError
from docassay.infra.inbox_ledger import InboxLedger
from docassay.infra.objects import ObjectStore

__all__ = ["InboxSpec", "Entry", "EntryOutcome", "InboxSummary", "Inbox", "FolderInbox", "S3Inbox",
           "run_inbox", "inbox_flow", "handle_entry", "ARCHIVE", "InboxRunFailed"]

ARCHIVE = ".processed"          # processed documents move under <inbox>/.processed/<run id>/
AFTER = ("move", "keep")
_log = logging.getLogger(__name__)


class InboxRunFailed(DocassayError):
    """Some documents could not be handled for a reason outside the document (database, storage);
    the run's report was still written and those documents stay in the inbox for the next run."""
    kind = "inbox_failed"


# --------------------------------------------------------------------------------- configuration

_INBOX_FIELDS = ("after", "lease_s", "settle_s", "max_attempts")


@dataclass(frozen=True)
class InboxSpec:
    """What an inbox run does: where from, where to, the job options (flows/job_options.py) and
    how the inbox is worked. `parameters()` is the deployment's parameters (plain JSON values)."""
    inbox: str                          # a folder, or s3://bucket/prefix
    dest: str                           # results: a folder, or s3://bucket/prefix
    job: JobOptions
    after: str = "move"                 # move | keep (the ledger alone marks it done)
    lease_s: float = 120.0              # the inbox lease; renewed every lease_s / 4
    settle_s: float = 2.0               # a local file younger than this may still be being written
    max_attempts: int = 3               # runs that may die on one document before it is given up

    def __post_init__(self) -> None:
        if not isinstance(self.job, JobOptions):
            raise ConfigError(f"an inbox's job must be JobOptions, not {type(self.job).__name__}", setting="job")
        if self.after not in AFTER:
            raise ConfigError(f"after must be one of {', '.join(AFTER)}, not {self.after!r}", setting="after")
        if self.lease_s < 1 or self.max_attempts < 1 or self.job.concurrency < 1:
            raise ConfigError("lease_s, max_attempts and concurrency must be at least 1", setting="inbox")

    @classmethod
    def of(cls, inbox: str, dest: str, **options: Any) -> "InboxSpec":
        """`options`: job options (JobOptions' names) and the inbox's own (after, lease_s, settle_s, max_attempts)."""
        unknown = sorted(set(options) - set(JobOptions.names()) - set(_INBOX_FIELDS))
        if unknown:
            raise ConfigError(f"unknown inbox option(s): {', '.join(unknown)}", setting="inbox")
        own = {k: options.pop(k) for k in _INBOX_FIELDS if k in options}
        return cls(inbox=inbox, dest=dest, job=JobOptions(**options), **own)

    @property
    def concurrency(self) -> int:
        return self.job.concurrency

    def job_options(self) -> JobOptions:
        return self.job

    def parameters(self) -> dict[str, Any]:
        """inbox_flow's parameters: the job options as one plain-JSON `options` object."""
        return {"inbox": self.inbox, "dest": self.dest, "options": self.job.to_json(),
                **{k: getattr(self, k) for k in _INBOX_FIELDS}}


# -------------------------------------------------------------------------------------- sources

@dataclass(frozen=True)
class Entry:
    key: str                            # relative to the inbox, `/`-separated
    url: str                            # the document's source: a path or s3://bucket/key
    size: int
    mtime: float


class Inbox(ABC):
    url: str

    @staticmethod
    def open(url: str) -> "Inbox":
        return S3Inbox(url) if str(url).startswith("s3://") else FolderInbox(Path(url))

    @abstractmethod
    def _listing(self) -> list[Entry]: ...

    def entries(self, settle_s: float = 0.0, now: float | None = None) -> list[Entry]:
        """Documents waiting in the inbox, in key order."""
        listing = self._listing()
        keys = {e.key for e in listing}
        now = time.time() if now is None else now
        return [e for e in listing if is_document_key(e.key, keys) and now - e.mtime >= settle_s]

    @abstractmethod
    def read(self, entry: Entry, max_bytes: int, *, follow_links: bool = False) -> tuple[str, bytes | None]:
        """(sha256 of the content, the content), content None when it is over `max_bytes` (the
        hash is then computed while streaming) or is not a regular file (a link without
        `follow_links`, a named pipe, ...: the hash then names the entry, and reading it again
        gives the document its `not_a_file` row). KeyError when the document has gone."""

    @abstractmethod
    def archive(self, entry: Entry, run_id: str) -> str:
        """Move the document out of the inbox (under ARCHIVE); returns where it went."""


class FolderInbox(Inbox):
    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self.url = str(self.root) + "/"

    def _listing(self) -> list[Entry]:
        if not self.root.is_dir():
            raise ConfigError(f"inbox folder not found: {self.root}", path=str(self.root))
        out: list[Entry] = []
        for dirpath, dirs, files in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in files:
                path = Path(dirpath) / name
                try:
                    st = path.lstat()           # a link's own time and size: it is never read unasked
                except FileNotFoundError:
                    continue
                out.append(Entry(path.relative_to(self.root).as_posix(), str(path), st.st_size, st.st_mtime))
        return sorted(out, key=lambda e: e.key)

    def read(self, entry: Entry, max_bytes: int, *, follow_links: bool = False) -> tuple[str, bytes | None]:
        try:
            fd = open_regular(entry.url, follow_links=follow_links)
        except ParseError as exc:
            if not os.path.lexists(entry.url):
                raise KeyError(entry.key) from exc
            marker = f"docassay:unreadable:{self.url}{entry.key}:{entry.mtime}".encode()
            return hashlib.sha256(marker).hexdigest(), None
        try:
            with os.fdopen(fd, "rb") as fh:
                data = fh.read(max_bytes + 1)
                if len(data) <= max_bytes:
                    return hashlib.sha256(data).hexdigest(), data
                h = hashlib.sha256(data)
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
                return h.hexdigest(), None
        except FileNotFoundError as exc:
            raise KeyError(entry.key) from exc

    def archive(self, entry: Entry, run_id: str) -> str:
        target = self.root / ARCHIVE / run_id / entry.key
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(entry.url, target)
        return str(target)


class S3Inbox(Inbox):
    def __init__(self, url: str) -> None:
        from docassay.infra.s3 import S3ObjectStore
        self.store = S3ObjectStore.from_url(url)
        self.url = self.store.url

    def _listing(self) -> list[Entry]:
        return [Entry(o.key, self.store.url_of(o.key), o.size, o.last_modified)
                for o in self.store.objects() if _valid_key(o.key)]

    def read(self, entry: Entry, max_bytes: int, *, follow_links: bool = False) -> tuple[str, bytes | None]:
        if entry.size > max_bytes:
            h = hashlib.sha256()
            body = self.store.client.get_object(Bucket=self.store.bucket, Key=self.store.prefix + entry.key)["Body"]
            for chunk in body.iter_chunks(1 << 20):
                h.update(chunk)
            return h.hexdigest(), None
        data = self.store.get(entry.key, max_bytes=max_bytes)
        return hashlib.sha256(data).hexdigest(), data

    def archive(self, entry: Entry, run_id: str) -> str:
        new_key = f"{ARCHIVE}/{run_id}/{entry.key}"
        self.store.move(entry.key, new_key)
        return self.store.url_of(new_key)


def _valid_key(key: str) -> bool:
    from docassay.infra.objects import check_key
    try:
        check_key(key)
        return True
    except ConfigError:
        _log.warning("inbox object %r has a key docassay does not read (empty part, '..' or control characters)", key)
        return False


# ------------------------------------------------------------------------------ one document

@dataclass(frozen=True)
class EntryOutcome:
    key: str
    outcome: str            # processed | already_done | duplicate | gone | no_lease | lost_claim
    sha256: str | None = None
    status: str | None = None
    archived_to: str | None = None
    worker: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")   # who handled it


@dataclass
class _Resources:
    """Per process: the job and its context (flows.workers), the inbox, the destination."""
    spec: InboxSpec
    inbox: Inbox
    dest: ObjectStore

    @property
    def job(self):
        return job_context(self.spec.job_options())[0]

    @property
    def ctx(self):
        return job_context(self.spec.job_options())[1]

    def ledger(self) -> InboxLedger:
        return InboxLedger(self.ctx.conn, self.inbox.url)        # this thread's connection


_resources: dict[InboxSpec, _Resources] = {}
_resources_lock = threading.Lock()


def resources(spec: InboxSpec) -> _Resources:
    with _resources_lock:
        r = _resources.get(spec)
        if r is None:
            r = _resources[spec] = _Resources(spec, Inbox.open(spec.inbox), ObjectStore.open(spec.dest))
        return r


def result_key(sha256: str) -> str:
    return f"documents/{sha256}.json"


def report_key(run_id: str) -> str:
    return f"runs/{run_id}/results.jsonl"


def handle_entry(entry: Entry, res: _Resources, run_id: str) -> EntryOutcome:
    """Claim, process, store and archive one inbox document (module docstring, step 4).

    Never raises for a bad document (it becomes an `error` row); raises for infrastructure
    failures (database, storage), leaving the document claimed for the next run.
    """
    spec, job, ctx = res.spec, res.job, res.ctx
    ledger = res.ledger()
    try:
        sha, data = res.inbox.read(entry, job.settings.limits.max_bytes, follow_links=job.settings.follow_links)
    except KeyError:
        return EntryOutcome(entry.key, "gone")                   # moved or deleted since the listing
    claim = ledger.claim(sha, entry.url, run_id)
    if claim.state == "no_lease":
        return EntryOutcome(entry.key, "no_lease", sha)
    if claim.state == "duplicate":
        return EntryOutcome(entry.key, "duplicate", sha)         # a later run moves it as done
    if claim.state == "done":
        return EntryOutcome(entry.key, "already_done", sha, archived_to=_archive(res, ledger, entry, sha, run_id))
    if claim.attempts > spec.max_attempts:
        row = Row(source=entry.url, sha256=sha)
        row.fail("error", "crashed", f"{claim.attempts - 1} runs stopped while processing this document; "
                                     f"given up after max_attempts={spec.max_attempts}")
    else:
        row = process_document(entry.url, job, ctx, data=data)   # data None (too large): it reads and refuses
        row.sha256 = row.sha256 or sha
    payload = row.to_json()
    res.dest.put(result_key(sha), (json.dumps(payload, ensure_ascii=False, default=str) + "\n").encode())
    if not ledger.complete(sha, run_id, payload, result_key(sha)):
        return EntryOutcome(entry.key, "lost_claim", sha, row.status)   # another run took over
    return EntryOutcome(entry.key, "processed", sha, row.status, _archive(res, ledger, entry, sha, run_id))


def _archive(res: _Resources, ledger: InboxLedger, entry: Entry, sha: str, run_id: str) -> str | None:
    if res.spec.after != "move":
        return None
    try:
        where = res.inbox.archive(entry, run_id)
    except (KeyError, FileNotFoundError):
        return None                                              # already moved (a duplicate's twin)
    ledger.archived(sha, where)
    return where


# ------------------------------------------------------------------------------------- one run

@dataclass
class InboxSummary:
    run_id: str
    inbox: str
    dest: str
    skipped: str | None = None                    # why the run did nothing (inbox busy)
    listed: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)     # processed, already_done, duplicate, ...
    by_status: dict[str, int] = field(default_factory=dict)    # of the documents this run processed
    reported: int = 0                             # rows in this run's results.jsonl
    report: str | None = None                     # where results.jsonl was written
    recovered_reports: list[str] = field(default_factory=list)  # reports of dead runs written now
    failures: list[str] = field(default_factory=list)
    lease_lost: bool = False
    workers: dict[str, int] = field(default_factory=dict)       # host:pid -> documents handled there

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class _LeaseKeeper(threading.Thread):
    """Renews the inbox lease every `ttl / 4` seconds until stopped; `lost` is set when it could not."""

    def __init__(self, res: _Resources, run_id: str, ttl_s: float) -> None:
        super().__init__(name="inbox-lease", daemon=True)
        self.res, self.run_id, self.ttl_s = res, run_id, ttl_s
        self.lost = threading.Event()
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self.ttl_s / 4):
            try:
                if not self.res.ledger().renew(self.run_id, self.ttl_s):
                    self.lost.set()
                    return
            except (psycopg.Error, DocassayError) as exc:         # try again next beat; the lease may still hold
                _log.warning("could not renew the inbox lease: %s", exc)

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=5)


Submit = Callable[[list[Entry]], list[EntryOutcome | BaseException]]


def _in_this_process(res: _Resources, run_id: str) -> Submit:
    def submit(entries: list[Entry]) -> list[EntryOutcome | BaseException]:
        out: list[EntryOutcome | BaseException] = []
        for e in entries:
            try:
                out.append(handle_entry(e, res, run_id))
            except (psycopg.Error, DocassayError, OSError) as exc:
                out.append(exc)
        return out
    return submit


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + uuid.uuid4().hex[:8]


def run_inbox(spec: InboxSpec, *, run_id: str | None = None, submit: Submit | None = None) -> InboxSummary:
    """One inbox run (module docstring). `submit` runs the per-document step for a list of
    entries (Prefect tasks in `inbox_flow`); by default one after another in this thread.

    Raises `InboxRunFailed` after the report is written when some document hit an infrastructure
    failure (those stay in the inbox for the next run).
    """
    run_id = run_id or new_run_id()
    res = resources(spec)
    summary = InboxSummary(run_id, res.inbox.url, res.dest.url)
    ledger = res.ledger()
    if not ledger.acquire(run_id, spec.lease_s):
        holder = ledger.holder()
        summary.skipped = f"inbox busy: run {holder[0] if holder else '?'} holds it"
        return summary
    keeper = _LeaseKeeper(res, run_id, spec.lease_s)
    keeper.start()
    try:
        ledger.start_run(run_id, res.dest.url)
        for dead in ledger.unwritten_reports(run_id):
            if _write_report(res, ledger, dead, {"run_id": dead, "recovered_by": run_id}) is not None:
                summary.recovered_reports.append(dead)
        entries = res.inbox.entries(spec.settle_s)
        summary.listed = len(entries)
        results = (submit or _in_this_process(res, run_id))(entries)
        counts: Counter[str] = Counter()
        statuses: Counter[str] = Counter()
        for e, r in zip(entries, results):
            if isinstance(r, BaseException):
                counts["failed"] += 1
                summary.failures.append(f"{e.key}: {type(r).__name__}: {r}"[:300])
                continue
            counts[r.outcome] += 1
            summary.workers[r.worker] = summary.workers.get(r.worker, 0) + 1
            if r.outcome == "processed" and r.status:
                statuses[r.status] += 1
        summary.outcomes, summary.by_status = dict(counts), dict(statuses)
        summary.lease_lost = keeper.lost.is_set() or counts["no_lease"] > 0
        if not summary.lease_lost:
            ledger.assign_report(run_id)
        summary.report = _write_report(res, ledger, run_id, summary.to_json())
        summary.reported = len(ledger.report_rows(run_id))
    finally:
        keeper.stop()
        try:
            ledger.release(run_id)
        except (psycopg.Error, DocassayError) as exc:          # it expires on its own
            _log.warning("could not release the inbox lease: %s", exc)
    if summary.failures:
        raise InboxRunFailed(f"{len(summary.failures)} of {summary.listed} documents could not be handled "
                             f"(they stay in the inbox): {'; '.join(summary.failures[:3])}", summary=summary.to_json())
    return summary


def _write_report(res: _Resources, ledger: InboxLedger, run_id: str, summary: dict[str, Any]) -> str | None:
    """Write `runs/<run>/results.jsonl` from the ledger (None when the run reports nothing) and
    record it; the same rows give the same object, so writing it again is harmless."""
    rows = ledger.report_rows(run_id)
    key = report_key(run_id) if rows else ""
    if rows:
        text = "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in rows)
        res.dest.put(key, text.encode())
    ledger.finish_run(run_id, key, summary)
    return _url(res.dest, key) if rows else None


def _url(store: ObjectStore, key: str) -> str:
    return store.url.rstrip("/") + "/" + key


# ------------------------------------------------------------------------------------ the flow

@task(name="inbox-document", cache_policy=NO_CACHE, persist_result=False, log_prints=False)
def inbox_document(entry: Entry, spec: InboxSpec, run_id: str) -> EntryOutcome:
    return handle_entry(entry, resources(spec), run_id)


def _as_tasks(spec: InboxSpec, run_id: str) -> Submit:
    def submit(entries: list[Entry]) -> list[EntryOutcome | BaseException]:
        futures = [inbox_document.submit(e, spec, run_id) for e in entries]
        wait(futures)
        out: list[EntryOutcome | BaseException] = []
        for f in futures:
            try:
                out.append(f.result())
            except Exception as exc:       # a failed task's own exception, re-raised by Prefect: keep it as data
                out.append(exc)
        return out
    return submit


@flow(name="docassay-inbox", persist_result=False, log_prints=False)
def inbox_flow(inbox: str, dest: str, options: dict, after: str = "move", lease_s: float = 120.0,
               settle_s: float = 2.0, max_attempts: int = 3) -> dict:
    """Process what waits in `inbox` (module docstring); returns the run's summary. `options`: the
    job options as plain JSON (`JobOptions.to_json`)."""
    spec = InboxSpec(inbox=inbox, dest=dest, job=JobOptions.from_json(options), after=after, lease_s=lease_s,
                     settle_s=settle_s, max_attempts=max_attempts)
    run_id = new_run_id()
    try:
        return run_inbox(spec, run_id=run_id, submit=_as_tasks(spec, run_id)).to_json()
    finally:
        close_context(spec.job_options())          # this process's connections; Dask workers keep theirs
