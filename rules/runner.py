"""Running SQL business rules against one record.

Each rule runs as `WITH doc AS (...), <arrays> AS (...) SELECT * FROM (<rule>) AS violations`
(see rules.relations) in its own READ ONLY transaction with `SET LOCAL statement_timeout`, as the
unprivileged role of the rule sandbox (rules.sandbox: it sees only those relations), and is
always rolled back. The statement always carries bound parameters (at least its LIMIT), so it
goes over the extended protocol, which runs exactly one statement. A rule passes when it returns no rows; each row is a violation, reported
with its columns. A rule that fails to run (syntax error, timeout, a type error, an attempted
write) becomes a result with `error` set; the batch goes on and the connection stays usable.

Reading a violation row: a column named `field` or `message` (text) overrides the rule header's
for that row (e.g. `'line_items[' || idx || '].line_total' AS field`); columns named `expected`
and `actual` fill the slots of the same name in results.jsonl. When there is no `actual` column,
the row's column named like the header's first field stands in for it.
"""
from __future__ import annotations

import datetime as dt
import json
import logging
import time
import uuid
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any, Mapping, Sequence

import psycopg
from psycopg import errors as pgerrors
from psycopg import sql

from docassay.rules.errors import RuleError
from docassay.rules.loader import Rule, Severity, check_statement
from docassay.rules.relations import (
    MAX_PARAMS,
    BoundRelations,
    Coercion,
    RelationSchema,
    bind_record,
    relation_schema,
    wrap_rule,
)
from docassay.rules.sandbox import SandboxLimits, SandboxUnavailable, ensure_sandbox, enter_statements

__all__ = ["Violation", "RuleResult", "run_rules", "check_rules", "DEFAULT_MAX_VIOLATIONS"]

JSONValue = Any      # None | bool | int | float | str | list | dict, as json.dumps accepts
DEFAULT_MAX_VIOLATIONS = 100
DEFAULT_LIMITS = SandboxLimits()     # frozen, so one shared default is safe
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Violation:
    rule: str
    severity: Severity
    field: str | None                 # the row's `field` column, else the header's fields joined
    message: str                      # the row's `message` column, else the header's message
    values: Mapping[str, JSONValue]   # every column of the row, JSON-ready

    @property
    def expected(self) -> JSONValue:
        return self.values.get("expected")

    @property
    def actual(self) -> JSONValue:
        return self.values.get("actual")

    def as_row(self) -> dict[str, JSONValue]:
        """The violation as it appears in results.jsonl `verification.violations`."""
        return {"rule": self.rule, "severity": self.severity, "field": self.field, "message": self.message,
                "expected": self.expected, "actual": self.actual, "values": dict(self.values)}


@dataclass(frozen=True)
class RuleResult:
    rule: str
    severity: Severity
    passed: bool                      # ran and returned no rows
    violations: tuple[Violation, ...] = ()
    error: str | None = None          # why the rule could not run (then passed is False)
    truncated: bool = False           # more than max_violations rows; only the first ones are kept
    coercions: tuple[Coercion, ...] = ()   # record values bound as NULL or altered (same for every rule)
    duration_ms: float = 0.0

    @property
    def blocking(self) -> bool:
        """An error-severity rule that failed or could not run: the `rules` gate fails on it."""
        return self.severity == "error" and not self.passed


def run_rules(
    conn: psycopg.Connection,
    schema: Mapping[str, Any] | RelationSchema,
    record: Mapping[str, Any],
    rules: Sequence[Rule],
    *,
    timeout_ms: int,
    max_violations: int = DEFAULT_MAX_VIOLATIONS,
    sandbox: bool = True,
    limits: SandboxLimits = DEFAULT_LIMITS,
) -> list[RuleResult]:
    """Run every rule against `record`; one result per rule, in order.

    `schema` is the target JSON Schema (or its RelationSchema, to map it once per batch). The
    connection must not be inside a transaction; it is left idle and usable. Raises only for a
    schema that cannot be mapped (SchemaMappingError) or a busy connection. `sandbox=False` runs
    the rules with the connection's own privileges (see rules.sandbox: only for trusted packs);
    when the sandbox cannot be set up, every rule fails to run with the reason (fail closed).
    """
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        raise psycopg.ProgrammingError("run_rules needs a connection that is not inside a transaction")
    rs = schema if isinstance(schema, RelationSchema) else relation_schema(schema)
    bound = bind_record(rs, record)
    too_many = len(bound.params) > MAX_PARAMS
    unavailable: str | None = None
    enter: sql.Composed | None = None
    enter_all: sql.Composed | None = None          # the same, with the rules' timeouts added up
    if rules and sandbox and not too_many:
        try:
            superuser = ensure_sandbox(conn)
            enter = enter_statements(limits, timeout_ms=timeout_ms, superuser=superuser)
            enter_all = enter_statements(limits, timeout_ms=timeout_ms * len(rules), superuser=superuser)
        except SandboxUnavailable as exc:
            unavailable = f"rule sandbox unavailable: {exc.message}"
    elif not sandbox:
        enter = sql.SQL("SET TRANSACTION READ ONLY; SET LOCAL statement_timeout = {}").format(
            sql.Literal(max(1, int(timeout_ms))))
        enter_all = sql.SQL("SET TRANSACTION READ ONLY; SET LOCAL statement_timeout = {}").format(
            sql.Literal(max(1, int(timeout_ms)) * len(rules)))
    if enter_all is not None and len(rules) > 1 and not conn.closed:
        together = _run_together(conn, bound, rules, enter_all, max_violations)
        if together is not None:
            return together
    results = []
    for rule in rules:
        t0 = time.perf_counter()
        if too_many:
            result = RuleResult(rule.name, rule.severity, False, error=(
                f"the record is too large to check ({len(bound.params)} values; at most {MAX_PARAMS})"),
                coercions=bound.coercions)
        elif unavailable is not None or enter is None:
            result = RuleResult(rule.name, rule.severity, False, error=unavailable, coercions=bound.coercions)
        else:
            result = _run_one(conn, bound, rule, enter, timeout_ms, max_violations)
        results.append(_with_time(result, t0))
    return results


