"""Numbered schema migrations, each applied once, recorded in `schema_migrations`.

A migration is a file `infra/db/migrations/NNNN_name.sql` (four digits, unique): plain SQL
statements separated by `;`. Add a new file for every change; never edit one that has run (its
checksum is recorded, and a changed file stops start-up with a MigrationError).

Writing a migration that also runs on Aurora DSQL:
  * no foreign keys, sequences/serial/identity, temporary tables, triggers, extensions, or
    PL/pgSQL; JSON goes in `text` columns (jsonb exists there only at query run time);
  * every statement idempotent (`CREATE TABLE IF NOT EXISTS`, `ADD COLUMN IF NOT EXISTS`),
    because on DSQL each statement commits on its own (one DDL per transaction, DDL and DML
    never mixed), so a migration cut short half-way is simply run again;
  * `CREATE INDEX` is written as for PostgreSQL; on DSQL it is sent as `CREATE INDEX ASYNC`.

On PostgreSQL each migration runs in one transaction holding a transaction-level advisory lock,
so concurrent starters apply it exactly once and the others wait, then see it done.
"""
from __future__ import annotations

import hashlib
import importlib.resources
import logging
import re
from dataclasses import dataclass
from functools import partial
from typing import Callable, Literal

import psycopg

from docassay.infra.db.errors import MigrationError, SqlTextError
from docassay.infra.db.retry import retry_on_conflict
from docassay.infra.db.sqltext import split_statements

__all__ = ["Dialect", "Migration", "discover", "applied", "pending", "apply_migrations", "to_dsql", "MIGRATIONS_TABLE"]

Dialect = Literal["postgresql", "dsql"]
MIGRATIONS_TABLE = "schema_migrations"
# pg_advisory_xact_lock key: first 8 bytes of sha256("docassay.migrations"), as a signed bigint
_LOCK_KEY = int.from_bytes(hashlib.sha256(b"docassay.migrations").digest()[:8], "big", signed=True)
_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_CREATE_INDEX = re.compile(r"^\s*CREATE\s+(UNIQUE\s+)?INDEX\s+(?!ASYNC\b)", re.IGNORECASE)
_log = logging.getLogger(__name__)

_CREATE_TABLE = f"""
CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} (
    version     integer PRIMARY KEY,
    name        text NOT NULL,
    checksum    text NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT now()
)"""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def discover(package: str = "docassay.infra.db.migrations") -> list[Migration]:
    """The migrations shipped in `package`, in version order; rejects malformed names and duplicates."""
    found: dict[int, Migration] = {}
    for entry in importlib.resources.files(package).iterdir():
        if not entry.name.endswith(".sql"):
            continue
        m = _FILE.match(entry.name)
        if not m:
            raise MigrationError(f"migration file {entry.name!r} is not named NNNN_lower_case_name.sql",
                                 file=entry.name)
        version = int(m.group(1))
        if version in found:
            raise MigrationError(f"two migrations share version {version:04d}", version=version)
        found[version] = Migration(version, m.group(2), entry.read_text(encoding="utf-8"))
    return [found[v] for v in sorted(found)]


def applied(conn: psycopg.Connection) -> dict[int, str]:
    """version -> checksum of the migrations recorded on this database (empty if none ever ran)."""
    exists = conn.execute(
        "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = %s",
        [MIGRATIONS_TABLE]).fetchone()
    if not exists:
        return {}
    return {v: c for v, c in conn.execute(f"SELECT version, checksum FROM {MIGRATIONS_TABLE}").fetchall()}


def pending(conn: psycopg.Connection, migrations: list[Migration]) -> list[Migration]:
    """Migrations not yet recorded; raises MigrationError if a recorded one has changed since."""
    done = applied(conn)
    for m in migrations:
        if m.version in done and done[m.version] != m.checksum:
            raise MigrationError(
                f"migration {m.version:04d}_{m.name} changed after it was applied to this database; "
                "add a new migration instead of editing an applied one", version=m.version)
    return [m for m in migrations if m.version not in done]


def apply_migrations(conn: psycopg.Connection, *, dialect: Dialect = "postgresql",
                     migrations: list[Migration] | None = None) -> list[Migration]:
    """Bring the database up to date; return the migrations this call applied (often none).

    `conn` must be in autocommit mode. Idempotent, and safe when several processes start at once.
    """
    if not conn.autocommit:
        raise MigrationError("apply_migrations needs an autocommit connection")
    todo = migrations if migrations is not None else discover()
    if not pending(conn, todo):          # fast path: one catalog query, no lock
        return []
    if dialect == "dsql":
        return _apply_statement_by_statement(conn, todo, rewrite=to_dsql)
    return _apply_postgresql(conn, todo)


def _apply_postgresql(conn: psycopg.Connection, todo: list[Migration]) -> list[Migration]:
    done: list[Migration] = []
    for m in todo:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK_KEY])
            conn.execute(_CREATE_TABLE)
            if m not in pending(conn, [m]):
                continue                 # another process applied it while we waited for the lock
            _run_statements(conn, m)
            conn.execute(f"INSERT INTO {MIGRATIONS_TABLE} (version, name, checksum) VALUES (%s, %s, %s)",
                         [m.version, m.name, m.checksum])
        _log.info("applied migration %04d_%s", m.version, m.name)
        done.append(m)
    return done


def to_dsql(statement: str) -> str:
    """A migration statement as Aurora DSQL wants it: `CREATE INDEX` becomes `CREATE INDEX ASYNC`."""
    return _CREATE_INDEX.sub(lambda mo: f"CREATE {'UNIQUE ' if mo.group(1) else ''}INDEX ASYNC ", statement, count=1)


def _apply_statement_by_statement(conn: psycopg.Connection, todo: list[Migration], *,
                                  rewrite: Callable[[str], str]) -> list[Migration]:
    """DSQL: each statement commits on its own (no advisory locks, no DDL next to DML)."""
    retry_on_conflict(lambda: conn.execute(_CREATE_TABLE))
    done: list[Migration] = []
    for m in todo:
        if m not in pending(conn, [m]):
            continue
        for stmt in _statements(m):
            sql_text = rewrite(stmt)
            retry_on_conflict(partial(conn.execute, sql_text))
        retry_on_conflict(partial(conn.execute,
            f"INSERT INTO {MIGRATIONS_TABLE} (version, name, checksum) VALUES (%s, %s, %s) "
            "ON CONFLICT (version) DO NOTHING", [m.version, m.name, m.checksum]))
        _log.info("applied migration %04d_%s", m.version, m.name)
        done.append(m)
    return done


def _statements(m: Migration) -> list[str]:
    try:
        return [s.text for s in split_statements(m.sql)]
    except SqlTextError as exc:
        raise MigrationError(f"migration {m.version:04d}_{m.name}: {exc}", version=m.version) from exc


def _run_statements(conn: psycopg.Connection, m: Migration) -> None:
    for stmt in _statements(m):
        try:
            conn.execute(stmt)
        except psycopg.Error as exc:
            raise MigrationError(f"migration {m.version:04d}_{m.name} failed: {exc}", version=m.version) from exc
