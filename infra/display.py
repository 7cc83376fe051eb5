"""Text from documents, shown on a terminal: control characters escaped, never interpreted.

A file name or an error message that quotes one may hold a newline (a forged second line of
output), an ANSI escape (`\\x1b[2J` clears the screen; others retitle the window or hide text) or
a bidirectional override that shows a name backwards. `printable` writes every such character as
a visible escape (`\\n`, `\\x1b`, `\\u202e`), leaving all other text, accents included, as it is.
"""
from __future__ import annotations

import unicodedata

__all__ = ["printable"]

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPED_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}   # controls, format (bidi), surrogates, private, unassigned


def printable(text: object) -> str:
    """`text` (made a str) with control, format and line-separator characters as escapes."""
    s = str(text)
    if s.isprintable():
        return s
    out = []
    for ch in s:
        if ch in _NAMED:
            out.append(_NAMED[ch])
        elif unicodedata.category(ch) in _ESCAPED_CATEGORIES:
            cp = ord(ch)
            out.append(f"\\x{cp:02x}" if cp < 0x100 else f"\\u{cp:04x}" if cp < 0x10000 else f"\\U{cp:08x}")
        else:
            out.append(ch)
    return "".join(out)
