"""The pure parts of re-forming after a lost rank (infra/serve/recovery.py): which experts no survivor
holds, restoring them onto rank 0 from the weights, the plan on the store, the status lines."""
from __future__ import annotations

import torch

from docassay.infra.serve.placement import EMPTY, check_placement, holders
from docassay.infra.serve.recovery import ReformPlan, missing_experts, restore_missing, row_width
from docassay.infra.serve.shard import ExpertCopy, ExpertShard
from docassay.infra.serve.status import Counters, LostRank, ModelInfo, ServerStatus, format_status


def _experts(n_layer: int = 2, n_experts: int = 4, d: int = 8, h: int = 12):
    from docassay.infra.model.moe import MoEConfig, ProposalRanker
    torch.manual_seed(0)
    m = ProposalRanker(MoEConfig(n_buckets=64, n_numeric=3, d_model=d, d_expert=h, n_experts=n_experts,
                                 n_layer=n_layer, baseline_index=0))
    return [b.ffn.experts for b in m.blocks]


def test_missing_experts_are_those_no_surviving_rank_holds() -> None:
    slots = torch.tensor([[[0, 1], [2, EMPTY]], [[3, EMPTY], [0, 1]]])          # [L=2, M=2, S=2], E = 4
    assert missing_experts(slots, 4) == [[3], [2]]
    assert missing_experts(torch.tensor([[[0, 1, 2, 3]]]), 4) == [[]]


def test_restore_missing_reads_the_lost_copies_onto_rank_0_and_keeps_the_rest() -> None:
    layers = _experts()
    shard = ExpertShard(2, 8, 12, torch.device("cpu"))
    shard.load_all(layers, torch.device("cpu"))
    kept = {(0, 0): shard.copies[0][0], (1, 1): shard.copies[1][1]}
    # rank 0 kept expert 0 of layer 0 and expert 1 of layer 1; the survivor (rank 1) holds 1 and 2 / 0
    shard.rebuild(torch.tensor([[0, EMPTY], [EMPTY, 1]]), {})
    slots = torch.tensor([[[0, EMPTY], [1, 2]], [[EMPTY, 1], [0, EMPTY]]])       # [L, M=2, S=2]
    calls = []
    new, n = restore_missing(shard, slots, 4, lambda: calls.append(1) or layers)
    assert n == 3 and calls == [1]                                              # 3 of layer 0; 2 and 3 of layer 1
    assert check_placement(new, 4, 2) == []
    assert torch.equal(new[:, 1, :2], slots[:, 1])                              # the survivor's row as it was
    for l in range(2):
        assert sorted(e for e in shard.experts[l] if e != EMPTY) == sorted(e for e in new[l, 0].tolist() if e != EMPTY)
    assert shard.copies[0][0] is kept[(0, 0)] and shard.copies[1][1] is kept[(1, 1)], "kept copies are not copied"
    x = torch.randn(5, 8)
    for l in range(2):
        for e, (r, s) in enumerate(c[0] for c in holders(new, 4)[l]):
            if r == 0:
                want = ExpertCopy.from_experts(layers[l], e, torch.device("cpu"))(x)
                assert torch.equal(shard.copies[l][s](x), want)
    assert restore_missing(shard, new, 4, lambda: 1 / 0) == (new, 0), "nothing missing: the weights are not read"


def test_row_width_fits_every_expert_once() -> None:
    assert row_width(8) == 9 and row_width(0) == 2


def test_reform_plan_round_trips_through_the_store_encoding() -> None:
    plan = ReformPlan(3, [0, 2, 3], 2)
    assert ReformPlan.from_bytes(plan.to_bytes()) == plan


def test_status_names_the_lost_rank_when_and_why() -> None:
    lost = LostRank(rank=1, since=1_700_000_000.0, why="the process was killed by SIGKILL", seen_by="exchange",
                    detail="a batch failed", recovered_s=0.21, serving_ranks=3, active_ranks=2, restored_copies=6,
                    generation=1)
    s = ServerStatus(state="serving", backend="gloo", max_ranks=3, active_ranks=2, placement=[[[0, 1], [2, 3]]],
                     expert_load=[[0] * 4], expert_load_recent=[[0.0] * 4], rank_load=[0, 0, 0], queue_documents=0,
                     queue_tokens=0, in_flight_documents=0, scale_in_progress=False, scale_target=None,
                     scale_phase=None, last_reconfiguration=None, memory=[], counters=Counters(), tokens_per_s=0.0,
                     uptime_s=1.0, model=ModelInfo("w.pt", {}, 2, 0), lost_ranks=[1], lost=[lost],
                     ranks=[0, 2, 3])
    text = format_status(ServerStatus.from_json(s.to_json()))
    assert "lost rank 1 at 2023-11-14 22:13:20 UTC (the process was killed by SIGKILL; seen by the exchange)" in text
    assert "re-formed on 3 ranks (2 active) in 210 ms, 6 expert copies read again" in text
    assert "ranks now: [0, 2, 3]" in text
