"""Reading rule packs: `.sql` files of business rules, each a header and one read-only query.

A rule is a header of `-- key: value` comment lines followed by one SELECT or WITH statement; a
line `-- rule: NAME` starts the next rule, so a file holds any number of them:

    -- rule: gross_equals_net_plus_tax
    -- severity: error
    -- fields: gross_total, net_total, tax_total
    -- message: gross total must equal net total plus tax
    SELECT gross_total, net_total + tax_total AS expected FROM doc
    WHERE abs(gross_total - (net_total + tax_total)) > 0.02;

Header keys: `rule` (name, unique in the pack), `severity` (error | warning; default error),
`fields` (comma-separated record fields the rule is about), `message`, `description`. Other
lowercase keys are refused (a typo must not pass silently); comment lines that are not `key:
value` are free text. Statements before the first `-- rule:` line take the file's name.

A statement is refused (RuleError with file and line) unless it is exactly one query starting
with SELECT or WITH (a trailing `;` is allowed; `;` inside strings and comments is fine). Words
that only writes use (INSERT, UPDATE, DELETE, MERGE, INTO, COPY, DDL ...) and functions with
effects outside the query (set_config, advisory locks, file access, ...) are refused too; quote a
column that happens to be called e.g. "update". These word lists are only a first, friendlier
error: they read the text, which U& identifiers and SQL inside strings get around. The defence is
the runner's sandbox (rules.sandbox): every rule runs READ ONLY as a role that can read nothing
but its record's relations, so a write hidden in a function, or a file read, still fails there.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from docassay.infra.db.errors import SqlTextError
from docassay.infra.db.sqltext import Token, tokenize
from docassay.rules.errors import RuleError

__all__ = ["Rule", "Severity", "load_rules", "parse_rules", "check_statement", "HEADER_KEYS"]

Severity = Literal["error", "warning"]
HEADER_KEYS = ("rule", "severity", "fields", "message", "description")

_HEADER_LINE = re.compile(r"^--\s*([a-z_]+)\s*:\s*(.*?)\s*$")
_RULE_LINE = re.compile(r"^--\s*rule\s*:", re.IGNORECASE)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\[\])?(?:\.[A-Za-z_][A-Za-z0-9_]*)*$")

# Bare words that only statements with effects use. Keywords fold to lower case; a quoted
# identifier ("update") is a name, never a keyword, so it is not affected.
DENIED_WORDS = frozenset({
    "insert", "update", "delete", "merge", "truncate", "into", "copy",
    "create", "alter", "drop", "grant", "revoke",
})
# Functions that act outside the query even in a read-only transaction.
DENIED_FUNCTIONS = frozenset({
    "set_config", "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile",
    "pg_promote", "pg_switch_wal", "pg_notify", "pg_stat_file", "pg_sleep_until",
    "query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema", "cursor_to_xml",
    "cursor_to_xmlschema", "table_to_xml", "table_to_xmlschema", "table_to_xml_and_xmlschema",
    "schema_to_xml", "schema_to_xmlschema", "schema_to_xml_and_xmlschema", "database_to_xml",
    "database_to_xmlschema", "database_to_xml_and_xmlschema",
    "nextval", "setval", "txid_current", "pg_current_xact_id",
})
DENIED_FUNCTION_PREFIXES = ("pg_advisory", "pg_try_advisory", "lo_", "dblink", "pg_read_", "pg_ls_",
                            "pg_file", "pg_logical_", "pg_replication_", "pg_create_", "pg_drop_",
                            "pg_stat_reset", "pg_log_", "pg_import_")


@dataclass(frozen=True)
class Rule:
    name: str
    severity: Severity
    fields: tuple[str, ...]
    message: str
    sql: str                      # the query, without a trailing `;`
    source_file: str
    line: int                     # 1-based line of the rule's header (or statement) in source_file
    description: str = field(default="", compare=False)


def load_rules(path: str | Path) -> list[Rule]:
    """Rules from a `.sql` file, or from every `*.sql` file under a folder (sorted by path).

    Raises RuleError for a malformed rule, a duplicate name, an unreadable file or an empty pack.
    """
    root = Path(path)
    if root.is_dir():
        files = sorted(p for p in root.rglob("*.sql") if p.is_file())
        if not files:
            raise RuleError("no .sql files in this folder", file=str(root), line=0)
    elif root.is_file():
        files = [root]
    else:
        raise RuleError("no such rule file or folder", file=str(root), line=0)
    rules: list[Rule] = []
    seen: dict[str, Rule] = {}
    for f in files:
        try:
            text = f.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise RuleError(f"cannot read rule file: {exc}", file=str(f), line=0) from exc
        for rule in parse_rules(text, source_file=str(f)):
            if rule.name in seen:
                first = seen[rule.name]
                raise RuleError(f"duplicate rule name {rule.name!r} (first at {first.source_file}:{first.line})",
                                file=rule.source_file, line=rule.line, rule=rule.name)
            seen[rule.name] = rule
            rules.append(rule)
    return rules


def parse_rules(text: str, *, source_file: str = "<string>") -> list[Rule]:
    """The rules in one file's text, in order (see the module docstring for the format)."""
    try:
        tokens = list(tokenize(text))
    except SqlTextError as exc:
        raise RuleError(exc.message, file=source_file, line=exc.line) from exc
    starts = [t for t in tokens if t.kind == "comment" and _RULE_LINE.match(t.text) and _starts_line(text, t)]
    bounds = [0] + [t.start for t in starts] + [len(text)]
    rules: list[Rule] = []
    names: set[str] = set()
    for i in range(len(bounds) - 1):
        block = [t for t in tokens if bounds[i] <= t.start < bounds[i + 1]]
        rule = _parse_block(text, block, source_file, is_preamble=(i == 0))
        if rule is None:
            continue
        if rule.name in names:
            raise RuleError(f"duplicate rule name {rule.name!r}", file=source_file, line=rule.line, rule=rule.name)
        names.add(rule.name)
        rules.append(rule)
    return rules


