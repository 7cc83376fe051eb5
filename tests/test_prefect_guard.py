"""tests/prefect_guard.py: a flow run by a test without the `prefect` marker is caught."""
from __future__ import annotations

import sys
from types import ModuleType

import pytest

import prefect_guard


def _fake_flows_module() -> ModuleType:
    module = ModuleType("fake_flows")

    class Flow:
        name = "fake-flow"

        def __call__(self, x: int) -> int:
            return x + 1

    module.Flow = Flow  # type: ignore[attr-defined]
    return module


def test_a_flow_run_is_recorded_only_for_an_unmarked_test(monkeypatch: pytest.MonkeyPatch) -> None:
    module = _fake_flows_module()
    prefect_guard._guard(module)
    prefect_guard._guard(module)                               # wrapping twice changes nothing
    state = {"marked": False, "runs": []}
    monkeypatch.setattr(prefect_guard, "_state", state)
    assert module.Flow()(1) == 2                               # the flow still runs and returns
    assert state["runs"] == ["fake-flow"]
    state["marked"] = True
    module.Flow()(1)
    assert state["runs"] == ["fake-flow"], "a marked test may run flows"


def test_importing_prefect_wraps_its_flows() -> None:
    flows = pytest.importorskip("prefect.flows")
    assert sys.modules[prefect_guard.FLOWS_MODULE] is flows
    assert getattr(flows.Flow.__call__, "_docassay_guard", False)
