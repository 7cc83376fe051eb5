"""What a batch runs with: the `Job` (what is extracted and how: schema, rules, settings, generator,
policy) and the `RunContext` (the shared, thread-safe state of one batch: database, format library,
object store, a connection per thread). Every stage takes these two; nothing here imports a stage,
so the stages (flows/verification.py, flows/lifecycle.py, flows/pipeline.py, ...) import one way.
"""
from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Protocol

import psycopg

from docassay.extractors.instructions.generator import Scorer
from docassay.extractors.library import FormatLibrary, schema_key
from docassay.flows.job_options import DEFAULT_GENERATOR
from docassay.infra.config import Settings
from docassay.infra.db import Database
from docassay.infra.errors import ConfigError
from docassay.infra.objects import ObjectStore
from docassay.verifiers.settings import VerifySettings

if TYPE_CHECKING:
    from docassay.flows.pipeline import DriftQueue  # for the annotation only: a batch sets it

__all__ = ["Job", "RunContext", "open_context", "Budget", "Reservation", "LifecyclePolicy", "objects_for"]


@dataclass(frozen=True)
class LifecyclePolicy:
    new_format_status: str = "active"          # pending_review | active: the status of a newly learned format
    pending_may_pass: bool = True              # may a pending_review format's documents pass?
    auto_promote_after: int = 0                # promote a pending format after N accepted documents (0: never)
    drift_threshold: int = 2                   # consecutive failed replays before a new version is proposed
    drift_deferred: bool = True                # in a batch: propose after the batch, not on the failing document's path
    golden_max: int = 5                        # documents kept automatically per golden set (reviewed: always)
    history: bool = True                       # stale-value checks against accepted documents

    @classmethod
    def load(cls, **overrides: Any) -> "LifecyclePolicy":
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = os.environ.get(f"DOCASSAY_{f.name.upper()}")
            if raw is None:
                continue
            if f.type in ("bool", bool):
                values[f.name] = raw.strip().lower() in ("1", "true", "yes", "on")
            elif f.type in ("int", int):
                try:
                    values[f.name] = int(raw)
                except ValueError as exc:
                    raise ConfigError(f"DOCASSAY_{f.name.upper()}={raw!r} is not a whole number", setting=f.name) from exc
            else:
                values[f.name] = raw.strip()
        values.update({k: v for k, v in overrides.items() if v is not None})
        p = replace(cls(), **values)
        if p.new_format_status not in ("pending_review", "active"):
            raise ConfigError("new_format_status must be pending_review or active", setting="new_format_status")
        if p.drift_threshold < 1 or p.golden_max < 0 or p.auto_promote_after < 0:
            raise ConfigError("drift_threshold >= 1, golden_max >= 0 and auto_promote_after >= 0 are required")
        return p


def objects_for(settings: Settings) -> ObjectStore:
    """Where document bytes are kept: $DOCASSAY_OBJECTS (a folder or s3://...), else <home>/objects."""
    return ObjectStore.open(os.environ.get("DOCASSAY_OBJECTS") or Path(settings.home) / "objects")



@dataclass
class Job:
    """What a batch extracts, and how."""
    schema: Mapping[str, Any]
    rules: list = field(default_factory=list)
    settings: Settings = field(default_factory=Settings.load)
    generator: str = DEFAULT_GENERATOR           # model | baseline (the CLI's default)
    reuse_formats: bool = True                   # ablation: False treats every document as new
    repair: bool = True                          # ablation: False skips fixer and troubleshooter
    fixer: bool = True                           # ablation: False skips the fixer alone (new formats)
    troubleshooter: bool = True                  # ablation: False skips the troubleshooter alone (known formats)
    scorer: Scorer | None = None                 # None: from `generator` (model: loaded lazily; baseline: none)
    budget: "Budget | None" = None               # token quotas (infra.quota); None = unmetered
    policy: LifecyclePolicy = field(default_factory=LifecyclePolicy.load)
    verify_settings: VerifySettings | None = None  # None: from the schema's x-docassay keywords
    einvoice: str = "use"                        # use | check | ignore: the XML of e-invoices (flows/einvoice.py)
    min_confidence: float | None = None          # target for `verified` fields (None: schema, else the default)
    doubt_repair: bool = False                   # try other readings of doubtful required fields (flows/doubt.py)
    _verify_cache: tuple[Any, VerifySettings] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.scorer is None and self.generator == "model":
            from docassay.flows.jobs import LazyModelScorer  # torch loads on the first document that needs it
            self.scorer = LazyModelScorer()

    @property
    def key(self) -> str:
        return schema_key(self.schema)

    def verify_config(self) -> VerifySettings:
        """The verification settings: explicit ones, else those the schema declares; worked out
        once per job (again only if the job's schema is replaced)."""
        if self.verify_settings is not None:
            return self.verify_settings
        cached = self._verify_cache
        if cached is None or cached[0] is not self.schema:
            cached = self._verify_cache = (self.schema, VerifySettings.from_schema(self.schema))
        return cached[1]


class Reservation(Protocol):
    def settle(self, input_tokens: int, output_tokens: int) -> None: ...
    def cancel(self) -> None: ...


class Budget(Protocol):
    """Token quotas. `reserve` atomically sets tokens aside before a model call, or returns None
    (with `reason` set) when the quota cannot cover it; the reservation is settled with the true
    count after the call."""
    @property
    def reason(self) -> str: ...

    def reserve(self, input_tokens: int, output_tokens: int) -> Reservation | None: ...

    def check(self) -> object:
        """Raise QuotaExceeded when a quota is already spent (before a batch reads anything)."""

    def close(self) -> None: ...


class RunContext:
    """Shared, thread-safe state of a batch: database, format library, object storage for document
    bytes, one connection per thread."""

    def __init__(self, db: Database, library: FormatLibrary, objects: ObjectStore | None = None) -> None:
        self.db = db
        self.library = library
        self.objects = objects
        self._local = threading.local()
        self._conns: list[psycopg.Connection] = []
        self._lock = threading.Lock()
        self.drift: "DriftQueue | None" = None       # set by a batch: drift is proposed after it, not inline

    @property
    def conn(self) -> psycopg.Connection:
        c = getattr(self._local, "conn", None)
        if c is None or c.closed:
            c = self.db.connect()
            self._local.conn = c
            with self._lock:
                self._conns.append(c)
        return c

    def close(self) -> None:
        with self._lock:
            for c in self._conns:
                c.close()
            self._conns.clear()
        self.library.learn_lock.close()          # its claim connection (extractors.library.LearnLock)


@contextmanager
def open_context(settings: Settings) -> Iterator[RunContext]:
    db = Database.from_settings(settings)
    ctx = RunContext(db, FormatLibrary.from_settings(settings), objects_for(settings))
    try:
        yield ctx
    finally:
        ctx.close()
