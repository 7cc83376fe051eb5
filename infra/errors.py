"""Error hierarchy shared by every package.

    DocassayError                 base; carries `kind` (a stable machine-readable slug) and `context`
    ├── ConfigError               bad settings or usage (exit status 2 at the CLI)
    ├── DatabaseError             the database could not be reached or refused an operation
    ├── StorageError              object storage (S3, a local folder) could not be read or written
    └── (package errors subclass it: extractors.errors, rules.errors, verifiers.errors)

Errors carry context (which document, field, rule, format) instead of asserts that vanish under
`-O`. A document-level error becomes that document's row (`status: "error"`) with `kind` and a
message a person understands; it never stops the batch.
"""
from __future__ import annotations


class DocassayError(Exception):
    kind: str = "error"

    def __init__(self, message: str, *, kind: str | None = None, **context: object) -> None:
        super().__init__(message)
        self.message = message
        if kind is not None:
            self.kind = kind
        self.context = context

    def as_row(self) -> dict[str, str]:
        return {"kind": self.kind, "message": self.message}


class ConfigError(DocassayError):
    kind = "config"


class DatabaseError(DocassayError):
    kind = "database"


class StorageError(DocassayError):
    kind = "storage"
