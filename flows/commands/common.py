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
