"""`docassay extract --estimate`: how many documents would need the model, and how many tokens,
without calling it.

Each document is read, parsed, fingerprinted and matched against the format library (read-only:
nothing is learned or stored). A document of a known format needs no model. For the others the
generator's scorer says what its call would cost (`estimate_tokens`; 0 for the baseline). New
documents whose fingerprints match each other are grouped: the first of a group teaches the
format, the rest then match it, so the expected cost counts one call per group; the upper bound
counts one per new document (every document whose first attempt fails verification).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from docassay.extractors.einvoice import looks_like_xml
from docassay.extractors.errors import ParseError
from docassay.extractors.instructions.generator import estimate_tokens
from docassay.flows import front
from docassay.flows.context import Job, RunContext
from docassay.infra.errors import DocassayError
from docassay.infra.quota import Usage

__all__ = ["DocumentEstimate", "Estimate", "estimate_batch"]


@dataclass
class DocumentEstimate:
    source: str
    outcome: str                       # known | new | einvoice (a bare XML invoice: no model) | error
    format_id: str | None = None       # the known format
    similarity: float = 0.0
    input_tokens: int = 0              # what generating instructions for it would cost
    output_tokens: int = 0
    group: int | None = None           # new documents likely to share one format
    error: str | None = None

    def to_json(self) -> dict:
        return {"source": self.source, "outcome": self.outcome, "format_id": self.format_id,
                "similarity": round(self.similarity, 4), "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "group": self.group, "error": self.error}


@dataclass
class Estimate:
    generator: str
    documents: list[DocumentEstimate]
    usages: list[Usage] = field(default_factory=list)     # today's quotas (metered generators)

    def _of(self, outcome: str) -> list[DocumentEstimate]:
        return [d for d in self.documents if d.outcome == outcome]

    @property
    def expected(self) -> tuple[int, int]:
        """Tokens for one model call per group of new documents."""
        leaders: dict[int, DocumentEstimate] = {}
        for d in self._of("new"):
            leaders.setdefault(d.group if d.group is not None else -1, d)
        return sum(d.input_tokens for d in leaders.values()), sum(d.output_tokens for d in leaders.values())

    @property
    def upper_bound(self) -> tuple[int, int]:
        new = self._of("new")
        return sum(d.input_tokens for d in new), sum(d.output_tokens for d in new)

    def fits(self) -> bool | None:
        """Whether the expected tokens fit in what is left of every quota today (None: unmetered)."""
        if not self.usages:
            return None
        need_in, need_out = self.expected
        return all(u.covers(need_in, need_out) for u in self.usages)

    def to_json(self) -> dict:
        new = self._of("new")
        e_in, e_out = self.expected
        u_in, u_out = self.upper_bound
        return {"generator": self.generator, "documents": len(self.documents), "known": len(self._of("known")),
                "need_model": len(new), "new_formats": len({d.group for d in new}), "errors": len(self._of("error")),
                "einvoice_xml": len(self._of("einvoice")),
                "expected_tokens": {"input": e_in, "output": e_out},
                "upper_bound_tokens": {"input": u_in, "output": u_out},
                "quota": [u.to_json() for u in self.usages], "fits_quota": self.fits(),
                "per_document": [d.to_json() for d in self.documents]}

    def summary_lines(self) -> list[str]:
        j = self.to_json()
        lines = [f"{j['documents']} documents: {j['known']} of known formats (no model), "
                 f"{j['need_model']} need the {self.generator} generator (about {j['new_formats']} new formats), "
                 f"{j['errors']} unreadable" + (f", {j['einvoice_xml']} bare e-invoice XML (no model)"
                                                 if j["einvoice_xml"] else ""),
                 f"expected model tokens: {j['expected_tokens']['input']:,} input, {j['expected_tokens']['output']:,} "
                 f"output (at most {j['upper_bound_tokens']['input']:,} / {j['upper_bound_tokens']['output']:,})"]
        for u in self.usages:
            lines.append(f"quota of {u.subject} today: {u.remaining_input:,} input / {u.remaining_output:,} "
                         f"output tokens left of {u.limit.input_tokens:,} / {u.limit.output_tokens:,}")
        if self.fits() is False:
            lines.append("the expected tokens do not fit in today's quota: documents would end quota_exceeded")
        return lines


def _one(source: str, job: Job, ctx: RunContext) -> tuple[DocumentEstimate, np.ndarray | None]:
    try:
        data = front.read(source, job)
        if job.einvoice != "ignore" and b"%PDF-" not in data[:1024] and looks_like_xml(data):
            return DocumentEstimate(source, "einvoice"), None      # read from its XML, no model call
        indexed = front.index(front.parse_document(source, data, job))
        ix, vec = indexed.ix, indexed.vec
    except (ParseError, DocassayError) as exc:
        return DocumentEstimate(source, "error", error=f"{exc.kind}: {exc.message}"), None
    except (MemoryError, RecursionError) as exc:
        return DocumentEstimate(source, "error", error=f"too_large: {type(exc).__name__}"), None
    known, best = front.match(job, ctx, vec)
    if known is not None:
        return DocumentEstimate(source, "known", known.format_id, known.similarity), vec
    t_in, t_out = estimate_tokens(ix, job.schema, job.scorer)
    return DocumentEstimate(source, "new", None, best, t_in, t_out), vec


def estimate_batch(sources: list[str], job: Job, ctx: RunContext, *, concurrency: int | None = None) -> Estimate:
    """Estimate a batch without calling the model and without changing the library or the quotas."""
    workers = max(1, concurrency or job.settings.concurrency)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="docassay-estimate") as pool:
        results = list(pool.map(lambda s: _one(s, job, ctx), sources))
    leaders: list[tuple[int, np.ndarray]] = []
    for est, vec in results:
        if est.outcome != "new" or vec is None:
            continue
        for gid, lv in leaders:
            if float(np.dot(lv, vec)) >= job.settings.match_threshold:
                est.group = gid
                break
        else:
            est.group = len(leaders)
            leaders.append((est.group, vec))
    usages = job.budget.usages() if job.budget is not None and hasattr(job.budget, "usages") else []
    return Estimate(job.generator, [e for e, _ in results], usages)
