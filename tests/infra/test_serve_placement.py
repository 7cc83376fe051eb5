"""Placement planning (pure functions) and the serve package's public names."""
from __future__ import annotations

import random

import pytest
import torch

import docassay.infra.serve as serve_pkg
from docassay.infra.serve.placement import (
    EMPTY,
    check_placement,
    holders,
    plan_moves,
    plan_placement,
    rank_load,
    replica_counts,
    slots_per_rank,
)

E, L, M = 8, 2, 4


def _initial(n_layer: int = L, n_world: int = M, n_exp: int = E) -> torch.Tensor:
    """Rank 0 holds every expert (what the server has right after reading the checkpoint)."""
    p = torch.full((n_layer, n_world, n_exp), EMPTY, dtype=torch.long)
    p[:, 0] = torch.arange(n_exp)
    return p


def _scale(old: torch.Tensor, load: torch.Tensor, k: int, **kw) -> tuple[torch.Tensor, torch.Tensor]:
    new = plan_placement(old, load, k, slots_per_rank(load.shape[1], k), **kw)
    return new, plan_moves(old, new)


def test_public_api_is_pinned() -> None:
    assert sorted(serve_pkg.__all__) == sorted([
        "ModelClient", "MODEL_URL_ENV", "DEFAULT_URL", "ServerStatus", "ServeError", "BadRequest", "Unauthorized",
        "ServerBusy", "ServerUnavailable", "RequestTimeout", "plan_placement", "plan_moves", "replica_counts",
        "slots_per_rank", "check_placement"])
    for name in serve_pkg.__all__:
        assert getattr(serve_pkg, name) is not None


def test_uniform_load_moves_only_what_must_move() -> None:
    """1 -> 2 -> 4 -> 2 -> 1 with uniform load: each step moves exactly the copies the new ranks
    need or the leaving ranks held, never one more, and no replica is made."""
    load = torch.ones(L, E)
    p = _initial()
    expected_moves = {2: E // 2, 4: E // 2, 1: E // 2}
    for k, prev_k in ((2, 1), (4, 2), (2, 4), (1, 2)):
        new, moves = _scale(p, load, k)
        assert check_placement(new, E, k) == []
        assert moves.shape[0] == L * expected_moves[k], (prev_k, k, moves.tolist())
        per_rank = [(new[0, r] != EMPTY).sum().item() for r in range(k)]
        assert per_rank == [E // k] * k
        p = new


def test_moves_come_from_old_holders_and_land_in_new_slots() -> None:
    load = torch.rand(L, E, generator=torch.Generator().manual_seed(0)) * 100
    old, _ = _scale(_initial(), load, 4)
    new, moves = _scale(old, load, 2)
    for layer, e, src, ss, dst, ds in moves.tolist():
        assert old[layer, src, ss] == e, "a move's source holds the expert in the old placement"
        assert new[layer, dst, ds] == e
        assert e not in old[layer, dst].tolist(), "a rank that already holds an expert never receives it"
    # every new copy is either kept in place or moved in
    for layer in range(L):
        for r in range(M):
            for e in new[layer, r].tolist():
                if e == EMPTY:
                    continue
                kept = e in old[layer, r].tolist()
                moved = any(m[0] == layer and m[1] == e and m[4] == r for m in moves.tolist())
                assert kept != moved


def test_hot_expert_gets_a_copy_and_load_balances() -> None:
    load = torch.ones(1, E)
    load[0, 3] = 20.0                           # one expert takes most tokens
    counts = replica_counts(load, 4, slots_per_rank(E, 4))
    assert counts[0, 3] >= 2 and int(counts[0].sum()) <= 4 * slots_per_rank(E, 4)
    assert counts[0].tolist().count(1) == E - 1
    new, _ = _scale(_initial(1), load, 4)
    assert check_placement(new, E, 4) == []
    ranks_with_3 = [r for r in range(4) if 3 in new[0, r].tolist()]
    assert len(ranks_with_3) == counts[0, 3]
    loads = rank_load(new, load)[:4]
    without = rank_load(_scale(_initial(1), load, 4, hot_factor=1e9)[0], load)[:4]
    assert loads.max() < without.max(), "replicating the hot expert lowers the busiest rank's load"


def test_no_replica_on_one_rank_and_uniform_load_makes_none() -> None:
    assert replica_counts(torch.ones(L, E), 1, E).eq(1).all()
    assert replica_counts(torch.ones(L, E), 4, slots_per_rank(E, 4)).eq(1).all()
    assert replica_counts(torch.zeros(L, E), 4, slots_per_rank(E, 4)).eq(1).all()


def test_deterministic_and_valid_over_random_sequences() -> None:
    rng = random.Random(7)
    for trial in range(30):
        n_exp = rng.choice([2, 3, 8, 16])
        n_world = rng.choice([1, 2, 3, 4, 5])
        load = torch.rand(2, n_exp, generator=torch.Generator().manual_seed(trial)) ** 3 * 1000
        p = _initial(2, n_world, n_exp)
        for _ in range(5):
            k = rng.randint(1, n_world)
            a = plan_placement(p, load, k, slots_per_rank(n_exp, k))
            b = plan_placement(p.clone(), load.clone(), k, slots_per_rank(n_exp, k))
            assert torch.equal(a, b)
            assert check_placement(a, n_exp, k) == [], (trial, k, a.tolist())
            moves = plan_moves(p, a)
            assert moves.shape[1] == 6
            per_expert = holders(a, n_exp)
            assert all(1 <= len(h) <= k for layer in per_expert for h in layer)
            p = a


def test_rejects_impossible_requests() -> None:
    with pytest.raises(ValueError):
        plan_placement(_initial(), torch.ones(L, E), 5, 2)           # more active ranks than the world
    with pytest.raises(ValueError):
        plan_placement(_initial(), torch.ones(L, E), 2, 3)           # 8 experts in 2 x 3 slots
    with pytest.raises(ValueError):
        slots_per_rank(E, 0)
    bad = _initial()
    bad[0, 3, 0] = 1
    assert any("idle rank 3" in p for p in check_placement(bad, E, 2))
