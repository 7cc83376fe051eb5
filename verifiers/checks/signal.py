"""The one record every check returns (see verifiers.checks for the contract)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal

from docassay.verifiers.context import VerifyContext

__all__ = ["Signal", "Check", "Outcome", "OUTCOMES"]

Outcome = Literal["pass", "fail"]
OUTCOMES = ("pass", "fail")


@dataclass(frozen=True)
class Signal:
    field: str
    check: str
    outcome: Outcome
    detail: str = ""

    def to_json(self) -> dict:
        return {"check": self.check, "outcome": self.outcome, "detail": self.detail}


Check = Callable[[VerifyContext], list[Signal]]
