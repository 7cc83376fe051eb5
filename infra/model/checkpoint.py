"""Save and load a trained ranker: config, weights (float16 on disk, float32 in memory) and metadata.

The file is a plain `torch.save` dict of tensors and JSON-like values, loaded with
`weights_only=True` (no pickled code runs when weights are read).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from docassay.infra.errors import ConfigError
from docassay.infra.model.moe import MoEConfig, ProposalRanker

if TYPE_CHECKING:
    from docassay.infra.model.layout import LayoutReader

__all__ = ["save", "load", "FORMAT", "save_layout", "load_layout", "LAYOUT_FORMAT", "KINDS", "kind_of", "load_any"]

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


LAYOUT_FORMAT = "docassay-layout/1"


def save_layout(path: str | Path, model: "LayoutReader", meta: dict[str, Any] | None = None, *, half: bool = True) -> Path:
    """Write a layout reader (float16 on disk when `half`) and `meta` to `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: (v.detach().half() if half and v.is_floating_point() else v.detach()).contiguous()
             for k, v in model.state_dict().items()}
    torch.save({"format": LAYOUT_FORMAT, "config": model.cfg.to_json(), "state": state, "meta": meta or {}}, path)
    return path


def load_layout(path: str | Path) -> tuple["LayoutReader", dict[str, Any]]:
    """The layout reader in eval mode (float32) and its metadata; ConfigError for a missing or foreign file."""
    from docassay.infra.model.layout import LayoutConfig, LayoutReader

    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"layout model weights not found: {path}", setting="model_weights")
    blob = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(blob, dict) or blob.get("format") != LAYOUT_FORMAT:
        raise ConfigError(f"{path} is not a docassay layout checkpoint ({LAYOUT_FORMAT})", setting="model_weights")
    model = LayoutReader(LayoutConfig(**blob["config"]))
    model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in blob["state"].items()})
    model.eval()
    return model, dict(blob.get("meta") or {})


KINDS = {FORMAT: "ranker", LAYOUT_FORMAT: "layout"}
"""Checkpoint format -> the model's kind (what `docassay model serve --model` names)."""


def kind_of(path: str | Path) -> str:
    """"ranker" or "layout", read from the file's own format; ConfigError for a missing or foreign file."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"model weights not found: {path}", setting="model_weights")
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:                       # noqa: BLE001  pickle, zip and EOF errors alike: not a checkpoint
        raise ConfigError(f"{path} cannot be read as a checkpoint: {type(exc).__name__}: {exc}",
                          setting="model_weights") from exc
    kind = KINDS.get(str(blob.get("format"))) if isinstance(blob, dict) else None
    if kind is None:
        raise ConfigError(f"{path} is not a docassay checkpoint (one of {', '.join(KINDS)})", setting="model_weights")
    return kind


def load_any(path: str | Path) -> tuple[str, Any, dict[str, Any]]:
    """(kind, model in eval mode, metadata) for a ranker or a layout checkpoint."""
    kind = kind_of(path)
    model, meta = load(path) if kind == "ranker" else load_layout(path)
    return kind, model, meta
