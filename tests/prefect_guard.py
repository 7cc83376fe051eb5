"""Keeps the `prefect` marker true: a test that runs a Prefect flow in this process without
`@pytest.mark.prefect` fails (at teardown, naming the flow), so `-m "not prefect"` really leaves
Prefect out. Loaded as a plugin by tests/conftest.py.

Prefect is not imported for this: `Flow.__call__` is wrapped when `prefect.flows` is first
imported (by whatever test imports it) or at once when it already is. Flows started in another
process (a CLI subprocess, `prefect server`) are not seen here; such tests carry the marker by hand.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Any, Iterator, Sequence

import pytest

FLOWS_MODULE = "prefect.flows"
_state: dict[str, Any] = {"marked": True, "runs": []}   # the running test: has the marker? flows it ran


def _guard(module: ModuleType) -> None:
    flow_class = module.Flow
    if getattr(flow_class.__call__, "_docassay_guard", False):
        return
    original = flow_class.__call__

    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not _state["marked"]:
            _state["runs"].append(getattr(self, "name", repr(self)))
        return original(self, *args, **kwargs)

    __call__._docassay_guard = True  # type: ignore[attr-defined]
    flow_class.__call__ = __call__


class _GuardOnImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself; wraps the loader of `prefect.flows` so `_guard` runs once it is executed."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname != FLOWS_MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        loader = spec.loader if spec is not None else None
        if spec is None or loader is None or not hasattr(loader, "exec_module"):
            return spec
        execute = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            execute(module)
            _guard(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def pytest_configure(config: pytest.Config) -> None:
    if FLOWS_MODULE in sys.modules:
        _guard(sys.modules[FLOWS_MODULE])
    else:
        sys.meta_path.insert(0, _GuardOnImport())


@pytest.fixture(autouse=True)
def _prefect_marker_kept(request: pytest.FixtureRequest) -> Iterator[None]:
    _state["marked"] = request.node.get_closest_marker("prefect") is not None
    _state["runs"] = []
    yield
    runs, _state["runs"], _state["marked"] = _state["runs"], [], True
    if runs:
        pytest.fail(f"{request.node.nodeid} ran the Prefect flow(s) {sorted(set(runs))} without "
                    "@pytest.mark.prefect (tests/prefect_guard.py)", pytrace=False)
