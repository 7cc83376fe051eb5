"""Reading record values the way every check needs them: numbers, ISO dates, present or not."""
from __future__ import annotations

import math
from datetime import date
from typing import Any, Mapping

__all__ = ["num", "iso_date", "text", "present"]


def num(v: object) -> float | None:
    """A finite number (not a bool), else None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def iso_date(v: object) -> date | None:
    """A YYYY-MM-DD string as a date, else None."""
    if not isinstance(v, str) or len(v) != 10:
        return None
    try:
        return date.fromisoformat(v)
    except ValueError:
        return None


def text(v: object) -> str | None:
    """A non-empty string, stripped, else None."""
    return v.strip() or None if isinstance(v, str) else None


def present(record: Mapping[str, Any], name: str | None) -> bool:
    return name is not None and record.get(name) not in (None, "", [])
