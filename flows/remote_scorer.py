"""The models through a running `docassay model serve` (`--model-url`), as generator scorers.

`RemoteScorer` is `extractors.instructions.model_scorer.ModelScorer` with the model call replaced
by an HTTP call: the same baseline pre-scoring, features, sorting and token accounting, so a
pipeline run against the server gives what an in-process run gives (the server computes the same
bits as the single-process model run with the same number of torch threads; see infra/serve/front.py).

`RemoteLayoutScorer` is `extractors.instructions.layout_scorer.LayoutScorer` (`--generator layout`)
with the reading done by a server that serves the layout reader (`docassay model serve --model
layout`): the document's words and field queries go out (cut to `MAX_READ_WORDS`, as in-process),
the begin / end logits come back bit for bit, the softmax and everything after it run here.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from docassay.extractors.instructions.layout_features import doc_words, layout_doc
from docassay.extractors.instructions.layout_scorer import MAX_READ_WORDS, LayoutScorer
from docassay.extractors.instructions.model_scorer import ModelScorer
from docassay.extractors.labels import FieldSpec
from docassay.extractors.spans import DocIndex
from docassay.infra.errors import ConfigError
from docassay.infra.model.layout import LayoutConfig
from docassay.infra.model.moe import MoEConfig
from docassay.infra.serve.client import ModelClient

__all__ = ["RemoteScorer", "remote_scorer", "RemoteLayoutScorer", "remote_layout_scorer"]


def _expect(client: ModelClient, kind: str, generator: str):
    status = client.status()
    served = status.model.kind
    if served != kind:
        raise ConfigError(f"--generator {generator} needs a server of the {kind}, but {client.url} serves the {served} "
                          f"({status.model.weights}); start one with `docassay model serve --model {kind}`",
                          setting="model_url")
    return status


class RemoteScorer(ModelScorer):
    """Scores one document per call on the server; thread-safe (the client keeps a connection per thread)."""

    def __init__(self, client: ModelClient) -> None:
        status = _expect(client, "ranker", "model")
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


class _ServedReader:
    """Stands in for the local `LayoutReader` LayoutScorer keeps: the config only (the server reads)."""

    def __init__(self, cfg: LayoutConfig) -> None:
        self.cfg = cfg


class RemoteLayoutScorer(LayoutScorer):
    """`LayoutScorer` whose model call is one request to a layout server; thread-safe."""

    def __init__(self, client: ModelClient, *, blend: float | None = None, level: str | None = None) -> None:
        status = _expect(client, "layout", "layout")
        path = Path(status.model.weights)
        meta = {"feature_version": status.model.feature_version, "server": client.url}
        super().__init__(_ServedReader(LayoutConfig(**status.model.config)), meta, path,  # type: ignore[arg-type]
                         blend=blend, level=level)
        self.client = client
        self.name = f"layout:{path.stem}@{client.url}"

    @torch.no_grad()
    def read(self, ix: DocIndex, specs: list[FieldSpec]) -> tuple[torch.Tensor, torch.Tensor, object]:
        words = doc_words(ix)
        d = layout_doc(ix, specs, words)
        if not d.n_words or not specs:
            f = len(specs)
            return torch.cat([torch.zeros(f, 0), torch.ones(f, 1)], 1), torch.zeros(f, 0), words
        begin, end = self.client.read([d.first_words(MAX_READ_WORDS)])[0]
        return torch.softmax(torch.from_numpy(begin), -1), torch.softmax(torch.from_numpy(end), -1), words


def remote_layout_scorer(url: str, *, timeout_s: float = 300.0) -> RemoteLayoutScorer:
    """A layout scorer backed by the layout server at `url` (ServeError when it cannot be reached,
    ConfigError when it serves the ranker)."""
    return RemoteLayoutScorer(ModelClient(url, timeout_s=timeout_s))
