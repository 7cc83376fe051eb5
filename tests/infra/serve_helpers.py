"""Support for the model-server tests and bench: tiny weights, a real server process, random documents,
in-process reference scores."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from docassay.infra.serve.process import ServerProcess

__all__ = ["ServerProcess", "write_weights", "random_docs", "reference_scores"]

ROOT = Path(__file__).resolve().parents[2]


def write_weights(path: Path, *, seed: int = 0, d_model: int = 16, d_expert: int = 32, n_experts: int = 8,
                  n_layer: int = 2, routing: str = "token", residual: float = 0.0) -> Path:
    """A freshly initialised ranker with the pipeline's feature sizes, saved as the project saves one
    (`residual` > 0: a correction of the baseline's score, as shipped, with a random non-zero head)."""
    from docassay.extractors.instructions.model_features import FEATURE_VERSION, N_BUCKETS, N_NUMERIC, numeric_names
    from docassay.infra.model.checkpoint import save
    from docassay.infra.model.moe import MoEConfig, ProposalRanker

    torch.manual_seed(seed)
    cfg = MoEConfig(n_buckets=N_BUCKETS, n_numeric=N_NUMERIC, d_model=d_model, d_expert=d_expert,
                    n_experts=n_experts, n_layer=n_layer, routing=routing, residual=residual,
                    baseline_index=numeric_names(FEATURE_VERSION).index("baseline"))
    model = ProposalRanker(cfg)
    if residual > 0:                             # zero at initialisation: make the correction matter
        torch.nn.init.normal_(model.head.weight, std=1.0)
    return save(path, model, {"feature_version": FEATURE_VERSION})


def random_docs(n_docs: int, n_buckets: int, n_numeric: int, *, seed: int = 0, max_tokens: int = 300
                ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Documents shaped like featurised proposals: 1..max_tokens tokens, 1..20 ids each."""
    rng = np.random.default_rng(seed)
    docs = []
    for n in rng.integers(1, max_tokens, n_docs):
        lens = rng.integers(1, 20, int(n))
        start = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        ids = rng.integers(0, n_buckets, int(start[-1])).astype(np.int64)
        num = rng.normal(size=(int(n), n_numeric)).astype(np.float32)
        docs.append((ids, start, num))
    return docs


@torch.no_grad()
def reference_scores(weights: Path, docs, *, threads: int = 1) -> list[np.ndarray]:
    """sigmoid(logit) per document from the single-process model, as ModelScorer computes it, with
    `threads` torch threads (the server's ranks run with the same count)."""
    from docassay.infra.model.checkpoint import load

    model, _ = load(weights)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        out = []
        for ids, start, num in docs:
            doc = torch.zeros(num.shape[0], dtype=torch.long)
            logits = model(torch.from_numpy(ids), torch.from_numpy(start[:-1]), torch.from_numpy(num), doc).logits
            out.append(torch.sigmoid(logits).numpy())
        return out
    finally:
        torch.set_num_threads(before)
