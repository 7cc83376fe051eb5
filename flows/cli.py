"""The `docassay` command line. Each sub-command lives in its own module under `flows/commands/`;
this file only wires them into argparse and turns errors into exit statuses:

    0  the command ran (for `extract`: the batch ran, whatever each document's status)
    1  the batch failed its `--max-error-ratio`, or a refused batch (quota)
    2  bad usage: unknown flags, missing inputs, an invalid schema or rule pack
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from docassay.flows.commands import REGISTRY
from docassay.infra.errors import ConfigError, DocassayError

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def version() -> str:
    """The installed distribution's version (the source tree's pyproject.toml when not installed)."""
    from importlib import metadata
    try:
        return metadata.version("docassay")
    except metadata.PackageNotFoundError:
        import re
        from pathlib import Path
        text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text("utf-8")
        m = re.search(r'^version\s*=\s*"([^"]+)"', text, re.MULTILINE)
        return m.group(1) if m else "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="docassay",
        description="Verifier-gated document extraction: verified, traceable JSON records from documents.")
    parser.add_argument("--version", action="version", version=f"docassay {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in REGISTRY.values():
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from docassay.infra.db import embedded
    try:
        with embedded.command_scope():      # an embedded server this command started stops with it
            return int(args.run(args) or EXIT_OK)
    except ConfigError as exc:
        print(f"docassay: error: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    except DocassayError as exc:
        print(f"docassay: {exc.kind}: {exc.message}", file=sys.stderr)
        return getattr(exc, "exit_status", EXIT_FAILED)
    except KeyboardInterrupt:
        print("docassay: interrupted; the rows already written are kept beside results.jsonl: run the same "
              "command again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
