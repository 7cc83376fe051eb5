"""Scaling: changing the active ranks and the placement of experts, one explicit step at a time.

    DRAINING ─▶ PLANNING ─▶ ANNOUNCING ─▶ MOVING ─▶ SWITCHING ─▶ DONE
        (any step that raises ─▶ FAILED)

* DRAINING: the coordinator stops taking new batches as soon as a scale is queued; the batch in
  flight finishes (requests that arrive meanwhile wait in the queue). Step: note how long that took.
* PLANNING: `placement.plan_placement` from the measured expert load, `placement.plan_moves`. Pure.
* ANNOUNCING: the active ranks leave their serving loop (`Op.CONTROL` on the active group); every
  rank of the parent group receives the control message, the new placement and the moves.
* MOVING: expert copies travel rank to rank over the parent group (`shard.apply_moves`); every rank
  rebuilds its slots (kept copies are not copied); a gather is the barrier.
* SWITCHING: every rank takes the new active group (one of those created at start-up); ranks that
  dropped copies, idle ones above all, give the memory back; a gather reports memory before and after.

Rank 0 advances `Reconfiguration.step()`; the other ranks run `follow_scale`, which performs the
same collectives in the same order. Pause = draining + announcing (no batch runs while the rest
happens either: the whole reconfiguration is the clients' downtime, reported as `total_s`).
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from enum import Enum

import torch

from docassay.infra.serve.comm import Ctl, World, memory_stats, release_memory
from docassay.infra.serve.placement import MOVE_COLUMNS, plan_moves, plan_placement, slots_per_rank
from docassay.infra.serve.shard import ExpertShard, apply_moves

__all__ = ["Phase", "RankMemory", "ReconfigReport", "Reconfiguration", "follow_scale", "PlanSettings"]


class Phase(str, Enum):
    DRAINING = "draining"
    PLANNING = "planning"
    ANNOUNCING = "announcing"
    MOVING = "moving"
    SWITCHING = "switching"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True)
class PlanSettings:
    extra_slots: int = 1          # slots per rank beyond ceil(E / K), for copies of hot experts
    hot_factor: float = 2.0       # an expert gets another copy while its load per copy > this x the mean
    slack: float = 0.1            # a rank keeps its copies while its load stays within (1 + slack) x the mean


@dataclass
class RankMemory:
    rank: int
    rss_bytes: int
    expert_bytes: int
    copies: int
    rss_before: int = 0
    expert_bytes_before: int = 0
    device_bytes: int = 0

    @classmethod
    def from_stats(cls, rank: int, row: list[float]) -> "RankMemory":
        rss, eb, n, rss0, eb0, dev = (int(v) for v in row)
        return cls(rank, rss, eb, n, rss0, eb0, dev)


@dataclass
class ReconfigReport:
    """What one reconfiguration did and how long each phase took (seconds)."""
    from_ranks: int
    to_ranks: int
    phase: str = Phase.DRAINING.value
    pause_s: float = 0.0          # waiting for the batch in flight + telling every rank
    plan_s: float = 0.0
    move_s: float = 0.0           # weight transfers and slot rebuilds, until every rank is done
    switch_s: float = 0.0         # new active group, memory released, reported
    total_s: float = 0.0          # request accepted -> serving again (the clients' worst extra wait)
    moved_copies: int = 0
    moved_bytes: int = 0
    memory: list[RankMemory] = field(default_factory=list)
    released_bytes: dict[int, int] = field(default_factory=dict)   # rank -> expert bytes given back
    error: str | None = None
    requested_at: float = 0.0     # time.time()

    def to_json(self) -> dict:
        return asdict(self)


class Reconfiguration:
    """Rank 0's side of one scale to `target` active ranks. `step()` advances exactly one phase;
    `run()` steps until DONE (or raises after marking FAILED)."""

    def __init__(self, world: World, shard: ExpertShard, placement: torch.Tensor, load: torch.Tensor,
                 active: int, target: int, settings: PlanSettings, n_experts: int, *,
                 requested_at: float | None = None) -> None:
        if not 1 <= target <= world.size:
            raise ValueError(f"active ranks must be in [1, {world.size}], got {target}")
        self.world, self.shard = world, shard
        self.old = placement
        self.load = load
        self.active, self.target = active, target
        self.settings = settings
        self.n_experts = n_experts
        self.phase = Phase.DRAINING
        self.new: torch.Tensor | None = None
        self.moves: torch.Tensor | None = None
        self._t_req = time.perf_counter() if requested_at is None else requested_at
        self._t_phase = self._t_req
        self.report = ReconfigReport(active, target, requested_at=time.time())
        self._before: torch.Tensor | None = None

    @property
    def done(self) -> bool:
        return self.phase in (Phase.DONE, Phase.FAILED)

    def run(self) -> ReconfigReport:
        while not self.done:
            self.step()
        return self.report

    def step(self) -> Phase:
        try:
            getattr(self, f"_{self.phase.value}")()
        except BaseException as exc:
            self.phase = Phase.FAILED
            self.report.phase = self.phase.value
            self.report.error = f"{type(exc).__name__}: {exc}"
            raise
        self.report.phase = self.phase.value
        return self.phase

    def _lap(self) -> float:
        now = time.perf_counter()
        dt, self._t_phase = now - self._t_phase, now
        return dt

    def _draining(self) -> None:
        # the coordinator calls step() only once no batch is in flight
        self.report.pause_s += self._lap()
        self.phase = Phase.PLANNING

    def _planning(self) -> None:
        n_slots = slots_per_rank(self.n_experts, self.target, self.settings.extra_slots) if self.n_experts else 0
        if self.n_experts:
            self.new = plan_placement(self.old, self.load, self.target, n_slots,
                                      hot_factor=self.settings.hot_factor, slack=self.settings.slack)
        else:
            self.new = self.old.new_full((0, self.world.size, 0), -1)
        self.moves = plan_moves(self.old, self.new)
        self.report.moved_copies = int(self.moves.shape[0])
        self.report.moved_bytes = int(self.moves.shape[0]) * self.shard.numel * 4
        self.report.plan_s = self._lap()
        self.phase = Phase.ANNOUNCING

    def _planned(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(new placement, moves), which the planning step set."""
        if self.new is None or self.moves is None:
            raise RuntimeError(f"reconfiguration in phase {self.phase}: nothing planned yet")
        return self.new, self.moves

    def _announcing(self) -> None:
        w = self.world
        new, moves = self._planned()
        w.send_control(self.active, [int(Ctl.SCALE), self.target, int(new.shape[2]), int(moves.shape[0])])
        _share_plan(w, new, moves)
        self.report.pause_s += self._lap()
        self.phase = Phase.MOVING

    def _moving(self) -> None:
        self._before = memory_stats(self.shard.nbytes, self.shard.n_copies)
        _move(self.world, self.shard, self.new, self.moves)
        self.report.move_s = self._lap()
        self.phase = Phase.SWITCHING

    def _switching(self) -> None:
        stats = _switch(self.world, self.shard, self._before)
        if stats is None:
            raise RuntimeError("the coordinator (rank 0) gathered no memory statistics")
        self.report.memory = [RankMemory.from_stats(r, row) for r, row in enumerate(stats.tolist())]
        self.report.released_bytes = {m.rank: max(m.expert_bytes_before - m.expert_bytes, 0)
                                      for m in self.report.memory if m.expert_bytes_before > m.expert_bytes}
        self.report.switch_s = self._lap()
        self.report.total_s = time.perf_counter() - self._t_req
        self.phase = Phase.DONE


