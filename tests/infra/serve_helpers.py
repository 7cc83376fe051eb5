"""Support for the model-server tests and bench: tiny weights, a real server process, random documents,
in-process reference scores."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]


def write_weights(path: Path, *, seed: int = 0, d_model: int = 16, d_expert: int = 32, n_experts: int = 8,
                  n_layer: int = 2, routing: str = "token") -> Path:
    """A freshly initialised ranker with the pipeline's feature sizes, saved as the project saves one."""
    from extractors.instructions.model_features import FEATURE_VERSION, N_BUCKETS, N_NUMERIC
    from infra.model.checkpoint import save
    from infra.model.moe import MoEConfig, ProposalRanker

    torch.manual_seed(seed)
    cfg = MoEConfig(n_buckets=N_BUCKETS, n_numeric=N_NUMERIC, d_model=d_model, d_expert=d_expert,
                    n_experts=n_experts, n_layer=n_layer, routing=routing)
    return save(path, ProposalRanker(cfg), {"feature_version": FEATURE_VERSION})


class ServerProcess:
    """`docassay model serve` in a child process on a free loopback port."""

    def __init__(self, weights: Path, *, max_ranks: int, ranks: int, token: str, log: Path,
                 extra: tuple[str, ...] = (), startup_timeout_s: float = 240.0) -> None:
        cmd = [sys.executable, "-m", "flows.cli", "model", "serve", "--max-ranks", str(max_ranks), "--ranks", str(ranks),
               "--port", "0", "--weights", str(weights), "--admin-token", token, "--threads", "1", *extra]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.log = log
        self._log_fh = open(log, "w")
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=self._log_fh, text=True, env=env)
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(startup_timeout_s)
        if not line or not line[0].strip():
            self.kill()
            raise RuntimeError(f"server did not start: {log.read_text()[-3000:]}")
        self.ready = json.loads(line[0])
        self.url = self.ready["url"]
        self.token = token

    def client(self, **kw):
        from infra.serve.client import ModelClient
        kw.setdefault("token", self.token)
        return ModelClient(self.url, **kw)

    def stop(self, timeout_s: float = 60.0) -> int:
        from infra.serve.errors import ServeError
        if self.proc.poll() is None:
            try:
                self.client(timeout_s=10).shutdown()
            except ServeError:
                pass
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log_fh.close()
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


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
    from infra.model.checkpoint import load

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
