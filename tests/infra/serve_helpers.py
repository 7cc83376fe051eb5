"""Support for the model-server tests and bench: tiny weights, a real server process, random documents,
in-process reference scores."""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from docassay.infra.serve.process import ServerProcess

__all__ = ["ServerProcess", "write_weights", "random_docs", "reference_scores", "write_layout_weights",
           "random_layout_docs", "layout_reference"]

ROOT = Path(__file__).resolve().parents[2]


def write_weights(path: Path, *, seed: int = 0, d_model: int = 16, d_expert: int = 32, n_experts: int = 8,
                  n_layer: int = 2, routing: str = "token", residual: float = 0.0) -> Path:
    """A freshly initialised ranker with the pipeline's feature sizes, saved as the project saves one
    (`residual` > 0: a correction of the baseline's score, as shipped, with a random non-zero head)."""
    from docassay.extractors.instructions.model_features import FEATURE_VERSION, N_BUCKETS, N_NUMERIC, numeric_names
    from docassay.infra.model.checkpoint import save
    from docassay.infra.model.moe import MoEConfig, ProposalRanker

    torch.manual_seed(seed)
    cfg = MoEConfig(n_buckets=N_BUCKETS, n_numeric=N_NUMERIC, d_model=d_model, d_expert=d_expert,
                    n_experts=n_experts, n_layer=n_layer, routing=routing, residual=residual,
                    baseline_index=numeric_names(FEATURE_VERSION).index("baseline"))
    model = ProposalRanker(cfg)
    if residual > 0:                             # zero at initialisation: make the correction matter
        torch.nn.init.normal_(model.head.weight, std=1.0)
    return save(path, model, {"feature_version": FEATURE_VERSION})


