"""JSON stored in text columns (Aurora DSQL has jsonb only at query run time, not as a column type)."""
from __future__ import annotations

import json
from typing import Any

__all__ = ["dump_json", "load_json"]


def dump_json(value: Any) -> str:
    """Compact, key-sorted JSON text for a column; NaN and Infinity are refused (not valid JSON)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)


def load_json(text: str | None) -> Any:
    """The value stored by `dump_json`; None stays None (a NULL column)."""
    return None if text is None else json.loads(text)
