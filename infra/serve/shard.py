"""The expert copies one rank holds, how it computes them, and how copies move between ranks.

An expert is the two-layer GELU MLP of `infra.model.moe.Experts`; a copy here is the same four
tensors for one expert, each in its own allocation (so freeing a copy returns its memory, and a
copy computes exactly what `Experts.forward` computes for the same rows):

    y = gelu(x @ w1 + b1) @ w2 + b2          x [n, d] -> y [n, d];  w1 [d, h], b1 [h], w2 [h, d], b2 [d]

On the wire a copy is one flat row of P = d*h + h + h*d + d numbers (`ExpertCopy.flat`).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn.functional as F

from docassay.infra.serve.comm import Tag, World
from docassay.infra.serve.placement import EMPTY

__all__ = ["ExpertCopy", "ExpertShard", "apply_moves"]

_ALIGN = 64


@dataclass
class ExpertCopy:
    w1: torch.Tensor
    b1: torch.Tensor
    w2: torch.Tensor
    b2: torch.Tensor

    @classmethod
    def from_experts(cls, experts, e: int, device: torch.device) -> "ExpertCopy":
        """Copy expert `e` out of an `infra.model.moe.Experts` module."""
        return cls(*(p.detach()[e].to(device).clone() for p in (experts.w1, experts.b1, experts.w2, experts.b2)))

    @classmethod
    def from_flat(cls, flat: torch.Tensor, d: int, h: int) -> "ExpertCopy":
        """flat [P] -> a copy (each tensor cloned into its own allocation)."""
        sizes = (d * h, h, h * d, d)
        w1, b1, w2, b2 = torch.split(flat, sizes)
        return cls(w1.reshape(d, h).clone(), b1.clone(), w2.reshape(h, d).clone(), b2.clone())

    def flat(self) -> torch.Tensor:
        """[P] = w1, b1, w2, b2 flattened, in that order."""
        return torch.cat([self.w1.reshape(-1), self.b1, self.w2.reshape(-1), self.b2])

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        # x [n, d] -> [n, d]; the same operations, in the same order, as Experts.forward
        h = F.gelu(x @ self.w1 + self.b1)
        return h @ self.w2 + self.b2

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (self.w1, self.b1, self.w2, self.b2))


class ExpertShard:
    """Per MoE layer, the copies in this rank's slots: `experts[l][s]` is the expert id in slot s
    (-1 empty) and `copies[l][s]` its weights."""

    def __init__(self, n_layer: int, d: int, h: int, device: torch.device) -> None:
        self.d, self.h, self.device = d, h, device
        self.experts: list[list[int]] = [[] for _ in range(n_layer)]
        self.copies: list[list[ExpertCopy | None]] = [[] for _ in range(n_layer)]

    @property
    def numel(self) -> int:
        """P: numbers in one copy on the wire."""
        return 2 * self.d * self.h + self.h + self.d

    @property
    def nbytes(self) -> int:
        return sum(c.nbytes for layer in self.copies for c in layer if c is not None)

    @property
    def n_copies(self) -> int:
        return sum(c is not None for layer in self.copies for c in layer)

    def held(self, l: int, s: int) -> ExpertCopy:
        """The copy in slot s of layer l; RuntimeError when the slot is empty (a plan out of step)."""
        copy = self.copies[l][s]
        if copy is None:
            raise RuntimeError(f"layer {l} slot {s}: this rank holds no copy there")
        return copy

    def run(self, layer: int, segments: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """segments [n_seg, 2] long (slot, rows), x [n, d] with n = segments[:, 1].sum() -> y [n, d]:
        each run of rows through the copy in its slot, one matrix product per segment (a segment is
        one document's rows for one expert, so the product has the shape the single-process model
        gives it, and the same bits)."""
        y = torch.empty_like(x)
        start = 0
        for slot, n in segments.tolist():
            xs = x[start:start + n]
            if xs.data_ptr() % _ALIGN:
                xs = xs.clone()                   # same alignment as the gathered rows of Experts.forward
            copy = self.copies[layer][slot]
            if copy is None:
                raise RuntimeError(f"layer {layer}: slot {slot} is empty")
            y[start:start + n] = copy(xs)
            start += n
        return y

    def load_all(self, layers: list, device: torch.device) -> None:
        """Hold every expert of every layer (rank 0 after reading the checkpoint)."""
        for l, experts in enumerate(layers):
            n = experts.w1.shape[0]
            self.experts[l] = list(range(n))
            self.copies[l] = [ExpertCopy.from_experts(experts, e, device) for e in range(n)]

    def placement_row(self, n_slots: int) -> torch.Tensor:
        """[L, n_slots] long: this rank's row of a placement (padded with -1)."""
        out = torch.full((len(self.experts), n_slots), EMPTY, dtype=torch.long)
        for l, row in enumerate(self.experts):
            if row:
                out[l, :len(row)] = torch.tensor(row[:n_slots])
        return out

    def rebuild(self, new_row: torch.Tensor, received: dict[tuple[int, int], ExpertCopy]) -> None:
        """Take the slots of `new_row` [L, S] (this rank's row of the new placement): a slot's copy
        is the one received for (layer, slot), else the one this rank already holds of that expert
        (kept, not copied). Copies no slot names any more are dropped (their memory is freed once
        nothing else refers to them)."""
        for l in range(len(self.experts)):
            have = {e: c for e, c in zip(self.experts[l], self.copies[l]) if c is not None and e != EMPTY}
            experts: list[int] = []
            copies: list[ExpertCopy | None] = []
            for s, e in enumerate(new_row[l].tolist()):
                if e == EMPTY:
                    experts.append(EMPTY)
                    copies.append(None)
                    continue
                copy = received.get((l, s)) or have.get(e)
                if copy is None:
                    raise RuntimeError(f"layer {l} slot {s}: expert {e} neither held nor received")
                experts.append(e)
                copies.append(copy)
            while experts and experts[-1] == EMPTY:
                experts.pop()
                copies.pop()
            self.experts[l], self.copies[l] = experts, copies

    def slot_of(self, layer: int, expert: int) -> int:
        return self.experts[layer].index(expert)


