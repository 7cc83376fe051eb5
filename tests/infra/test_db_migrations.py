"""Numbered migrations: each runs once, concurrently safe, edits detected, DSQL mode."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psycopg
import pytest

from docassay.infra.config import Settings
from docassay.infra.db import Database, MigrationError, apply_migrations, connect, discover, migrate
from docassay.infra.db.migrate import Migration, applied
from docassay.infra.db.sqltext import split_statements

CORE_TABLES = {"formats", "format_versions", "documents", "golden", "runs", "schema_migrations"}


def _tables(conn: psycopg.Connection) -> set[str]:
    rows = conn.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'").fetchall()
    return {r[0] for r in rows}


def test_shipped_migrations_are_numbered_from_one() -> None:
    migrations = discover()
    assert migrations[0].version == 1 and migrations[0].name == "core"
    assert [m.version for m in migrations] == sorted({m.version for m in migrations})


def test_shipped_migrations_stay_inside_what_aurora_dsql_supports() -> None:
    banned = ["references", "serial", "sequence", "temporary", "temp table", "trigger", "extension",
              "jsonb", "plpgsql", "generated always", "identity"]
    for m in discover():
        code = "\n".join(line.split("--")[0] for line in m.sql.lower().splitlines())
        for word in banned:
            assert word not in code, f"{m.version:04d}_{m.name} uses {word!r}"
        for stmt in split_statements(m.sql):      # on DSQL a migration cut short is simply run again
            words = " ".join(" ".join(ln.split("--")[0] for ln in stmt.text.lower().splitlines()).split())
            if words.startswith(("create table", "create index", "create unique index")):
                assert "if not exists" in words, f"{m.version:04d}_{m.name}: {words[:60]} is not idempotent"


def test_apply_is_idempotent(pg_fresh_dsn: str) -> None:
    with psycopg.connect(pg_fresh_dsn, autocommit=True) as conn:
        first = apply_migrations(conn)
        assert [m.version for m in first] == [m.version for m in discover()]
        assert CORE_TABLES <= _tables(conn)
        assert apply_migrations(conn) == []
        assert set(applied(conn)) == {m.version for m in discover()}


def test_a_failing_migration_leaves_nothing_behind(pg_fresh_dsn: str) -> None:
    bad = [Migration(1, "ok", "CREATE TABLE IF NOT EXISTS a (id text PRIMARY KEY);"),
           Migration(2, "bad", "CREATE TABLE b (id text PRIMARY KEY); SELECT no_such_column FROM a;")]
    with psycopg.connect(pg_fresh_dsn, autocommit=True) as conn:
        with pytest.raises(MigrationError, match="0002_bad"):
            apply_migrations(conn, migrations=bad)
        assert set(applied(conn)) == {1}
        assert "a" in _tables(conn) and "b" not in _tables(conn)      # 0002 rolled back whole


def test_an_edited_migration_is_refused(pg_fresh_dsn: str) -> None:
    with psycopg.connect(pg_fresh_dsn, autocommit=True) as conn:
        apply_migrations(conn, migrations=[Migration(1, "t", "CREATE TABLE IF NOT EXISTS t (id text);")])
        with pytest.raises(MigrationError, match="changed after it was applied"):
            apply_migrations(conn, migrations=[Migration(1, "t", "CREATE TABLE IF NOT EXISTS t (id int);")])


def test_dsql_path_runs_statement_by_statement(pg_fresh_dsn: str) -> None:
    """The DSQL path (one statement per transaction, no advisory lock) on PostgreSQL, minus ASYNC."""
    with psycopg.connect(pg_fresh_dsn, autocommit=True) as conn:
        done = migrate._apply_statement_by_statement(conn, discover(), rewrite=lambda s: s)
        assert CORE_TABLES <= _tables(conn) and [m.version for m in done] == [m.version for m in discover()]
        assert migrate._apply_statement_by_statement(conn, discover(), rewrite=lambda s: s) == []
        assert apply_migrations(conn) == []                        # both paths record the same way


def test_dsql_indexes_are_built_async() -> None:
    assert migrate.to_dsql("CREATE INDEX IF NOT EXISTS i ON t (a)") == "CREATE INDEX ASYNC IF NOT EXISTS i ON t (a)"
    assert migrate.to_dsql("create unique index u ON t (a)") == "CREATE UNIQUE INDEX ASYNC u ON t (a)"
    assert migrate.to_dsql("CREATE INDEX ASYNC i ON t (a)") == "CREATE INDEX ASYNC i ON t (a)"
    assert migrate.to_dsql("CREATE TABLE t (a text)") == "CREATE TABLE t (a text)"


_MIGRATOR = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    import psycopg
    from docassay.infra.db import apply_migrations
    dsn, go = sys.argv[1], Path(sys.argv[2])
    with psycopg.connect(dsn, autocommit=True) as conn:
        while not go.exists():
            time.sleep(0.005)
        print(json.dumps([m.version for m in apply_migrations(conn)]))
""")


def test_concurrent_processes_apply_each_migration_once(pg_fresh_dsn: str, tmp_path: Path) -> None:
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", _MIGRATOR, pg_fresh_dsn, str(go)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    time.sleep(0.5)
    go.touch()
    results = []
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        results.append(json.loads(out))
    everything = [m.version for m in discover()]
    assert sorted(results[0] + results[1]) == everything          # applied once, by one of them
    with psycopg.connect(pg_fresh_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone() == (len(everything),)


def test_dsn_mode_connects_and_migrates(pg_fresh_dsn: str, tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "unused-home", db=pg_fresh_dsn)
    with connect(settings) as conn:
        assert conn.autocommit
        assert CORE_TABLES <= _tables(conn)
        conn.execute("INSERT INTO runs (id) VALUES ('r1')")
    assert not (tmp_path / "unused-home").exists()                 # no embedded server was started
    with Database(pg_fresh_dsn).connect() as other:                # same server, another connection
        assert other.execute("SELECT id FROM runs").fetchall() == [("r1",)]


def test_bad_dsn_is_a_config_error(tmp_path: Path) -> None:
    from docassay.infra.errors import ConfigError
    with pytest.raises(ConfigError):
        connect(Settings(home=tmp_path, db="host=x port=notaport = ="))
