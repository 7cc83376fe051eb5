"""Rank 0's forward pass of the layout reader (`infra.model.layout.LayoutReader`): embeddings,
spatial attention, routers and the field heads here, the experts where their copies live.

    LayoutDoc ─collate([doc])─▶ embed_words ─▶ x [1, N, d]
        n_layer × ( x = x + Attn(LN(x))                                      rank 0, one document at a time
                    x = x + MoE(LN(x))   ── ExpertFront.moe_layer ─▶ the ranks holding each expert,
                                            every document of the batch in one exchange per layer )
        read_out ─▶ begin [F, N+1] logits (last: absent), end [F, N] logits

The dense parts run one document at a time, as `LayoutScorer` runs the model in-process (a batch of
one document, `collate([doc])`), so every product has the shape it has there; the experts run one
(document, expert) segment at a time, as `Experts.forward` does. The server returns the logits the
in-process model returns, bit for bit (same torch thread count); the caller takes the softmax.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from docassay.infra.model.layout import LayoutDoc, LayoutReader, collate
from docassay.infra.model.moe import MLP
from docassay.infra.serve.comm import World
from docassay.infra.serve.front import BatchStats, ExpertFront
from docassay.infra.serve.shard import ExpertShard

__all__ = ["LayoutInput", "LayoutFront"]


@dataclass
class LayoutInput:
    """One document for the layout reader: its words and the schema's field queries."""
    doc: LayoutDoc

    @property
    def n_tokens(self) -> int:
        return self.doc.n_words


class LayoutFront(ExpertFront):
    """The layout reader without its experts."""

    kind = "layout"

    def __init__(self, model: LayoutReader, device: torch.device) -> None:
        super().__init__(model, device)

    @torch.no_grad()
    def forward(self, world: World, active: int, shard: ExpertShard, where: list[list[list[tuple[int, int]]]],
                docs: list[LayoutInput]) -> tuple[list[tuple[torch.Tensor, torch.Tensor]], BatchStats]:
        """(begin [F_i, N_i + 1], end [F_i, N_i]) logits per document, and what each rank and expert ran."""
        m = self.model
        rows_rank = [0] * world.size
        rows_expert: list[list[int]] = []
        batches = [collate([d.doc]) for d in docs]
        xs, rels = [], []
        for b in batches:
            x, rel = m.embed_words(b)                                                    # [1, N_i, d], [1, N_i, N_i]
            xs.append(x)
            rels.append(rel)
        moe_index = 0
        for block in m.blocks:
            xs = [x + block.drop(block.attn(block.ln1(x), rel, b.mask)) for x, rel, b in zip(xs, rels, batches)]
            lns = [block.ln2(x)[b.mask] for x, b in zip(xs, batches)]                     # [N_i, d] valid words
            if isinstance(block.ffn, MLP):
                ys = [block.ffn(h) for h in lns]
            else:
                ys, counts = self.moe_layer(world, active, shard, where[moe_index], block.ffn, moe_index, lns, rows_rank)
                rows_expert.append(counts)
                moe_index += 1
            for i, (x, y, b) in enumerate(zip(xs, ys, batches)):
                out = torch.zeros_like(x)
                out[b.mask] = y
                xs[i] = x + block.drop(out)
        results = []
        for x, b in zip(xs, batches):
            begin, end = m.read_out(x, b)
            results.append((begin[0].cpu(), end[0].cpu()))
        return results, BatchStats(rows_rank, rows_expert)
