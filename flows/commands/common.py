"""Options shared by several sub-commands, and lazy imports: building the parser (`docassay
--help`) must not import the database driver, numpy, Prefect, torch or faiss."""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from types import ModuleType
from typing import Any

from docassay.flows.job_options import add_job_options
from docassay.infra.config import Settings


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
    from docassay.infra.db import connect as _connect
    return _connect(settings, **kwargs)


def add_store_options(p: argparse.ArgumentParser) -> None:
    """--home and --db, as the job options declare them (flows/job_options.py)."""
    add_job_options(p, names=("home", "db"))


def settings_from(args: argparse.Namespace, **extra: object) -> Settings:
    return Settings.load(home=getattr(args, "home", None), db=getattr(args, "db", None), **extra)