def _with_time(r: RuleResult, t0: float) -> RuleResult:
    return RuleResult(r.rule, r.severity, r.passed, r.violations, r.error, r.truncated, r.coercions,
                      round((time.perf_counter() - t0) * 1000, 3))


def _run_one(conn: psycopg.Connection, bound: BoundRelations, rule: Rule, enter: sql.Composed,
             timeout_ms: int, max_violations: int) -> RuleResult:
    def failed(error: str) -> RuleResult:
        return RuleResult(rule.name, rule.severity, False, error=error, coercions=bound.coercions)

    try:   # rules built in code skip the loader: check them here too (once per rule and process)
        rule_sql = _checked_sql(rule)
    except RuleError as exc:
        return failed(f"invalid rule: {exc.reason}")
    if conn.closed:
        return failed("the database connection is closed")
    query = sql.SQL("{} LIMIT {}").format(wrap_rule(bound, rule_sql), sql.Placeholder())
    try:
        with conn.transaction():
            conn.execute(enter)
            with conn.cursor() as cur:
                cur.execute(query, (*bound.params, max_violations + 1))
                names = _column_names(cur.description)
                rows = cur.fetchmany(max_violations + 1)
            raise psycopg.Rollback()       # never keep anything a rule did
    except pgerrors.QueryCanceled:
        return failed(f"timeout: the rule ran longer than {timeout_ms} ms")
    except pgerrors.ReadOnlySqlTransaction as exc:
        return failed(f"the rule tried to write, which rules may not: {_pg_message(exc)}")
    except pgerrors.InsufficientPrivilege as exc:
        return failed(f"the rule reached outside its record, which rules may not: {_pg_message(exc)}")
    except psycopg.Error as exc:
        _log.debug("rule %s failed: %s", rule.name, exc)
        return failed(_pg_message(exc))
    truncated = len(rows) > max_violations
    violations = tuple(_violation(rule, names, row) for row in rows[:max_violations])
    return RuleResult(rule.name, rule.severity, passed=not violations, violations=violations,
                      truncated=truncated, coercions=bound.coercions)


def _run_together(conn: psycopg.Connection, bound: BoundRelations, rules: Sequence[Rule],
                  enter: sql.Composed, max_violations: int) -> list[RuleResult] | None:
    """Every rule in one statement, one round trip: `WITH <relations> SELECT 0, row_to_json(r) FROM
    (<rule 0> LIMIT n+1) r UNION ALL SELECT 1, ...` in one READ ONLY transaction, rolled back; the
    statement timeout is the rules' timeouts added up; it runs in the same sandbox as one rule
    (`enter`: read only, the unprivileged role). Violation values come back through JSON and
    read as the rule-by-rule path reads them (numbers as Decimal first). None when any rule is
    invalid or the statement fails (an error, a timeout): then each rule runs on its own, so the
    failure is the failing rule's alone. Each result's time is the statement's, shared equally."""
    t0 = time.perf_counter()
    parts = []
    for i, rule in enumerate(rules):
        try:
            rule_sql = _checked_sql(rule)
        except RuleError:
            return None
        parts.append(sql.SQL("SELECT {} AS rule_no, row_to_json(r)::text AS row FROM "
                             "(SELECT * FROM (\n{}\n) AS q LIMIT {}) AS r").format(
            sql.Literal(i), sql.SQL(rule_sql.replace("%", "%%")), sql.Literal(max_violations + 1)))
    query = sql.SQL("WITH {}\n{}").format(bound.ctes, sql.SQL("\nUNION ALL\n").join(parts))
    try:
        with conn.transaction():
            conn.execute(enter)                # sandboxed (rules.sandbox), timeouts added up
            with conn.cursor() as cur:
                cur.execute(query, bound.params)
                fetched = cur.fetchall()
            raise psycopg.Rollback()
    except psycopg.Error as exc:
        _log.debug("rules together failed, running them one by one: %s", exc)
        return None
    by_rule: dict[int, list[dict[str, Any]]] = {}
    for rule_no, text in fetched:
        by_rule.setdefault(rule_no, []).append(json.loads(text, parse_float=Decimal, object_pairs_hook=_pairs))
    ms = round((time.perf_counter() - t0) * 1000 / len(rules), 3)
    out = []
    for i, rule in enumerate(rules):
        rows = by_rule.get(i, [])
        violations = tuple(_violation(rule, list(r), list(r.values())) for r in rows[:max_violations])
        out.append(RuleResult(rule.name, rule.severity, passed=not violations, violations=violations,
                              truncated=len(rows) > max_violations, coercions=bound.coercions, duration_ms=ms))
    return out


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON row's columns, a repeated name renamed as `_column_names` does (SELECT a, a)."""
    out: dict[str, Any] = {}
    for name, value in pairs:
        key, n = name, 2
        while key in out:
            key, n = f"{name}_{n}", n + 1
        out[key] = value
    return out


