"""The loop of a worker rank (1..M-1): hold expert copies, run rows through them, follow scales.

    active (rank < K, K >= 2): header on the active group ─ LAYER ─▶ receive segments and rows from
                               rank 0, run them, send the outputs back
                                                        └ CONTROL ─▶ the next control message
    idle:                      control message on the parent group (PING / SCALE / SHUTDOWN)

A collective that fails (a peer died, or rank 0 left the world to re-form it) sends the worker to
`recovery.rejoin`: it leaves the world, waits for rank 0's plan on the store, joins the survivors'
new generation with the copies it holds, and serves on. Workers never log (rank 0 does); any other
exception ends the process with a traceback on stderr, which rank 0 sees as a lost rank.
"""
from __future__ import annotations

import torch
import torch.distributed as dist

from docassay.infra.serve.comm import CONTROL_LEN, Ctl, Op, Tag, World, init_world, memory_stats
from docassay.infra.serve.reconfig import follow_scale
from docassay.infra.serve.recovery import gather_placement, rejoin, row_width
from docassay.infra.serve.shard import ExpertShard

__all__ = ["worker_main", "receive_shape"]

SHAPE_LEN = 4     # [MoE layers, d_model, d_expert, n_experts], broadcast by rank 0 after it read the weights


def worker_main(rank: int, size: int, host: str, port: int, threads: int, timeout_s: float) -> None:
    torch.set_num_threads(threads)
    first = init_world(rank, size, host, port, timeout_s=timeout_s)
    world: World | None = first                   # None once the loop left every world
    try:
        n_layer, d, h, n_experts = receive_shape(first)
        shard = ExpertShard(n_layer, d, h, first.device)
        world = serve_loop(first, shard, n_experts)
    finally:
        if world is not None:
            world.close()


def receive_shape(world: World, shape: list[int] | None = None) -> list[int]:
    t = torch.tensor(shape or [0] * SHAPE_LEN, dtype=torch.long, device=world.device)
    return world.broadcast(t).tolist()


def serve_loop(world: World, shard: ExpertShard, n_experts: int) -> World | None:
    """Serve until SHUTDOWN (returns the world to close) or until this rank is not a member of the
    world any more (returns None)."""
    active = [1]                                  # at start-up only rank 0 is active; scales change it
    while True:
        failed = _serve(world, shard, active)     # outside its frame: nothing holds the old groups
        if failed is None:
            return world
        joined = rejoin(world)
        if joined is None:
            return None
        world, active[0] = joined
        gather_placement(world, shard, row_width(n_experts))


@torch.no_grad()
def _serve(world: World, shard: ExpertShard, active: list[int]) -> str | None:
    """The serving loop on one world: None after SHUTDOWN, the error's text when a collective failed."""
    try:
        _follow(world, shard, active)
        return None
    except RuntimeError as exc:
        return f"{type(exc).__name__}: {exc}"


def _follow(world: World, shard: ExpertShard, active: list[int]) -> None:
    """`active` [1]: the active ranks, updated in place by a scale (kept when a collective fails)."""
    header = torch.empty(world.header_len(), dtype=torch.long, device=world.device)
    ctl = torch.empty(CONTROL_LEN, dtype=torch.long, device=world.device)
    while True:
        group = world.active_group(active[0]) if world.rank < active[0] else None
        if group is not None:
            world.broadcast(header, group)
            if int(header[0]) == Op.LAYER:
                _run_layer(world, shard, group, header.cpu())
                continue
        world.broadcast(ctl)
        op = int(ctl[0])
        if op == Ctl.PING:
            world.gather_stats(memory_stats(shard.nbytes, shard.n_copies, device=world.device))
        elif op == Ctl.SCALE:
            active[0] = follow_scale(world, shard, ctl.cpu())
        elif op == Ctl.SHUTDOWN:
            return
        else:
            raise ValueError(f"unknown control message {op}")          # a bug, not a lost peer: exit


def _run_layer(world: World, shard: ExpertShard, group, header: torch.Tensor) -> None:
    layer = int(header[1])
    n_seg, n_rows = int(header[4 + world.rank]), int(header[4 + world.size + world.rank])
    if n_seg == 0:
        return
    seg = torch.empty(n_seg, 2, dtype=torch.long, device=world.device)
    rows = torch.empty(n_rows, shard.d, dtype=torch.float32, device=world.device)
    r1 = dist.irecv(seg, 0, group=group, tag=int(Tag.SEGMENTS))
    r2 = dist.irecv(rows, 0, group=group, tag=int(Tag.ROWS))
    r1.wait()
    r2.wait()
    y = shard.run(layer, seg.cpu(), rows)
    dist.send(y, 0, group=group, tag=int(Tag.OUTPUT))
