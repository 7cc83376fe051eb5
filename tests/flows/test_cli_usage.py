"""The CLI's usage errors: exit status 2 and a message naming the problem, with nothing started
(no home folder, no database). Argument errors come from argparse (SystemExit 2); errors a command
finds in its arguments are ConfigErrors that `main` turns into 2. The extract command's own
preflight (missing inputs, schema, rules, --out) is tested in test_cli_startup.py."""
from __future__ import annotations

from pathlib import Path

import pytest

from docassay.flows.cli import EXIT_USAGE, main

EXTRACT = ["extract", "x.pdf", "--schema", "s.json", "--out", "o"]


@pytest.mark.parametrize("argv, message", [
    ([], "the following arguments are required: COMMAND"),
    (["nonsense"], "invalid choice: 'nonsense'"),
    ([*EXTRACT, "--bogus"], "unrecognized arguments: --bogus"),
    ([*EXTRACT, "--concurrency", "many"], "argument --concurrency: invalid int value: 'many'"),
    ([*EXTRACT, "--orchestrator", "ray"], "argument --orchestrator: invalid choice: 'ray'"),
    (["quota", "set", "--project", "p", "--input-tokens", "lots"], "not a token count: 'lots'"),
    (["quota", "set", "--project", "p", "--input-tokens", "-5"], "a token limit cannot be negative"),
])
def test_argument_errors_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == EXIT_USAGE == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["quota", "set", "--project", "p", "--user", "u", "--input-tokens", "5"],
     "give exactly one of --project NAME or --user NAME"),
    (["quota", "set", "--project", "p"], "give --input-tokens and/or --output-tokens"),
    (["review", "correct", "abc"], "give at least one --set FIELD=VALUE or --unset FIELD"),
    (["review", "correct", "abc", "--set", "novalue"], "--set wants FIELD=VALUE, not 'novalue'"),
])
def test_command_usage_errors_exit_2_before_anything_starts(argv: list[str], message: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture) -> None:
    home = tmp_path / "home"
    assert main([*argv, "--home", str(home)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith("docassay: error: ") and message in err
    assert not home.exists(), "no database was started"
