"""The MoE model through a running `docassay model serve` (`--model-url`), as a generator scorer.

`RemoteScorer` is `extractors.instructions.model_scorer.ModelScorer` with the model call replaced
by an HTTP call: the same baseline pre-scoring, features, sorting and token accounting, so a
pipeline run against the server gives what an in-process run gives (the server computes the same
bits as the single-process model run with the same number of torch threads; see infra/serve/front.py).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from docassay.extractors.instructions.model_scorer import ModelScorer
from docassay.infra.model.moe import MoEConfig
from docassay.infra.serve.client import ModelClient

__all__ = ["RemoteScorer", "remote_scorer"]


class RemoteScorer(ModelScorer):
    """Scores one document per call on the server; thread-safe (the client keeps a connection per thread)."""

    def __init__(self, client: ModelClient) -> None:
        status = client.status()
        meta = {"feature_version": status.model.feature_version, "server": client.url}
        super().__init__(None, meta, Path(status.model.weights))  # type: ignore[arg-type]  # no local ranker: the server scores
        self.cfg = MoEConfig(**status.model.config)                    # a residual model's map is applied here
        self.client = client
        self.name = f"model:{Path(status.model.weights).stem}@{client.url}"

    def score_features(self, ids: np.ndarray, id_start: np.ndarray, num: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(self.client.score_one(ids, id_start, num))


def remote_scorer(url: str, *, timeout_s: float = 300.0) -> RemoteScorer:
    """A scorer backed by the server at `url` (raises ServeError when it cannot be reached)."""
    return RemoteScorer(ModelClient(url, timeout_s=timeout_s))
