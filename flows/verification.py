"""One verification of one record, as the pipeline, the reference replays and review run it:
the job's schema, rules and verification settings, the evidence behind each value (flows.evidence),
the document's pages, the stale-value history and the format's lifecycle status."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from docassay.flows.evidence import build_evidence
from docassay.verifiers.context import VerifyContext
from docassay.verifiers.history import History
from docassay.verifiers.result import Verification
from docassay.verifiers.settings import VerifySettings
from docassay.verifiers.verify import verify

if TYPE_CHECKING:
    from docassay.flows.context import Job

__all__ = ["verify_record", "settings_for"]


def settings_for(job: "Job") -> VerifySettings:
    """The job's verification settings: explicit ones, else those the schema declares."""
    return job.verify_config()


def verify_record(job: "Job", conn: Any, record: Mapping[str, Any], extraction: Any = None, *,
                  document: Any = None, history: History | None = None,
                  format_status: str | None = None) -> Verification:
    cfg = settings_for(job)
    kinds = {n: p.kind for n, p in cfg.fields.items()}
    evidence = build_evidence(record, extraction, kinds, document) if extraction is not None and isinstance(record, Mapping) else {}
    vc = VerifyContext(schema=job.schema, record=record, extraction=extraction, rules=job.rules, conn=conn,
                       rule_timeout_ms=job.settings.rule_timeout_ms,
                       rule_sandbox=job.settings.rule_sandbox != "off", settings=cfg, document=document,
                       evidence=evidence, history=history, format_status=format_status,
                       pending_may_pass=job.policy.pending_may_pass, min_confidence=job.min_confidence)
    return verify(vc)
