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


EINVOICE_MODES = ("use", "check", "ignore")


def add_einvoice_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--einvoice", choices=EINVOICE_MODES, default="use",
                   help="e-invoices (Factur-X/ZUGFeRD/XRechnung/UBL XML in a PDF, or a bare .xml): use the XML as the "
                        "record, check the print against it and learn the layout from it (default); check: read the "
                        "print and compare it with the XML; ignore: the layout path alone")
