"""Training loop for the proposal ranker, with the LocMoE+ routing schedule.

    schedule "switch" (the shipped model):
      token choice, top-k, balance loss ──(router discriminates)──▶ expert choice at c = top_k
        ──▶ capacity lowered each epoch: c <- max(floor, lower bound, decay * c)
    schedule "token": token choice throughout;  "dense": the dense MLP model.

**When the router discriminates** (the switch criterion, global: measured once per epoch on a fixed
probe of training documents, never on a batch):
  * stability: the share of probe tokens whose top-k experts (the set token choice sends them to,
    averaged over the MoE layers) are the same as at the end of the previous epoch is at least
    `switch_stability`, and
  * sharpness: the mean affinity margin D = mean_t (max_e a_te - mean_e a_te), the cosine affinity
    of a token's best expert above its average one (LocMoE+'s affinity, arXiv 2406.00023), has grown
    to at least `switch_margin_gain` times its value at initialisation.
If both never hold, the switch is forced at `switch_by_epoch` (logged as forced).

**Capacity lower bound** (re-estimated every epoch after the switch, after LocMoE+'s lower bound
on expert capacity, which falls as token features sharpen): the smallest capacity c, between the
current one and `capacity_decay` times it (never below `capacity_floor`), at which validation field
accuracy with expert choice stays within `capacity_tolerance` of a reference: by default
(`capacity_reference="expert"`) its value in the first expert-choice epoch (c = top_k, the compute
of token choice); with `"token"`, the best validation accuracy the model reached with token choice
(a lower bar when the first expert-choice epoch happens to score high). Capacity then moves to that
bound: it shrinks as long as the task allows and stops where accuracy would go. Tokens no expert takes keep their
residual path.

Logged every epoch: loss (and its parts), routing mode, capacity, the lower bound, expert load
(share of assignments per expert, min/max), mean top-1 affinity, margin D, stability, coverage,
expert slots per token, and validation field accuracy.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from docassay.infra.model.moe import MoEConfig, ProposalRanker, RankerOutput
from docassay.infra.model.tokens import Batch, TokenSet

__all__ = ["TrainConfig", "TrainResult", "train", "evaluate", "group_top1", "SCHEDULES"]

SCHEDULES = ("switch", "token", "dense")
CAPACITY_GRID = (2.0, 1.75, 1.5, 1.25, 1.0, 0.875, 0.75, 0.625, 0.5, 0.375, 0.25)


@dataclass
class TrainConfig:
    schedule: str = "switch"          # switch | token | dense
    epochs: int = 12
    docs_per_batch: int = 12
    lr: float = 3e-3
    weight_decay: float = 1e-4
    warmup_steps: int = 30
    balance_coef: float = 0.05        # token choice only
    bce_coef: float = 1.0             # calibration term (scores are read as probabilities)
    loose_target: float = 0.6         # BCE target of a right value whose locator does not generalise
    text_dropout: float = 0.0         # share of tokens trained with all their hashed ids dropped
    id_dropout: float = 0.0           # share of the other tokens' ids dropped, each on its own
    correction_coef: float = 0.0      # residual models: weight of mean(tanh(h)^2), keeps corrections small
    seed: int = 0
    probe_docs: int = 32
    min_epochs_before_switch: int = 2
    switch_stability: float = 0.8
    switch_margin_gain: float = 1.2
    switch_by_epoch: int = 6          # forced switch (logged) if the criterion has not held by then
    capacity_decay: float = 0.7
    capacity_floor: float = 0.5
    capacity_tolerance: float = 0.01  # validation accuracy the capacity schedule may give up (1 point)
    capacity_reference: str = "expert"  # accuracy it is measured against: first expert-choice epoch | token choice's best

    def __post_init__(self) -> None:
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}")
        if self.capacity_reference not in ("expert", "token"):
            raise ValueError(f"capacity_reference must be 'expert' or 'token', got {self.capacity_reference!r}")


@dataclass
class EpochLog:
    epoch: int
    mode: str
    capacity: float | None
    loss: float
    listwise: float
    bce: float
    balance: float
    val_accuracy: float
    val_generalising: float
    val_abstain: float
    seconds: float
    router: dict = field(default_factory=dict)
    correction: float | None = None   # residual models: mean tanh(h)^2 over training tokens

    def line(self) -> str:
        r = self.router
        cap = f"c={self.capacity:.3f}" if self.capacity is not None else "c=-"
        s = (f"epoch {self.epoch:2d} {self.mode:6s} {cap} loss {self.loss:.4f} (list {self.listwise:.4f} "
             f"bce {self.bce:.4f} bal {self.balance:.3f}) val acc {self.val_accuracy:.4f} gen {self.val_generalising:.4f} "
             f"abstain {self.val_abstain:.3f} {self.seconds:.1f}s")
        if self.correction is not None:
            s += f" corr^2 {self.correction:.4f}"
        if r:
            s += (f" | load {r['load_min']:.3f}-{r['load_max']:.3f} aff1 {r['affinity_top1']:.3f} D {r['margin']:.3f} "
                  f"stab {r.get('stability', float('nan')):.3f} cover {r['coverage']:.3f} slots/tok {r['slots_per_token']:.2f}")
            if "capacity_lower_bound" in r:
                s += f" lb {r['capacity_lower_bound']:.3f}"
            if "switch" in r:
                s += f" SWITCH ({r['switch']})"
        return s


@dataclass
class TrainResult:
    model: ProposalRanker
    log: list[EpochLog]
    switched_at: int | None
    switch_reason: str | None
    seconds: float

    def summary(self) -> dict:
        return {"epochs": [asdict(e) for e in self.log], "switched_at": self.switched_at,
                "switch_reason": self.switch_reason, "seconds": round(self.seconds, 1)}


def train(model_cfg: MoEConfig, cfg: TrainConfig, train_set: TokenSet, val_set: TokenSet,
          log: Callable[[str], None] = print) -> TrainResult:
    """Train a ranker from scratch on `train_set`, validating on `val_set` every epoch. Seeded:
    the same data, configs and seed give the same model on the same machine."""
    t_start = time.perf_counter()
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    if cfg.schedule == "dense":
        model_cfg = MoEConfig(**{**model_cfg.to_json(), "n_experts": 0, "routing": "dense"})
    else:
        model_cfg = MoEConfig(**{**model_cfg.to_json(), "routing": "token", "capacity": float(model_cfg.top_k)})
    model = ProposalRanker(model_cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    n_batches = math.ceil(train_set.n_docs / cfg.docs_per_batch)
    total_steps = cfg.epochs * n_batches
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / cfg.warmup_steps) *
                                              0.5 * (1 + math.cos(math.pi * min(s, total_steps) / total_steps)))
    probe = train_set.batch(rng.permutation(train_set.n_docs)[:cfg.probe_docs])
    moe = model_cfg.n_experts > 0
    margin0 = _probe_routing(model, probe)[1] if moe else None
    prev_topk: torch.Tensor | None = None
    ref_accuracy: float | None = None
    token_best: float | None = None              # best validation accuracy under token choice
    next_capacity: float | None = None
    switched_at: int | None = None
    reason: str | None = None
    logs: list[EpochLog] = []
    log(f"model: {model.n_params():,} parameters, {model_cfg.n_layer} layers, {model_cfg.n_experts or 'dense'} experts, "
        f"train {train_set.n_docs} docs / {train_set.n_tokens} tokens, val {val_set.n_docs} docs; schedule {cfg.schedule}")
    if margin0 is not None:
        log(f"router at init: affinity margin D0 = {margin0:.4f}")
    for epoch in range(1, cfg.epochs + 1):
        t0 = time.perf_counter()
        mode, capacity = model_cfg.routing, model_cfg.capacity      # what this epoch trains with
        model.train()
        sums = {"loss": 0.0, "listwise": 0.0, "bce": 0.0, "balance": 0.0, "correction": 0.0}
        acc = _RouterAccumulator(model_cfg.n_experts) if moe else None
        order = rng.permutation(train_set.n_docs)
        for b in range(n_batches):
            batch = train_set.batch(order[b * cfg.docs_per_batch:(b + 1) * cfg.docs_per_batch])
            out = model(batch.ids, batch.offsets, batch.num, batch.doc, id_weights=_id_dropout(batch, cfg))
            lw, bce = ranking_losses(out.logits, batch, cfg.loose_target)
            loss = lw + cfg.bce_coef * bce + cfg.balance_coef * out.balance_loss
            if out.correction is not None:
                corr = (out.correction ** 2).mean()
                loss = loss + cfg.correction_coef * corr
                sums["correction"] += float(corr.detach()) / n_batches
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            for k, v in (("loss", loss), ("listwise", lw), ("bce", bce), ("balance", out.balance_loss)):
                sums[k] += float(v.detach()) / n_batches
            if acc is not None:
                acc.add(out, batch)
        router: dict = {}
        if moe:
            assert acc is not None
            router = acc.summary()
            topk, margin = _probe_routing(model, probe)
            router["margin"] = margin
            if prev_topk is not None:
                router["stability"] = float((topk == prev_topk).all(-1).float().mean())   # per token and layer
            prev_topk = topk
            if cfg.schedule == "switch" and model_cfg.routing == "token":
                ok = (epoch >= cfg.min_epochs_before_switch and router.get("stability", 0.0) >= cfg.switch_stability
                      and margin >= cfg.switch_margin_gain * (margin0 or 0.0))
                if ok or epoch >= cfg.switch_by_epoch:
                    reason = (f"stability {router.get('stability', 0):.3f} >= {cfg.switch_stability}, margin {margin:.4f} >= "
                              f"{cfg.switch_margin_gain} x {margin0:.4f}") if ok else f"forced at epoch {epoch}"
                    router["switch"] = reason
                    switched_at = epoch
                    model_cfg.routing = "expert"
                    model_cfg.capacity = float(model_cfg.top_k)     # same compute per token as token choice
        ev = evaluate(model, val_set, capacity=capacity, mode=mode)
        if mode == "token":
            token_best = max(token_best or 0.0, ev["accuracy"])
        if moe and mode == "expert":
            if ref_accuracy is None:                       # this epoch's (c = top_k), or token choice's best
                use_token = cfg.capacity_reference == "token"
                ref_accuracy = token_best if use_token and token_best is not None else ev["accuracy"]
            lb = capacity_lower_bound(model, val_set, ref_accuracy - cfg.capacity_tolerance,
                                      upper=model_cfg.capacity,
                                      lower=max(cfg.capacity_floor, cfg.capacity_decay * model_cfg.capacity))
            router["capacity_lower_bound"] = lb
            router["capacity_reference"] = ref_accuracy
            next_capacity = lb
        e = EpochLog(epoch, mode, capacity if mode == "expert" else None,
                     sums["loss"], sums["listwise"], sums["bce"], sums["balance"], ev["accuracy"], ev["generalising"],
                     ev["abstain"], time.perf_counter() - t0, router,
                     sums["correction"] if model_cfg.residual > 0 else None)
        logs.append(e)
        log(e.line())
        if next_capacity is not None:
            model_cfg.capacity = next_capacity
            next_capacity = None
    return TrainResult(model.eval(), logs, switched_at, reason, time.perf_counter() - t_start)


def _id_dropout(b: Batch, cfg: TrainConfig) -> torch.Tensor | None:
    """Per-id weights that drop hashed text features: every id of a `text_dropout` share of tokens
    (the model must also rank from numbers: positions, the baseline's similarity scores), and each
    id of the rest with probability `id_dropout` (texts half familiar). Keeps the model from
    leaning on the synthetic generator's exact wording."""
    if not (cfg.text_dropout or cfg.id_dropout):
        return None
    n, t = b.offsets.numel(), b.ids.numel()
    tok_of_id = torch.repeat_interleave(torch.arange(n), torch.diff(torch.cat([b.offsets, torch.tensor([t])])))
    whole = torch.rand(n) < cfg.text_dropout                                          # [N]
    keep = (torch.rand(t) >= cfg.id_dropout) & ~whole[tok_of_id]                      # [T]
    return keep.float()


def ranking_losses(logits: torch.Tensor, b: Batch, loose_target: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(listwise, calibration) losses.

    Listwise: per field, softmax over its proposals, cross-entropy against the true ones: the
    proposals whose value is right and whose locator generalises when the field has any, else those
    whose value is right (fields with neither are left to the calibration term).
    Calibration: binary cross-entropy on sigmoid(logit), target 1 (generalises), `loose_target`
    (right here only) or 0, summed over tokens and divided by the number of fields, so that scores
    read as the chance that a proposal is the one to record.
    """
    g, n_g = b.group, b.n_groups
    gen_any = torch.zeros(n_g, dtype=torch.bool).index_put_((g,), b.gen_ok, accumulate=True)
    pos = torch.where(gen_any[g], b.gen_ok, b.value_ok)                                   # [N]
    lse_all = _group_logsumexp(logits, g, n_g)                                            # [G]
    lse_pos = _group_logsumexp(logits.masked_fill(~pos, -1e9), g, n_g)                    # [G]
    has_pos = torch.zeros(n_g, dtype=torch.bool).index_put_((g,), pos, accumulate=True)
    listwise = (lse_all - lse_pos)[has_pos].mean() if bool(has_pos.any()) else logits.new_zeros(())
    target = torch.where(b.gen_ok, 1.0, torch.where(b.value_ok, loose_target, 0.0))
    bce = F.binary_cross_entropy_with_logits(logits, target, reduction="sum") / max(n_g, 1)
    return listwise, bce


def _group_logsumexp(x: torch.Tensor, g: torch.Tensor, n_g: int) -> torch.Tensor:
    m = torch.full((n_g,), -1e9, dtype=x.dtype).scatter_reduce(0, g, x, "amax").detach()   # [G]
    s = torch.zeros(n_g, dtype=x.dtype).index_add(0, g, torch.exp(x - m[g]))               # [G]
    return torch.log(s.clamp_min(1e-30)) + m


def group_top1(logits: torch.Tensor, group: torch.Tensor, n_groups: int) -> torch.Tensor:
    """Index of the best-scored token of each group [G] (ties: the first)."""
    m = torch.full((n_groups,), -float("inf")).scatter_reduce(0, group, logits, "amax")
    is_max = logits == m[group]
    idx = torch.arange(logits.numel())
    first = torch.full((n_groups,), logits.numel(), dtype=torch.long).scatter_reduce(
        0, group, torch.where(is_max, idx, logits.numel()), "amin")
    return first


@torch.no_grad()
def evaluate(model: ProposalRanker, ts: TokenSet, docs_per_batch: int = 16, min_score: float = 0.3,
             capacity: float | None = None, mode: str | None = None) -> dict:
    """Field-level figures on `ts` with the model's current routing: accuracy (top proposal's value
    right, over annotated fields), generalising (its locator also right on the format's other
    documents), abstain (share of unannotated fields whose top score is below `min_score`)."""
    model.eval()
    right = gen = n_ann = abst = n_unann = 0
    for s in range(0, ts.n_docs, docs_per_batch):
        b = ts.batch(list(range(s, min(ts.n_docs, s + docs_per_batch))))
        out = model(b.ids, b.offsets, b.num, b.doc, capacity=capacity, mode=mode)
        top = group_top1(out.logits, b.group, b.n_groups)
        ann = b.annotated[top]
        right += int((b.value_ok[top] & ann).sum())
        gen += int((b.gen_ok[top] & ann).sum())
        n_ann += int(ann.sum())
        abst += int(((torch.sigmoid(out.logits[top]) < min_score) & ~ann).sum())
        n_unann += int((~ann).sum())
    model.train()
    return {"accuracy": right / max(n_ann, 1), "generalising": gen / max(n_ann, 1),
            "abstain": abst / max(n_unann, 1), "fields": n_ann}


@torch.no_grad()
def _probe_routing(model: ProposalRanker, probe: Batch) -> tuple[torch.Tensor, float]:
    """The top-k experts (by affinity, sorted) of every probe token in every MoE layer [N, L, k], and
    the mean affinity margin D."""
    was = model.training
    model.eval()
    out = model(probe.ids, probe.offsets, probe.num, probe.doc)
    model.train(was)
    k = model.cfg.top_k
    topk = torch.stack([r.affinity.topk(k, -1).indices.sort(-1).values for r in out.routings], 1)   # [N, L, k]
    margin = float(torch.stack([(r.affinity.max(-1).values - r.affinity.mean(-1)).mean() for r in out.routings]).mean())
    return topk, margin


def capacity_lower_bound(model: ProposalRanker, val_set: TokenSet, min_accuracy: float, *, upper: float,
                         lower: float) -> float:
    """Smallest capacity in [lower, upper] (`lower` and the points of CAPACITY_GRID between, tried from
    the top) at which expert choice keeps validation accuracy at `min_accuracy` or more; `upper`
    when none does."""
    best = upper
    for c in sorted({lower, *(c for c in CAPACITY_GRID if lower < c < upper)}, reverse=True):
        if c >= upper:
            continue
        if evaluate(model, val_set, capacity=c, mode="expert")["accuracy"] < min_accuracy:
            break
        best = c
    return best


def _covered(token_idx: torch.Tensor, n: int) -> torch.Tensor:
    m = torch.zeros(n, dtype=torch.bool)
    m[token_idx] = True
    return m


class _RouterAccumulator:
    """Expert load, affinity, coverage and slots per token over one epoch of training batches."""

    def __init__(self, n_experts: int) -> None:
        self.load = torch.zeros(n_experts)
        self.tokens = 0
        self.aff1 = 0.0
        self.covered = 0
        self.slots = 0
        self.layers = 0

    def add(self, out: RankerOutput, b: Batch) -> None:
        n = b.doc.numel()
        for r in out.routings:
            self.load += torch.bincount(r.expert_idx, minlength=self.load.numel()).float()
            self.aff1 += float(r.affinity.detach().max(-1).values.sum())
            self.covered += int(_covered(r.token_idx, n).sum())
            self.slots += r.slots
        self.tokens += n
        self.layers = len(out.routings)

    def summary(self) -> dict:
        share = self.load / self.load.sum().clamp_min(1)
        denom = max(self.tokens * max(self.layers, 1), 1)
        return {"load": [round(float(x), 4) for x in share], "load_min": float(share.min()), "load_max": float(share.max()),
                "affinity_top1": self.aff1 / denom, "coverage": self.covered / denom, "slots_per_token": self.slots / denom}
