"""`docassay.extract`: the CLI's `docassay extract` (local orchestrator) as a function.

The same steps, in the same order, as `flows/commands/extract.py` with `--orchestrator local`:
an existing output refused first (unless `overwrite`), then the pre-flight (schema, rule pack,
every rule planned against the schema's relations on the database, a spent quota refused), then
`flows.extract_batch` on a thread pool, all inside `embedded.command_scope` as `flows.cli.main`
runs a command. Every default is the CLI's (the `JobOptions` defaults,
`flows.pipeline.DEFAULT_GENERATOR`); only progress output is off unless `quiet=False`.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Union

from flows.pipeline import DEFAULT_GENERATOR

if TYPE_CHECKING:
    from flows.results import Row

PathArg = Union[str, "os.PathLike[str]"]

DEFAULT_CONCURRENCY = 2
"""Documents processed at once unless told otherwise (the CLI's `--concurrency`)."""


def extract(paths: PathArg | Iterable[PathArg], *, schema: PathArg, rules: PathArg | None = None,
            out: PathArg | None = None, home: PathArg | None = None, db: str | None = None,
            generator: str = DEFAULT_GENERATOR, concurrency: int = DEFAULT_CONCURRENCY, parser: str = "local",
            index: str | None = None, model_url: str | None = None, project: str | None = None,
            user: str | None = None, follow_links: bool = False, einvoice: str = "use",
            min_confidence: float | None = None, max_error_ratio: float | None = None,
            overwrite: bool = False, quiet: bool = True) -> list["Row"]:
    """Extract, verify and record every document under `paths` (files, folders, s3://bucket/prefix);
    return one `Row` per document in input order (`row.status` is a `docassay.Status` value).

    `out`: a folder (or s3://bucket/prefix) that gets `results.jsonl` as the CLI writes it; None
    writes no file (the rows are only returned; the run is still recorded in the database, and
    learned formats are kept under `home`). An existing results.jsonl in `out` is refused
    (`OutputExists`) unless `overwrite`; a killed run's rows in `out` are resumed.

    Raises ConfigError (bad options, schema or output folder), RulesError (a rule that does not plan
    against the schema), QuotaExceeded (the quota is spent before anything is read), BatchFailed
    (more than `max_error_ratio` of the documents failed; all rows were written first). A document
    that cannot be read is not raised: it is its row's `error`.
    """
    from flows.commands.extract import _close_budget, _preflight   # the CLI's pre-flight, not a copy
    from flows.extract_batch import ThreadDispatch, extract_batch_outcome
    from flows.jobs import JobOptions
    from flows.results_store import is_remote
    from infra.db import embedded
    from infra.errors import ConfigError

    sources = [os.fspath(p) for p in ([paths] if isinstance(paths, (str, os.PathLike)) else paths)]
    if not sources:
        raise ConfigError("no documents given: pass files, folders or s3:// prefixes", setting="paths")
    if concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, not {concurrency}", setting="concurrency")
    if max_error_ratio is not None and not 0.0 <= max_error_ratio <= 1.0:
        raise ConfigError(f"max error ratio must be between 0 and 1, not {max_error_ratio}",
                          setting="max_error_ratio")
    opts = JobOptions(schema=schema, rules=rules, home=home, db=db, generator=generator, concurrency=concurrency,
                      project=project, user=user, model_url=model_url, parser=parser, index=index,
                      follow_links=follow_links, einvoice=einvoice, min_confidence=min_confidence)
    target = os.fspath(out) if out is not None else None
    if target is not None and not is_remote(target):
        from flows.output import preflight
        preflight(Path(target), overwrite=overwrite, replaces=None)     # busy or existing output: refused at once
    with embedded.command_scope():     # as a CLI command: an embedded server this call started stops with it
        job = _preflight(opts)
        try:
            with tempfile.TemporaryDirectory(prefix="docassay-rows-") as scratch:
                outcome = extract_batch_outcome(sources, opts, target if target is not None else scratch,
                                                dispatch=ThreadDispatch(concurrency), quiet=quiet,
                                                max_error_ratio=max_error_ratio, job=job, overwrite=overwrite)
        finally:
            _close_budget(job)         # extract_batch closed it; a failure before it started did not
    return outcome.rows
