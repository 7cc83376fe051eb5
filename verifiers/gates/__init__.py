"""Verification gates, one module each. A gate is a function `check(ctx) -> GateResult`."""