@lru_cache(maxsize=1024)
def _checked_sql(rule: Rule) -> str:
    """`check_statement` of the rule: the tokeniser runs once per rule, not once per record."""
    return check_statement(rule.sql, file=rule.source_file, line=rule.line, rule=rule.name)


def check_rules(conn: psycopg.Connection, schema: Mapping[str, Any] | RelationSchema,
                rules: Sequence[Rule], *, sandbox: bool = True, timeout_ms: int = 2000) -> None:
    """Before any document is read: every rule, wrapped over the schema's relations as it will run
    (one `doc` row of NULLs, empty arrays), is planned by the server (`EXPLAIN`, nothing runs).
    Raises RuleError (file:line) naming the first rule with a syntax error, an unknown column or
    relation, or a type error; SchemaMappingError when the schema has no relations."""
    rs = schema if isinstance(schema, RelationSchema) else relation_schema(schema)
    bound = bind_record(rs, {})
    enter: sql.Composed = sql.SQL("SET TRANSACTION READ ONLY; SET LOCAL statement_timeout = {}").format(
        sql.Literal(max(1, int(timeout_ms))))
    if sandbox and rules:              # planned as the rules will run: in the sandbox (SandboxUnavailable propagates)
        enter = enter_statements(DEFAULT_LIMITS, timeout_ms=timeout_ms, superuser=ensure_sandbox(conn))
    for rule in rules:
        rule_sql = _checked_sql(rule)
        query = sql.SQL("EXPLAIN ") + wrap_rule(bound, rule_sql)
        try:
            with conn.transaction():
                conn.execute(enter)
                conn.execute(query, bound.params)
                raise psycopg.Rollback()
        except psycopg.Error as exc:
            raise RuleError(f"rule {rule.name!r} does not run against the schema's relations "
                            f"({', '.join(r.name for r in (rs.doc, *rs.arrays))}): {_pg_message(exc)}",
                            file=rule.source_file, line=rule.line, rule=rule.name) from exc


def _column_names(description: Any) -> list[str]:
    names: list[str] = []
    for col in description or ():
        name, n = col.name, 2
        while name in names:                      # SELECT a, a: keep both
            name, n = f"{col.name}_{n}", n + 1
        names.append(name)
    return names


def _violation(rule: Rule, names: list[str], row: Sequence[Any]) -> Violation:
    values = {n: _jsonable(v) for n, v in zip(names, row)}
    given_field, given_message = values.get("field"), values.get("message")
    field = given_field if isinstance(given_field, str) else (", ".join(rule.fields) or None)
    message = given_message if isinstance(given_message, str) else rule.message
    if "actual" not in values and rule.fields and rule.fields[0] in values:
        values = {**values, "actual": values[rule.fields[0]]}
    return Violation(rule.name, rule.severity, field, message, values)


def _jsonable(v: Any) -> JSONValue:
    """A value PostgreSQL returned, as something json.dumps writes faithfully."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if v == v and v not in (float("inf"), float("-inf")) else str(v)
    if isinstance(v, Decimal):
        if not v.is_finite():
            return str(v)
        return int(v) if v == v.to_integral_value() and abs(v) < 2 ** 53 else float(v)
    if isinstance(v, (dt.date, dt.datetime, dt.time)):
        return v.isoformat()
    if isinstance(v, dt.timedelta):
        return v.total_seconds()
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return str(v)


def _pg_message(exc: psycopg.Error) -> str:
    diag = getattr(exc, "diag", None)
    primary = (diag.message_primary if diag is not None else None) or str(exc).strip().splitlines()[0]
    state = f" (SQLSTATE {exc.sqlstate})" if exc.sqlstate else ""
    return f"{primary}{state}"
