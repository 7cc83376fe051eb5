"""Expert placement: which active rank holds which expert copies. Pure functions, tensor in, tensor out.

A *placement* is a long tensor `slots [L, M, S]`: for MoE layer l, rank r and slot s, the expert
whose weights sit there, or -1 for an empty slot. M is the world size (the maximum number of
ranks); only the first K ranks are active and an idle rank's row is all -1. S, the slots a rank
may fill, changes with K (`slots_per_rank`).

Planning follows vLLM's EPLB (`eplb/rebalance_algo.py`) in spirit — replicate the hot experts,
then pack the copies onto ranks by load — with one aim EPLB does not have: a reconfiguration moves
weights over the network, so a copy that already sits on a rank that stays active is kept there
unless that unbalances the rank (`plan_placement`), and each copy that must move is shipped once,
from the old holder with the fewest sends (`plan_moves`).

Nothing here communicates; the coordinator broadcasts what these functions return.
"""
from __future__ import annotations

import math

import torch

__all__ = ["EMPTY", "slots_per_rank", "replica_counts", "plan_placement", "plan_moves", "rank_load",
           "holders", "check_placement", "MOVE_COLUMNS"]

EMPTY = -1
MOVE_COLUMNS = ("layer", "expert", "src", "src_slot", "dst", "dst_slot")


def slots_per_rank(n_experts: int, n_active: int, extra: int = 1) -> int:
    """Slots each active rank offers: enough for every expert once (ceil(E / K)), plus `extra`
    for copies of hot experts when there is more than one rank (a second copy on the same rank
    would not spread any load)."""
    if n_active < 1:
        raise ValueError("at least one active rank")
    return math.ceil(n_experts / n_active) + (extra if n_active > 1 else 0)


def replica_counts(load: torch.Tensor, n_active: int, n_slots: int, hot_factor: float = 2.0) -> torch.Tensor:
    """How many copies of each expert to keep.

    load [L, E] float, measured tokens per expert (any scale; all zero = uniform);
    returns [L, E] long, every entry in [1, n_active], each row summing to at most n_active * n_slots.

    Every expert has one copy. Free slots go, one at a time, to the expert with the highest load
    per copy, while that load exceeds `hot_factor` times the mean load of an expert (a copy that
    would not relieve a hot expert only costs a weight move).
    """
    n_layer, n_exp = load.shape
    if n_exp > n_active * n_slots:
        raise ValueError(f"{n_exp} experts do not fit in {n_active} ranks x {n_slots} slots")
    counts = torch.ones(n_layer, n_exp, dtype=torch.long)
    for l in range(n_layer):
        w = load[l].double()
        mean = float(w.sum()) / n_exp
        if mean <= 0:
            continue
        free = n_active * n_slots - n_exp
        while free > 0:
            per_copy = torch.where(counts[l] < n_active, w / counts[l], torch.full_like(w, -1.0))   # [E]
            e = int(per_copy.argmax())
            if per_copy[e] <= hot_factor * mean:
                break
            counts[l, e] += 1
            free -= 1
    return counts


def plan_placement(old: torch.Tensor, load: torch.Tensor, n_active: int, n_slots: int, *,
                   hot_factor: float = 2.0, slack: float = 0.1) -> torch.Tensor:
    """The placement for `n_active` ranks with `n_slots` slots each, moving as little as it can.

    old [L, M, S_old] long, the current placement (-1 empty); load [L, E] float, measured load;
    returns new [L, M, n_slots] long: ranks >= n_active hold nothing, every expert has between 1 and
    n_active copies (`replica_counts`) on distinct ranks.

    Per layer: the load of one copy of expert e is c_e = load_e / copies_e and a rank's load is the
    sum over its copies. 1) *Keep*: each active rank keeps the copies it already holds, hottest
    first, while they are still needed and its load stays within (1 + slack) x the mean rank load
    (or it holds nothing yet); a kept copy keeps its slot index when that slot still exists.
    2) *Place*: the copies still needed go, hottest first, to the least-loaded active rank with a
    free slot that does not hold the expert yet (ties: the lowest rank); these are the moves.
    Deterministic: equal inputs give equal outputs on every rank.
    """
    n_layer, n_world, _ = old.shape
    n_exp = load.shape[1]
    if not 1 <= n_active <= n_world:
        raise ValueError(f"active ranks must be in [1, {n_world}], got {n_active}")
    counts = replica_counts(load, n_active, n_slots, hot_factor)                       # [L, E]
    new = torch.full((n_layer, n_world, n_slots), EMPTY, dtype=torch.long)
    for l in range(n_layer):
        w = load[l].double()
        if float(w.sum()) <= 0:
            w = torch.ones(n_exp, dtype=torch.float64)
        per_copy = (w / counts[l]).tolist()                                            # [E]
        need = counts[l].tolist()
        cap = max(float(w.sum()) / n_active * (1.0 + slack), max(per_copy))
        rank_w = [0.0] * n_active
        placed: list[dict[int, int]] = [{} for _ in range(n_active)]                   # rank -> {slot: expert}
        for r in range(n_active):                                                      # 1) keep
            held = [(s, int(e)) for s, e in enumerate(old[l, r].tolist()) if e != EMPTY]
            held.sort(key=lambda se: (-per_copy[se[1]], se[1]))
            for s, e in held:
                if need[e] <= 0 or e in placed[r].values() or len(placed[r]) >= n_slots:
                    continue
                if rank_w[r] > 0 and rank_w[r] + per_copy[e] > cap:
                    continue
                slot = s if s < n_slots and s not in placed[r] else _free_slot(placed[r], n_slots)
                placed[r][slot] = e
                rank_w[r] += per_copy[e]
                need[e] -= 1
        # 2) place the copies still needed, hottest first
        todo = sorted((e for e in range(n_exp) for _ in range(need[e])), key=lambda e: (-per_copy[e], e))
        for e in todo:
            options = [r for r in range(n_active) if len(placed[r]) < n_slots and e not in placed[r].values()]
            if not options:
                if any(e in p.values() for p in placed):
                    continue                  # an extra copy with nowhere to go: drop it
                raise ValueError(f"layer {l}: no slot left for expert {e}")
            r = min(options, key=lambda r: (rank_w[r], r))
            placed[r][_free_slot(placed[r], n_slots)] = e
            rank_w[r] += per_copy[e]
        for r in range(n_active):
            for s, e in placed[r].items():
                new[l, r, s] = e
    return new


