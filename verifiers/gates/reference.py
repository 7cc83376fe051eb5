"""reference gate: no new failures relative to the golden set.

Before a new version of a format's instructions is stored, both the current version and the
proposed one are replayed on the format's golden documents (records a person accepted or
corrected, or that verified when the format was learned):

    a golden case PASSES under a version when the replay verifies (`verification.passed`) and
    agrees with the golden record: every field the golden record holds is present and equal under
    the field's tolerance (verifiers.tolerance); items agree in number and column by column.

The proposal is refused when a case that the current version passes fails under the proposed
one (a new failure). Cases both fail are not held against it; cases only the proposal passes are
reported as improvements. A golden document whose bytes are gone (`Replay.error`) is skipped and
counted. Replaying is the caller's (it needs the extractors): `check` takes two replayers.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from docassay.verifiers.result import GateResult, Verification, Violation
from docassay.verifiers.settings import VerifySettings
from docassay.verifiers.tolerance import matches

NAME = "reference"

__all__ = ["NAME", "GoldenCase", "Replay", "Replayer", "disagreements", "check"]


@dataclass(frozen=True)
class GoldenCase:
    sha256: str
    record: Mapping[str, Any]
    reason: str = ""


@dataclass
class Replay:
    """One version's replay of one golden document."""
    record: Mapping[str, Any] | None
    verification: Verification | None = None
    error: str | None = None                       # the document could not be replayed (bytes gone, unreadable)
    details: dict[str, Any] = field(default_factory=dict)


Replayer = Callable[[GoldenCase], Replay]


def disagreements(settings: VerifySettings, golden: Mapping[str, Any], record: Mapping[str, Any]) -> list[str]:
    """Fields of the golden record that `record` lacks or holds a different value for (sorted)."""
    out: list[str] = []
    for name, want in golden.items():
        got = record.get(name)
        if isinstance(want, list):
            if not isinstance(got, list) or len(got) != len(want) or not all(
                    _item_agrees(settings, w, g) for w, g in zip(want, got)):
                out.append(name)
            continue
        if got is None or not matches(settings.policy(name).tolerance, want, got):
            out.append(name)
    return sorted(out)


def _item_agrees(settings: VerifySettings, want: object, got: object) -> bool:
    if not isinstance(want, Mapping) or not isinstance(got, Mapping):
        return want == got
    for k, w in want.items():
        g = got.get(k)
        tol = settings.tolerances["amount" if isinstance(w, (int, float)) and not isinstance(w, bool) else "text"]
        if g is None or not matches(tol, w, g):
            return False
    return True


def _passes(settings: VerifySettings, case: GoldenCase, r: Replay) -> tuple[bool, list[str]]:
    if r.record is None:
        return False, [r.error or "nothing extracted"]
    why = [f"{f} differs from the golden record" for f in disagreements(settings, case.record, r.record)]
    if r.verification is not None and not r.verification.passed:
        why.append("does not verify: " + ", ".join(r.verification.failed_gates))
    return not why, why


def check(cases: Sequence[GoldenCase], current: Replayer, proposed: Replayer, settings: VerifySettings) -> GateResult:
    """Replay both versions on every golden case; fail on any new failure. Deterministic for
    deterministic replayers."""
    violations: list[Violation] = []
    kept = improved = both_fail = unavailable = malformed = 0
    per_case: list[dict[str, object]] = []
    for case in cases:
        if not isinstance(case, GoldenCase) or not isinstance(case.record, Mapping):
            malformed += 1
            continue
        cur, new = current(case), proposed(case)
        if cur.error is not None and cur.record is None and new.record is None and new.error is not None:
            unavailable += 1
            per_case.append({"sha256": case.sha256[:12], "result": "unavailable", "why": cur.error})
            continue
        cur_ok, _ = _passes(settings, case, cur)
        new_ok, new_why = _passes(settings, case, new)
        if cur_ok and not new_ok:
            fields = disagreements(settings, case.record, new.record or {})
            violations.append(Violation(
                NAME, "new_failure", ", ".join(fields) or None,
                f"golden document {case.sha256[:12]} ({case.reason or 'golden'}) passes with the current version "
                f"and fails with the proposed one: {'; '.join(new_why)}",
                expected={f: case.record.get(f) for f in fields} or None,
                actual={f: (new.record or {}).get(f) for f in fields} or None))
            result = "new failure"
        elif cur_ok:
            kept += 1
            result = "kept"
        elif new_ok:
            improved += 1
            result = "improved"
        else:
            both_fail += 1
            result = "fails with both"
        per_case.append({"sha256": case.sha256[:12], "result": result})
    details = {"cases": len(cases), "kept": kept, "new_failures": len(violations), "improved": improved,
               "fail_both": both_fail, "unavailable": unavailable, "malformed": malformed, "per_case": per_case}
    return GateResult(NAME, not violations, details, violations)
