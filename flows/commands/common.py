"""Options shared by several sub-commands."""
from __future__ import annotations

import argparse

from infra.config import Settings


def add_store_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--home", help="format library, vector index and embedded database "
                                  "(default: $DOCASSAY_HOME, else ~/.docassay)")
    p.add_argument("--db", help="PostgreSQL DSN (default: the embedded server under --home)")


def settings_from(args: argparse.Namespace, **extra: object) -> Settings:
    return Settings.load(home=getattr(args, "home", None), db=getattr(args, "db", None), **extra)


def add_min_confidence(p: argparse.ArgumentParser) -> None:
    p.add_argument("--min-confidence", type=float, default=None, metavar="P",
                   help="a record passes only when every required field's calibrated confidence reaches P "
                        "(0..1; a field's x-docassay min_confidence overrides; default "
                        "verifiers.confidence.DEFAULT_MIN_CONFIDENCE)")
