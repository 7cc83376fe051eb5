"""The rule sandbox holds: a rule sees its record's relations and nothing else.

Every attack here gets past the loader's denylist (U& identifiers, SQL inside strings, qualified
names) so that what stops it is PostgreSQL's privilege system: files, catalogues, other
documents' records, other connections, settings, large objects, advisory locks, timeouts.
Each test fails on a runner that executes rules with the connection's own (superuser) role.
"""
from __future__ import annotations

import time
from typing import Any, Iterator

import psycopg
import pytest
from psycopg import sql

from docassay.infra.db import apply_migrations, dump_json
from docassay.rules import Rule, RuleResult, run_rules, sandbox
from tests.conftest import fresh_database

SCHEMA: dict[str, Any] = {"type": "object", "properties": {
    "invoice_number": {"type": "string"}, "gross_total": {"type": "number"},
    "line_items": {"type": "array", "items": {"type": "object", "properties": {"line_total": {"type": "number"}}}}}}
RECORD: dict[str, Any] = {"invoice_number": "INV-1", "gross_total": 10.0, "line_items": [{"line_total": 10.0}]}
SECRET = "other-customer-secret-4711"
LO_SECRET = "large-object-secret-0815"


def u(name: str) -> str:
    """`name` as a U& identifier whose first letter is a code point escape (the denylist cannot read it)."""
    return f'U&"\\{ord(name[0]):04x}{name[1:]}"'


def rule(text: str, name: str = "attack") -> Rule:
    """A rule built in code (the runner still applies the loader's checks)."""
    return Rule(name, "error", ("invoice_number",), "m", text, "<test>", 1)


def run(conn: psycopg.Connection, text: str, *, timeout_ms: int = 2000, **kw: Any) -> RuleResult:
    (r,) = run_rules(conn, SCHEMA, RECORD, [rule(text)], timeout_ms=timeout_ms, **kw)
    return r


def leaked(r: RuleResult, *needles: str) -> bool:
    text = repr([v.values for v in r.violations])
    return any(n in text for n in needles)


@pytest.fixture(scope="module")
def db(pg_dsn: str) -> Iterator[str]:
    """A migrated docassay database holding another customer's document and a large object."""
    with fresh_database(pg_dsn) as dsn:
        with psycopg.connect(dsn, autocommit=True) as c:
            apply_migrations(c)
            c.execute("INSERT INTO documents (sha256, source, status, record) VALUES (%s, %s, %s, %s)",
                      ["ab" * 32, "/in/other.pdf", "passed", dump_json({"invoice_number": SECRET})])
            c.execute("ANALYZE documents")
            c.execute("SELECT lo_from_bytea(424242, %s::bytea)", [LO_SECRET.encode()])
        yield dsn


