"""The MoE model as a generator scorer: `model_scorer()` -> a `Scorer` with `tokens()`.

    scorer = model_scorer()                     # the shipped weights, loaded once per process
    ranked = scorer(ix, specs, proposals)       # {field: [Proposal, best first, .score in [0, 1]]}
    n_in, n_out = scorer.tokens(ix, specs, proposals)

Weights: `infra/model/weights/moe.pt`, or the file named by `$DOCASSAY_MODEL_WEIGHTS` (benchmarks
compare variants this way), or the `weights` argument.

**Scores.** sigmoid of the model's logit: the chance that the proposal is the value to record *and*
that its locator finds the value on the format's next document (what the model was trained on), so
`generator.MIN_SCORE` keeps its meaning: an optional field below it is left out.

**Routing at inference.** One call scores one document, and the document is the routing group:
a model trained with the LocMoE+ switch runs expert choice *within the document* at its final
capacity, so its scores depend on that document only, never on what else is being processed.

**Threads.** Loading the scorer sets torch to one intra-op thread: a document is ~1,000 tokens of
width 48, and the pipeline already scores documents in parallel; more threads only spin-wait.

**Token accounting** (what `model_tokens` in a results row counts): input tokens = the proposal
tokens fed to the model (one per candidate span-and-locator pair of every field); output tokens =
the fields the model decides (one per schema field that has at least one proposal). Both are known
before the call, so budgets can reserve them exactly.
"""
from __future__ import annotations

import math
import os
from functools import lru_cache
from pathlib import Path

import torch

from docassay.extractors.errors import InstructionError
from docassay.extractors.instructions import baseline
from docassay.extractors.instructions.model_features import FEATURE_VERSIONS, DocFeatures, featurize
from docassay.extractors.instructions.proposals import Proposal
from docassay.extractors.labels import FieldSpec
from docassay.extractors.spans import DocIndex
from docassay.infra.model.checkpoint import load
from docassay.infra.model.moe import MoEConfig, ProposalRanker

__all__ = ["ModelScorer", "model_scorer", "field_level", "DEFAULT_WEIGHTS", "WEIGHTS_ENV"]

DEFAULT_WEIGHTS = Path(__file__).resolve().parents[2] / "infra" / "model" / "weights" / "moe.pt"
WEIGHTS_ENV = "DOCASSAY_MODEL_WEIGHTS"


class ModelScorer:
    """Ranks proposals with a trained `ProposalRanker` (thread-safe: inference only, no state)."""

    def __init__(self, model: ProposalRanker, meta: dict, path: Path) -> None:
        if meta.get("feature_version") not in FEATURE_VERSIONS:
            raise InstructionError(f"model weights {path} were trained on features v{meta.get('feature_version')}, "
                                   f"this code computes {', '.join(f'v{v}' for v in FEATURE_VERSIONS)}: "
                                   f"retrain with `docassay model train`")
        self.version = int(meta["feature_version"])
        self.model = model
        self.cfg: MoEConfig | None = model.cfg if model is not None else None   # a remote scorer sets the server's
        self.meta = meta
        self.path = path
        self.name = f"model:{path.stem}"

    def __call__(self, ix: DocIndex, specs: list[FieldSpec], proposals: dict[str, list[Proposal]]) -> dict[str, list[Proposal]]:
        baseline.score_proposals(ix, specs, proposals)          # the baseline's scores are model inputs
        f = featurize(ix, specs, proposals, version=self.version)
        if not f.proposals:
            return proposals
        for p, s in zip(f.proposals, self.scores(f).tolist()):
            p.score = s
        for props in proposals.values():
            props.sort(key=lambda p: (-p.score, p.span.key))
        return proposals

    def scores(self, f: DocFeatures) -> torch.Tensor:
        """The score [N] of every proposal of one featurised document: the model's probability; for a
        residual model, with each field's level put back to the baseline's (`field_level`)."""
        probs = self.score_features(f.ids, f.id_start, f.num)
        cfg = self.cfg
        if cfg is None or cfg.residual <= 0:
            return probs
        return field_level(probs, torch.from_numpy(f.group), torch.from_numpy(f.num[:, cfg.baseline_index]),
                           cfg.residual_slope, cfg.residual_threshold)

    @torch.no_grad()
    def score_features(self, ids, id_start, num) -> torch.Tensor:
        """sigmoid(logit) per token of ONE document (the routing group)."""
        ids_t = torch.from_numpy(ids)
        offs = torch.from_numpy(id_start[:-1])
        num_t = torch.from_numpy(num)
        doc = torch.zeros(num_t.shape[0], dtype=torch.long)
        out = self.model(ids_t, offs, num_t, doc)
        return torch.sigmoid(out.logits)

    def tokens(self, ix: DocIndex, specs: list[FieldSpec], proposals: dict[str, list[Proposal]]) -> tuple[int, int]:
        """(input, output) tokens of one call: proposals scored, fields decided."""
        return sum(len(v) for v in proposals.values()), sum(1 for s in specs if proposals.get(s.name))


def field_level(probs: torch.Tensor, group: torch.Tensor, base: torch.Tensor, slope: float, threshold: float) -> torch.Tensor:
    """Scores of a residual model with every field's level set back to the baseline's: within a field
    the order is the model's; the field's best score is what the baseline's best would score
    (sigmoid(slope * (max baseline - threshold) + logit(threshold)), the residual model's map).

    The residual model is trained with the listwise loss only, which cannot see a field's level, and
    its bounded correction leans negative wherever it is unsure (most proposals it saw were wrong):
    left alone, it dropped optional fields on real documents that the baseline keeps. A field's level
    decides whether an optional field is kept (`generator.MIN_SCORE`) and which field claims a
    contested span first; those stay the baseline's decisions. probs, base [N]; group [N] field index."""
    logit = torch.logit(probs.double(), eps=1e-15)                                   # [N]
    n_g = int(group.max()) + 1 if group.numel() else 0
    top = torch.full((n_g,), -float("inf"), dtype=torch.float64).scatter_reduce(0, group, logit, "amax")
    base_top = torch.full((n_g,), -float("inf"), dtype=torch.float64).scatter_reduce(0, group, base.double(), "amax")
    level = slope * (base_top - threshold) + math.log(threshold / (1 - threshold))     # [G]
    return torch.sigmoid(logit - top[group] + level[group]).float()


def model_scorer(weights: str | Path | None = None) -> ModelScorer:
    """The scorer for `weights` (default: `$DOCASSAY_MODEL_WEIGHTS`, else the shipped weights),
    loaded once per process and path."""
    path = Path(weights or os.environ.get(WEIGHTS_ENV) or DEFAULT_WEIGHTS).expanduser().resolve()
    return _load(path)


@lru_cache(maxsize=8)
def _load(path: Path) -> ModelScorer:
    torch.set_num_threads(1)
    model, meta = load(path)
    return ModelScorer(model, meta, path)