def _starts_line(text: str, t: Token) -> bool:
    line_start = text.rfind("\n", 0, t.start) + 1
    return text[line_start:t.start].strip() == ""


def _parse_block(text: str, block: list[Token], source_file: str, *, is_preamble: bool) -> Rule | None:
    header: dict[str, tuple[str, int]] = {}
    code_at = next((k for k, t in enumerate(block) if t.kind not in ("space", "comment")), None)
    for t in block[:code_at]:
        if t.kind != "comment" or not t.text.startswith("--"):
            continue
        m = _HEADER_LINE.match(t.text)
        if not m:
            continue                                   # a free-text comment
        key, value = m.group(1), m.group(2)
        if code_at is None and is_preamble:
            continue                                   # file comments before the first rule
        if key not in HEADER_KEYS:
            raise RuleError(f"unknown header key {key!r} (known: {', '.join(HEADER_KEYS)})",
                            file=source_file, line=t.line)
        if key in header:
            raise RuleError(f"header key {key!r} given twice", file=source_file, line=t.line)
        header[key] = (value, t.line)
    if code_at is None:
        if is_preamble:
            return None
        name, line = header.get("rule", ("?", block[0].line if block else 0))
        raise RuleError(f"rule {name!r} has no SELECT or WITH statement", file=source_file, line=line, rule=name)

    first_code = block[code_at]
    if "rule" in header:
        name, line = header["rule"]
    else:                                              # a statement before any `-- rule:` line
        name, line = Path(source_file).stem, first_code.line
    if not _NAME.match(name):
        raise RuleError(f"rule name {name!r} must be letters, digits, '_', '.' or '-'",
                        file=source_file, line=line, rule=name)

    severity_text, sev_line = header.get("severity", ("error", line))
    severity = re.sub(r"\s+\(.*\)$", "", severity_text).strip().lower()   # allow "error   (error | warning)"
    if severity not in ("error", "warning"):
        raise RuleError(f"severity must be error or warning, not {severity_text!r}",
                        file=source_file, line=sev_line, rule=name)

    fields_text, fields_line = header.get("fields", ("", line))
    fields = tuple(f.strip() for f in fields_text.split(",") if f.strip())
    for f in fields:
        if not _FIELD.match(f):
            raise RuleError(f"field {f!r} is not a field name or path like line_items.line_total",
                            file=source_file, line=fields_line, rule=name)

    end = block[-1].end
    stmt = text[first_code.start:end]
    sql = check_statement(stmt, file=source_file, line=first_code.line, rule=name)
    message = header.get("message", (f"rule {name} is violated", line))[0]
    return Rule(name=name, severity=severity,  # type: ignore[arg-type]
                fields=fields, message=message, sql=sql, source_file=source_file, line=line,
                description=header.get("description", ("", line))[0])


def check_statement(sql: str, *, file: str = "<string>", line: int = 1, rule: str | None = None) -> str:
    """Return `sql` without its trailing `;` if it is one read-only SELECT/WITH query; else raise RuleError.

    `line` is the line of `sql`'s first character in `file`, so errors point into the file.
    """
    try:
        tokens = list(tokenize(sql, first_line=line))
    except SqlTextError as exc:
        raise RuleError(exc.message, file=file, line=exc.line, rule=rule) from exc
    code = [t for t in tokens if t.kind not in ("space", "comment")]
    if not code:
        raise RuleError("empty statement", file=file, line=line, rule=rule)

    semis = [k for k, t in enumerate(code) if t.kind == "semicolon"]
    if semis:
        first = semis[0]
        if first + 1 < len(code):
            extra = code[first + 1]
            raise RuleError(f"only one statement per rule: found {extra.text!r} after ';' "
                            f"(start the next rule with a '-- rule:' line)", file=file, line=extra.line, rule=rule)
        body_end = code[first].start
    else:
        body_end = len(sql)
    body = [t for t in code if t.start < body_end]
    if not body:
        raise RuleError("empty statement", file=file, line=line, rule=rule)

    lead = next((t for t in body if t.text != "("), body[0])
    if lead.kind != "word" or lead.word not in ("select", "with"):
        raise RuleError(f"a rule must be a SELECT or WITH query, not {lead.text!r}",
                        file=file, line=lead.line, rule=rule)

    for k, t in enumerate(body):
        if t.kind == "word" and t.word in DENIED_WORDS:
            raise RuleError(f"{t.text.upper()} is not allowed: a rule is a read-only query",
                            file=file, line=t.line, rule=rule)
        if t.kind in ("word", "quoted_ident"):
            name = t.word if t.kind == "word" else t.text[1:-1].replace('""', '"')
            called = k + 1 < len(body) and body[k + 1].text == "("
            if called and (name in DENIED_FUNCTIONS or name.startswith(DENIED_FUNCTION_PREFIXES)):
                raise RuleError(f"function {name}() is not allowed in a rule (it acts outside the query)",
                                file=file, line=t.line, rule=rule)
    return sql[:body_end].strip()
