"""The loop of a worker rank (1..M-1): hold expert copies, run rows through them, follow scales.

    active (rank < K, K >= 2): header on the active group ─ LAYER ─▶ receive segments and rows from
                               rank 0, run them, send the outputs back
                                                        └ CONTROL ─▶ the next control message
    idle:                      control message on the parent group (PING / SCALE / SHUTDOWN)

Workers never log (rank 0 does); an exception ends the process with a traceback on stderr, which
rank 0 notices as a failed collective.
"""
from __future__ import annotations

import torch
import torch.distributed as dist

from docassay.infra.serve.comm import CONTROL_LEN, Ctl, Op, Tag, World, init_world, memory_stats
from docassay.infra.serve.reconfig import follow_scale
from docassay.infra.serve.shard import ExpertShard

__all__ = ["worker_main", "receive_shape"]

SHAPE_LEN = 4     # [MoE layers, d_model, d_expert, n_experts], broadcast by rank 0 after it read the weights


def worker_main(rank: int, size: int, host: str, port: int, threads: int, timeout_s: float) -> None:
    torch.set_num_threads(threads)
    world = init_world(rank, size, host, port, timeout_s=timeout_s)
    try:
        n_layer, d, h, _ = receive_shape(world)
        shard = ExpertShard(n_layer, d, h, world.device)
        serve_loop(world, shard)
    finally:
        world.close()


def receive_shape(world: World, shape: list[int] | None = None) -> list[int]:
    t = torch.tensor(shape or [0] * SHAPE_LEN, dtype=torch.long, device=world.device)
    return world.broadcast(t).tolist()


@torch.no_grad()
def serve_loop(world: World, shard: ExpertShard) -> None:
    active = 1                                    # at start-up only rank 0 is active
    header = torch.empty(world.header_len(), dtype=torch.long, device=world.device)
    ctl = torch.empty(CONTROL_LEN, dtype=torch.long, device=world.device)
    while True:
        group = world.active_group(active) if world.rank < active else None
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
            active = follow_scale(world, shard, ctl.cpu())
        elif op == Ctl.SHUTDOWN:
            return
        else:
            raise RuntimeError(f"unknown control message {op}")


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
