"""The record as relations a rule can query: `doc` and one relation per array of objects.

From the target JSON Schema:
  * `doc`: one row; one column per top-level scalar field, typed
        string -> text, string with format "date" -> date, number -> numeric,
        integer -> bigint, boolean -> boolean  (a missing value is NULL);
  * for each top-level array-of-objects field, a relation of the same name: one row per item,
    columns from the item schema's scalar properties, plus `idx` (bigint, the 0-based position).
Other fields (nested objects, arrays of scalars, untyped fields) are not mapped; `skipped` lists
them. Field names must match ^[A-Za-z_][A-Za-z0-9_]*$; a name with upper-case letters must be
double-quoted in rule SQL, as PostgreSQL folds unquoted names to lower case.

The relations are common table expressions over VALUES rows whose every value is a bound
parameter (`%s::type`), never SQL text: no temporary table, so the same SQL runs on Aurora DSQL.
An empty or absent array is a typed relation with no rows.

A value that does not fit its column (a date "31.02.2020", an amount "12,50 EUR", a string where
a number belongs) is bound as NULL and reported as a `Coercion`; the JSON Schema gate reports the
type error itself. NUL characters (which PostgreSQL text cannot hold) are removed from strings and
unpaired UTF-16 surrogates replaced by U+FFFD, both reported too.
"""
from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Literal, Mapping

from psycopg import sql

from docassay.rules.errors import SchemaMappingError

__all__ = ["SqlType", "Column", "Relation", "RelationSchema", "Coercion", "BoundRelations",
           "relation_schema", "bind_record", "wrap_rule", "DOC", "IDX", "MAX_PARAMS"]

SqlType = Literal["text", "date", "numeric", "bigint", "boolean"]
DOC = "doc"
IDX = "idx"
MAX_PARAMS = 60_000          # PostgreSQL's protocol allows 65,535 bound parameters per statement
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_BIGINT = (-(2 ** 63), 2 ** 63 - 1)


@dataclass(frozen=True)
class Column:
    name: str
    sql_type: SqlType


@dataclass(frozen=True)
class Relation:
    name: str
    columns: tuple[Column, ...]       # for an array relation, `idx` comes first


@dataclass(frozen=True)
class RelationSchema:
    doc: Relation
    arrays: tuple[Relation, ...]
    skipped: tuple[str, ...]          # top-level fields with no relational mapping

    def relation(self, name: str) -> Relation | None:
        if name == DOC:
            return self.doc
        return next((r for r in self.arrays if r.name == name), None)


@dataclass(frozen=True)
class Coercion:
    """A value that reached the rules as NULL (or altered), and why."""
    path: str                         # e.g. "issue_date", "line_items[2].quantity"
    reason: str


@dataclass(frozen=True)
class BoundRelations:
    ctes: sql.Composed                # `doc(...) AS (VALUES ...), line_items(...) AS (...)`
    params: tuple[Any, ...]           # one per placeholder, in order
    coercions: tuple[Coercion, ...]


def relation_schema(schema: Mapping[str, Any]) -> RelationSchema:
    """Map a JSON Schema (an object schema) to relations; raises SchemaMappingError on a bad name."""
    props = schema.get("properties")
    if schema.get("type", "object") != "object" or not isinstance(props, Mapping):
        raise SchemaMappingError("the schema must describe an object with properties", field="")
    doc_cols: list[Column] = []
    arrays: list[Relation] = []
    skipped: list[str] = []
    for name, sub in props.items():
        _check_name(name, name)
        sub = _resolve(schema, sub)
        scalar = _scalar_type(sub)
        if scalar is not None:
            doc_cols.append(Column(name, scalar))
            continue
        item = _resolve(schema, sub.get("items")) if _json_type(sub) == "array" else None
        if isinstance(item, Mapping) and _json_type(item) == "object" and isinstance(item.get("properties"), Mapping):
            if name == DOC:
                raise SchemaMappingError(f"an array field may not be called {DOC!r}", field=name)
            cols = [Column(IDX, "bigint")]
            for iname, isub in item["properties"].items():
                _check_name(iname, f"{name}[].{iname}")
                if iname == IDX:
                    raise SchemaMappingError(f"{name}[].{IDX}: {IDX!r} is reserved for the item position",
                                             field=f"{name}[].{iname}")
                itype = _scalar_type(_resolve(schema, isub))
                if itype is None:
                    skipped.append(f"{name}[].{iname}")
                else:
                    cols.append(Column(iname, itype))
            arrays.append(Relation(name, tuple(cols)))
        else:
            skipped.append(name)
    return RelationSchema(Relation(DOC, tuple(doc_cols)), tuple(arrays), tuple(skipped))


def _check_name(name: object, path: str) -> None:
    if not isinstance(name, str) or not _IDENT.match(name):
        raise SchemaMappingError(f"field name {path!r} cannot be a SQL column: use letters, digits and '_' "
                                 "(not starting with a digit)", field=str(path))


