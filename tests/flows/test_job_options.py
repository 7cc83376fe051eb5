"""Issue 17: one list of job options (flows/job_options.py). Every `JobOptions` field reaches the
job from each way in, by construction: the CLI's `extract` and `deploy` flags, the flows' plain-JSON
`options` parameter, an inbox's spec and `docassay.extract`'s keywords. Each test iterates the
fields, so a new option is pinned here without editing this file."""
from __future__ import annotations

import dataclasses
import inspect
import json
from pathlib import Path
from typing import Any

import pytest

import docassay
from docassay.flows.cli import build_parser
from docassay.flows.job_options import (
    EINVOICE_CHOICES,
    GENERATOR_CHOICES,
    PARSER_CHOICES,
    JobOptions,
    absolute_path,
    cli_of,
)
from docassay.infra.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = str(ROOT / "examples/invoices/schema.json")
FIELDS = dataclasses.fields(JobOptions)


def _other_value(f: dataclasses.Field) -> tuple[list[str], Any]:
    """A value unlike the field's default, as CLI words and as the parsed value."""
    c = cli_of(f)
    default = None if f.default is dataclasses.MISSING else f.default
    flag = c.flag_for(f.name, default)
    if isinstance(default, bool):
        return [flag], not default
    if c.choices:
        value = next(v for v in c.choices if v != default)
        return [flag, value], value
    if c.type is int:
        return [flag, "7"], 7
    if c.type is float:
        return [flag, "0.25"], 0.25
    if f.name == "schema":
        return [flag, SCHEMA], SCHEMA
    value = f"s3vectors://b/{f.name}" if c.path else f"value-of-{f.name}"
    return [flag, value], value


def _all_other() -> tuple[list[str], dict[str, Any]]:
    words: list[str] = []
    values: dict[str, Any] = {}
    for f in FIELDS:
        w, v = _other_value(f)
        words += w
        values[f.name] = v
    return words, values


def test_every_option_has_its_cli_form_and_its_default_is_the_clis() -> None:
    args = build_parser().parse_args(["extract", "x.pdf", "--schema", SCHEMA, "--out", "o"])
    opts = JobOptions.from_args(args)
    assert opts == JobOptions(schema=SCHEMA)
    for f in FIELDS:
        assert cli_of(f).help, f.name


@pytest.mark.parametrize("command", [["extract", "x.pdf", "--out", "o"],
                                     ["deploy", "run-once", "--inbox", "i", "--dest", "d"],
                                     ["deploy", "serve", "--cron", "* * * * *", "--inbox", "i", "--dest", "d"]])
def test_every_option_is_a_flag_of_extract_and_deploy(command: list[str]) -> None:
    words, values = _all_other()
    args = build_parser().parse_args(command + words)
    assert dataclasses.asdict(JobOptions.from_args(args)) == values


def test_every_option_survives_the_flows_json_parameter() -> None:
    _, values = _all_other()
    opts = JobOptions(**{**values, "schema": Path(SCHEMA)})
    data = json.loads(json.dumps(opts.to_json()))            # what Prefect stores for a flow run or deployment
    assert set(data) == {f.name for f in FIELDS}
    assert JobOptions.from_json(data) == JobOptions(**values)
    with pytest.raises(ConfigError, match="unknown job option"):
        JobOptions.from_json({**data, "colour": "blue"})
    with pytest.raises(ConfigError, match="need a schema"):
        JobOptions.from_json({k: v for k, v in data.items() if k != "schema"})


def test_the_flows_take_the_options_as_one_parameter() -> None:
    from docassay.flows.extract_flow import extract_flow
    from docassay.flows.inbox import inbox_flow
    for flow in (extract_flow, inbox_flow):
        params = inspect.signature(flow.fn).parameters
        assert "options" in params
        assert not set(params) & {f.name for f in FIELDS}, "a job option spelled out again as a flow parameter"


def test_every_option_reaches_an_inbox_run_and_its_deployment() -> None:
    from docassay.flows.commands.deploy import _specs
    from docassay.flows.inbox import InboxSpec
    words, values = _all_other()
    args = build_parser().parse_args(["deploy", "run-once", "--inbox", "i", "--dest", "d"] + words)
    (spec,) = _specs(args)
    expected = JobOptions(**values).absolute()
    assert spec.job == expected and spec.job_options() == expected
    assert spec.job.schema == absolute_path(SCHEMA) and spec.job.index == values["index"]   # a URL stays a URL
    params = json.loads(json.dumps(spec.parameters()))
    assert JobOptions.from_json(params["options"]) == expected
    rebuilt = InboxSpec(inbox=params["inbox"], dest=params["dest"], job=JobOptions.from_json(params["options"]),
                        after=params["after"], lease_s=params["lease_s"], settle_s=params["settle_s"],
                        max_attempts=params["max_attempts"])
    assert rebuilt == spec
    assert InboxSpec.of(inbox="i", dest="d", **values).job == JobOptions(**values)
    with pytest.raises(ConfigError, match="unknown inbox option"):
        InboxSpec.of(inbox="i", dest="d", schema=SCHEMA, colour="blue")


def test_every_option_is_a_keyword_of_docassay_extract_with_the_same_default() -> None:
    params = inspect.signature(docassay.extract).parameters
    for f in FIELDS:
        p = params[f.name]
        assert p.kind is inspect.Parameter.KEYWORD_ONLY, f.name
        assert p.default == (inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default), f.name
    with pytest.raises(TypeError, match="colour"):
        docassay.extract("x.pdf", schema=SCHEMA, colour="blue")
    with pytest.raises(TypeError, match="schema"):
        docassay.extract("x.pdf")


def test_choices_are_the_ones_the_job_knows() -> None:
    from docassay.flows.einvoice import MODES
    from docassay.flows.jobs import GENERATORS, PARSERS
    assert tuple(GENERATORS) == GENERATOR_CHOICES and tuple(PARSERS) == PARSER_CHOICES and MODES == EINVOICE_CHOICES