def random_docs(n_docs: int, n_buckets: int, n_numeric: int, *, seed: int = 0, max_tokens: int = 300
                ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Documents shaped like featurised proposals: 1..max_tokens tokens, 1..20 ids each."""
    rng = np.random.default_rng(seed)
    docs = []
    for n in rng.integers(1, max_tokens, n_docs):
        lens = rng.integers(1, 20, int(n))
        start = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        ids = rng.integers(0, n_buckets, int(start[-1])).astype(np.int64)
        num = rng.normal(size=(int(n), n_numeric)).astype(np.float32)
        docs.append((ids, start, num))
    return docs


@torch.no_grad()
def reference_scores(weights: Path, docs, *, threads: int = 1) -> list[np.ndarray]:
    """sigmoid(logit) per document from the single-process model, as ModelScorer computes it, with
    `threads` torch threads (the server's ranks run with the same count)."""
    from docassay.infra.model.checkpoint import load

    model, _ = load(weights)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        out = []
        for ids, start, num in docs:
            doc = torch.zeros(num.shape[0], dtype=torch.long)
            logits = model(torch.from_numpy(ids), torch.from_numpy(start[:-1]), torch.from_numpy(num), doc).logits
            out.append(torch.sigmoid(logits).numpy())
        return out
    finally:
        torch.set_num_threads(before)


def write_layout_weights(path: Path, *, seed: int = 0, d_model: int = 16, d_expert: int = 24, n_experts: int = 4,
                         n_layer: int = 2, n_head: int = 2, routing: str = "token", n_buckets: int = 512,
                         capacity: float = 2.0) -> Path:
    """A freshly initialised layout reader (a few KB at the defaults), saved as the project saves one,
    with float32 weights (`half=False`: every size of expert is what the config says)."""
    from docassay.infra.model.checkpoint import save_layout
    from docassay.infra.model.layout import LayoutConfig, LayoutReader

    torch.manual_seed(seed)
    cfg = LayoutConfig(n_buckets=n_buckets, d_model=d_model, n_head=n_head, n_layer=n_layer, d_expert=d_expert,
                       n_experts=0 if routing == "dense" else n_experts, routing=routing, capacity=capacity,
                       dropout=0.0)
    model = LayoutReader(cfg)
    with torch.no_grad():                        # zero at initialisation: make the spatial bias matter
        for b in model.blocks:
            b.attn.bias.weight.normal_(0, 0.5)
    return save_layout(path, model, {"kind": "test"}, half=False)


def random_layout_docs(n_docs: int, cfg, *, seed: int = 0, max_words: int = 200, max_fields: int = 8) -> list:
    """`LayoutDoc`s shaped like the pipeline's: 1..max_words words on up to 2 pages with 1..6 ids each,
    1..max_fields field queries."""
    from docassay.infra.model.layout import MAX_LINE_POS, POS_BINS, VALUE_TYPES, LayoutDoc

    rng = np.random.default_rng(seed)
    docs = []
    for _ in range(n_docs):
        n, f = int(rng.integers(1, max_words)), int(rng.integers(1, max_fields + 1))
        lens = rng.integers(1, 7, n)
        start = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        ids = rng.integers(0, cfg.n_buckets, int(start[-1])).astype(np.int64)
        page = rng.integers(0, 2, n)
        x0, y0 = rng.random(n), rng.random(n)
        x1, y1 = np.minimum(x0 + rng.random(n) * 0.2, 1.0), np.minimum(y0 + 0.01, 1.0)
        q = lambda v: np.minimum((v * POS_BINS).astype(np.int64), POS_BINS - 1)      # noqa: E731
        pos = np.stack([q(x0), q(y0), q(x1), q(y1), page, rng.integers(0, MAX_LINE_POS, n)], 1).astype(np.int64)
        flags = rng.normal(size=(n, cfg.n_flags)).astype(np.float32)
        xy = np.stack([(x0 + x1) / 2, (y0 + y1) / 2, page], 1).astype(np.float32)
        q_lens = rng.integers(1, 9, f)
        q_start = np.concatenate([[0], np.cumsum(q_lens)]).astype(np.int64)
        q_ids = rng.integers(0, cfg.n_buckets, int(q_start[-1])).astype(np.int64)
        q_type = rng.integers(0, len(VALUE_TYPES), f).astype(np.int64)
        docs.append(LayoutDoc(ids, start, pos, flags, xy, q_ids, q_start, q_type))
    return docs


@torch.no_grad()
def layout_reference(weights: Path, docs, *, threads: int = 1) -> list[tuple[np.ndarray, np.ndarray]]:
    """(begin [F, N+1], end [F, N]) logits per document from the in-process `LayoutReader`, run as
    `LayoutScorer.read` runs it (one document per call) with `threads` torch threads."""
    from docassay.infra.model.checkpoint import load_layout
    from docassay.infra.model.layout import collate

    model, _ = load_layout(weights)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        out = []
        for d in docs:
            o = model(collate([d]))
            out.append((o.begin[0].numpy(), o.end[0].numpy()))
        return out
    finally:
        torch.set_num_threads(before)


class CallerLoad:
    """`n` client threads sending 1..3 documents back to back until stopped, through `call`
    (`client.score` for the ranker, `client.read` for the layout reader); every answer checked
    against the in-process references with `equal`, every failure counted."""

    def __init__(self, srv: ServerProcess, docs, refs, n: int, *, call: str, equal: Callable[[list, list], bool]) -> None:
        self.docs, self.refs, self.call, self.equal = docs, refs, call, equal
        self.ok = self.wrong = 0
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run, args=(srv.client(timeout_s=120), i), daemon=True)
                         for i in range(n)]
        for t in self._threads:
            t.start()

    def _run(self, client, i: int) -> None:
        rng = np.random.default_rng(i)
        send = getattr(client, self.call)
        while not self._stop.is_set():
            pick = rng.choice(len(self.docs), size=int(rng.integers(1, 4)), replace=False)
            try:
                got = send([self.docs[j] for j in pick])
            except Exception as exc:               # noqa: BLE001  every kind of failure counts
                with self._lock:
                    self.failures.append(f"{type(exc).__name__}: {exc}")
                continue
            with self._lock:
                if self.equal(got, [self.refs[j] for j in pick]):
                    self.ok += 1
                else:
                    self.wrong += 1

    def wait_for(self, more: int, timeout_s: float = 30.0) -> None:
        target = self.ok + more
        deadline = time.monotonic() + timeout_s
        while self.ok < target and time.monotonic() < deadline:
            time.sleep(0.05)

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(60)
