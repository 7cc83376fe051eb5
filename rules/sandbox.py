"""The rule sandbox: every rule runs as an unprivileged role that sees only the record's relations.

A rule is user-written SQL, so the defence is PostgreSQL's own privilege system, not a reading of
the rule's text (the loader's denylist only gives a friendlier error first). Each rule runs in a
READ ONLY transaction that, before the rule's statement, does

    SET LOCAL statement_timeout, lock_timeout, work_mem (and temp_file_limit, where the session
              may set it); SET LOCAL search_path = pg_catalog; SET LOCAL ROLE docassay_rule

and is always rolled back. The role `docassay_rule` (ROLE_NAME) is NOLOGIN, NOINHERIT, not a
superuser, a member of no role, and holds no privilege on any table, view or sequence: `doc` and
the array relations are CTEs over bound parameters, so it needs none. What PostgreSQL then refuses:
  * files and programs: pg_read_file / pg_ls_dir / lo_import / COPY ... PROGRAM need superuser or
    pg_read_server_files (and COPY is not a query);
  * other documents and every docassay table: no SELECT privilege (`permission denied`);
  * other connections: pg_terminate_backend / pg_cancel_backend need the target's role or
    pg_signal_backend; pg_stat_activity shows other sessions' queries as `<insufficient privilege>`;
  * settings that name paths (data_directory, config_file, hba_file) need pg_read_all_settings;
  * large objects: no SELECT privilege on any (lo_compat_privileges must be off; checked);
  * SQL inside strings (ts_stat('...'), query_to_xml('...')) runs with the same role.
Two functions that PUBLIC may execute would undo the sandbox, so set-up revokes them from PUBLIC
(and grants them back to the connecting role when it is not a superuser):
  * `set_config`: SET ROLE checks membership against the *session* user, so
    `set_config('role', 'postgres', true)` would return a rule to the connection's own role;
  * the session-level advisory lock functions (`pg_advisory_lock`, ...): a lock taken by a rule
    would outlive its rolled-back transaction. (The transaction-level ones are released with it.)
Catalogue views that PostgreSQL grants to PUBLIC (pg_class names, pg_roles without passwords,
pg_settings without the restricted ones) stay readable: they hold no document data.

Set-up (`ensure_sandbox`) needs a superuser, or a role with CREATEROLE that owns nothing to revoke
on (then the revocations must already be done): with the embedded server it is automatic. When
it cannot be done, or when `verify` finds an invariant broken (a table readable by PUBLIC, a
SECURITY DEFINER function the role may call, dblink installed, ...), rules do not run: the error
says what to grant or revoke (`setup_sql()` prints the statements). `sandbox=False` in run_rules
(`DOCASSAY_RULE_SANDBOX=off`) runs rules with the connection's own privileges; only for rule packs
as trusted as the database login itself.

The checks are cached per process for each (server, database, login); the role is cluster-wide,
the revocations are per database.
"""
from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from docassay.rules.errors import RulesError

__all__ = ["ROLE_NAME", "SandboxLimits", "SandboxUnavailable", "ensure_sandbox", "verify", "setup_sql",
           "enter_statements", "forget"]

ROLE_NAME = "docassay_rule"
# Functions PUBLIC may execute that would let a rule leave the sandbox or outlive its transaction.
REVOKED_FUNCTIONS = (
    "pg_catalog.set_config(text, text, boolean)",
    "pg_catalog.pg_advisory_lock(bigint)",
    "pg_catalog.pg_advisory_lock(integer, integer)",
    "pg_catalog.pg_advisory_lock_shared(bigint)",
    "pg_catalog.pg_advisory_lock_shared(integer, integer)",
    "pg_catalog.pg_try_advisory_lock(bigint)",
    "pg_catalog.pg_try_advisory_lock(integer, integer)",
    "pg_catalog.pg_try_advisory_lock_shared(bigint)",
    "pg_catalog.pg_try_advisory_lock_shared(integer, integer)",
)
# Extensions whose functions reach other servers or run SQL as someone else.
FORBIDDEN_EXTENSIONS = ("dblink", "postgres_fdw", "adminpack", "file_fdw")
# pg_advisory_xact_lock key serialising set-up: first 8 bytes of sha256("docassay.rule_sandbox")
_SETUP_LOCK_KEY = int.from_bytes(hashlib.sha256(b"docassay.rule_sandbox").digest()[:8], "big", signed=True)


