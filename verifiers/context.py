"""Everything a gate may look at, passed as one object."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from docassay.verifiers.evidence import FieldEvidence
from docassay.verifiers.history import History
from docassay.verifiers.settings import VerifySettings

__all__ = ["VerifyContext"]


@dataclass
class VerifyContext:
    schema: Mapping[str, Any]
    record: Any                                            # the record to verify (a mapping; anything else fails)
    extraction: Any = None                                 # extractors' Extraction (provenance, alternatives, missing)
    rules: list = field(default_factory=list)              # rules.loader.Rule
    conn: Any = None                                       # psycopg connection for SQL rules
    rule_timeout_ms: int = 2000
    rule_sandbox: bool = True                              # False: rules run with conn's own privileges (rules.sandbox)
    optional_share: float | None = None                    # coverage override (else the settings' value)
    settings: VerifySettings | None = None                 # None: VerifySettings.from_schema(schema)
    document: Any = None                                   # extractors' Document (pages, words): page checks
    evidence: Mapping[str, FieldEvidence] = field(default_factory=dict)
    history: History | None = None                         # stale values; None: not checked
    format_status: str | None = None                       # pending_review | active | archived | None (new)
    pending_may_pass: bool = True                          # lifecycle policy for pending_review formats
    min_confidence: float | None = None                    # the job's target (None: the schema's, else the default)
    calibrator: Any = None                                 # verifiers.confidence.Calibrator (None: the shipped one)

    @property
    def cfg(self) -> VerifySettings:
        """The settings in force: explicit ones, else the schema's, with this context's overrides."""
        s = self.settings if self.settings is not None else VerifySettings.from_schema(self.schema)
        if self.optional_share is not None and self.optional_share != s.optional_share:
            s = replace(s, optional_share=self.optional_share)
        return s

    @property
    def well_formed(self) -> bool:
        return isinstance(self.record, Mapping)
