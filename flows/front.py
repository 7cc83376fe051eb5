"""The front of the pipeline, as plain functions every path uses (the pipeline, the e-invoice step,
the batch estimate): read a document's bytes, parse them, index and fingerprint the document, match
it against the format library. Each takes what it needs, returns plain values, and raises the
document's own error (`ParseError`, `DocassayError`); callers turn that into the row's error.

    read(source, job)                  -> bytes         (regular files only unless --follow-links)
    parse_document(source, data, job)  -> Document
    index(doc)                         -> Indexed       (DocIndex + fingerprint vector)
    match(job, ctx, vec)               -> (FormatMatch | None, best similarity)
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

import numpy as np

from docassay.extractors.document import Document
from docassay.extractors.fingerprint import fingerprint
from docassay.extractors.library import FormatMatch
from docassay.extractors.parsers import parse, read_source
from docassay.extractors.spans import DocIndex

if TYPE_CHECKING:
    from docassay.flows.context import Job, RunContext

__all__ = ["Timer", "stage", "Indexed", "read", "parse_document", "index", "match"]


class Timer:
    """Milliseconds per named stage of one document (a row's `timings_ms`)."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        t = time.perf_counter()
        try:
            yield
        finally:
            self.ms[name] = self.ms.get(name, 0.0) + (time.perf_counter() - t) * 1000


@contextmanager
def stage(timer: Timer | None, name: str) -> Iterator[None]:
    """`timer.stage(name)`, or nothing when there is no timer."""
    if timer is None:
        yield
        return
    with timer.stage(name):
        yield


@dataclass(frozen=True)
class Indexed:
    """A parsed document with its span index and its layout fingerprint."""
    doc: Document
    ix: DocIndex
    vec: np.ndarray


def read(source: str, job: "Job") -> bytes:
    """The document's bytes, within the job's size limit (ParseError when it cannot be read)."""
    return read_source(source, job.settings.limits.max_bytes, follow_links=job.settings.follow_links)


def parse_document(source: str, data: bytes, job: "Job") -> Document:
    return parse(source, data, settings=job.settings)


def index(doc: Document, timer: Timer | None = None) -> Indexed:
    with stage(timer, "index"):
        ix = DocIndex(doc)
    with stage(timer, "fingerprint"):
        vec = fingerprint(doc)
    return Indexed(doc, ix, vec)


def match(job: "Job", ctx: "RunContext", vec: np.ndarray, timer: Timer | None = None) -> tuple[FormatMatch | None, float]:
    """The job's known format this layout matches at the job's threshold, and the best similarity
    seen; (None, 0.0) when the job does not reuse formats."""
    if not job.reuse_formats:
        return None, 0.0
    with stage(timer, "match"):
        return ctx.library.match(ctx.conn, vec, job.key, job.settings.match_threshold)
