"""Errors raised by the database layer.

    infra.errors.DatabaseError
    ├── EmbeddedServerError     the embedded PostgreSQL server could not be started or found
    ├── MigrationError          a migration is malformed, failed, or was edited after it ran
    └── SqlTextError            SQL text could not be tokenised (unterminated string or comment)

Each carries context: the data directory and its server log, the migration version, the line.
"""
from __future__ import annotations

from typing import Any

from docassay.infra.errors import DatabaseError


class EmbeddedServerError(DatabaseError):
    kind = "embedded_db"


class MigrationError(DatabaseError):
    kind = "migration"


class SqlTextError(DatabaseError):
    kind = "sql_text"

    def __init__(self, message: str, *, line: int, **context: Any) -> None:
        super().__init__(message, line=line, **context)
        self.line = line
