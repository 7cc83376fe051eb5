"""`docassay model` is registered and its sub-commands are listed in one registry."""
from __future__ import annotations

import pytest

from docassay.flows.cli import build_parser, main
from docassay.flows.commands import model


def test_model_train_parses_with_defaults():
    args = build_parser().parse_args(["model", "train", "--seed", "3", "--schedule", "token"])
    assert args.seed == 3 and args.schedule == "token" and args.out is None and not args.force   # issue 17
    assert args.run is model.SUBCOMMANDS["train"][1]
    assert set(model.SUBCOMMANDS) >= {"train"}


def test_model_without_subcommand_is_bad_usage():
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(["model"])
    assert e.value.code == 2


def test_train_refuses_single_document_formats(tmp_path, capsys):
    assert main(["model", "train", "--docs", "1", "--out", str(tmp_path / "w.pt")]) == 2
    assert "--docs" in capsys.readouterr().err
