"""Source names with newlines or terminal escapes are printed escaped, never interpreted."""
from __future__ import annotations

import io

from docassay.flows.commands.extract import _print_failure
from docassay.flows.progress import Progress
from docassay.flows.results import Row
from docassay.flows.status import problem_lines
from docassay.infra.display import printable

HOSTILE = "/in/inv\n  passed         /in/forged.pdf\x1b[2J\x1b]0;owned\x07\u202efdp.exe"


def _row() -> Row:
    row = Row(source=HOSTILE)
    row.fail("error", "corrupt", f"cannot read {HOSTILE}")
    return row


def _clean(text: str) -> bool:
    return "\x1b" not in text and "\x07" not in text and "\u202e" not in text


def test_printable_escapes_controls_and_keeps_other_text() -> None:
    assert printable("Rechnung_März.pdf") == "Rechnung_März.pdf"
    assert printable("a\nb\tc\x1b[0m\u202e\u2028") == "a\\nb\\tc\\x1b[0m\\u202e\\u2028"


def test_the_problem_listing_cannot_be_forged() -> None:
    lines = problem_lines([_row()])
    assert len(lines) == 1 and "\n" not in lines[0] and _clean(lines[0])
    assert "\\n  passed" in lines[0] and "\\x1b[2J" in lines[0]


def test_progress_and_error_summary_are_escaped(capsys) -> None:
    out = io.StringIO()
    p = Progress(1, stream=out)
    p.update(_row())
    _print_failure({"failed": 1, "total": 1, "errors": [f"corrupt: cannot read {HOSTILE}"]})
    err = capsys.readouterr().err
    for text in (out.getvalue(), err):
        assert _clean(text) and "\n  passed" not in text
