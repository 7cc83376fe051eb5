"""The SQL lexer behind migration splitting and rule checking."""
from __future__ import annotations

import pytest

from docassay.infra.db.errors import SqlTextError
from docassay.infra.db.sqltext import split_statements, tokenize


def test_tokens_cover_the_text_exactly() -> None:
    text = "SELECT 'a;b', \"x;y\", $$c;d$$, $t$e;$$f$t$, E'\\';' -- g;h\n/* i; /* j; */ k; */ ;"
    tokens = list(tokenize(text))
    assert "".join(t.text for t in tokens) == text
    assert [t.kind for t in tokens if t.kind == "semicolon"] == ["semicolon"]


@pytest.mark.parametrize("text, expected", [
    ("SELECT 1; SELECT 2;", ["SELECT 1", "SELECT 2"]),
    ("SELECT ';'; SELECT 2", ["SELECT ';'", "SELECT 2"]),
    ("SELECT 'it''s; fine'", ["SELECT 'it''s; fine'"]),
    ("SELECT E'\\'; still string'", ["SELECT E'\\'; still string'"]),
    ("CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $body$ SELECT 1; $body$;",
     ["CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $body$ SELECT 1; $body$"]),
    ("-- only a comment;\n", []),
    ("SELECT 1 /* a; /* nested; */ b; */ + 1;;", ["SELECT 1 /* a; /* nested; */ b; */ + 1"]),
    ("SELECT $1, $2", ["SELECT $1, $2"]),
])
def test_split_statements(text: str, expected: list[str]) -> None:
    assert [s.text for s in split_statements(text)] == expected


def test_statement_lines_are_one_based() -> None:
    stmts = split_statements("\n-- c\nSELECT 1;\n\nSELECT\n2;")
    assert [(s.line, s.text) for s in stmts] == [(2, "-- c\nSELECT 1"), (5, "SELECT\n2")]


@pytest.mark.parametrize("text, line", [
    ("SELECT 1;\nSELECT 'open", 2),
    ("SELECT \"open", 1),
    ("\n\nSELECT $$ never closed", 3),
    ("SELECT 1 /* /* */", 1),
])
def test_unterminated_runs_raise_with_line(text: str, line: int) -> None:
    with pytest.raises(SqlTextError) as err:
        list(tokenize(text))
    assert err.value.line == line
