"""reference gate conformance: no new failures on the golden set when a version is proposed."""
from __future__ import annotations

from docassay.verifiers.gates.reference import GoldenCase, Replay, check, disagreements
from docassay.verifiers.settings import VerifySettings
from docassay.verifiers.verify import verify
from tests.verifiers.conftest import SCHEMA, ctx

SETTINGS = VerifySettings.from_schema(SCHEMA)


def _cases(good) -> list[GoldenCase]:
    return [GoldenCase("a" * 64, dict(good), "first document"),
            GoldenCase("b" * 64, dict(good, invoice_number="RE-2024-002", gross_total=238.0), "reviewed")]


def _replayer(outcomes: dict):
    """Replays by looking up what each version extracts from each golden document, then verifies."""
    def run(case: GoldenCase) -> Replay:
        rec = outcomes.get(case.sha256)
        if rec is None:
            return Replay(None, error="bytes gone")
        return Replay(rec, verify(ctx(rec)))
    return run


def test_full_pass_when_nothing_regresses(good) -> None:
    cases = _cases(good)
    same = {c.sha256: dict(c.record) for c in cases}
    r = check(cases, _replayer(same), _replayer(same), SETTINGS)
    assert r.passed and r.details["kept"] == 2 and r.details["new_failures"] == 0


def test_fails_for_exactly_its_reason_a_new_failure(good) -> None:
    cases = _cases(good)
    current = {c.sha256: dict(c.record) for c in cases}
    proposed = dict(current)
    proposed["b" * 64] = dict(current["b" * 64], gross_total=119.0)     # the new version misreads one
    r = check(cases, _replayer(current), _replayer(proposed), SETTINGS)
    assert not r.passed and r.details["new_failures"] == 1 and r.details["kept"] == 1
    (x,) = r.violations
    assert x.rule == "new_failure" and x.field == "gross_total"
    assert x.expected == {"gross_total": 238.0} and x.actual == {"gross_total": 119.0}


def test_within_tolerance_is_no_failure_and_improvements_count(good) -> None:
    cases = _cases(good)
    current = {c.sha256: dict(c.record) for c in cases}
    current["b" * 64] = dict(current["b" * 64], invoice_number="WRONG")
    proposed = {c.sha256: dict(c.record) for c in cases}
    proposed["a" * 64] = dict(proposed["a" * 64], gross_total=119.004)    # within abs 0.01
    r = check(cases, _replayer(current), _replayer(proposed), SETTINGS)
    assert r.passed and r.details["improved"] == 1 and r.details["kept"] == 1


def test_unavailable_and_malformed_cases_do_not_crash(good) -> None:
    cases = _cases(good) + ["not a case", GoldenCase("c" * 64, "not a record")]  # type: ignore[list-item]
    r = check(cases, _replayer({}), _replayer({}), SETTINGS)
    assert r.passed and r.details["unavailable"] == 2 and r.details["malformed"] == 2
    assert disagreements(SETTINGS, {"a": 1}, {}) == ["a"]


def test_deterministic(good) -> None:
    cases = _cases(good)
    cur = {c.sha256: dict(c.record) for c in cases}
    new = {cases[0].sha256: dict(cases[0].record, issue_date="2024-03-06")}
    a = check(cases, _replayer(cur), _replayer(new), SETTINGS)
    b = check(cases, _replayer(cur), _replayer(new), SETTINGS)
    assert a.to_json() == b.to_json() and a.details == b.details and not a.passed