def apply_moves(world: World, shard: ExpertShard, moves: torch.Tensor, new_row: torch.Tensor) -> int:
    """Ship the copies `moves` [n, 6] (layer, expert, src, src_slot, dst, dst_slot) over the parent
    group, then rebuild this rank's shard to `new_row` [L, S]. One message per (src, dst) pair with
    that pair's copies stacked [n_pair, P]; every rank posts all its sends and receives, then waits.
    Returns the bytes this rank sent. Every rank of the world calls this with the same `moves`."""
    me = world.rank
    pairs: dict[tuple[int, int], list[list[int]]] = {}
    for row in moves.tolist():
        pairs.setdefault((row[2], row[4]), []).append(row)
    works, inbox, sent = [], [], 0

    for i, ((src, dst), rows) in enumerate(sorted(pairs.items())):
        tag = int(Tag.MOVE) + i
        if src == me and dst == me:
            raise RuntimeError("a move from a rank to itself")
        if src == me:
            buf = torch.stack([shard.held(l, ss).flat() for l, _, _, ss, _, _ in rows]).to(world.device)
            sent += buf.numel() * buf.element_size()
            works.append(dist.isend(buf, dst, tag=tag))
            inbox.append((False, rows, buf))         # keep the buffer alive until the send is done
        elif dst == me:
            buf = torch.empty(len(rows), shard.numel, dtype=torch.float32, device=world.device)
            works.append(dist.irecv(buf, src, tag=tag))
            inbox.append((True, rows, buf))
    for w in works:
        w.wait()
    received: dict[tuple[int, int], ExpertCopy] = {}
    for incoming, rows, buf in inbox:
        if incoming:
            for (l, _, _, _, _, ds), flat in zip(rows, buf):
                received[(l, ds)] = ExpertCopy.from_flat(flat, shard.d, shard.h)
    inbox.clear()
    shard.rebuild(new_row, received)
    return sent
