"""A scratch database for one test or one benchmark pass: created empty on a server, dropped (with
its connections) on exit. Tests reach it through `tests/conftest.py` (`pg_fresh_dsn`); benchmarks
call it directly."""
from __future__ import annotations

import uuid
from contextlib import contextmanager
from typing import Iterator

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

__all__ = ["fresh_database"]


@contextmanager
def fresh_database(admin_dsn: str, *, prefix: str = "t") -> Iterator[str]:
    """A new, empty database on the server of `admin_dsn` (its DSN), dropped on exit."""
    name = f"{prefix}_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield make_conninfo(admin_dsn, dbname=name)
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
