"""Test support for token budgets: a STAND-IN for the MoE model at the model edge, and small
document sets.

`MeteredBaselineScorer` ranks proposals exactly as the baseline does and charges a deterministic
token cost per call, as a model-backed scorer reports it (`tokens(ix, specs, proposals)`, known
before the call). It exists so that the quota machinery (real PostgreSQL, real pipeline, real CLI)
can be tested before, and independently of, the trained model; only the model call is stood in for.
`install()` puts it behind `--generator model` in this process.
"""
from __future__ import annotations

import json
from pathlib import Path

from docassay.extractors.instructions import baseline
from docassay.extractors.synth import generate, to_pdf

INPUT_PER_FIELD = 40           # the field's name, description and labels
INPUT_PER_PROPOSAL = 12        # one candidate span with its context
OUTPUT_PER_FIELD = 6           # the chosen locator


class MeteredBaselineScorer:
    """Baseline ranking, metered like a model call (stand-in; see the module docstring)."""

    def __call__(self, ix, specs, proposals):
        return baseline.score_proposals(ix, specs, proposals)

    def tokens(self, ix, specs, proposals) -> tuple[int, int]:
        n = sum(len(v) for v in proposals.values())
        return INPUT_PER_FIELD * len(specs) + INPUT_PER_PROPOSAL * n, OUTPUT_PER_FIELD * len(specs)


def install() -> None:
    """`--generator model` builds the stand-in in this process (flows.jobs.GENERATORS)."""
    from docassay.flows import jobs
    jobs.GENERATORS["model"] = MeteredBaselineScorer


def write_invoices(folder: Path, n_formats: int, n_docs: int, seed: int) -> list[Path]:
    """Synthetic invoice PDFs (n_formats seeded layouts x n_docs), with ground truth beside them."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for sd in generate(n_formats, n_docs, kind="invoice", seed=seed, split="dev"):
        p = folder / f"{sd.doc_id}.pdf"
        p.write_bytes(to_pdf(sd))
        (folder / f"{sd.doc_id}.json").write_text(json.dumps(sd.truth))
        paths.append(p)
    return paths


def header_schema(schema: dict, keep: tuple[str, ...] = ("invoice_number", "issue_date", "currency", "gross_total")) -> dict:
    """The invoice schema cut down to header fields the extractor reads reliably: for tests of the
    budget machinery, which must not hinge on how well line items are read today."""
    return {**schema, "properties": {k: schema["properties"][k] for k in keep}, "required": list(keep)}
