"""The one torch.distributed world of a model server, its groups and its message layouts.

    world (parent group): ranks 0..M-1, created once; carries control messages and weight moves
    active group of K:    ranks 0..K-1, one per K in 2..M, all created once at start-up (every
                          rank calls `new_group` for every K, in the same order); carries the
                          per-layer headers and the token rows of requests

Rank 0 is the front end (HTTP, batching, the dense layers and the routers) and the coordinator; it
is always active. Ranks that are active listen on their active group; idle ranks listen only on
the parent group, so serving never wakes them. Every exchange starts with a header that rank 0
broadcasts (`LayerHeader` on the active group, `Control` on the parent group); sizes of what follows
are in the header, so every receive knows its shape.

gloo on CPU, NCCL when every rank has a CUDA device: the same code, tensors on `World.device`.

Generations: a world is generation 0 of the processes' rendezvous store (hosted by rank 0). When a
rank is lost, the survivors leave the old world and join generation g+1 of the same store (its
keys under the prefix `g<g>/`), renumbered 0..n-1 in their old order; `World.ident` stays the
process's first rank, the name status reports (recovery.py).
"""
from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass, field
from datetime import timedelta
from enum import IntEnum
from typing import Any

import torch
import torch.distributed as dist

__all__ = ["Op", "Ctl", "World", "Tag", "CONTROL_LEN", "STATS_LEN", "memory_stats", "release_memory",
           "init_world", "join_generation"]

CONTROL_LEN = 8
STATS_LEN = 6        # rss bytes, expert bytes, copies held, rss before release, expert bytes before, device bytes


class Op(IntEnum):
    """First entry of a header on the active group."""
    LAYER = 1            # [op, layer, 0, 0, segments per rank (M), rows per rank (M)]
    CONTROL = 2          # leave the serving loop and read the next control message on the parent group


class Ctl(IntEnum):
    """First entry of a control message on the parent group."""
    PING = 1             # [PING]: report memory (gather), nothing else
    SCALE = 2            # [SCALE, k_new, slots, n_moves]: placement and moves follow (see reconfig)
    SHUTDOWN = 3


class Tag(IntEnum):
    SEGMENTS = 1
    ROWS = 2
    OUTPUT = 3
    MOVE = 100           # + index of the (src, dst) pair


@dataclass
class World:
    rank: int
    size: int
    device: torch.device
    backend: str
    groups: dict[int, object]                    # K -> process group of ranks 0..K-1 (K >= 2)
    ident: int = 0                               # this process's rank in generation 0 (kept across generations)
    generation: int = 0
    members: list[int] = field(default_factory=list)   # [rank] -> ident, this generation
    store: Any = None                            # the rendezvous store, a torch.distributed.Store (rank 0 hosts it)
    timeout_s: float = 300.0

    def active_group(self, k: int):
        return self.groups.get(k)

    def header_len(self) -> int:
        return 4 + 2 * self.size

    def broadcast(self, t: torch.Tensor, group=None) -> torch.Tensor:
        dist.broadcast(t, src=0, group=group)
        return t

    def send_control(self, active: int, values: list[int]) -> None:
        """Rank 0: take the `active` ranks out of their serving loop (an `Op.CONTROL` header on their
        group) and broadcast one control message, `values` zero-padded to CONTROL_LEN, to every rank."""
        group = self.active_group(active)
        if group is not None:
            header = torch.zeros(self.header_len(), dtype=torch.long)
            header[0] = int(Op.CONTROL)
            self.broadcast(header.to(self.device), group)
        ctl = torch.zeros(CONTROL_LEN, dtype=torch.long)
        ctl[:len(values)] = torch.tensor(values, dtype=torch.long)
        self.broadcast(ctl.to(self.device))

    def gather_stats(self, stats: torch.Tensor) -> torch.Tensor | None:
        """stats [STATS_LEN] float64 -> on rank 0 [M, STATS_LEN], elsewhere None. Also a barrier."""
        stats = stats.to(self.device)
        if self.rank == 0:
            out = [torch.zeros_like(stats) for _ in range(self.size)]
            dist.gather(stats, out, dst=0)
            return torch.stack(out).cpu()
        dist.gather(stats, None, dst=0)
        return None

    def gather_long(self, t: torch.Tensor) -> torch.Tensor | None:
        """t long [...] (the same shape on every rank) -> on rank 0 [M, ...], elsewhere None."""
        t = t.to(self.device)
        if self.rank == 0:
            out = [torch.zeros_like(t) for _ in range(self.size)]
            dist.gather(t, out, dst=0)
            return torch.stack(out).cpu()
        dist.gather(t, None, dst=0)
        return None

    def close(self) -> None:
        """Leave this world. The groups are dropped first: a process group that something still
        refers to keeps its connections open, and a peer blocked on one would wait for its timeout
        instead of seeing the connection close."""
        self.groups = {}
        if dist.is_initialized():
            dist.destroy_process_group()


def init_world(rank: int, size: int, host: str, port: int, *, timeout_s: float) -> World:
    """Join the world (rank 0 hosts the rendezvous store) and create every active group once."""
    use_cuda = torch.cuda.is_available() and torch.cuda.device_count() >= size
    backend = "nccl" if use_cuda else "gloo"
    device = torch.device("cuda", rank) if use_cuda else torch.device("cpu")
    if use_cuda:
        torch.cuda.set_device(device)
    store = dist.TCPStore(host, port, size, rank == 0, timeout=timedelta(seconds=timeout_s), wait_for_workers=False)
    return join_generation(store, rank, size, 0, ident=rank, members=list(range(size)), device=device,
                           backend=backend, timeout_s=timeout_s)


def join_generation(store, rank: int, size: int, generation: int, *, ident: int, members: list[int],
                    device: torch.device, backend: str, timeout_s: float) -> World:
    """Join generation `generation` of the world on `store` as `rank` of `size`, and create its
    active groups (every member calls this with the same size, in the same order)."""
    timeout = timedelta(seconds=timeout_s)
    prefixed = dist.PrefixStore(f"g{generation}/", store)
    dist.init_process_group(backend, store=prefixed, rank=rank, world_size=size, timeout=timeout)
    groups = {k: dist.new_group(list(range(k)), timeout=timeout) for k in range(2, size + 1)}
    return World(rank, size, device, backend, groups, ident=ident, generation=generation, members=list(members),
                 store=store, timeout_s=timeout_s)


def memory_stats(expert_bytes: int, n_copies: int, *, rss_before: float = 0.0, expert_before: float = 0.0,
                 device: torch.device | None = None) -> torch.Tensor:
    """[STATS_LEN] float64: this process's resident memory and what its expert copies hold."""
    dev = 0.0
    if device is not None and device.type == "cuda":
        dev = float(torch.cuda.memory_allocated(device))
    return torch.tensor([_rss(), float(expert_bytes), float(n_copies), rss_before, expert_before, dev],
                        dtype=torch.float64)


def _rss() -> float:
    try:
        with open("/proc/self/statm") as fh:
            return float(int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE"))
    except OSError:
        import resource
        return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)


def release_memory(device: torch.device) -> None:
    """Give freed memory back: return the allocator's free pages to the OS (glibc `malloc_trim`),
    empty the CUDA cache. (Expert copies hold no reference cycles: dropping the last reference
    frees them at once, so no garbage collection pass is needed, and none is made: a full pass
    over a process that imported torch takes longer than the rest of a reconfiguration.)"""
    if device.type == "cuda":
        torch.cuda.empty_cache()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass
