"""How a batch spreads its documents: a `Dispatch` runs `process_document` (through
`flows.outages.process_with_reconnect`: a database outage costs a document a retry) over the sources
and yields (index, row) as documents finish. `ThreadDispatch` is a thread pool in this process: the
one batch loop of the CLI's local runs, `docassay.extract` and `flows.batch.run_batch` (tests and
benchmarks); the Prefect tasks of flows/extract_flow.py are the other dispatch.
"""
from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Iterator, Mapping, Protocol

from docassay.extractors.document import Document
from docassay.flows.context import Job, RunContext
from docassay.flows.outages import Outage, process_with_reconnect
from docassay.flows.results import Row
from docassay.flows.signals import StopRequest

__all__ = ["Dispatch", "ThreadDispatch", "STOP_GRACE_S", "POLL_S"]

STOP_GRACE_S = 5.0
"""After a stop request, how long the documents in flight may take to finish before they are abandoned
(well inside the 10 s a container runtime waits between SIGTERM and SIGKILL)."""
POLL_S = 0.2
"""How often the batch looks at the stop request while it waits for documents."""


class Dispatch(Protocol):
    """Runs `process_document` (through `flows.outages.process_with_reconnect`: a database outage
    costs a document a retry) over `sources`; yields (index, row) as documents finish. After `stop`
    is set it starts no new document and yields only what finishes within the grace period."""
    def run(self, sources: list[str], job: Job, ctx: RunContext, stop: StopRequest) -> Iterator[tuple[int, Row]]: ...


@dataclass
class ThreadDispatch:
    """Documents on a thread pool of `workers` threads in this process (no orchestrator, no server)."""
    workers: int
    grace_s: float = STOP_GRACE_S
    abandoned: list[str] = field(default_factory=list)
    outage: Outage = field(default_factory=Outage)
    documents: Mapping[str, Document] | None = None   # sources already parsed (tests, benchmarks)

    def run(self, sources: list[str], job: Job, ctx: RunContext, stop: StopRequest) -> Iterator[tuple[int, Row]]:
        pool = ThreadPoolExecutor(max_workers=max(1, self.workers), thread_name_prefix="docassay-doc")
        pending: dict[Future, int] = {}
        nxt = 0
        try:
            while nxt < len(sources) or pending:
                while not stop.is_set() and nxt < len(sources) and len(pending) < max(1, self.workers):
                    src = sources[nxt]
                    pending[pool.submit(process_with_reconnect, src, job, ctx, self.outage,
                                        document=(self.documents or {}).get(src))] = nxt
                    nxt += 1
                if stop.is_set():
                    break
                done, _ = wait(list(pending), timeout=POLL_S, return_when=FIRST_COMPLETED)
                for fut in done:
                    yield pending.pop(fut), fut.result()
            if pending:                                   # stopped: the documents in flight may finish
                done, _ = wait(list(pending), timeout=self.grace_s)
                for fut in done:
                    yield pending.pop(fut), fut.result()
                self.abandoned = [sources[i] for i in pending.values()]
        finally:
            pool.shutdown(wait=not pending, cancel_futures=True)
