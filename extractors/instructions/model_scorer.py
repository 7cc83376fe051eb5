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

import os
from functools import lru_cache
from pathlib import Path

import torch

from extractors.errors import InstructionError
from extractors.instructions import baseline
from extractors.instructions.model_features import FEATURE_VERSION, featurize
from extractors.instructions.proposals import Proposal
from extractors.labels import FieldSpec
from extractors.spans import DocIndex
from infra.model.checkpoint import load
from infra.model.moe import ProposalRanker

__all__ = ["ModelScorer", "model_scorer", "DEFAULT_WEIGHTS", "WEIGHTS_ENV"]

DEFAULT_WEIGHTS = Path(__file__).resolve().parents[2] / "infra" / "model" / "weights" / "moe.pt"
WEIGHTS_ENV = "DOCASSAY_MODEL_WEIGHTS"


class ModelScorer:
    """Ranks proposals with a trained `ProposalRanker` (thread-safe: inference only, no state)."""

    def __init__(self, model: ProposalRanker, meta: dict, path: Path) -> None:
        if meta.get("feature_version") != FEATURE_VERSION:
            raise InstructionError(f"model weights {path} were trained on features v{meta.get('feature_version')}, "
                                   f"this code computes v{FEATURE_VERSION}: retrain with `docassay model train`")
        self.model = model
        self.meta = meta
        self.path = path
        self.name = f"model:{path.stem}"

    def __call__(self, ix: DocIndex, specs: list[FieldSpec], proposals: dict[str, list[Proposal]]) -> dict[str, list[Proposal]]:
        baseline.score_proposals(ix, specs, proposals)          # the baseline's scores are model inputs
        f = featurize(ix, specs, proposals)
        if not f.proposals:
            return proposals
        probs = self.score_features(f.ids, f.id_start, f.num)
        for p, s in zip(f.proposals, probs.tolist()):
            p.score = s
        for props in proposals.values():
            props.sort(key=lambda p: (-p.score, p.span.key))
        return proposals

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