def _resolve(root: Mapping[str, Any], sub: Any) -> Any:
    """Follow local `$ref`s ("#/$defs/x", "#/definitions/x"); other refs are left as they are."""
    seen = 0
    while isinstance(sub, Mapping) and isinstance(sub.get("$ref"), str) and sub["$ref"].startswith("#/"):
        node: Any = root
        for part in sub["$ref"][2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            node = node.get(part) if isinstance(node, Mapping) else None
        if node is None or seen > 32:
            return sub
        sub, seen = node, seen + 1
    return sub


def _json_type(sub: Any) -> str | None:
    """The schema's one non-null type ("string", ...), from `type` or all-string `enum`/`const`."""
    if not isinstance(sub, Mapping):
        return None
    t = sub.get("type")
    if isinstance(t, list):
        non_null = [x for x in t if x != "null"]
        t = non_null[0] if len(non_null) == 1 else None
    if t is None:
        values = sub["enum"] if isinstance(sub.get("enum"), list) else [sub["const"]] if "const" in sub else None
        if values and all(isinstance(v, str) for v in values):
            return "string"
    return t if isinstance(t, str) else None


def _scalar_type(sub: Any) -> SqlType | None:
    t = _json_type(sub)
    if t == "string":
        return "date" if sub.get("format") == "date" else "text"
    return {"number": "numeric", "integer": "bigint", "boolean": "boolean"}.get(t or "")  # type: ignore[return-value]


# ---- binding a record ------------------------------------------------------------------------

def bind_record(rs: RelationSchema, record: Mapping[str, Any]) -> BoundRelations:
    """The CTEs for `record` and their parameters; values that do not fit become NULL + Coercion."""
    params: list[Any] = []
    notes: list[Coercion] = []
    ctes = [_cte(rs.doc, [record if isinstance(record, Mapping) else {}], None, params, notes)]
    if not isinstance(record, Mapping):
        notes.append(Coercion("", "the record is not a JSON object"))
        record = {}
    for rel in rs.arrays:
        raw = record.get(rel.name)
        items: list[Mapping[str, Any]] = []
        if raw is None:
            pass
        elif not isinstance(raw, list):
            notes.append(Coercion(rel.name, f"expected an array, got {_kind(raw)}: no rows"))
        else:
            for k, item in enumerate(raw):
                if isinstance(item, Mapping):
                    items.append(item)
                else:
                    notes.append(Coercion(f"{rel.name}[{k}]", f"expected an object, got {_kind(item)}: all NULL"))
                    items.append({})
        ctes.append(_cte(rel, items, rel.name, params, notes))
    return BoundRelations(sql.SQL(",\n").join(ctes), tuple(params), tuple(notes))


def _cte(rel: Relation, rows: list[Mapping[str, Any]], array: str | None,
         params: list[Any], notes: list[Coercion]) -> sql.Composed:
    name = sql.Identifier(rel.name)
    cols = sql.SQL(", ").join(sql.Identifier(c.name) for c in rel.columns)
    if not rel.columns:                                   # a schema without scalar fields
        return sql.SQL("{} AS (SELECT)").format(name)
    if not rows:                                          # typed relation with no rows
        nulls = sql.SQL(", ").join(sql.SQL("NULL::{}").format(sql.SQL(c.sql_type)) for c in rel.columns)
        return sql.SQL("{}({}) AS (SELECT {} WHERE false)").format(name, cols, nulls)
    values = []
    for k, row in enumerate(rows):
        cells = []
        for c in rel.columns:
            if array is not None and c.name == IDX:
                value: Any = k
            else:
                path = f"{array}[{k}].{c.name}" if array is not None else c.name
                value = _fit(c.sql_type, row.get(c.name), path, notes)
            params.append(value)
            cells.append(sql.SQL("{}::{}").format(sql.Placeholder(), sql.SQL(c.sql_type)))
        values.append(sql.SQL("({})").format(sql.SQL(", ").join(cells)))
    return sql.SQL("{}({}) AS (VALUES {})").format(name, cols, sql.SQL(", ").join(values))


def _fit(sql_type: SqlType, value: Any, path: str, notes: list[Coercion]) -> Any:
    """`value` as the Python value to bind for `sql_type`, or None (with a note) if it does not fit."""
    if value is None:
        return None

    def reject(why: str) -> None:
        notes.append(Coercion(path, f"{why}: bound as NULL"))

    if sql_type == "text":
        if not isinstance(value, str):
            return reject(f"expected a string, got {_kind(value)}")
        return _clean_text(value, path, notes)
    if sql_type == "date":
        if not isinstance(value, str) or not _ISO_DATE.match(value):
            return reject(f"{_show(value)} is not a date written YYYY-MM-DD")
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            return reject(f"{_show(value)} is not a calendar date")
    if sql_type == "boolean":
        if not isinstance(value, bool):
            return reject(f"expected true or false, got {_kind(value)}")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return reject(f"expected a number, got {_kind(value)} {_show(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        return reject(f"{value} is not a finite number")
    if sql_type == "bigint":
        if isinstance(value, float):
            if not value.is_integer():
                return reject(f"{value} is not an integer")
            value = int(value)
        if not _BIGINT[0] <= value <= _BIGINT[1]:
            return reject(f"{value} is out of range for bigint")
        return value
    try:                                                  # numeric: exact decimal of the JSON text
        return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except InvalidOperation:                              # pragma: no cover - finite floats always convert
        return reject(f"{_show(value)} is not a number")


def _clean_text(value: str, path: str, notes: list[Coercion]) -> str:
    if "\x00" in value:
        value = value.replace("\x00", "")
        notes.append(Coercion(path, "NUL characters removed (PostgreSQL text cannot hold them)"))
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        notes.append(Coercion(path, "unpaired surrogates replaced by U+FFFD"))
    return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "an array", dict: "an object"}.get(type(value), type(value).__name__)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def wrap_rule(bound: BoundRelations, rule_sql: str) -> sql.Composed:
    """`WITH <relations> SELECT * FROM (<rule>) AS violations`, ready to execute with `bound.params`.

    The rule text is passed through as SQL; its `%` signs are doubled so that they are not taken
    for placeholders (the rule itself binds nothing).
    """
    body = sql.SQL(rule_sql.replace("%", "%%"))
    return sql.SQL("WITH {}\nSELECT * FROM (\n{}\n) AS violations").format(bound.ctes, body)
