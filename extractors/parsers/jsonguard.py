"""Loading untrusted JSON within the parse limits.

`json.loads` recurses once per nesting level, so a small file of `[[[[...` can exhaust the
interpreter's recursion limit (or its memory) before any check runs. `load_json` measures the
nesting depth with a flat scan first and refuses anything deeper than `limits.max_json_depth`;
it also refuses the non-standard constants NaN/Infinity, which would poison coordinates.

A flat file of a million small values costs about a gigabyte once parsed (a Python object per
value), so before anything else `load_json` bounds the number of values by counting separators
and brackets (bytes.count, a few milliseconds for the largest input): more than `max_values` and
it is refused unparsed. The count is an upper bound (commas inside strings count too).
"""
from __future__ import annotations

import json
import re

from docassay.extractors.errors import ParseError

__all__ = ["json_depth", "json_values_bound", "load_json"]

# A JSON string (skipped whole, so brackets inside strings do not count) or a bracket.
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def json_depth(data: bytes, stop_after: int | None = None) -> int:
    """Maximum nesting depth of arrays/objects in `data` (0 for a scalar), without parsing it.

    Stops early and returns a value above `stop_after` as soon as that depth is exceeded.
    """
    if data.count(b"[") + data.count(b"{") <= (stop_after or 0):
        return data.count(b"[") + data.count(b"{")          # cannot be deeper than the bracket count
    depth = deepest = 0
    for m in _TOKENS.finditer(data):
        tok = m.group()
        if tok in (b"[", b"{"):
            depth += 1
            if depth > deepest:
                deepest = depth
                if stop_after is not None and deepest > stop_after:
                    return deepest
        elif tok in (b"]", b"}"):
            depth -= 1
    return deepest


def _no_constants(name: str) -> object:
    raise ValueError(f"non-standard JSON constant {name}")


def json_values_bound(data: bytes) -> int:
    """An upper bound on the number of values in JSON `data`, without parsing it."""
    return data.count(b",") + data.count(b"[") + data.count(b"{") + 1


def load_json(data: bytes, *, max_depth: int, what: str, source: str = "",
              max_values: int | None = None) -> object:
    """Parse `data` as JSON or raise `ParseError` (`too_large` when nested too deep or holding more
    than `max_values` values, else `corrupt`)."""
    if max_values is not None and json_values_bound(data) > max_values:
        raise ParseError(f"{what} holds more than {max_values:,} values (max_json_values); refusing to parse it",
                         kind="too_large", source=source)
    depth = json_depth(data, stop_after=max_depth)
    if depth > max_depth:
        raise ParseError(
            f"{what} is nested more than {max_depth} levels deep (max_json_depth); refusing to parse it",
            kind="too_large", source=source)
    try:
        return json.loads(data, parse_constant=_no_constants)
    except (ValueError, RecursionError, UnicodeDecodeError) as exc:
        raise ParseError(f"{what} is not valid JSON: {exc}", kind="corrupt", source=source) from exc
