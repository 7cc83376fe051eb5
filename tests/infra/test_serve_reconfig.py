"""Rank 0's pieces in a one-rank gloo world (in this process): the forward equals the model bit for bit
in both routing modes, the scale state machine advances one phase per step, the autoscaling policy."""
from __future__ import annotations

import pytest
import torch
from serve_helpers import random_docs

from docassay.infra.serve.autoscale import AutoscaleInputs, AutoscalePolicy, decide
from docassay.infra.serve.front import DocInput, FrontModel
from docassay.infra.serve.placement import EMPTY, holders
from docassay.infra.serve.reconfig import Phase, PlanSettings, Reconfiguration
from docassay.infra.serve.shard import ExpertShard

pytestmark = pytest.mark.distributed


def _model(routing: str, residual: float = 0.0):
    """A tiny ranker; `residual` > 0: a correction of the baseline score in column 0 (as shipped), with
    a random head so that the correction matters."""
    from docassay.infra.model.moe import MoEConfig, ProposalRanker
    torch.manual_seed(0)
    m = ProposalRanker(MoEConfig(n_buckets=512, n_numeric=6, d_model=16, d_expert=24, n_experts=4, n_layer=2,
                                 routing=routing, capacity=1.5, residual=residual, baseline_index=0)).eval()
    if residual > 0:
        with torch.no_grad():
            m.head.weight.normal_(0, 1.0)
    return m


@pytest.mark.parametrize("routing, residual", [("token", 0.0), ("expert", 0.0), ("expert", 0.3)])
def test_front_forward_equals_the_model_bit_for_bit(world, routing: str, residual: float) -> None:
    """The server's forward (`ProposalRanker.output` included, so a residual model's map too) equals
    the single-process model bit for bit."""
    model = _model(routing, residual)
    docs = random_docs(6, 512, 6, seed=3, max_tokens=120)
    with torch.no_grad():
        want = [torch.sigmoid(model(torch.from_numpy(i), torch.from_numpy(s[:-1]), torch.from_numpy(n),
                                    torch.zeros(n.shape[0], dtype=torch.long)).logits) for i, s, n in docs]
    front = FrontModel(model, world.device)
    experts = front.take_experts()
    shard = ExpertShard(len(experts), 16, 24, world.device)
    shard.load_all(experts, world.device)
    assert not any(hasattr(model.blocks[i].ffn, "experts") for i in front.moe_layers), "the experts left the model"
    placement = torch.full((2, 1, 4), EMPTY, dtype=torch.long)
    placement[:, 0] = torch.arange(4)
    got, stats = front.forward(world, 1, shard, holders(placement, 4), [DocInput(*d) for d in docs])
    for g, w in zip(got, want):
        assert torch.equal(g, w)
    assert stats.rows_per_rank[0] == sum(sum(layer) for layer in stats.rows_per_expert) > 0


def test_reconfiguration_steps_one_phase_at_a_time(world) -> None:
    shard = ExpertShard(2, 16, 24, world.device)
    shard.load_all([b.ffn.experts for b in _model("token").blocks], world.device)
    placement = torch.full((2, 1, 4), EMPTY, dtype=torch.long)
    placement[:, 0] = torch.arange(4)
    rc = Reconfiguration(world, shard, placement, torch.ones(2, 4), 1, 1, PlanSettings(), 4)
    seen = [rc.phase]
    while not rc.done:
        seen.append(rc.step())
    assert seen == [Phase.DRAINING, Phase.PLANNING, Phase.ANNOUNCING, Phase.MOVING, Phase.SWITCHING, Phase.DONE]
    r = rc.report
    assert r.moved_copies == 0 and r.total_s >= r.pause_s + r.plan_s + r.move_s + r.switch_s - 1e-9
    assert [m.rank for m in r.memory] == [0] and r.memory[0].expert_bytes == shard.nbytes > 0
    with pytest.raises(ValueError):
        Reconfiguration(world, shard, placement, torch.ones(2, 4), 1, 2, PlanSettings(), 4)


def test_autoscale_policy() -> None:
    p = AutoscalePolicy(min_ranks=1, target_s=1.0, down_after_s=10.0)
    idle = AutoscaleInputs(active=2, world=4, queued_tokens=0, announced_tokens=0, tokens_per_s=2000.0, below_since_s=0.0)
    assert decide(idle, p) == (1, 2), "a lull does not shrink the server at once"
    assert decide(AutoscaleInputs(**{**vars(idle), "below_since_s": 11.0}), p) == (1, 1)
    burst = AutoscaleInputs(active=1, world=4, queued_tokens=2500, announced_tokens=0, tokens_per_s=1000.0, below_since_s=0.0)
    assert decide(burst, p) == (3, 3)
    announced = AutoscaleInputs(active=1, world=4, queued_tokens=0, announced_tokens=10**9, tokens_per_s=1000.0, below_since_s=0.0)
    assert decide(announced, p) == (4, 4), "announced demand of waiting documents counts; capped at the world"
    assert decide(AutoscaleInputs(1, 4, 0, 0, 0.0, 0.0), AutoscalePolicy(min_ranks=2)) == (2, 2)
