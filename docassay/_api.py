"""`docassay.extract`: the CLI's `docassay extract` (local orchestrator) as a function.

The same steps, in the same order, as `flows/commands/extract.py` with `--orchestrator local`:
an existing output refused first (unless `overwrite`), then the pre-flight (schema, rule pack,
every rule planned against the schema's relations on the database, a spent quota refused), then
`flows.extract_batch` on a thread pool, all inside `embedded.command_scope` as `flows.cli.main`
runs a command. The job options are `JobOptions`' fields (flows/job_options.py, the one list the
CLI's flags come from too), so every default is the CLI's; only progress output is off unless
`quiet=False`.
"""
from __future__ import annotations

import dataclasses
import inspect
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Union

from docassay.flows.job_options import DEFAULT_CONCURRENCY, JobOptions

if TYPE_CHECKING:
    from docassay.flows.results import Row

PathArg = Union[str, "os.PathLike[str]"]

__all__ = ["extract", "DEFAULT_CONCURRENCY"]


def extract(paths: PathArg | Iterable[PathArg], *, out: PathArg | None = None, max_error_ratio: float | None = None,
            overwrite: bool = False, quiet: bool = True, **options: Any) -> list["Row"]:
    """Extract, verify and record every document under `paths` (files, folders, s3://bucket/prefix);
    return one `Row` per document in input order (`row.status` is a `docassay.Status` value).

    `options`: the job options, `JobOptions`' fields (flows/job_options.py) with its defaults, the
    CLI's: `schema` (required), `rules`, `home`, `db`, `generator`, `concurrency`, `parser`,
    `index`, `model_url`, `project`, `user`, `follow_links`, `einvoice`, `min_confidence`, ...
    (`inspect.signature(docassay.extract)` lists them all).

    `out`: a folder (or s3://bucket/prefix) that gets `results.jsonl` as the CLI writes it; None
    writes no file (the rows are only returned; the run is still recorded in the database, and
    learned formats are kept under `home`). An existing results.jsonl in `out` is refused
    (`OutputExists`) unless `overwrite`; a killed run's rows in `out` are resumed.

    Raises ConfigError (bad options, schema or output folder), RulesError (a rule that does not plan
    against the schema), QuotaExceeded (the quota is spent before anything is read), BatchFailed
    (more than `max_error_ratio` of the documents failed; all rows were written first). A document
    that cannot be read is not raised: it is its row's `error`. An unknown keyword is a TypeError.
    """
    from docassay.flows.commands.extract import _close_budget, _preflight  # the CLI's pre-flight, not a copy
    from docassay.flows.extract_batch import ThreadDispatch, extract_batch_outcome
    from docassay.flows.results_store import is_remote
    from docassay.infra.db import embedded
    from docassay.infra.errors import ConfigError

    unknown = sorted(set(options) - set(JobOptions.names()))
    if unknown:
        raise TypeError(f"extract() got unexpected keyword argument(s) {', '.join(unknown)}")
    if "schema" not in options:
        raise TypeError("extract() missing required keyword argument: 'schema'")
    opts = JobOptions(**options)
    sources = [os.fspath(p) for p in ([paths] if isinstance(paths, (str, os.PathLike)) else paths)]
    if not sources:
        raise ConfigError("no documents given: pass files, folders or s3:// prefixes", setting="paths")
    if opts.concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, not {opts.concurrency}", setting="concurrency")
    if max_error_ratio is not None and not 0.0 <= max_error_ratio <= 1.0:
        raise ConfigError(f"max error ratio must be between 0 and 1, not {max_error_ratio}",
                          setting="max_error_ratio")
    target = os.fspath(out) if out is not None else None
    if target is not None and not is_remote(target):
        from docassay.flows.output import preflight
        preflight(Path(target), overwrite=overwrite, replaces=None)     # busy or existing output: refused at once
    with embedded.command_scope():     # as a CLI command: an embedded server this call started stops with it
        job = _preflight(opts)
        try:
            with tempfile.TemporaryDirectory(prefix="docassay-rows-") as scratch:
                outcome = extract_batch_outcome(sources, opts, target if target is not None else scratch,
                                                dispatch=ThreadDispatch(opts.concurrency), quiet=quiet,
                                                max_error_ratio=max_error_ratio, job=job, overwrite=overwrite)
        finally:
            _close_budget(job)         # extract_batch closed it; a failure before it started did not
    return outcome.rows


def _signature() -> inspect.Signature:
    """extract's signature with the job options spelled out (one keyword each, JobOptions' default)."""
    sig = inspect.signature(extract)
    base = sig.parameters
    job = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, annotation=f.type,
                             default=inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default)
           for f in dataclasses.fields(JobOptions)]
    batch = [p for name, p in base.items() if name not in ("paths", "options")]
    return sig.replace(parameters=[base["paths"], *job, *batch])


extract.__signature__ = _signature()  # type: ignore[attr-defined]
