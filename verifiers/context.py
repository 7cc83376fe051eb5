"""Everything a gate may look at, passed as one object."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping



@dataclass
class VerifyContext:
    schema: Mapping[str, Any]
    record: Mapping[str, Any]
    extraction: Any = None                                # extractors' Extraction (alternatives, missing)
    rules: list = field(default_factory=list)            # rules.loader.Rule
    conn: Any = None                                      # psycopg connection for SQL rules
    rule_timeout_ms: int = 2000
    optional_share: float = 0.0                           # coverage: share of optional fields required
