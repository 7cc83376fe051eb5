"""What verification returns: gate results, violations with their context, and a score.

Failures are data. A `Violation` names the gate or rule, the field, a message, the expected and
actual values where known, and the alternatives the document offers — the diagnostics that drive
the fixer and the troubleshooter.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Violation:
    gate: str                          # format | coverage | rules | ...
    rule: str                          # the rule name, or the JSON Schema keyword, or the check
    field: str | None                  # field path ("gross_total", "line_items/0/quantity")
    message: str
    severity: str = "error"            # error | warning
    expected: object = None
    actual: object = None
    alternatives: list[object] = field(default_factory=list)

    def to_json(self) -> dict:
        d: dict[str, object] = {"gate": self.gate, "rule": self.rule, "field": self.field,
                                "message": self.message, "severity": self.severity}
        if self.expected is not None:
            d["expected"] = self.expected
        if self.actual is not None:
            d["actual"] = self.actual
        if self.alternatives:
            d["alternatives"] = self.alternatives[:5]
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

    @property
    def passed(self) -> bool:
        return all(g.passed for g in self.gates.values() if g.hard)

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
        for v in self.violations:
            if v.severity != "error" or not v.field:
                continue
            for f in v.field.split(","):
                top = f.strip().replace(".", "/").replace("[", "/").split("/")[0]
                if top and top not in out:
                    out.append(top)
        return out

    def to_json(self) -> dict:
        return {"gates": {k: g.to_json() for k, g in self.gates.items()}, "score": round(self.score, 4),
                "components": {k: round(v, 4) for k, v in self.components.items()},
                "violations": [v.to_json() for v in self.violations]}
