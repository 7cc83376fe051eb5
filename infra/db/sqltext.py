"""A small PostgreSQL lexer: enough to split SQL text into statements and to see its bare words.

It knows what can hide a `;` or a keyword: 'strings' (with '' doubling), E'escape strings' (with
backslash escapes), "quoted identifiers", $tag$dollar quotes$tag$, -- line comments and nested
/* block comments */. It does not parse SQL; callers look at the token stream.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Iterator, Literal

from docassay.infra.db.errors import SqlTextError

__all__ = ["Token", "tokenize", "Statement", "split_statements"]

TokenKind = Literal["word", "quoted_ident", "string", "comment", "semicolon", "param", "space", "other"]

_WORD = re.compile(r"[A-Za-z_\u0080-\uffff][A-Za-z0-9_$\u0080-\uffff]*")
_DOLLAR_TAG = re.compile(r"\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$")
_PARAM = re.compile(r"\$[0-9]+")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Token:
    kind: TokenKind
    text: str
    start: int          # character offsets into the source text
    end: int
    line: int           # 1-based line of `start`

    @property
    def word(self) -> str:
        """Lower-cased text of a bare word (keywords and unquoted identifiers fold to lower case)."""
        return self.text.lower()


class _Lines:
    def __init__(self, text: str) -> None:
        self._starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

    def line_of(self, pos: int) -> int:
        return bisect.bisect_right(self._starts, pos)


def tokenize(text: str, *, first_line: int = 1) -> Iterator[Token]:
    """Yield the tokens of `text` in order; together they cover the text exactly.

    Raises SqlTextError (with the line where it began) for an unterminated string, quoted
    identifier, dollar quote or block comment.
    """
    lines = _Lines(text)
    offset = first_line - 1
    i, n = 0, len(text)

    def tok(kind: TokenKind, start: int, end: int) -> Token:
        return Token(kind, text[start:end], start, end, lines.line_of(start) + offset)

    def unterminated(what: str, start: int) -> SqlTextError:
        return SqlTextError(f"unterminated {what}", line=lines.line_of(start) + offset)

    while i < n:
        c = text[i]
        if c.isspace():
            m = _SPACE.match(text, i)
            assert m is not None
            yield tok("space", i, m.end())
            i = m.end()
        elif text.startswith("--", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            yield tok("comment", i, j)
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while depth:
                nxt_open, nxt_close = text.find("/*", j), text.find("*/", j)
                if nxt_close < 0:
                    raise unterminated("block comment", i)
                if 0 <= nxt_open < nxt_close:
                    depth, j = depth + 1, nxt_open + 2
                else:
                    depth, j = depth - 1, nxt_close + 2
            yield tok("comment", i, j)
            i = j
        elif c == "'":
            j = _end_of_quoted(text, i, "'", backslash=False)
            if j < 0:
                raise unterminated("string literal", i)
            yield tok("string", i, j)
            i = j
        elif c == '"':
            j = _end_of_quoted(text, i, '"', backslash=False)
            if j < 0:
                raise unterminated("quoted identifier", i)
            yield tok("quoted_ident", i, j)
            i = j
        elif c == "$":
            m = _PARAM.match(text, i)
            if m:
                yield tok("param", i, m.end())
                i = m.end()
                continue
            m = _DOLLAR_TAG.match(text, i)
            if m:
                tag = m.group(0)
                j = text.find(tag, m.end())
                if j < 0:
                    raise unterminated(f"dollar-quoted string {tag}", i)
                yield tok("string", i, j + len(tag))
                i = j + len(tag)
            else:
                yield tok("other", i, i + 1)
                i += 1
        elif _WORD.match(text, i):
            m = _WORD.match(text, i)
            assert m is not None
            word_end = m.end()
            # E'...' (backslash escapes); B'..', X'..', N'..' and U&'..' use '' doubling only
            if word_end < n and text[word_end] == "'" and m.group(0).lower() in ("e", "b", "x", "n"):
                j = _end_of_quoted(text, word_end, "'", backslash=m.group(0).lower() == "e")
                if j < 0:
                    raise unterminated("string literal", i)
                yield tok("string", i, j)
                i = j
            else:
                yield tok("word", i, word_end)
                i = word_end
        elif c == ";":
            yield tok("semicolon", i, i + 1)
            i += 1
        else:
            yield tok("other", i, i + 1)
            i += 1


def _end_of_quoted(text: str, start: int, quote: str, *, backslash: bool) -> int:
    """Index just past the closing quote of the quoted run opening at `start`, or -1."""
    i, n = start + 1, len(text)
    while i < n:
        c = text[i]
        if backslash and c == "\\":
            i += 2
            continue
        if c == quote:
            if i + 1 < n and text[i + 1] == quote:   # doubled quote stands for itself
                i += 2
                continue
            return i + 1
        i += 1
    return -1


@dataclass(frozen=True, slots=True)
class Statement:
    text: str           # the statement without its terminating `;`, surrounding space trimmed
    line: int           # 1-based line where its first token (comment or code) starts


def split_statements(text: str) -> list[Statement]:
    """Split SQL text at top-level semicolons; statements that hold only comments are dropped."""
    out: list[Statement] = []
    start: int | None = None
    has_code = False
    start_line = 1
    for t in tokenize(text):
        if t.kind == "semicolon":
            if start is not None and has_code:
                out.append(Statement(text[start:t.start].strip(), start_line))
            start, has_code = None, False
            continue
        if t.kind == "space":
            continue
        if start is None:
            start, start_line = t.start, t.line
        if t.kind != "comment":
            has_code = True
    if start is not None and has_code:
        out.append(Statement(text[start:].strip(), start_line))
    return out