def _free_slot(taken: dict[int, int], n_slots: int) -> int:
    return next(s for s in range(n_slots) if s not in taken)


def plan_moves(old: torch.Tensor, new: torch.Tensor) -> torch.Tensor:
    """The expert copies to ship for `old` -> `new`.

    old [L, M, S_old], new [L, M, S_new] long placements; returns moves [n, 6] long with columns
    `MOVE_COLUMNS` = (layer, expert, src, src_slot, dst, dst_slot), one row per copy that `new`
    puts on a rank that did not hold that expert in `old`. The source is an old holder (active or
    about to go idle), the one with the fewest sends so far (ties: the lowest rank). Rows are
    ordered by (layer, dst, dst_slot). A copy that stays on its rank but changes slot is not a move.
    """
    rows: list[list[int]] = []
    n_layer, n_world, _ = new.shape
    for l in range(n_layer):
        where: dict[int, list[tuple[int, int]]] = {}                                   # expert -> [(rank, slot)]
        for r in range(old.shape[1]):
            for s, e in enumerate(old[l, r].tolist()):
                if e != EMPTY:
                    where.setdefault(e, []).append((r, s))
        sends = [0] * max(n_world, old.shape[1])
        for r in range(n_world):
            had = set(old[l, r].tolist()) if r < old.shape[1] else set()
            for s, e in enumerate(new[l, r].tolist()):
                if e == EMPTY or e in had:
                    continue
                src = where.get(e)
                if not src:
                    raise ValueError(f"layer {l}: expert {e} is held by no rank in the old placement")
                rs, ss = min(src, key=lambda x: (sends[x[0]], x[0]))
                sends[rs] += 1
                rows.append([l, e, rs, ss, r, s])
    return torch.tensor(rows, dtype=torch.long).reshape(-1, len(MOVE_COLUMNS))


def holders(slots: torch.Tensor, n_experts: int) -> list[list[list[tuple[int, int]]]]:
    """slots [L, M, S] -> per layer, per expert, the (rank, slot) pairs holding a copy."""
    out: list[list[list[tuple[int, int]]]] = []
    for l in range(slots.shape[0]):
        per: list[list[tuple[int, int]]] = [[] for _ in range(n_experts)]
        for r in range(slots.shape[1]):
            for s, e in enumerate(slots[l, r].tolist()):
                if e != EMPTY:
                    per[e].append((r, s))
        out.append(per)
    return out


def rank_load(slots: torch.Tensor, load: torch.Tensor) -> torch.Tensor:
    """Expected load of each rank when each expert's load is shared evenly by its copies.

    slots [L, M, S] long, load [L, E] float; returns [M] float (summed over layers).
    """
    n_layer, n_world, _ = slots.shape
    counts = torch.zeros(load.shape, dtype=torch.float64)
    for l in range(n_layer):
        e = slots[l][slots[l] != EMPTY]
        counts[l] += torch.bincount(e, minlength=load.shape[1]).double()
    per_copy = load.double() / counts.clamp(min=1)                                    # [L, E]
    out = torch.zeros(n_world, dtype=torch.float64)
    for l in range(n_layer):
        for r in range(n_world):
            e = slots[l, r][slots[l, r] != EMPTY]
            out[r] += per_copy[l, e].sum()
    return out


def check_placement(slots: torch.Tensor, n_experts: int, n_active: int) -> list[str]:
    """What is wrong with a placement (empty list: nothing): an expert with no active copy, a copy
    on an idle rank, two copies of one expert on one rank, an unknown expert id."""
    problems = []
    for l in range(slots.shape[0]):
        for r in range(slots.shape[1]):
            row = [e for e in slots[l, r].tolist() if e != EMPTY]
            if r >= n_active and row:
                problems.append(f"layer {l}: idle rank {r} holds experts {row}")
            if len(set(row)) != len(row):
                problems.append(f"layer {l}: rank {r} holds an expert twice: {row}")
            if any(not 0 <= e < n_experts for e in row):
                problems.append(f"layer {l}: rank {r} holds unknown experts: {row}")
        active = set(slots[l, :n_active].reshape(-1).tolist()) - {EMPTY}
        missing = sorted(set(range(n_experts)) - active)
        if missing:
            problems.append(f"layer {l}: experts {missing} have no active copy")
    return problems
