"""docassay's public Python API, in one place (pinned by tests/test_public_api.py).

    import docassay
    rows = docassay.extract(["invoices/"], schema="schema.json", rules="rules/")

Names:
    extract          the CLI's `docassay extract` as a function, returning a list of `Row`
    Job, JobOptions  what a batch extracts and how (`JobOptions` -> `build_job` -> `Job`)
    Row, Status      one results.jsonl row; its status (a str enum: `row.status == Status.PASSED`)
    __version__      the installed version (as `docassay --version`)

Errors (every one a DocassayError with a stable `kind` and a `context` dict):

    DocassayError
    ├── ConfigError            bad options, schema or settings
    │   └── OutputExists       results.jsonl already in the output folder (pass overwrite=True)
    ├── DatabaseError          the database could not be reached or refused an operation
    ├── StorageError           a document store or results file could not be read or written
    │   └── ResultsIncomplete  some rows could not be written (their results.jsonl left as it was)
    ├── QuotaExceeded          the token quota is spent (refused before anything is read)
    ├── ParseError             a document could not be read (in a batch: that row's `error`)
    ├── RulesError             a rule pack that does not parse or plan against the schema
    ├── VerifyError            a schema the verifiers cannot use (bad $ref, ...)
    ├── BatchFailed            more documents failed than `max_error_ratio` allows
    └── BatchInterrupted       a stop request ended the batch early (finished rows kept)

`import docassay` is light: the pipeline (and with it numpy, psycopg; torch only once the model
scores a document, Prefect never on this path) loads on first use of a name.
"""
from __future__ import annotations

import os as _os
from importlib import import_module
from typing import TYPE_CHECKING, Any

# The repository keeps the product's folders at its root (extractors/, flows/, infra/, rules/,
# verifiers/); the wheel installs them as docassay.extractors, ... (setup.py's package_dir). Run from
# a source tree (a checkout on sys.path, tests, bench), the same names resolve to those folders: the
# parent of this package joins its search path when it is that tree. Only `docassay.` names are used.
_SOURCE_TREE = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if (not _os.path.isdir(_os.path.join(_os.path.dirname(__file__), "flows"))
        and _os.path.isfile(_os.path.join(_SOURCE_TREE, "pyproject.toml"))
        and _os.path.isdir(_os.path.join(_SOURCE_TREE, "flows"))):
    __path__.append(_SOURCE_TREE)

from docassay.infra.errors import ConfigError, DatabaseError, DocassayError, StorageError

__all__ = [
    "BatchFailed",
    "BatchInterrupted",
    "ConfigError",
    "DatabaseError",
    "DocassayError",
    "Job",
    "JobOptions",
    "OutputExists",
    "ParseError",
    "QuotaExceeded",
    "ResultsIncomplete",
    "Row",
    "RulesError",
    "Status",
    "StorageError",
    "VerifyError",
    "__version__",
    "extract",
]

_LAZY: dict[str, str] = {
    "extract": "docassay._api",
    "Job": "docassay.flows.pipeline",
    "JobOptions": "docassay.flows.jobs",
    "Row": "docassay.flows.results",
    "Status": "docassay.flows.results",
    "BatchFailed": "docassay.flows.extract_batch",
    "BatchInterrupted": "docassay.flows.extract_batch",
    "ResultsIncomplete": "docassay.flows.extract_batch",
    "OutputExists": "docassay.flows.output",
    "QuotaExceeded": "docassay.infra.quota",
    "ParseError": "docassay.extractors.errors",
    "RulesError": "docassay.rules.errors",
    "VerifyError": "docassay.verifiers.errors",
}
"""Public name -> the module that defines it (imported on first use)."""

if TYPE_CHECKING:
    from docassay._api import extract
    from docassay.extractors.errors import ParseError
    from docassay.flows.context import Job
    from docassay.flows.extract_batch import BatchFailed, BatchInterrupted, ResultsIncomplete
    from docassay.flows.jobs import JobOptions
    from docassay.flows.output import OutputExists
    from docassay.flows.results import Row, Status
    from docassay.infra.quota import QuotaExceeded
    from docassay.rules.errors import RulesError
    from docassay.verifiers.errors import VerifyError

    __version__: str


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from docassay.flows.cli import version  # installed metadata, else pyproject.toml: as `docassay --version`
        value: Any = version()
    elif name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module 'docassay' has no attribute {name!r}")
    globals()[name] = value                # looked up once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
