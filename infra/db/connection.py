"""Connecting to docassay's database: the embedded server by default, any PostgreSQL or Aurora DSQL by DSN.

`Settings.db` (CLI `--db`, env `DOCASSAY_DB`) is a libpq DSN or URI, or `dsql://<cluster>` for
Aurora DSQL (infra/db/dsql.py). When it is unset, the
embedded server for `Settings.home` is started if needed (infra.db.embedded). The first
connection a process makes to a database applies pending migrations (infra.db.migrate).

A connection that cannot be made is tried again with a bounded backoff (`ReconnectPolicy`): a
server restarting, or the embedded server killed under a running batch, which is started again on
the way (`Database(revive=...)`, set by `from_settings` when the database is the embedded one).
Only when every try failed does `connect` raise DatabaseError, saying how often it tried.

Connections come back in autocommit mode: group statements with `with conn.transaction():`, or
use `Database.write` / `transact` for a write that is retried on a concurrency conflict.
"""
from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass
from typing import Callable, TypeVar

import psycopg
from psycopg.conninfo import conninfo_to_dict

from docassay.infra.config import Settings
from docassay.infra.db import embedded
from docassay.infra.db.dsql import dsql_dsn, is_dsql_host, is_dsql_url, with_iam_token
from docassay.infra.db.errors import EmbeddedServerError
from docassay.infra.db.migrate import Dialect, apply_migrations
from docassay.infra.db.retry import DEFAULT_RETRY, RetryPolicy, transact
from docassay.infra.errors import ConfigError, DatabaseError

__all__ = ["Database", "connect", "resolve_dsn", "dialect_of", "ReconnectPolicy", "DEFAULT_RECONNECT"]


@dataclass(frozen=True)
class ReconnectPolicy:
    attempts: int = 4               # connection tries, the first included
    base_delay_s: float = 0.25      # backoff before the second try is drawn from [base/2, base]
    max_delay_s: float = 4.0        # cap on one backoff


DEFAULT_RECONNECT = ReconnectPolicy()

T = TypeVar("T")
CONNECT_TIMEOUT_S = 10

_migrated: set[str] = set()           # DSNs (without password) migrated by this process
_migrated_lock = threading.Lock()


def resolve_dsn(settings: Settings) -> str:
    """`settings.db` if set, else the DSN of the embedded server under `settings.home` (started if needed)."""
    if settings.db:
        if is_dsql_url(settings.db):
            return dsql_dsn(settings.db)          # dsql://cluster -> DSN; the IAM token is added at connect
        try:
            conninfo_to_dict(settings.db)
        except psycopg.ProgrammingError as exc:
            raise ConfigError(f"--db is not a valid PostgreSQL DSN: {exc}", setting="db") from exc
        return settings.db
    return embedded.ensure_running(settings.home).dsn


def dialect_of(dsn: str) -> Dialect:
    """'dsql' for an Aurora DSQL endpoint, else 'postgresql'."""
    host = str(conninfo_to_dict(dsn).get("host") or "")
    return "dsql" if is_dsql_host(host) else "postgresql"


class Database:
    """One database, by DSN: opens connections, applies migrations once per process, retries writes."""

    def __init__(self, dsn: str, *, dialect: Dialect | None = None, migrate: bool = True,
                 revive: Callable[[], str] | None = None, reconnect: ReconnectPolicy = DEFAULT_RECONNECT) -> None:
        self.dsn = dsn
        self.dialect: Dialect = dialect or dialect_of(dsn)
        self._migrate = migrate
        self._revive = revive               # starts the server again (embedded) and returns its DSN
        self._reconnect = reconnect

    @classmethod
    def from_settings(cls, settings: Settings, *, migrate: bool = True) -> "Database":
        revive = None if settings.db else (lambda: embedded.ensure_running(settings.home).dsn)
        return cls(resolve_dsn(settings), migrate=migrate, revive=revive)

    def connect(self) -> psycopg.Connection:
        """A new autocommit connection; the first one per process brings the schema up to date."""
        conn = self._open()
        if self._migrate:
            try:
                self._ensure_migrated(conn)
            except BaseException:
                conn.close()
                raise
        return conn

    def _open(self) -> psycopg.Connection:
        policy = self._reconnect
        last: Exception | None = None
        for attempt in range(policy.attempts):
            if attempt:
                cap = min(policy.max_delay_s, policy.base_delay_s * 2 ** (attempt - 1))
                time.sleep(random.uniform(cap / 2, cap))
                if self._revive is not None:
                    try:
                        self.dsn = self._revive()
                    except EmbeddedServerError as exc:
                        last = exc
                        continue
            conninfo = with_iam_token(self.dsn) if self.dialect == "dsql" else self.dsn
            try:
                return psycopg.connect(conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S,
                                       application_name="docassay")
            except psycopg.OperationalError as exc:
                last = exc
        tries = f" ({policy.attempts} tries)" if policy.attempts > 1 else ""
        raise DatabaseError(f"cannot connect to the database{tries}: {str(last).strip()}",
                            dsn=_redacted(self.dsn)) from last

    def write(self, fn: Callable[[psycopg.Connection], T], *, policy: RetryPolicy = DEFAULT_RETRY) -> T:
        """Run `fn(conn)` in one transaction on a fresh connection, retried on 40001/DSQL conflicts."""
        with self.connect() as conn:
            return transact(conn, fn, policy=policy)

    def _ensure_migrated(self, conn: psycopg.Connection) -> None:
        key = _redacted(self.dsn)
        with _migrated_lock:
            if key in _migrated:
                return
        apply_migrations(conn, dialect=self.dialect)
        with _migrated_lock:
            _migrated.add(key)


def connect(settings: Settings, *, migrate: bool = True) -> psycopg.Connection:
    """An autocommit connection to the configured database (embedded unless `settings.db`), migrated."""
    return Database.from_settings(settings, migrate=migrate).connect()


def _redacted(dsn: str) -> str:
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "<invalid dsn>"
    params.pop("password", None)
    return " ".join(f"{k}={v}" for k, v in sorted(params.items()))