def _share_plan(w: World, new: torch.Tensor, moves: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Broadcast (rank 0) or receive (others) the new placement [L, M, S] and the moves [n, 6]."""
    if new.numel():
        new = w.broadcast(new.to(w.device)).cpu()
    if moves.shape[0]:
        moves = w.broadcast(moves.to(w.device)).cpu()
    return new, moves


def _move(w: World, shard: ExpertShard, new: torch.Tensor, moves: torch.Tensor) -> None:
    row = new[:, w.rank] if new.shape[0] else torch.zeros(0, 0, dtype=torch.long)
    apply_moves(w, shard, moves, row)
    w.gather_stats(memory_stats(shard.nbytes, shard.n_copies))          # barrier: every rank moved


def _switch(w: World, shard: ExpertShard, before: torch.Tensor) -> torch.Tensor | None:
    if shard.nbytes < float(before[1]):
        release_memory(w.device)
    return w.gather_stats(memory_stats(shard.nbytes, shard.n_copies, rss_before=float(before[0]),
                                       expert_before=float(before[1]), device=w.device))


def follow_scale(world: World, shard: ExpertShard, ctl: torch.Tensor) -> int:
    """A worker's side of a SCALE control message `ctl` [CONTROL_LEN]: receive the plan, move,
    switch. Returns the new number of active ranks."""
    target, n_slots, n_moves = (int(v) for v in ctl[1:4])
    n_layer = len(shard.experts)
    new = torch.empty(n_layer, world.size, n_slots, dtype=torch.long)
    moves = torch.empty(n_moves, len(MOVE_COLUMNS), dtype=torch.long)
    new, moves = _share_plan(world, new, moves)
    before = memory_stats(shard.nbytes, shard.n_copies)
    _move(world, shard, new, moves)
    _switch(world, shard, before)
    return target
