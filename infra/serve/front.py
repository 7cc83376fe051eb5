"""Rank 0's forward pass: the dense layers and the routers here, each expert where its copies live.

Why the dense parts stay on rank 0 (and are not replicated on every active rank): requests arrive
at rank 0 already; the dense parts of the ranker are a small share of its arithmetic but most of
its memory (the hashed-feature embedding table), and the routers need nothing else. Shipping a
token's d-dimensional activation to the rank that holds its expert and back is cheaper than
shipping its feature ids to a replica, and a reconfiguration then moves experts only.

Per MoE layer, for a batch of documents (each its own routing group, as in the scorer):

    x_i [N_i, d] ─ln, router (per document)─▶ rows per (document, expert)
        ─LayerHeader (active group)─▶ segments + rows to each rank that runs some (point to point)
        ◀─ expert outputs ─  combined per document exactly as `Experts.forward` does:
        out_i = Σ_e (in expert order) index_add(y_e * gate)      x_i = x_i + out_i

`ExpertFront.moe_layer` is that exchange for any model whose feed-forward layers are `moe.MoE`;
`FrontModel` (the ranker) and `layout_front.LayoutFront` (the layout reader) run their dense parts
around it, and a reconfiguration, the placement and the recovery never know which model it is.

Bitwise equal to `ProposalRanker` on one document: every matrix product has the shape it has in
the single-process model (one document, one expert: the same rows in the same order), and the
combination adds in the same order. Which copy of a replicated expert runs a document does not
change its bits.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
import torch.distributed as dist

from docassay.infra.model.moe import MLP, MoE
from docassay.infra.serve.comm import Op, Tag, World
from docassay.infra.serve.shard import ExpertShard

__all__ = ["DocInput", "ExpertFront", "FrontModel", "BatchStats"]


@dataclass
class DocInput:
    """One document's tokens: ids [T] int64, id_start [N+1] int64 (token i's ids are
    ids[id_start[i]:id_start[i+1]]), num [N, n_numeric] float32."""
    ids: np.ndarray
    id_start: np.ndarray
    num: np.ndarray

    @property
    def n_tokens(self) -> int:
        return int(self.num.shape[0])


@dataclass
class BatchStats:
    rows_per_rank: list[int]                                  # [M] expert rows each rank ran
    rows_per_expert: list[list[int]]                          # [L][E] token assignments


@dataclass
class _Segment:
    doc: int
    expert: int
    tokens: torch.Tensor        # [n] index into the document's tokens, in Experts.forward's order
    gate: torch.Tensor          # [n]
    rank: int = 0
    slot: int = 0
    y: torch.Tensor | None = field(default=None, repr=False)


class ExpertFront:
    """What every served model shares: its MoE layers' experts taken out into `ExpertShard`s, and one
    MoE layer run across the ranks (`moe_layer`). A model's front (`FrontModel` for the ranker,
    `layout_front.LayoutFront` for the layout reader) runs its own dense parts around it.

    `forward(world, active, shard, where, docs)` -> (one result per document, BatchStats); a result
    is a CPU tensor or a tuple of them (the engine hands them on as numpy arrays)."""

    kind = ""

    def __init__(self, model, device: torch.device) -> None:
        self.model = model.to(device).eval()
        self.cfg = model.cfg
        self.device = device
        self.moe_layers = [i for i, b in enumerate(model.blocks) if isinstance(b.ffn, MoE)]

    def take_experts(self) -> list:
        """Remove the experts from the model and return them (one `Experts` per MoE layer)."""
        out = []
        for i in self.moe_layers:
            moe = self.model.blocks[i].ffn
            out.append(moe.experts)
            del moe.experts
        return out

    def forward(self, world: World, active: int, shard: ExpertShard, where: list[list[list[tuple[int, int]]]],
                docs: list) -> tuple[list, BatchStats]:
        raise NotImplementedError

    def moe_layer(self, world: World, active: int, shard: ExpertShard, where: list[list[tuple[int, int]]],
                  moe: MoE, moe_index: int, lns: list[torch.Tensor], rows_rank: list[int]) -> tuple[list[torch.Tensor], list[int]]:
        """One MoE layer over documents whose normalised inputs are `lns` [N_i, d] (each document its own
        routing group): the router here, each (document, expert) segment on one copy of its expert
        (`where[e]`: its (rank, slot) copies), combined per document exactly as `Experts.forward` does.
        Returns the layer's outputs [N_i, d] and the rows per expert; adds the rows each rank ran to
        `rows_rank`."""
        cfg = self.cfg
        segs: list[_Segment] = []
        counts = [0] * cfg.n_experts
        for i, h in enumerate(lns):
            doc = torch.zeros(h.shape[0], dtype=torch.long, device=self.device)
            r = moe.router(h, doc, cfg.routing, cfg.top_k, cfg.capacity)
            order = torch.argsort(r.expert_idx, stable=True)
            tok, exp_, w = r.token_idx[order], r.expert_idx[order], r.weight[order]      # [M_i]
            start = 0
            for e, n_e in enumerate(torch.bincount(exp_, minlength=cfg.n_experts).tolist()):
                if n_e:
                    segs.append(_Segment(i, e, tok[start:start + n_e], w[start:start + n_e]))
                    counts[e] += n_e
                start += n_e
        self._assign(segs, where, rows_rank)
        self._run(world, active, shard, moe_index, lns, segs)
        per_doc: list[list[_Segment]] = [[] for _ in lns]
        for s in segs:                                                                  # in expert order per document
            per_doc[s.doc].append(s)
        outs = []
        for i, h in enumerate(lns):
            out = torch.zeros_like(h)                                                    # [N_i, d]
            for s in per_doc[i]:
                assert s.y is not None                                                   # _run computed every segment
                out.index_add_(0, s.tokens, s.y * s.gate[:, None].to(s.y.dtype))
            outs.append(out)
        return outs, counts

    @staticmethod
    def _assign(segs: list[_Segment], where: list[list[tuple[int, int]]], rows_rank: list[int]) -> None:
        """Each (document, expert) segment to one copy of its expert: the copy on the rank with the
        fewest rows so far in this batch, biggest segments first (ties: the lowest rank)."""
        for s in sorted(segs, key=lambda s: (-s.tokens.numel(), s.doc, s.expert)):
            copies = where[s.expert]
            if not copies:
                raise RuntimeError(f"expert {s.expert} has no active copy")
            s.rank, s.slot = min(copies, key=lambda rs: (rows_rank[rs[0]], rs[0]))
            rows_rank[s.rank] += s.tokens.numel()

    def _run(self, world: World, active: int, shard: ExpertShard, layer: int, lns: list[torch.Tensor],
             segs: list[_Segment]) -> None:
        """Send every remote rank its segments and rows, run rank 0's own, collect the outputs."""
        by_rank: dict[int, list[_Segment]] = {}
        for s in segs:
            by_rank.setdefault(s.rank, []).append(s)
        header = torch.zeros(world.header_len(), dtype=torch.long)
        header[0], header[1] = int(Op.LAYER), layer
        for r, ss in by_rank.items():
            header[4 + r] = len(ss)
            header[4 + world.size + r] = sum(s.tokens.numel() for s in ss)
        group = world.active_group(active)
        pending = []
        if group is not None:
            world.broadcast(header.to(world.device), group)
            for r, ss in sorted(by_rank.items()):
                if r == 0:
                    continue
                seg_t = torch.tensor([[s.slot, s.tokens.numel()] for s in ss], dtype=torch.long, device=world.device)
                rows = torch.cat([lns[s.doc][s.tokens] for s in ss])
                out = torch.empty_like(rows)
                work = [dist.isend(seg_t, r, group=group, tag=int(Tag.SEGMENTS)),
                        dist.isend(rows, r, group=group, tag=int(Tag.ROWS)),
                        dist.irecv(out, r, group=group, tag=int(Tag.OUTPUT))]
                pending.append((ss, out, work, (seg_t, rows)))
        elif any(r != 0 for r in by_rank):
            raise RuntimeError("segments for another rank while rank 0 is the only active rank")
        for s in by_rank.get(0, []):                                                    # local while others run
            s.y = shard.held(layer, s.slot)(lns[s.doc][s.tokens])
        for ss, out, work, _keep in pending:
            for w in work:
                w.wait()
            start = 0
            for s in ss:
                n = s.tokens.numel()
                s.y = out[start:start + n]
                start += n


