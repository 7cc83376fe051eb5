"""Errors of the SQL business-rule engine.

    infra.errors.DocassayError
    └── RulesError                base of this package
        ├── RuleError             a rule pack is malformed or a rule is not a read-only query;
        │                         carries `file` and `line` (message reads "file:line: ...")
        └── SchemaMappingError    the JSON Schema cannot be turned into relations (bad field name,
                                  a field that collides with `doc` or `idx`); carries `field`

A rule that fails while running (syntax, timeout, type error) is not an exception: it becomes a
RuleResult with `error` set, so one bad rule never stops a batch.
"""
from __future__ import annotations

from docassay.infra.errors import DocassayError


class RulesError(DocassayError):
    kind = "rules"


class RuleError(RulesError):
    kind = "rule_pack"

    def __init__(self, message: str, *, file: str, line: int, rule: str | None = None) -> None:
        super().__init__(f"{file}:{line}: {message}", file=file, line=line, rule=rule)
        self.file = file
        self.line = line
        self.rule = rule
        self.reason = message


class SchemaMappingError(RulesError):
    kind = "rule_schema"

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message, field=field)
        self.field = field