@pytest.fixture
def conn(db: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(db, autocommit=True) as c:
        yield c


def test_rules_run_as_the_unprivileged_role_and_still_see_their_relations(conn: psycopg.Connection) -> None:
    r = run(conn, "SELECT current_user AS who, d.invoice_number AS actual, li.line_total "
                  "FROM doc AS d, line_items AS li")
    assert r.error is None, r.error
    assert r.violations[0].values == {"who": sandbox.ROLE_NAME, "actual": "INV-1", "line_total": 10}
    assert conn.execute("SELECT current_user").fetchone() == ("postgres",) or conn.info.user != "postgres"


FILE_ATTACKS = [
    pytest.param("SELECT " + u("pg_read_file") + "('/etc/passwd', 0, 200) AS actual FROM doc", id="u-escape-pg_read_file"),
    pytest.param("SELECT U&\"\\0070g_read_file\"('/etc/passwd') AS actual FROM doc", id="u-escape-codepoint"),
    pytest.param("SELECT pg_catalog." + u("pg_read_binary_file") + "('/etc/passwd') AS actual FROM doc", id="binary-file"),
    pytest.param("SELECT " + u("pg_ls_dir") + "('/etc') AS actual FROM doc", id="ls-dir"),
    pytest.param("SELECT " + u("pg_stat_file") + "('/etc/passwd') AS actual FROM doc", id="stat-file"),
    pytest.param("SELECT ts_stat('SELECT to_tsvector(pg_read_file(''/etc/passwd''))') AS actual FROM doc",
                 id="function-in-string"),
    pytest.param("SELECT " + u("lo_import") + "('/etc/passwd') AS actual FROM doc", id="lo_import"),
    pytest.param("SELECT " + u("pg_current_logfile") + "() AS actual FROM doc", id="logfile"),
]


@pytest.mark.parametrize("text", FILE_ATTACKS)
def test_no_file_of_the_server_is_reachable(conn: psycopg.Connection, text: str) -> None:
    r = run(conn, text)
    assert r.error is not None and not r.passed and r.violations == ()
    assert "root:" not in (r.error or "")


DATA_ATTACKS = [
    pytest.param("SELECT record AS actual FROM public.documents", id="qualified-table"),
    pytest.param("SELECT record AS actual FROM documents", id="unqualified-table"),
    pytest.param("SELECT record AS actual FROM " + u("documents") + "", id="u-escape-table"),
    pytest.param("SELECT ts_stat('SELECT to_tsvector(record) FROM public.documents') AS actual", id="table-in-string"),
    pytest.param("SELECT most_common_vals::text AS actual FROM pg_catalog.pg_stats "
                 "WHERE tablename = 'documents' AND attname = 'record'", id="planner-statistics"),
    pytest.param("SELECT " + u("lo_get") + "(424242) AS actual", id="large-object-read"),
    pytest.param("SELECT convert_from(data, 'UTF8') AS actual FROM pg_catalog.pg_largeobject", id="large-object-table"),
    pytest.param("SELECT rolname || ':' || rolpassword AS actual FROM pg_catalog.pg_authid", id="role-passwords"),
    pytest.param("SELECT usename || ':' || passwd AS actual FROM pg_catalog.pg_shadow", id="pg_shadow"),
]


@pytest.mark.parametrize("text", DATA_ATTACKS)
def test_no_other_documents_record_or_secret_catalogue_is_readable(conn: psycopg.Connection, text: str) -> None:
    r = run(conn, text)
    assert not leaked(r, SECRET, LO_SECRET, "SCRAM", "md5")
    assert r.error is not None or r.violations == ()


@pytest.mark.parametrize("setting", ["data_directory", "config_file", "hba_file"])
def test_settings_naming_server_paths_are_hidden(conn: psycopg.Connection, setting: str) -> None:
    r = run(conn, f"SELECT current_setting('{setting}') AS actual FROM doc")
    assert r.error is not None and "permission denied" in r.error
    r = run(conn, f"SELECT setting AS actual FROM pg_catalog.pg_settings WHERE name = '{setting}'")
    assert r.violations == () or r.violations[0].values.get("actual") in (None, "")


@pytest.fixture
def victim(db: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(db, autocommit=True, application_name="victim") as v:
        v.execute(f"SELECT 'victim-{SECRET}'")
        yield v


def test_other_connections_cannot_be_terminated_or_cancelled(conn: psycopg.Connection,
                                                             victim: psycopg.Connection) -> None:
    for fn in ("pg_terminate_backend", "pg_cancel_backend"):
        r = run(conn, f"SELECT {u(fn)}({victim.info.backend_pid}) AS actual FROM doc")
        assert r.error is not None and "permission denied" in r.error, r
    assert victim.execute("SELECT 1").fetchone() == (1,)


def test_other_sessions_queries_are_not_visible(conn: psycopg.Connection, victim: psycopg.Connection) -> None:
    r = run(conn, "SELECT query AS actual, application_name FROM pg_catalog.pg_stat_activity "
                  "WHERE application_name = 'victim'")
    assert r.error is None and len(r.violations) == 1
    assert not leaked(r, SECRET) and r.violations[0].actual == "<insufficient privilege>"


@pytest.mark.parametrize("text", [
    pytest.param("SELECT " + u("set_config") + "('role', 'postgres', true) AS actual, "
                 "ts_stat('SELECT to_tsvector(record) FROM public.documents')::text AS n FROM doc", id="set-role-back"),
    pytest.param("SELECT " + u("set_config") + "('session_authorization', 'postgres', true) AS actual FROM doc",
                 id="session-authorization"),
    pytest.param("SELECT " + u("set_config") + "('statement_timeout', '0', true) AS actual FROM doc", id="lift-timeout"),
    pytest.param("SELECT " + u("set_config") + "('transaction_read_only', 'off', true) AS actual FROM doc", id="lift-read-only"),
    pytest.param("SELECT ts_stat('SELECT set_config(''role'', ''postgres'', true)::tsvector') AS actual FROM doc",
                 id="set-config-in-string"),
])
def test_set_config_cannot_leave_the_sandbox(conn: psycopg.Connection, text: str) -> None:
    r = run(conn, text)
    assert r.error is not None and "permission denied for function set_config" in r.error, r


def test_a_session_advisory_lock_cannot_outlive_the_rule(conn: psycopg.Connection) -> None:
    r = run(conn, "SELECT " + u("pg_advisory_lock") + "(4711) AS actual FROM doc")
    assert r.error is not None and "permission denied" in r.error
    assert conn.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                        "AND pid = pg_backend_pid()").fetchone() == (0,)


def test_sleep_and_recursive_bombs_are_bounded(conn: psycopg.Connection) -> None:
    t0 = time.perf_counter()
    sleep = run(conn, "SELECT pg_sleep(30) AS actual FROM doc", timeout_ms=300)
    bomb = run(conn, "WITH RECURSIVE r(n, pad) AS (SELECT 1, repeat('x', 1000) UNION ALL "
                     "SELECT n + 1, pad FROM r) SELECT count(*) AS actual FROM r", timeout_ms=3000)
    assert time.perf_counter() - t0 < 20
    assert sleep.error is not None and sleep.error.startswith("timeout")
    assert bomb.error is not None          # statement timeout or temp_file_limit, whichever comes first
    after = run(conn, "SELECT current_setting('statement_timeout') AS actual, current_user AS who FROM doc")
    assert after.error is None


def test_one_statement_only_even_without_record_values(conn: psycopg.Connection) -> None:
    # a record with no mapped columns binds no value; the LIMIT keeps the extended protocol
    (r,) = run_rules(conn, {"type": "object", "properties": {}}, {},
                     [rule("SELECT 1 AS actual")], timeout_ms=1000)
    assert r.error is None and r.violations[0].actual == 1


def test_the_opt_out_runs_with_the_connections_own_role(conn: psycopg.Connection) -> None:
    r = run(conn, "SELECT current_user AS actual FROM doc", sandbox=False)
    assert r.violations[0].actual == conn.execute("SELECT current_user").fetchone()[0] != sandbox.ROLE_NAME


def _fresh(pg_dsn: str, prepare: str) -> Iterator[str]:
    with fresh_database(pg_dsn) as dsn:
        with psycopg.connect(dsn, autocommit=True) as c:
            apply_migrations(c)
            c.execute(prepare)
        yield dsn


@pytest.mark.parametrize("prepare, why", [
    ("GRANT SELECT ON documents TO PUBLIC", "may read public.documents"),
    ("CREATE FUNCTION public.peek() RETURNS bigint SECURITY DEFINER LANGUAGE sql "
     "AS $$ SELECT count(*) FROM public.documents $$", "SECURITY DEFINER"),
    ("GRANT EXECUTE ON FUNCTION pg_catalog.set_config(text, text, boolean) TO docassay_rule", "set_config"),
])
def test_a_database_that_would_leak_fails_closed(pg_dsn: str, prepare: str, why: str) -> None:
    with psycopg.connect(pg_dsn, autocommit=True) as admin:
        sandbox.ensure_sandbox(admin)              # the role exists before the GRANT below names it
    for dsn in _fresh(pg_dsn, prepare):
        with psycopg.connect(dsn, autocommit=True) as c:
            r = run(c, "SELECT 1 AS actual FROM doc")
        assert not r.passed and r.violations == () and r.blocking
        assert r.error is not None and r.error.startswith("rule sandbox unavailable: SQL rules cannot run sandboxed") and why in r.error


def test_a_login_that_cannot_set_the_sandbox_up_gets_the_statements_to_run(pg_dsn: str) -> None:
    login = "docassay_test_app"
    for dsn in _fresh(pg_dsn, "SELECT 1"):
        with psycopg.connect(dsn, autocommit=True) as admin:
            sandbox.ensure_sandbox(admin)
            admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(login)))
            admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(login)))
        try:
            with psycopg.connect(dsn, user=login, autocommit=True) as app:
                r = run(app, "SELECT 1 AS actual FROM doc")
                assert r.error is not None and "may not SET ROLE docassay_rule" in r.error
                assert f'GRANT "docassay_rule" TO "{login}"' in r.error and "DOCASSAY_RULE_SANDBOX=off" in r.error
            with psycopg.connect(dsn, autocommit=True) as admin:   # the administrator runs what it said
                admin.execute(sandbox.setup_sql(login).replace("CREATE ROLE", "-- CREATE ROLE"))
            sandbox.forget()
            with psycopg.connect(dsn, user=login, autocommit=True) as app:
                r = run(app, "SELECT current_user AS actual FROM doc")
                assert r.error is None and r.violations[0].actual == sandbox.ROLE_NAME
        finally:
            with psycopg.connect(dsn, autocommit=True) as admin:
                admin.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(login)))
                admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(login)))