class SandboxUnavailable(RulesError):
    """Rules cannot run sandboxed on this database; the message says what to grant or revoke."""
    kind = "rule_sandbox"
    exit_status = 2                   # at the CLI: a setup problem, refused before anything is read


@dataclass(frozen=True)
class SandboxLimits:
    """Bounds set for each rule's transaction (besides the statement timeout)."""
    work_mem: str = "16MB"          # per sort / hash; a recursive-CTE bomb spills to disk beyond it
    temp_file_limit: str = "64MB"   # disk a rule may spill (needs a superuser session to set)
    max_lock_wait_ms: int = 1000    # lock_timeout: a rule never queues behind a writer for long


@dataclass(frozen=True)
class _Checked:
    superuser: bool


_checked: dict[tuple[str, str, str, str], _Checked] = {}
_lock = threading.Lock()


def _key(conn: psycopg.Connection) -> tuple[str, str, str, str]:
    info = conn.info
    return (str(info.host), str(info.port), str(info.dbname), str(info.user))


def forget() -> None:
    """Drop the per-process cache (tests that drop and re-create the role use it)."""
    with _lock:
        _checked.clear()


def ensure_sandbox(conn: psycopg.Connection) -> bool:
    """Set the sandbox up on `conn`'s database if needed and verify it; return whether the session is superuser.

    `conn` must be idle (autocommit, outside a transaction). Raises SandboxUnavailable.
    """
    key = _key(conn)
    with _lock:
        hit = _checked.get(key)
    if hit is not None:
        return hit.superuser
    superuser = _is_superuser(conn)
    problems = verify(conn)
    if problems:
        _set_up(conn, superuser)
        problems = verify(conn)
    if problems:
        raise SandboxUnavailable(
            "SQL rules cannot run sandboxed on this database: " + "; ".join(problems)
            + ". As an administrator run:\n" + setup_sql(_session_user(conn))
            + "\nor set DOCASSAY_RULE_SANDBOX=off to run rules with the connection's own privileges "
              "(only for rule packs you trust as much as the database login).")
    with _lock:
        _checked[key] = _Checked(superuser)
    return superuser


def enter_statements(limits: SandboxLimits, *, timeout_ms: int, superuser: bool) -> sql.Composed:
    """The SET LOCAL statements that open a rule's transaction, ending with the switch to ROLE_NAME."""
    parts = [
        sql.SQL("SET TRANSACTION READ ONLY"),
        sql.SQL("SET LOCAL statement_timeout = {}").format(sql.Literal(max(1, int(timeout_ms)))),
        sql.SQL("SET LOCAL lock_timeout = {}").format(sql.Literal(max(1, int(limits.max_lock_wait_ms)))),
        sql.SQL("SET LOCAL work_mem = {}").format(sql.Literal(limits.work_mem)),
        sql.SQL("SET LOCAL search_path = pg_catalog"),
    ]
    if superuser:                                         # temp_file_limit is superuser-only to set
        parts.append(sql.SQL("SET LOCAL temp_file_limit = {}").format(sql.Literal(limits.temp_file_limit)))
    parts.append(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(ROLE_NAME)))
    return sql.SQL("; ").join(parts)


