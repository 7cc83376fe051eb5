"""Training loop for the layout reader, with the LocMoE+ routing schedule of `infra.model.train`.

    schedule "switch": token choice (top-k, balance loss) ──(router discriminates)──▶ expert choice
                       per document at c = top_k ──▶ c moved to the re-estimated lower bound each epoch
    schedule "token": token choice throughout;  "dense": a dense FFN of the same active size.

Loss per known field: cross-entropy of the begin distribution (words + "absent") against its right
begins (several when the value is printed twice: log of their summed probability) and, when the
field is present, of the end distribution against its right ends.

**Switch criterion** (global, on a fixed probe of training documents, once per epoch): the router has
settled when the share of probe words whose top-k expert set per layer is unchanged since the
previous epoch is >= `switch_stability` on `switch_patience` epochs in a row, and the mean cosine
affinity margin D = mean(max_e a - mean_e a) is >= `switch_margin_gain` x its value at
initialisation (default gain 0: D is logged but does not gate: in the ranker's runs, whose criterion
also asked D to grow 1.2x, D stayed flat and the switch never fired by itself); forced at
`switch_by_epoch` otherwise, and never later than the last epoch but one, so that expert choice is
always trained before it is shipped (logged either way). **Capacity lower bound**:
after the switch, each epoch, the smallest c in [max(floor, decay x c), c] whose validation field
accuracy stays within `capacity_tolerance` of the first expert-choice epoch's; c moves to it.

Logged every epoch: loss, validation field accuracy, routing mode, capacity and its lower bound,
D, stability, expert load, expert slots per word. Seeded: same data + seed -> same weights.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np
import torch

from docassay.infra.model.layout import LayoutBatch, LayoutConfig, LayoutDoc, LayoutOutput, LayoutReader, collate

__all__ = ["LayoutTrainConfig", "LayoutTrainResult", "train_layout", "evaluate_layout", "layout_loss"]

CAPACITY_GRID = (2.0, 1.75, 1.5, 1.25, 1.0, 0.875, 0.75, 0.625, 0.5, 0.375, 0.25)


@dataclass
class LayoutTrainConfig:
    schedule: str = "switch"
    epochs: int = 10
    docs_per_batch: int = 8
    max_words: int = 384            # training truncates longer documents (inference reads all)
    lr: float = 2e-3
    weight_decay: float = 1e-4
    warmup_steps: int = 30
    balance_coef: float = 0.02
    seed: int = 0
    probe_docs: int = 24
    min_epochs_before_switch: int = 2
    switch_stability: float = 0.9
    switch_patience: int = 2
    switch_margin_gain: float = 0.0
    switch_by_epoch: int = 6
    capacity_decay: float = 0.7
    capacity_floor: float = 0.5
    capacity_tolerance: float = 0.01

    def __post_init__(self) -> None:
        if self.schedule not in ("switch", "token", "dense"):
            raise ValueError(f"schedule must be switch | token | dense, got {self.schedule!r}")


@dataclass
class LayoutEpoch:
    epoch: int
    mode: str
    capacity: float | None
    loss: float
    val_accuracy: float
    seconds: float
    router: dict = field(default_factory=dict)

    def line(self) -> str:
        r = self.router
        s = (f"epoch {self.epoch:2d} {self.mode:6s} c={'-' if self.capacity is None else f'{self.capacity:.3f}'} "
             f"loss {self.loss:.4f} val acc {self.val_accuracy:.4f} {self.seconds:.1f}s")
        if r:
            s += (f" | load {r['load_min']:.3f}-{r['load_max']:.3f} D {r['margin']:.4f} stab {r.get('stability', float('nan')):.3f}"
                  f" slots/word {r['slots_per_token']:.2f}")
            if "capacity_lower_bound" in r:
                s += f" lb {r['capacity_lower_bound']:.3f}"
            if "switch" in r:
                s += f" SWITCH ({r['switch']})"
        return s


@dataclass
class LayoutTrainResult:
    model: LayoutReader
    log: list[LayoutEpoch]
    switched_at: int | None
    switch_reason: str | None
    seconds: float

    def summary(self) -> dict:
        return {"epochs": [asdict(e) for e in self.log], "switched_at": self.switched_at,
                "switch_reason": self.switch_reason, "seconds": round(self.seconds, 1)}


def layout_loss(out: LayoutOutput, b: LayoutBatch) -> torch.Tensor:
    """Mean over known fields of -log p(right begin) - [present] log p(right end)."""
    assert b.begin is not None and b.end is not None and b.known is not None
    lb = torch.log_softmax(out.begin, -1)                                             # [B, F, T+1]
    le = torch.log_softmax(out.end, -1)                                               # [B, F, T]
    pb = torch.logsumexp(lb.masked_fill(~b.begin, -1e9), -1)                 # [B, F]
    present = b.end.any(-1) & b.known
    pe = torch.logsumexp(le.masked_fill(~b.end, -1e9), -1)
    k = b.known & b.q_mask
    if not bool(k.any()):
        return out.begin.new_zeros(())
    loss = -pb[k].sum() - pe[present & k].sum()
    return loss / k.sum()


@torch.no_grad()
def evaluate_layout(model: LayoutReader, docs: list[LayoutDoc], *, mode: str | None = None,
                    capacity: float | None = None, batch: int = 8) -> float:
    """Field accuracy: the top begin (or "absent") is right and, when present, the top end too."""
    was = model.training
    model.eval()
    right = total = 0
    for s in range(0, len(docs), batch):
        b = collate(docs[s:s + batch])
        out = model(b, mode=mode, capacity=capacity)
        assert b.begin is not None and b.end is not None and b.known is not None
        tb = out.begin.argmax(-1)                                                     # [B, F]
        te = out.end.argmax(-1)
        ok_b = b.begin.gather(-1, tb[..., None]).squeeze(-1)
        absent = tb == out.begin.shape[-1] - 1
        ok_e = b.end.gather(-1, te[..., None]).squeeze(-1)
        ok = ok_b & (absent | ok_e)
        k = b.known & b.q_mask
        right += int((ok & k).sum())
        total += int(k.sum())
    model.train(was)
    return right / max(total, 1)


def _batches(docs: list[LayoutDoc], per: int, rng: np.random.Generator) -> list[list[int]]:
    """Batches of similar length (less padding), in random order."""
    order = rng.permutation(len(docs))
    chunks = [order[i:i + per * 8] for i in range(0, len(order), per * 8)]
    out: list[list[int]] = []
    for chunk in chunks:
        c: list[int] = sorted(chunk.tolist(), key=lambda i: docs[i].n_words)
        out.extend(c[i:i + per] for i in range(0, len(c), per))
    return [out[i] for i in rng.permutation(len(out))]


def train_layout(model_cfg: LayoutConfig, cfg: LayoutTrainConfig, train_docs: list[LayoutDoc],
                 val_docs: list[LayoutDoc], log: Callable[[str], None] = print) -> LayoutTrainResult:
    t_start = time.perf_counter()
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    train_docs = [d for d in train_docs if d.n_words and d.known is not None and d.known.any()]
    val_docs = [d for d in val_docs if d.n_words]
    if cfg.schedule == "dense":
        model_cfg = LayoutConfig(**{**model_cfg.to_json(), "n_experts": 0, "routing": "dense"})
    else:
        model_cfg = LayoutConfig(**{**model_cfg.to_json(), "routing": "token", "capacity": float(model_cfg.top_k)})
    model = LayoutReader(model_cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    n_batches = math.ceil(len(train_docs) / cfg.docs_per_batch)
    total = cfg.epochs * n_batches
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / cfg.warmup_steps) *
                                              0.5 * (1 + math.cos(math.pi * min(s, total) / total)))
    probe = collate([train_docs[i] for i in rng.permutation(len(train_docs))[:cfg.probe_docs]], cfg.max_words)
    moe = model_cfg.n_experts > 0
    margin0 = _probe(model, probe)[1] if moe else None
    prev: torch.Tensor | None = None
    settled = 0                      # epochs in a row with stability >= switch_stability
    ref: float | None = None
    switched_at: int | None = None
    reason: str | None = None
    logs: list[LayoutEpoch] = []
    log(f"layout reader: {model.n_params():,} parameters ({model.expert_bytes() / 1e6:.2f} MB per expert in float32), "
        f"{model_cfg.n_layer} layers, {model_cfg.n_experts or 'dense'} experts; train {len(train_docs)} docs / "
        f"{sum(d.n_words for d in train_docs)} words, val {len(val_docs)} docs; schedule {cfg.schedule}")
    if margin0 is not None:
        log(f"router at init: affinity margin D0 = {margin0:.4f}")
    for epoch in range(1, cfg.epochs + 1):
        t0 = time.perf_counter()
        mode, capacity = model_cfg.routing, model_cfg.capacity
        model.train()
        loss_sum = 0.0
        load = torch.zeros(max(model_cfg.n_experts, 1))
        slots = words = 0
        batches = _batches(train_docs, cfg.docs_per_batch, rng)
        for idx in batches:
            b = collate([train_docs[i] for i in idx], cfg.max_words)
            out = model(b)
            loss = layout_loss(out, b) + cfg.balance_coef * out.balance_loss
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            loss_sum += float(loss.detach()) / len(batches)
            n = int(b.mask.sum())
            for r in out.routings:
                load += torch.bincount(r.expert_idx, minlength=load.numel()).float()
                slots += r.slots
            words += n * max(len(out.routings), 1)
        router: dict = {}
        if moe:
            share = load / load.sum().clamp_min(1)
            router = {"load_min": float(share.min()), "load_max": float(share.max()),
                      "slots_per_token": slots / max(words, 1)}
            topk, margin = _probe(model, probe)
            router["margin"] = margin
            if prev is not None:
                router["stability"] = float((topk == prev).all(-1).float().mean())
            prev = topk
            settled = settled + 1 if router.get("stability", 0.0) >= cfg.switch_stability else 0
            if cfg.schedule == "switch" and model_cfg.routing == "token":
                ok = (epoch >= cfg.min_epochs_before_switch and settled >= cfg.switch_patience
                      and margin >= cfg.switch_margin_gain * (margin0 or 0.0))
                if ok or epoch >= min(cfg.switch_by_epoch, cfg.epochs - 1):   # never untrained expert choice
                    reason = (f"stability {router.get('stability', 0):.3f} >= {cfg.switch_stability} for {settled} epochs, "
                              f"margin D {margin:.4f} vs D0 {margin0:.4f}") if ok else f"forced at epoch {epoch}"
                    router["switch"] = reason
                    switched_at = epoch
                    model_cfg.routing = "expert"
                    model_cfg.capacity = float(model_cfg.top_k)
        acc = evaluate_layout(model, val_docs, mode=mode, capacity=capacity)
        nxt = None
        if moe and mode == "expert":
            if ref is None:
                ref = acc
            lb = _lower_bound(model, val_docs, ref - cfg.capacity_tolerance, upper=model_cfg.capacity,
                              lower=max(cfg.capacity_floor, cfg.capacity_decay * model_cfg.capacity))
            router["capacity_lower_bound"] = lb
            router["capacity_reference"] = ref
            nxt = lb
        e = LayoutEpoch(epoch, mode, capacity if mode == "expert" else None, loss_sum, acc,
                        time.perf_counter() - t0, router)
        logs.append(e)
        log(e.line())
        if nxt is not None:
            model_cfg.capacity = nxt
    return LayoutTrainResult(model.eval(), logs, switched_at, reason, time.perf_counter() - t_start)


@torch.no_grad()
def _probe(model: LayoutReader, probe: LayoutBatch) -> tuple[torch.Tensor, float]:
    """Top-k experts by affinity of every probe word per MoE layer [M, L, k] and the margin D."""
    was = model.training
    model.eval()
    out = model(probe)
    model.train(was)
    k = model.cfg.top_k
    topk = torch.stack([r.affinity.topk(k, -1).indices.sort(-1).values for r in out.routings], 1)
    margin = float(torch.stack([(r.affinity.max(-1).values - r.affinity.mean(-1)).mean() for r in out.routings]).mean())
    return topk, margin


def _lower_bound(model: LayoutReader, val: list[LayoutDoc], min_acc: float, *, upper: float, lower: float) -> float:
    best = upper
    for c in sorted({lower, *(c for c in CAPACITY_GRID if lower < c < upper)}, reverse=True):
        if c >= upper:
            continue
        if evaluate_layout(model, val, mode="expert", capacity=c) < min_acc:
            break
        best = c
    return best
