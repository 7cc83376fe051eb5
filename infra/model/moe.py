"""The proposal ranker: a small sparse Mixture-of-Experts over extraction proposals.

One *token* is one proposal (a candidate span of a document together with the locator that finds
it, see `extractors.instructions.proposals`), described by hashed feature ids and a few numbers.
One *document* is the routing group: every token of a document is routed together, and nothing
outside the document changes its outputs.

    ids, offsets ──EmbeddingBag──┐
    num ─────────Linear──────────┴─ + ─ LN ─▶ x [N, d]
        n_layer × ( x = x + FFN(LN(x)) )        FFN: MoE (cosine router → experts) or dense MLP
        LN ─ head ─▶ h [N]
        logit = h                                           residual = 0 (the first shipped model)
        logit = k · (b + β · tanh(h) − t) + logit(t)        residual = β > 0: a correction of the baseline

**Residual on the baseline** (`residual` = β > 0): b is the baseline scorer's own score of the
proposal (a numeric input, column `baseline_index`); the learned part moves a proposal by at most β
in the baseline's units, so it can only reorder proposals the baseline scores within 2β of each
other, and the head starts at zero: at initialisation the model ranks exactly as the baseline does.
The map to a probability is fixed, not learned: slope k (`residual_slope`) and the baseline's own
threshold t (`residual_threshold`, the generator's `MIN_SCORE`) mapped to probability t, so a
proposal clears the generator's threshold exactly when its corrected baseline score does. (With a
learned scale and offset, calibrated on synthetic documents, the model dropped optional fields the
baseline keeps on real ones: its calibration did not transfer, its ranking did.)

Routing follows LocMoE+ (Li et al., "LocMoE+: Enhanced Router with Token Feature Awareness for
Efficient LLM Pre-Training", arXiv 2406.00023): the token–expert *affinity* is the cosine between
the token representation and the expert's gate vector; training starts with token-choice routing
(each token takes its top-k experts) and switches to expert-choice routing (Zhou et al., "Mixture-of-
Experts with Expert Choice Routing", NeurIPS 2022, arXiv 2202.09368: each expert takes its top-C
tokens) once the router discriminates, after which the expert capacity is lowered towards a
re-estimated lower bound (the paper's third point: the capacity an expert needs shrinks as the token
features sharpen). The switch criterion and the capacity schedule live in `infra.model.train`.

Expert choice makes a token's output depend on the other tokens it is routed with. Here the
experts choose *within each document* (C = ceil(c * n_doc / E) per document), so a document's
scores are the same whatever else is in the batch; the server scores one document per call anyway.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["MoEConfig", "CosineRouter", "Routing", "Experts", "MoE", "MLP", "Block", "ProposalRanker",
           "RankerOutput", "load_balancing_loss", "ROUTING_MODES"]

ROUTING_MODES = ("token", "expert", "dense")


@dataclass
class MoEConfig:
    n_buckets: int = 1 << 15      # hashed feature ids (extractors.instructions.model_features)
    n_numeric: int = 48           # numeric features per token
    d_model: int = 48
    n_layer: int = 2
    n_experts: int = 8            # 0: a dense MLP of the same active size (hidden = top_k * d_expert)
    d_expert: int = 96            # hidden size of one expert
    top_k: int = 2                # token choice: experts per token
    capacity: float = 2.0         # expert choice: expert slots per token, c in Zhou et al. (C = c * n / E)
    routing: str = "token"        # token | expert | dense; training moves a MoE from token to expert
    router_scale: float = 10.0    # initial inverse temperature applied to the cosine affinities
    dropout: float = 0.1
    residual: float = 0.0         # beta: bound of the learned correction of the baseline score (0: no residual)
    baseline_index: int = -1      # column of `num` holding the baseline's score (used when residual > 0)
    residual_slope: float = 8.0   # k: logit per unit of the corrected baseline score
    residual_threshold: float = 0.3   # t: the baseline's threshold, mapped to probability t

    def __post_init__(self) -> None:
        if self.residual < 0:
            raise ValueError("residual must be >= 0")
        if self.residual > 0 and not 0 <= self.baseline_index < self.n_numeric:
            raise ValueError("a residual model needs the baseline score's column: 0 <= baseline_index < n_numeric")
        if not 0 < self.residual_threshold < 1 or self.residual_slope <= 0:
            raise ValueError("residual_threshold must be in (0, 1) and residual_slope > 0")
        if self.routing not in ROUTING_MODES:
            raise ValueError(f"routing must be one of {ROUTING_MODES}, got {self.routing!r}")
        if (self.routing == "dense") != (self.n_experts == 0):
            raise ValueError("routing 'dense' goes with n_experts=0 and only with it")

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class Routing:
    """Which token goes to which expert with what weight: M assignments, flat."""
    token_idx: torch.Tensor       # [M] long, index into the N tokens
    expert_idx: torch.Tensor      # [M] long
    weight: torch.Tensor          # [M] float, the gate value multiplying the expert's output
    affinity: torch.Tensor        # [N, E] cosine(token, gate vector), float32
    probs: torch.Tensor           # [N, E] softmax(scale * affinity), float32
    mode: str
    slots: int                    # expert slots provisioned (token: M; expert: sum of capacities)


@dataclass
class RankerOutput:
    logits: torch.Tensor                                    # [N]
    balance_loss: torch.Tensor                              # scalar, 0 unless token choice
    routings: list[Routing] = field(default_factory=list)  # one per MoE layer
    correction: torch.Tensor | None = None                  # [N] tanh(h) in [-1, 1] of a residual model


class CosineRouter(nn.Module):
    """Affinity between tokens and experts as LocMoE+ defines it: cos(x_t, w_e), the cosine between
    the token representation x_t and expert e's gate vector w_e (arXiv 2406.00023). Computed in
    float32: the routing decision is a top-k over small differences, which half precision would blur.
    """

    def __init__(self, cfg: MoEConfig) -> None:
        super().__init__()
        self.n_experts = cfg.n_experts
        self.gate = nn.Parameter(torch.randn(cfg.n_experts, cfg.d_model) / math.sqrt(cfg.d_model))
        self.log_scale = nn.Parameter(torch.tensor(math.log(cfg.router_scale)))

    def affinity(self, x: torch.Tensor) -> torch.Tensor:
        # x [N, d] -> [N, E] in [-1, 1]
        return F.normalize(x.float(), dim=-1) @ F.normalize(self.gate.float(), dim=-1).T

    def forward(self, x: torch.Tensor, doc: torch.Tensor, mode: str, top_k: int, capacity: float) -> Routing:
        aff = self.affinity(x)                                       # [N, E]
        probs = F.softmax(self.log_scale.exp() * aff, dim=-1)        # [N, E]
        if mode == "token":
            return _token_choice(aff, probs, top_k)
        if mode == "expert":
            return _expert_choice(aff, probs, doc, capacity)
        raise ValueError(f"unknown routing mode {mode!r}")


def _token_choice(aff: torch.Tensor, probs: torch.Tensor, k: int) -> Routing:
    """Each token takes its top-k experts; the k gate values are renormalised to sum to 1 (as in
    Mixtral). No token is dropped: an expert takes every token that chose it."""
    n, e = probs.shape
    k = min(k, e)
    top_p, top_e = probs.topk(k, dim=-1)                             # [N, k], [N, k]
    weight = top_p / top_p.sum(-1, keepdim=True)                     # [N, k]
    token_idx = torch.arange(n, device=probs.device).repeat_interleave(k)   # [N*k]
    return Routing(token_idx, top_e.reshape(-1), weight.reshape(-1), aff, probs, "token", n * k)


def _expert_choice(aff: torch.Tensor, probs: torch.Tensor, doc: torch.Tensor, c: float) -> Routing:
    """Each expert takes, within each document, the C = ceil(c * n_doc / E) tokens of highest
    affinity to it (LocMoE+ rearranges tokens by affinity; Zhou et al. 2022: I = TopK(S^T, k) with
    k = n * c / e), and weights its output by the token's router probability for it (Zhou's gate
    G = S). A token no expert takes passes the layer on its residual path only. `doc` must be
    non-decreasing."""
    n, e = probs.shape
    assert n == 0 or bool((doc[1:] >= doc[:-1]).all()), "tokens must be grouped by document"
    counts = torch.bincount(doc, minlength=int(doc.max()) + 1 if n else 0)   # [G]
    starts = torch.cumsum(counts, 0) - counts                                  # [G]
    g = counts.numel()
    cap = torch.clamp(torch.ceil(c * counts.float() / e).long(), max=counts)   # [G] per-document capacity
    n_max, c_max = int(counts.max()) if g else 0, int(cap.max()) if g else 0
    if c_max == 0:
        empty = torch.zeros(0, dtype=torch.long, device=probs.device)
        return Routing(empty, empty, probs.new_zeros(0), aff, probs, "expert", 0)
    pos = torch.arange(n, device=probs.device) - starts[doc]                  # [N] position within document
    padded = aff.new_full((g, n_max, e), -2.0)                                 # [G, n_max, E]; -2 = no token
    padded[doc, pos] = aff.detach()
    top_a, top_i = padded.topk(c_max, dim=1)                                   # [G, c_max, E]
    slot = torch.arange(c_max, device=probs.device).view(1, -1, 1)
    valid = (slot < cap.view(-1, 1, 1)) & (top_a > -2.0)                       # [G, c_max, E]
    token = (top_i + starts.view(-1, 1, 1))[valid]                             # [M]
    expert = torch.arange(e, device=probs.device).view(1, 1, -1).expand_as(top_i)[valid]
    return Routing(token, expert, probs[token, expert], aff, probs, "expert", int(cap.sum()) * e)


class Experts(nn.Module):
    """E independent two-layer GELU MLPs, weights stacked: w1 [E, d, h], w2 [E, h, d]."""

    def __init__(self, cfg: MoEConfig) -> None:
        super().__init__()
        e, d, h = cfg.n_experts, cfg.d_model, cfg.d_expert
        self.w1 = nn.Parameter(torch.randn(e, d, h) / math.sqrt(d))
        self.b1 = nn.Parameter(torch.zeros(e, h))
        self.w2 = nn.Parameter(torch.randn(e, h, d) / math.sqrt(h) / math.sqrt(2 * cfg.n_layer))
        self.b2 = nn.Parameter(torch.zeros(e, d))

    def forward(self, x: torch.Tensor, r: Routing) -> torch.Tensor:
        out = torch.zeros_like(x)                                                  # [N, d]
        order = torch.argsort(r.expert_idx, stable=True)
        tok, exp_, w = r.token_idx[order], r.expert_idx[order], r.weight[order]     # [M]
        bounds = torch.bincount(exp_, minlength=self.w1.shape[0]).tolist()
        start = 0
        for e, n_e in enumerate(bounds):
            if n_e == 0:
                continue
            t = tok[start:start + n_e]
            h = F.gelu(x[t] @ self.w1[e] + self.b1[e])                             # [n_e, h]
            y = h @ self.w2[e] + self.b2[e]                                        # [n_e, d]
            out.index_add_(0, t, y * w[start:start + n_e, None].to(y.dtype))
            start += n_e
        return out


class MoE(nn.Module):
    """Sparse expert layer: the cosine router decides, the experts compute, gate values weight the sum.
    Token choice drops no token; expert choice processes exactly the capacity it was given."""

    def __init__(self, cfg: MoEConfig) -> None:
        super().__init__()
        self.router = CosineRouter(cfg)
        self.experts = Experts(cfg)

    def forward(self, x: torch.Tensor, doc: torch.Tensor, mode: str, top_k: int, capacity: float) -> tuple[torch.Tensor, Routing]:
        r = self.router(x, doc, mode, top_k, capacity)
        return self.experts(x, r), r


class MLP(nn.Module):
    """The dense feed-forward layer of the same active size: hidden = top_k * d_expert."""

    def __init__(self, cfg: MoEConfig) -> None:
        super().__init__()
        h = cfg.top_k * cfg.d_expert
        self.fc = nn.Linear(cfg.d_model, h)
        self.proj = nn.Linear(h, cfg.d_model)
        nn.init.normal_(self.proj.weight, std=1 / math.sqrt(h) / math.sqrt(2 * cfg.n_layer))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(F.gelu(self.fc(x)))


class Block(nn.Module):
    def __init__(self, cfg: MoEConfig) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(cfg.d_model)
        self.ffn = MoE(cfg) if cfg.n_experts else MLP(cfg)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor, doc: torch.Tensor, mode: str, top_k: int, capacity: float) -> tuple[torch.Tensor, Routing | None]:
        if isinstance(self.ffn, MLP):
            return x + self.drop(self.ffn(self.ln(x))), None
        y, r = self.ffn(self.ln(x), doc, mode, top_k, capacity)
        return x + self.drop(y), r


class ProposalRanker(nn.Module):
    """Scores proposal tokens; higher is better. `forward` takes one batch of whole documents."""

    def __init__(self, cfg: MoEConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.embed = nn.EmbeddingBag(cfg.n_buckets, cfg.d_model, mode="sum")
        nn.init.normal_(self.embed.weight, std=0.02)
        self.numeric = nn.Linear(cfg.n_numeric, cfg.d_model)
        self.ln_in = nn.LayerNorm(cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, 1)
        if cfg.residual > 0:                     # at initialisation the model ranks as the baseline does
            nn.init.zeros_(self.head.weight)
            nn.init.zeros_(self.head.bias)

    def forward(self, ids: torch.Tensor, offsets: torch.Tensor, num: torch.Tensor, doc: torch.Tensor,
                *, mode: str | None = None, capacity: float | None = None,
                id_weights: torch.Tensor | None = None) -> RankerOutput:
        """ids [T] hashed feature ids, offsets [N] start of each token's ids, num [N, n_numeric],
        doc [N] document of each token (non-decreasing). `mode`/`capacity` override the config's
        (training changes them as it goes); `id_weights` [T] scales each id (training drops ids)."""
        cfg = self.cfg
        mode = mode or cfg.routing
        capacity = cfg.capacity if capacity is None else capacity
        emb = self.embed(ids, offsets, per_sample_weights=id_weights)             # [N, d]
        x = self.drop(self.ln_in(emb + self.numeric(num)))                       # [N, d]
        routings: list[Routing] = []
        for block in self.blocks:
            x, r = block(x, doc, mode, cfg.top_k, capacity)                      # [N, d]
            if r is not None:
                routings.append(r)
        logits, corr = self.output(x, num)                                       # [N]
        bal = x.new_zeros(())
        if mode == "token":
            for r in routings:
                bal = bal + load_balancing_loss(r.probs, r.expert_idx.view(r.probs.shape[0], -1), cfg.n_experts)
        return RankerOutput(logits, bal, routings, corr)

    def output(self, x: torch.Tensor, num: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The logits [N] from the last hidden states x [N, d] (and, for a residual model, the baseline
        score in `num`), and the bounded correction tanh(h) [N] (None without a residual). The model
        server calls this too, so both compute the same bits."""
        h = self.head(self.ln_f(x)).squeeze(-1)                                   # [N]
        cfg = self.cfg
        if cfg.residual <= 0:
            return h, None
        corr = torch.tanh(h)
        t = cfg.residual_threshold
        b = num[:, cfg.baseline_index]
        return cfg.residual_slope * (b + cfg.residual * corr - t) + math.log(t / (1 - t)), corr

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def active_params_per_token(self, capacity: float | None = None) -> float:
        """Parameters one token uses on average: embeddings it looks up aside, the dense parts plus
        top_k experts (token choice) or `capacity` expert slots (expert choice) per layer."""
        cfg = self.cfg
        dense = sum(p.numel() for n, p in self.named_parameters() if "experts" not in n and "embed" not in n)
        if not cfg.n_experts:
            return float(dense)
        per_expert = 2 * cfg.d_model * cfg.d_expert + cfg.d_expert + cfg.d_model
        slots = cfg.top_k if cfg.routing == "token" else (cfg.capacity if capacity is None else capacity)
        return dense + cfg.n_layer * slots * per_expert


def load_balancing_loss(probs: torch.Tensor, chosen: torch.Tensor, n_experts: int) -> torch.Tensor:
    """Auxiliary load-balancing loss for token-choice routing (Fedus, Zoph & Shazeer, "Switch
    Transformers", JMLR 2022, arXiv 2101.03961, eq. 4; the same loss as Mixtral's
    `load_balancing_loss_func`, extended to top-k): E * sum_e f_e * P_e, where f_e is the share of
    token->expert assignments that went to expert e and P_e the mean router probability of e.
    It equals 1 when both are uniform and grows as load concentrates.

    probs [N, E] router probabilities; chosen [N, k] the experts each token took.
    """
    if probs.shape[0] == 0:
        return probs.new_zeros(())
    f = torch.bincount(chosen.reshape(-1), minlength=n_experts).float() / chosen.numel()   # [E]
    p = probs.mean(0)                                                                        # [E]
    return n_experts * (f * p).sum()