class FrontModel(ExpertFront):
    """The ranker without its experts (they live in `ExpertShard`s across the ranks)."""

    kind = "ranker"

    @torch.no_grad()
    def forward(self, world: World, active: int, shard: ExpertShard, where: list[list[list[tuple[int, int]]]],
                docs: list[DocInput]) -> tuple[list[torch.Tensor], BatchStats]:
        """sigmoid(logit) float32 [N_i] per document, and what each rank and expert ran.

        `where[l][e]` lists the (rank, slot) copies of expert e of MoE layer l among the `active` ranks.
        """
        m = self.model
        rows_rank = [0] * world.size
        rows_expert: list[list[int]] = []
        xs, nums = [], []
        for d in docs:
            ids = torch.from_numpy(d.ids).to(self.device)
            offs = torch.from_numpy(d.id_start[:-1]).to(self.device)
            num = torch.from_numpy(d.num).to(self.device)
            nums.append(num)
            xs.append(m.ln_in(m.embed(ids, offs) + m.numeric(num)))                     # [N_i, d]
        moe_index = 0
        for block in m.blocks:
            if isinstance(block.ffn, MLP):
                xs = [x + block.ffn(block.ln(x)) for x in xs]
                continue
            lns = [block.ln(x) for x in xs]
            outs, counts = self.moe_layer(world, active, shard, where[moe_index], block.ffn, moe_index, lns, rows_rank)
            xs = [x + out for x, out in zip(xs, outs)]
            rows_expert.append(counts)
            moe_index += 1
        probs = [torch.sigmoid(m.output(x, num)[0]).cpu() for x, num in zip(xs, nums)]
        return probs, BatchStats(rows_rank, rows_expert)
