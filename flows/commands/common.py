"""Options shared by several sub-commands, and lazy imports: building the parser (`docassay
--help`) must not import the database driver, numpy, Prefect, torch or faiss."""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from types import ModuleType
from typing import Any

from infra.config import Settings


def lazy_module(name: str) -> ModuleType:
    """Module `name`, executed on first attribute access (importlib's LazyLoader)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ImportError(f"no module named {name!r}")
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


def connect(settings: Settings, **kwargs: Any):  # -> psycopg.Connection
    """`infra.db.connect`, imported when a command first connects."""
    from infra.db import connect as _connect
    return _connect(settings, **kwargs)


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
def add_min_confidence(p: argparse.ArgumentParser) -> None:
    p.add_argument("--min-confidence", type=float, default=None, metavar="P",
                   help="a record passes only when every required field's calibrated confidence reaches P "
                        "(0..1; a field's x-docassay min_confidence overrides; default "
                        "verifiers.confidence.DEFAULT_MIN_CONFIDENCE)")