def verify(conn: psycopg.Connection) -> list[str]:
    """What is wrong with the sandbox on this database (empty: rules may run as ROLE_NAME)."""
    role = conn.execute(
        "SELECT oid, rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls "
        "FROM pg_catalog.pg_roles WHERE rolname = %s", [ROLE_NAME]).fetchone()
    if role is None:
        return [f"the role {ROLE_NAME} does not exist"]
    problems: list[str] = []
    oid, *powers = role
    if any(powers):
        problems.append(f"the role {ROLE_NAME} has SUPERUSER, CREATEROLE, CREATEDB, REPLICATION or BYPASSRLS")
    member_of = [r for (r,) in conn.execute(
        "SELECT g.rolname FROM pg_catalog.pg_auth_members m JOIN pg_catalog.pg_roles g ON g.oid = m.roleid "
        "WHERE m.member = %s ORDER BY 1", [oid])]
    if member_of:
        problems.append(f"the role {ROLE_NAME} is a member of {', '.join(member_of)}")
    if not _value(conn.execute("SELECT pg_catalog.pg_has_role(session_user, %s, %s)",
                        [ROLE_NAME, "SET" if conn.info.server_version >= 160000 else "MEMBER"])):
        problems.append(f"the login {_session_user(conn)} may not SET ROLE {ROLE_NAME}")
    callable_ = [f for f in REVOKED_FUNCTIONS if _value(conn.execute(
        "SELECT pg_catalog.has_function_privilege(%s, %s, 'EXECUTE')", [ROLE_NAME, f]))]
    if callable_:
        problems.append(f"PUBLIC may execute {', '.join(callable_)}")
    readable = [r for (r,) in conn.execute(
        "SELECT n.nspname || '.' || c.relname FROM pg_catalog.pg_class c "
        "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f', 'S') "
        "AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%%' "
        "AND (pg_catalog.has_table_privilege(%s, c.oid, 'SELECT') "
        "     OR pg_catalog.has_any_column_privilege(%s, c.oid, 'SELECT')) ORDER BY 1 LIMIT 6",
        [ROLE_NAME, ROLE_NAME])]
    if readable:
        problems.append(f"the role {ROLE_NAME} (or PUBLIC) may read {', '.join(readable)}")
    definers = [r for (r,) in conn.execute(
        "SELECT p.oid::regprocedure::text FROM pg_catalog.pg_proc p "
        "JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace "
        "WHERE p.prosecdef AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
        "AND pg_catalog.has_function_privilege(%s, p.oid, 'EXECUTE') ORDER BY 1 LIMIT 6", [ROLE_NAME])]
    if definers:
        problems.append(f"the role {ROLE_NAME} (or PUBLIC) may execute SECURITY DEFINER functions {', '.join(definers)}")
    extensions = [r for (r,) in conn.execute(
        "SELECT extname FROM pg_catalog.pg_extension WHERE extname = ANY(%s) ORDER BY 1",
        [list(FORBIDDEN_EXTENSIONS)])]
    if extensions:
        problems.append(f"the extensions {', '.join(extensions)} are installed (they reach other servers or files)")
    if _value(conn.execute("SELECT pg_catalog.current_setting('lo_compat_privileges')")) != "off":
        problems.append("lo_compat_privileges is on (every large object would be readable)")
    return problems


def setup_sql(login: str) -> str:
    """The statements that set the sandbox up on one database, for an administrator to run."""
    who = sql.Identifier(login).as_string(None)
    role = sql.Identifier(ROLE_NAME).as_string(None)
    lines = [f"CREATE ROLE {role} NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS;",
             f"GRANT {role} TO {who};  -- on PostgreSQL 16+: ... WITH INHERIT FALSE, SET TRUE"]
    for f in REVOKED_FUNCTIONS:
        lines.append(f"REVOKE EXECUTE ON FUNCTION {f} FROM PUBLIC; GRANT EXECUTE ON FUNCTION {f} TO {who};")
    return "\n".join(lines)


def _set_up(conn: psycopg.Connection, superuser: bool) -> None:
    """Create the role and revoke what must be revoked, as far as this login may (errors come from verify)."""
    login = _session_user(conn)
    role = sql.Identifier(ROLE_NAME)
    who = sql.Identifier(login)
    steps: list[sql.Composed] = []
    if not conn.execute("SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = %s", [ROLE_NAME]).fetchone():
        steps.append(sql.SQL("CREATE ROLE {} NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT "
                             "NOREPLICATION NOBYPASSRLS").format(role))
    if not superuser:
        steps.append((sql.SQL("GRANT {} TO {} WITH INHERIT FALSE, SET TRUE") if conn.info.server_version >= 160000
                      else sql.SQL("GRANT {} TO {}")).format(role, who))
    for f in REVOKED_FUNCTIONS:
        steps.append(sql.SQL("REVOKE EXECUTE ON FUNCTION {} FROM PUBLIC").format(sql.SQL(f)))
        if not superuser:
            steps.append(sql.SQL("GRANT EXECUTE ON FUNCTION {} TO {}").format(sql.SQL(f), who))
    with conn.transaction():
        conn.execute("SELECT pg_catalog.pg_advisory_xact_lock(%s)", [_SETUP_LOCK_KEY])
        for step in steps:                    # each in a savepoint: do what this login may
            try:
                with conn.transaction():
                    conn.execute(step)
            except psycopg.Error:
                continue                      # not allowed, or another process did it: verify() decides


def _is_superuser(conn: psycopg.Connection) -> bool:
    row = conn.execute("SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = session_user").fetchone()
    return bool(row and row[0])


def _session_user(conn: psycopg.Connection) -> str:
    return str(_value(conn.execute("SELECT session_user")))


def _value(cur: psycopg.Cursor) -> Any:
    """The one value of a SELECT of functions (which always returns one row)."""
    row = cur.fetchone()
    if row is None:
        raise RuntimeError("a one-row catalog query returned no row")
    return row[0]
