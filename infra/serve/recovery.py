"""A lost rank: the survivors re-form the world, report what they hold, the lost experts come back.

    rank 0 (engine thread)                              a surviving worker
    a rank's process exited (watcher, failed exchange)  its collective fails (the dead peer, or rank 0
                                                        leaving the world closes the connections)
    leave the world (`World.close`)                     leave the world
    store: reform/<g> = members, active  ─────────────▶ wait for reform/<g> on the store
    join generation g (renumbered 0..n-1) ◀───────────▶ join generation g
    gather the rows of the placement  ◀───────────────  this rank's row (what its slots hold)
    experts with no surviving copy: read from the weights file into new slots of rank 0
    then the engine runs a Reconfiguration active -> active (the scale path) over the new world,
    which spreads those copies over the surviving active ranks

The store is hosted by rank 0, so it outlives any worker; a worker whose rank 0 is gone sees the
store fail and exits. Members are idents (a process's rank in generation 0) in rank order; the
surviving active ranks stay the first ranks (the order is kept), so `active` is simply how many
of the old active ranks survived.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

import torch

from docassay.infra.serve.comm import World, join_generation
from docassay.infra.serve.errors import WeightsUnreadable
from docassay.infra.serve.placement import EMPTY
from docassay.infra.serve.shard import ExpertCopy, ExpertShard

__all__ = ["ReformPlan", "reform", "rejoin", "gather_placement", "restore_missing", "missing_experts", "row_width"]

_KEY = "reform/{}"
_LATEST = "reform/latest"
_READY = "reform/{}/ready/{}"     # generation, ident: this member read the plan and joins now
_GO = "reform/{}/go"              # every member is ready: join now
_POLL_S = 0.01


@dataclass(frozen=True)
class ReformPlan:
    generation: int
    members: list[int]            # idents, in rank order
    active: int                   # active ranks in the new world (the first `active` members)

    def to_bytes(self) -> bytes:
        return json.dumps({"generation": self.generation, "members": self.members, "active": self.active}).encode()

    @classmethod
    def from_bytes(cls, raw: bytes) -> "ReformPlan":
        d = json.loads(raw)
        return cls(int(d["generation"]), [int(m) for m in d["members"]], int(d["active"]))


def reform(world: World, plan: ReformPlan, *, join_timeout_s: float, alive: Callable[[int], bool]) -> World:
    """Rank 0: leave `world`, publish `plan`, wait until every member has read it (each says so on
    the store), join its generation. Raises RuntimeError when a member dies meanwhile (`alive(ident)`
    turns False: seen within `_POLL_S`, so the caller re-plans without it at once) or has not joined
    within `join_timeout_s` (the caller then re-forms without the workers)."""
    store = world.store
    _close_quietly(world)
    store.set(_KEY.format(plan.generation), plan.to_bytes())
    store.set(_LATEST, str(plan.generation))
    _await_members(store, plan, alive, join_timeout_s)
    store.set(_GO.format(plan.generation), "1")
    store.set_timeout(timedelta(seconds=join_timeout_s))
    try:
        return join_generation(store, 0, len(plan.members), plan.generation, ident=world.ident, members=plan.members,
                               device=world.device, backend=world.backend, timeout_s=world.timeout_s)
    except BaseException:
        _close_quietly(world)
        raise
    finally:
        store.set_timeout(timedelta(seconds=world.timeout_s))


def rejoin(world: World) -> tuple[World, int] | None:
    """A worker whose collective failed: leave `world`, wait for rank 0's next plan, join it (and
    the one after, when joining fails because rank 0 gave that generation up). Returns (the new
    world, its active ranks), or None when this process is not a member any more or rank 0 is gone
    (the worker then exits)."""
    store, gen = world.store, world.generation
    _close_quietly(world)
    try:
        store.get(_KEY.format(gen + 1))                     # blocks until rank 0 re-forms (store timeout)
        while True:
            plan = ReformPlan.from_bytes(store.get(_KEY.format(int(store.get(_LATEST)))))
            if world.ident not in plan.members:
                return None
            store.set(_READY.format(plan.generation, world.ident), "1")
            if not _await_go(store, plan.generation):
                continue                                     # rank 0 gave this plan up for a newer one
            failed = None
            try:
                new = join_generation(store, plan.members.index(world.ident), len(plan.members), plan.generation,
                                      ident=world.ident, members=plan.members, device=world.device,
                                      backend=world.backend, timeout_s=world.timeout_s)
            except RuntimeError as exc:
                failed = str(exc)
            if failed is None:
                return new, plan.active
            _close_quietly(world)
            while int(store.get(_LATEST)) <= plan.generation:     # wait for rank 0's next plan
                time.sleep(_POLL_S)
    except (RuntimeError, ValueError):                      # rank 0 (and its store) is gone
        return None


def _await_go(store, generation: int) -> bool:
    """True once rank 0 says join `generation`; False when it has published a newer plan instead."""
    go = _GO.format(generation)
    while not store.check([go]):
        if int(store.get(_LATEST)) > generation:
            return False
        time.sleep(_POLL_S)
    return True


def row_width(n_experts: int) -> int:
    """Slots in a row gathered when a world re-forms: a rank holds at most one copy of each expert
    per layer (one more for room)."""
    return max(n_experts, 1) + 1


def gather_placement(world: World, shard: ExpertShard, width: int) -> torch.Tensor | None:
    """Every rank sends the row of the placement its shard holds ([L, width]); rank 0 gets the
    placement [L, M, width] of the new world, the others None."""
    row = shard.placement_row(width)
    if any(len(r) > width for r in shard.experts):
        raise RuntimeError(f"rank {world.rank} holds more than {width} slots in a layer")
    rows = world.gather_long(row)
    return None if rows is None else rows.permute(1, 0, 2).contiguous()


def missing_experts(slots: torch.Tensor, n_experts: int) -> list[list[int]]:
    """slots [L, M, S] -> per layer, the experts no rank holds a copy of."""
    out = []
    for l in range(slots.shape[0]):
        held = set(slots[l].reshape(-1).tolist()) - {EMPTY}
        out.append([e for e in range(n_experts) if e not in held])
    return out


def restore_missing(shard: ExpertShard, slots: torch.Tensor, n_experts: int, read_experts) -> tuple[torch.Tensor, int]:
    """Rank 0: put a copy of every expert that no rank holds into new slots of its own shard, read
    by `read_experts()` (-> one `infra.model.moe.Experts` per MoE layer, from the weights file), and
    return the placement with them [L, M, S'] and the number of copies read. Raises
    WeightsUnreadable when `read_experts` fails."""
    missing = missing_experts(slots, n_experts)
    n_new = sum(len(m) for m in missing)
    if n_new == 0:
        return slots, 0
    try:
        layers = read_experts()
    except Exception as exc:                    # noqa: BLE001  whatever the reader raises, as one typed error
        raise WeightsUnreadable(f"the weights could not be read again: {type(exc).__name__}: {exc}") from exc
    n_layer, n_world, width = slots.shape
    own = [[e for e in slots[l, 0].tolist()] for l in range(n_layer)]
    for l in range(n_layer):
        while own[l] and own[l][-1] == EMPTY:
            own[l].pop()
    new_width = max(width, max(len(own[l]) + len(missing[l]) for l in range(n_layer)))
    out = torch.full((n_layer, n_world, new_width), EMPTY, dtype=torch.long)
    out[:, :, :width] = slots
    received: dict[tuple[int, int], ExpertCopy] = {}
    for l in range(n_layer):
        row = own[l] + missing[l]
        out[l, 0, :] = EMPTY
        out[l, 0, :len(row)] = torch.tensor(row, dtype=torch.long)
        for s in range(len(own[l]), len(row)):
            received[(l, s)] = ExpertCopy.from_experts(layers[l], row[s], shard.device)
    shard.rebuild(out[:, 0], received)
    return out, n_new


def _await_members(store, plan: ReformPlan, alive: Callable[[int], bool], timeout_s: float) -> None:
    keys = {m: _READY.format(plan.generation, m) for m in plan.members if m != 0}
    deadline = time.monotonic() + timeout_s
    while keys:
        dead = [m for m in keys if not alive(m)]
        if dead:
            raise RuntimeError(f"rank(s) {dead} died while the world re-formed")
        keys = {m: k for m, k in keys.items() if not store.check([k])}
        if keys and time.monotonic() > deadline:
            raise RuntimeError(f"rank(s) {sorted(keys)} did not join the re-formed world within {timeout_s:.0f} s")
        time.sleep(_POLL_S if keys else 0)


def _close_quietly(world: World) -> None:
    try:
        world.close()
    except RuntimeError:
        pass
