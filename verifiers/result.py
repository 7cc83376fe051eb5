"""What verification returns: gate results, violations with their context, and a score.

Failures are data. A `Violation` names the gate or rule, the field, a message, the expected and
actual values where known, and the alternatives the document offers — the diagnostics that drive
the fixer and the troubleshooter.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable


@dataclass
class Violation:
    gate: str                          # format | coverage | completeness | evidence | rules | stale | ...
    rule: str                          # the rule name, or the JSON Schema keyword, or the check
    field: str | None                  # field path ("gross_total", "line_items/0/quantity")
    message: str
    severity: str = "error"            # error | warning
    expected: object = None
    actual: object = None
    alternatives: list[object] = dataclasses.field(default_factory=list)   # [{"value", "how", "text"}]: other readings
    repairable: bool = True            # False: repair must not try to make this pass (a duplicate invoice)

    @property
    def fields(self) -> list[str]:
        """Top-level field names this violation is about ("line_items/0/quantity" -> "line_items")."""
        return top_fields(self.field)

    def to_json(self) -> dict:
        d: dict[str, object] = {"gate": self.gate, "rule": self.rule, "field": self.field,
                                "message": self.message, "severity": self.severity}
        if self.expected is not None:
            d["expected"] = self.expected
        if self.actual is not None:
            d["actual"] = self.actual
        if self.alternatives:
            d["alternatives"] = self.alternatives[:5]
        if not self.repairable:
            d["repairable"] = False
        return d


@dataclass
class GateResult:
    name: str
    passed: bool
    details: dict[str, object] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)
    hard: bool = True

    def to_json(self) -> dict:
        d: dict[str, object] = {"passed": self.passed}
        if self.details:
            d["details"] = self.details
        if self.violations:
            d["reasons"] = [v.message for v in self.violations[:20]]
        return d


@dataclass
class Verification:
    gates: dict[str, GateResult]
    score: float
    components: dict[str, float] = field(default_factory=dict)
    min_score: float = 0.0
    confidence: Callable[[], tuple[dict, dict]] | None = field(default=None, repr=False, compare=False)
    _confidence: tuple[dict, dict] | None = field(default=None, init=False, repr=False, compare=False)

    def _assessed(self) -> tuple[dict, dict]:
        """(bases, fields), computed on first use: repair loops that only ask `passed` never pay
        for the checks and the calibrator."""
        if self._confidence is None:
            self._confidence = self.confidence() if self.confidence is not None else ({}, {})
        return self._confidence

    @property
    def fields(self) -> dict:
        """field -> verifiers.confidence.FieldConfidence (confidence, status, checks)."""
        return self._assessed()[1]

    @property
    def bases(self) -> dict:
        """field -> verifiers.confidence.FieldBasis (the calibrator's features)."""
        return self._assessed()[0]

    @property
    def doubtful(self) -> list[str]:
        """Required fields whose value is not `verified` at the policy's target, in schema order."""
        return [n for n, f in self.fields.items() if f.required and f.status != "verified"]

    @property
    def omitted(self) -> list[str]:
        """Optional fields an accepted record leaves out: doubtful, under the `omit` policy
        (verifiers.confidence.decision); none while the record is not accepted (values kept)."""
        return [n for n, f in self.fields.items() if getattr(f, "omitted", False)] if self.accepted else []

    def delivered(self, record: dict) -> dict:
        """The record as an accepted row delivers it: without its omitted optional fields."""
        gone = set(self.omitted)
        return {k: v for k, v in record.items() if k not in gone} if gone else record

    @property
    def accepted(self) -> bool:
        """May pass without a person: every hard gate passed and every required field is verified."""
        return self.passed and not self.doubtful

    @property
    def all_verified(self) -> bool:
        """Every field that holds a value is verified (what a golden record must be)."""
        return all(f.status != "doubtful" for f in self.fields.values())

    @property
    def passed(self) -> bool:
        """Every hard gate passed, and the score reaches the configured minimum (0 by default)."""
        return all(g.passed for g in self.gates.values() if g.hard) and self.score + 1e-12 >= self.min_score

    @property
    def violations(self) -> list[Violation]:
        return [v for g in self.gates.values() for v in g.violations]

    @property
    def n_errors(self) -> int:
        """Error-severity violations in hard gates that failed (what repair tries to bring to zero)."""
        return sum(1 for g in self.gates.values() if g.hard and not g.passed
                   for v in g.violations if v.severity == "error")

    @property
    def failing_fields(self) -> list[str]:
        """Top-level field names involved in error-severity violations, in first-seen order."""
        out: list[str] = []
        for g in self.gates.values():
            if not g.hard or g.passed:
                continue
            for v in g.violations:
                if v.severity != "error" or not v.repairable:
                    continue
                for top in v.fields:
                    if top not in out:
                        out.append(top)
        return out

    @property
    def failed_gates(self) -> list[str]:
        return [k for k, g in self.gates.items() if g.hard and not g.passed]

    @property
    def repairable(self) -> bool:
        """True when a failure could be the extraction's fault: some failed hard gate holds an
        error a repair may address (not only a duplicate, or the format's lifecycle)."""
        return any(v.severity == "error" and v.repairable and g.name != "lifecycle"
                   for g in self.gates.values() if g.hard and not g.passed for v in g.violations)

    def to_json(self) -> dict:
        return {"passed": self.passed, "gates": {k: g.to_json() for k, g in self.gates.items()},
                "score": round(self.score, 4),
                "components": {k: round(v, 4) for k, v in self.components.items()},
                "violations": [v.to_json() for v in self.violations]}


def top_fields(path: str | None) -> list[str]:
    """Top-level names in a field reference: "a, b" -> [a, b]; "items[0].x" and "items/0/x" -> [items]."""
    if not path:
        return []
    out: list[str] = []
    for f in str(path).split(","):
        top = f.strip().replace(".", "/").replace("[", "/").split("/")[0]
        if top and top not in out:
            out.append(top)
    return out
