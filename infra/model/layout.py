"""The layout reader: a token-level sparse-MoE transformer over a document's *words* (issue 13).

One token = one printed word. The model reads every word of one document at once and, for every
field of the user's schema (a query built from what the schema says about it), gives the chance
that each word begins / ends the field's value, plus the chance that the field is not on the
document at all. It knows nothing of documents as objects: `extractors.instructions.layout_features`
turns a document and a schema into the arrays below (infra never imports extractors).

    word ids, offsets ─EmbeddingBag(mean)─┐                 hashed char 3-grams, whole word, shape
    pos [N, 6] ─ 6 embeddings (x0 y0 x1 y1 page line-position) ─┤
    flags [N, F] ─ Linear ─────────────────┴─ + ─ LN ─▶ x [N, d]
        n_layer × ( x = x + Attn(LN(x), spatial bias);  x = x + MoE(LN(x)) )      per document
        LN ─▶ h [N, d]
    query ids ─EmbeddingBag (shared with the words)─ + type ─ MLP ─▶ q [F, d]       per schema field
        q = q + CrossAttn(q, h)
        begin [F, N] = (h Wb) · q / sqrt(d);  end [F, N] = (h We) · q / sqrt(d);  null [F] = MLP(q)
        p_begin = softmax([begin, null]) over N + 1   (the last slot: the field is absent)
        p_end   = softmax(end) over N

**Attention** is full self-attention within the document with a learned per-head bias on the
quantised 2-D offset between the two words' centres (label-left-of-value, header-above-cell are
offsets, not absolute positions); words on different pages share one "other page" bucket.

**MoE feed-forward with LocMoE+ routing** (arXiv 2406.00023): the router and experts are those of
`infra.model.moe` (cosine token–expert affinity, token choice top-k at the start, expert choice
per document after the switch). The routing group is the document: a batch is padded per
document, the valid words are flattened document by document, and expert choice picks
C = ceil(c * n_doc / E) words per expert inside each document, so a document's outputs never
depend on what else is in the batch. The switch criterion and the capacity schedule live in
`infra.model.layout_train`.

Heads are conditioned on the schema only through the query (no per-field parameters), so any
schema works without retraining: a field the model never saw still gets a query from its labels,
description and type.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from docassay.infra.model.moe import MLP, MoE, MoEConfig, Routing, load_balancing_loss

__all__ = ["LayoutConfig", "LayoutDoc", "LayoutBatch", "LayoutOutput", "LayoutReader", "collate",
           "N_POS", "POS_BINS", "VALUE_TYPES", "span_logprob"]

POS_BINS = 64          # x0, y0, x1, y1 quantised into this many bins of the page
N_POS = 6              # x0, y0, x1, y1, page index, position in line
MAX_PAGE = 8           # pages past the 8th share the last page embedding
MAX_LINE_POS = 16      # words past the 16th of a line share the last line-position embedding
VALUE_TYPES = ("date", "amount", "number", "integer", "identifier", "currency", "text", "boolean", "percent")
_DX_EDGES = (0.0, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32)     # |offset| bin edges, page units
N_OFF = 2 * len(_DX_EDGES)                                       # signed bins per axis (+ sign)


@dataclass
class LayoutConfig:
    n_buckets: int = 1 << 14      # hashed n-gram ids shared by words and field queries
    n_flags: int = 12             # numeric flags per word (layout_features.FLAG_NAMES)
    d_model: int = 64
    n_head: int = 4
    n_layer: int = 2
    n_experts: int = 8            # 0: dense MLP of the same active size
    d_expert: int = 256
    top_k: int = 2
    capacity: float = 2.0         # expert choice: expert slots per token
    routing: str = "token"        # token | expert | dense
    router_scale: float = 10.0
    dropout: float = 0.1

    def __post_init__(self) -> None:
        if self.d_model % self.n_head:
            raise ValueError("d_model must be a multiple of n_head")
        if (self.routing == "dense") != (self.n_experts == 0):
            raise ValueError("routing 'dense' goes with n_experts=0 and only with it")

    def to_json(self) -> dict:
        return asdict(self)

    def moe_config(self) -> MoEConfig:
        return MoEConfig(n_buckets=1, n_numeric=1, d_model=self.d_model, n_layer=self.n_layer,
                         n_experts=self.n_experts, d_expert=self.d_expert, top_k=self.top_k,
                         capacity=self.capacity, routing=self.routing, router_scale=self.router_scale,
                         dropout=self.dropout)


@dataclass
class LayoutDoc:
    """One document and one schema's fields, as arrays (numpy), plus training targets if known.

    ids [T] int64, id_start [N+1]      hashed ids of the N words, concatenated
    pos [N, 6] int64                   x0 y0 x1 y1 bins, page index, position in line
    flags [N, n_flags] float32         typed flags, bold, font-size ratio, ...
    xy [N, 3] float32                  centre x, centre y (page units), page number (attention bias)
    q_ids [Q] int64, q_start [F+1]     hashed ids of the F field queries
    q_type [F] int64                   index into VALUE_TYPES
    begin [F, N] bool, end [F, N] bool words that begin / end a right span (training)
    absent [F] bool                    the field is known not to be printed (training)
    known [F] bool                     the field has a target (right spans found, or known absent)
    """
    ids: np.ndarray
    id_start: np.ndarray
    pos: np.ndarray
    flags: np.ndarray
    xy: np.ndarray
    q_ids: np.ndarray
    q_start: np.ndarray
    q_type: np.ndarray
    begin: np.ndarray | None = None
    end: np.ndarray | None = None
    absent: np.ndarray | None = None
    known: np.ndarray | None = None
    doc_id: str = ""

    @property
    def n_words(self) -> int:
        return len(self.pos)

    @property
    def n_fields(self) -> int:
        return len(self.q_type)

    def first_words(self, k: int) -> "LayoutDoc":
        """The document cut to its first `k` words (the inputs `collate(..., max_words=k)` reads;
        targets are not kept)."""
        if k >= self.n_words:
            return self
        return LayoutDoc(self.ids[:int(self.id_start[k])], self.id_start[:k + 1], self.pos[:k], self.flags[:k],
                         self.xy[:k], self.q_ids, self.q_start, self.q_type, doc_id=self.doc_id)


@dataclass
class LayoutBatch:
    """B documents padded to T words and F fields (torch)."""
    ids: torch.Tensor        # [Tid] all word ids of the valid words, document by document
    offsets: torch.Tensor    # [M] start of each valid word's ids
    pos: torch.Tensor        # [B, T, 6]
    flags: torch.Tensor      # [B, T, n_flags]
    xy: torch.Tensor         # [B, T, 3]
    mask: torch.Tensor       # [B, T] bool valid word
    q_ids: torch.Tensor      # [Qid]
    q_offsets: torch.Tensor  # [B*F] (padded fields get an empty bag)
    q_type: torch.Tensor     # [B, F]
    q_mask: torch.Tensor     # [B, F] bool valid field
    begin: torch.Tensor | None = None   # [B, F, T+1] bool (last: absent)
    end: torch.Tensor | None = None     # [B, F, T] bool
    known: torch.Tensor | None = None   # [B, F] bool


def collate(docs: list[LayoutDoc], max_words: int | None = None) -> LayoutBatch:
    """Pad `docs` into one batch. `max_words` truncates long documents (training only; targets on
    the cut words are dropped and a field left without one is not scored)."""
    n = [min(d.n_words, max_words) if max_words else d.n_words for d in docs]
    B, T, Fm = len(docs), max(max(n), 1), max(max(d.n_fields for d in docs), 1)
    nf = docs[0].flags.shape[1] if docs[0].n_words else 0
    pos = np.zeros((B, T, N_POS), dtype=np.int64)
    flags = np.zeros((B, T, nf), dtype=np.float32)
    xy = np.zeros((B, T, 3), dtype=np.float32)
    mask = np.zeros((B, T), dtype=bool)
    q_type = np.zeros((B, Fm), dtype=np.int64)
    q_mask = np.zeros((B, Fm), dtype=bool)
    ids, offs, qids, qoffs = [], [], [], []
    n_ids = n_q = 0
    has_t = docs[0].begin is not None
    begin = np.zeros((B, Fm, T + 1), dtype=bool) if has_t else None
    end = np.zeros((B, Fm, T), dtype=bool) if has_t else None
    known = np.zeros((B, Fm), dtype=bool) if has_t else None
    for b, (d, k) in enumerate(zip(docs, n)):
        pos[b, :k], flags[b, :k], xy[b, :k], mask[b, :k] = d.pos[:k], d.flags[:k], d.xy[:k], True
        i1 = int(d.id_start[k])
        ids.append(d.ids[:i1])
        offs.append(d.id_start[:k] + n_ids)
        n_ids += i1
        f = d.n_fields
        q_type[b, :f], q_mask[b, :f] = d.q_type, True
        qids.append(d.q_ids)
        qoffs.append(np.concatenate([d.q_start[:-1], np.full(Fm - f, d.q_start[-1])]) + n_q)
        n_q += len(d.q_ids)
        if has_t:
            assert d.begin is not None and d.end is not None and d.absent is not None and d.known is not None
            assert begin is not None and end is not None and known is not None
            begin[b, :f, :k] = d.begin[:, :k]
            begin[b, :f, T] = d.absent
            end[b, :f, :k] = d.end[:, :k]
            # a field whose right spans were all cut away has no target left
            known[b, :f] = d.known & (d.absent | (d.begin[:, :k].any(1) & d.end[:, :k].any(1)))
    t = torch.from_numpy
    cat = np.concatenate
    return LayoutBatch(t(cat(ids).astype(np.int64)), t(cat(offs).astype(np.int64)), t(pos), t(flags), t(xy), t(mask),
                       t(cat(qids).astype(np.int64)), t(cat(qoffs).astype(np.int64)), t(q_type), t(q_mask),
                       None if begin is None else t(begin), None if end is None else t(end),
                       None if known is None else t(known))


@dataclass
class LayoutOutput:
    begin: torch.Tensor          # [B, F, T+1] logits (last slot: absent), -inf on padding
    end: torch.Tensor            # [B, F, T] logits, -inf on padding
    balance_loss: torch.Tensor   # scalar (token choice only)
    routings: list[Routing] = field(default_factory=list)


def _offset_bins(d: torch.Tensor) -> torch.Tensor:
    """Signed, roughly logarithmic bins of a coordinate offset in page units -> [0, N_OFF)."""
    edges = torch.tensor(_DX_EDGES, dtype=d.dtype)
    mag = torch.bucketize(d.abs(), edges, right=True) - 1                       # 0 .. len-1
    return torch.where(d < 0, mag + len(_DX_EDGES), mag)


class SpatialAttention(nn.Module):
    """Multi-head self-attention within each document, with a learned bias per head on the 2-D
    offset between word centres (N_OFF x N_OFF bins, plus one bucket for "other page")."""

    def __init__(self, cfg: LayoutConfig) -> None:
        super().__init__()
        self.h = cfg.n_head
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        nn.init.normal_(self.proj.weight, std=0.02 / math.sqrt(2 * cfg.n_layer))
        self.bias = nn.Embedding(N_OFF * N_OFF + 1, cfg.n_head)
        nn.init.zeros_(self.bias.weight)

    def forward(self, x: torch.Tensor, rel: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        # x [B, T, d]; rel [B, T, T] offset bucket; mask [B, T]
        B, T, d = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)   # 3 x [B, H, T, dh]
        bias = self.bias(rel).permute(0, 3, 1, 2)                                         # [B, H, T, T]
        bias = bias.masked_fill(~mask[:, None, None, :], float("-inf"))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)                        # [B, H, T, dh]
        return self.proj(y.transpose(1, 2).reshape(B, T, d))


class Block(nn.Module):
    def __init__(self, cfg: LayoutConfig) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = SpatialAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        mcfg = cfg.moe_config()
        self.ffn = MoE(mcfg) if cfg.n_experts else MLP(mcfg)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor, rel: torch.Tensor, mask: torch.Tensor, doc: torch.Tensor,
                mode: str, top_k: int, capacity: float) -> tuple[torch.Tensor, Routing | None]:
        x = x + self.drop(self.attn(self.ln1(x), rel, mask))                                # [B, T, d]
        flat = self.ln2(x)[mask]                                                            # [M, d] valid words
        if isinstance(self.ffn, MLP):
            y, r = self.ffn(flat), None
        else:
            y, r = self.ffn(flat, doc, mode, top_k, capacity)                               # routing group: doc
        out = torch.zeros_like(x)
        out[mask] = y
        return x + self.drop(out), r


class LayoutReader(nn.Module):
    """Words of whole documents in, per-field begin / end / absent logits out (see the module doc)."""

    def __init__(self, cfg: LayoutConfig) -> None:
        super().__init__()
        self.cfg = cfg
        d = cfg.d_model
        self.embed = nn.EmbeddingBag(cfg.n_buckets, d, mode="mean")
        nn.init.normal_(self.embed.weight, std=0.1)
        self.pos = nn.ModuleList([nn.Embedding(POS_BINS, d) for _ in range(4)] +
                                 [nn.Embedding(MAX_PAGE, d), nn.Embedding(MAX_LINE_POS, d)])
        for e in self.pos:
            nn.init.normal_(e.weight, std=0.02)
        self.flags = nn.Linear(cfg.n_flags, d)
        self.ln_in = nn.LayerNorm(d)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(d)
        # field queries
        self.q_type = nn.Embedding(len(VALUE_TYPES), d)
        self.q_mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.q_ln = nn.LayerNorm(d)
        self.cross = nn.MultiheadAttention(d, cfg.n_head, batch_first=True)
        self.w_begin = nn.Linear(d, d, bias=False)
        self.w_end = nn.Linear(d, d, bias=False)
        self.null = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, 1))

    def queries(self, q_ids: torch.Tensor, q_offsets: torch.Tensor, q_type: torch.Tensor) -> torch.Tensor:
        """Field queries [B, F, d] from hashed ids (bags, [B*F] offsets) and types [B, F]."""
        B, Fm = q_type.shape
        bag = self.embed(q_ids, q_offsets).view(B, Fm, -1)                       # [B, F, d]
        q = bag + self.q_type(q_type)
        return self.q_ln(q + self.q_mlp(q))

    def forward(self, b: LayoutBatch, *, mode: str | None = None, capacity: float | None = None) -> LayoutOutput:
        cfg = self.cfg
        mode = mode or cfg.routing
        capacity = cfg.capacity if capacity is None else capacity
        x, rel = self.embed_words(b)                                              # [B, T, d], [B, T, T]
        B, T = b.mask.shape
        doc = torch.arange(B).view(B, 1).expand(B, T)[b.mask]                     # [M] non-decreasing
        routings: list[Routing] = []
        for block in self.blocks:
            x, r = block(x, rel, b.mask, doc, mode, cfg.top_k, capacity)
            if r is not None:
                routings.append(r)
        begin, end = self.read_out(x, b)
        bal = x.new_zeros(())
        if mode == "token":
            for r in routings:
                bal = bal + load_balancing_loss(r.probs, r.expert_idx.view(r.probs.shape[0], -1), cfg.n_experts)
        return LayoutOutput(begin, end, bal, routings)

    def embed_words(self, b: LayoutBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """The first hidden states x [B, T, d] and the offset buckets rel [B, T, T]. The model server
        calls this and `read_out` too, so both compute the same bits."""
        B, T = b.mask.shape
        emb = torch.zeros(B, T, self.cfg.d_model)
        emb[b.mask] = self.embed(b.ids, b.offsets)                                # [B, T, d]
        for i, e in enumerate(self.pos):
            emb = emb + e(b.pos[..., i])
        x = self.drop(self.ln_in(emb + self.flags(b.flags)))                      # [B, T, d]
        return x, self.relative(b.xy)

    def read_out(self, x: torch.Tensor, b: LayoutBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """(begin [B, F, T+1] logits, last slot absent; end [B, F, T]) from the last hidden states x."""
        h = self.ln_f(x)                                                          # [B, T, d]
        q = self.queries(b.q_ids, b.q_offsets, b.q_type)                          # [B, F, d]
        ctx, _ = self.cross(q, h, h, key_padding_mask=~b.mask, need_weights=False)
        q = q + ctx                                                               # [B, F, d]
        scale = 1 / math.sqrt(self.cfg.d_model)
        begin = torch.einsum("bfd,btd->bft", q, self.w_begin(h)) * scale          # [B, F, T]
        end = torch.einsum("bfd,btd->bft", q, self.w_end(h)) * scale              # [B, F, T]
        pad = ~b.mask[:, None, :]
        begin = begin.masked_fill(pad, float("-inf"))
        end = end.masked_fill(pad, float("-inf"))
        null = self.null(q)                                                       # [B, F, 1]
        return torch.cat([begin, null], -1), end

    @staticmethod
    def relative(xy: torch.Tensor) -> torch.Tensor:
        """Offset bucket [B, T, T] between word centres xy [B, T, 3] (x, y, page)."""
        dx = xy[:, None, :, 0] - xy[:, :, None, 0]                               # [B, T, T] key - query
        dy = xy[:, None, :, 1] - xy[:, :, None, 1]
        same = xy[:, None, :, 2] == xy[:, :, None, 2]
        rel = _offset_bins(dx) * N_OFF + _offset_bins(dy)
        return torch.where(same, rel, torch.full_like(rel, N_OFF * N_OFF))

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def expert_bytes(self, bytes_per_param: int = 4) -> int:
        """Size of one expert (w1, b1, w2, b2) in bytes."""
        c = self.cfg
        return (2 * c.d_model * c.d_expert + c.d_expert + c.d_model) * bytes_per_param

    def active_params_per_token(self, capacity: float | None = None) -> float:
        c = self.cfg
        dense = sum(p.numel() for n, p in self.named_parameters() if "experts" not in n and "embed" not in n)
        if not c.n_experts:
            return float(dense)
        slots = c.top_k if c.routing == "token" else (c.capacity if capacity is None else capacity)
        return dense + c.n_layer * slots * self.expert_bytes(1)


def span_logprob(out: LayoutOutput) -> tuple[torch.Tensor, torch.Tensor]:
    """(log p_begin [B, F, T+1] with the last slot = absent, log p_end [B, F, T])."""
    return F.log_softmax(out.begin, -1), F.log_softmax(out.end, -1)
