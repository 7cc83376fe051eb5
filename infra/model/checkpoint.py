"""Save and load a trained ranker: config, weights (float16 on disk, float32 in memory) and metadata.

The file is a plain `torch.save` dict of tensors and JSON-like values, loaded with
`weights_only=True` (no pickled code runs when weights are read).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from docassay.infra.errors import ConfigError
from docassay.infra.model.moe import MoEConfig, ProposalRanker

__all__ = ["save", "load", "FORMAT"]

FORMAT = "docassay-ranker/1"


def save(path: str | Path, model: ProposalRanker, meta: dict[str, Any] | None = None, *, half: bool = True) -> Path:
    """Write the model (weights as float16 when `half`) and `meta` (JSON-like) to `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: (v.detach().half() if half and v.is_floating_point() else v.detach()).contiguous()
             for k, v in model.state_dict().items()}
    torch.save({"format": FORMAT, "config": model.cfg.to_json(), "state": state, "meta": meta or {}}, path)
    return path


def load(path: str | Path) -> tuple[ProposalRanker, dict[str, Any]]:
    """The model in eval mode (float32) and its metadata. Raises ConfigError for a missing or
    foreign file."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"model weights not found: {path}", setting="model_weights")
    blob = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        raise ConfigError(f"{path} is not a docassay ranker checkpoint ({FORMAT})", setting="model_weights")
    model = ProposalRanker(MoEConfig(**blob["config"]))
    model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in blob["state"].items()})
    model.eval()
    return model, dict(blob.get("meta") or {})
