"""Errors raised while reading documents and applying instructions.

    infra.errors.DocassayError
    ├── ParseError                the document could not be read; `kind` says why:
    │                             corrupt | encrypted | empty | unsupported | too_large | no_text | timeout
    │                             | unreadable (the file could not be read from disk)
    └── InstructionError          instructions are malformed (fail their JSON Schema) or cannot run
"""
from __future__ import annotations

from docassay.infra.errors import DocassayError


class ParseError(DocassayError):
    kind = "corrupt"


class InstructionError(DocassayError):
    kind = "instructions"
