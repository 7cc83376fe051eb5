"""The model server serving the layout reader with experts of >= 1 MB (issue 13): equality with the
in-process reader, requests per second and memory per rank at 1, 2, 3 active ranks, and scales
under load with no failed request.

    PYTHONPATH=$PWD python bench/serve_layout_bench.py [--d-expert 2048] [--clients 3] [--seconds 6] \
        [--docs 12] [--routing token] [--out bench/results/serve_layout.md]

Weights: a randomly initialised `LayoutReader` of the shipped shape (d_model 64, 4 heads, 2 layers,
8 experts per layer) but with `--d-expert` hidden units per expert: at 2048 one expert is
(2 * 64 * 2048 + 2048 + 64) * 4 bytes = 1.06 MB float32 in memory (the shipped layout.pt has
d_expert 256: 0.13 MB). Not trained: only the bits matter here, not the readings. Documents:
synthetic invoices and receipts of the train split, featurised as the pipeline featurises them
(`layout_data.synth_layout_docs`, the examples' schemas), one document per request.

Every answer during the run is compared bit for bit with the in-process reader (one torch thread,
as each rank runs); a mismatch or a failed request is counted, never retried away.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TOKEN = "bench-admin-token"
M = 3


def _weights(path: Path, d_expert: int, routing: str, seed: int) -> Path:
    from docassay.extractors.instructions.layout_features import N_BUCKETS
    from docassay.infra.model.checkpoint import save_layout
    from docassay.infra.model.layout import LayoutConfig, LayoutReader

    torch.manual_seed(seed)
    cfg = LayoutConfig(n_buckets=N_BUCKETS, d_model=64, n_head=4, n_layer=2, n_experts=8, d_expert=d_expert,
                       routing=routing, dropout=0.0)
    return save_layout(path, LayoutReader(cfg), {"bench": "serve_layout", "seed": seed})


def _docs(n: int, seed: int) -> list:
    from docassay.extractors.instructions.layout_data import synth_layout_docs
    schemas = {k: json.loads((ROOT / "examples" / f"{k}s" / "schema.json").read_text()) for k in ("invoice", "receipt")}
    half = max(1, n // 2)
    docs = list(synth_layout_docs("invoice", schemas["invoice"], half, 1, split="train", seed=seed, ocr_share=0.3))
    docs += list(synth_layout_docs("receipt", schemas["receipt"], n - half, 1, split="train", seed=seed, ocr_share=0.5))
    return docs


@torch.no_grad()
def _reference(weights: Path, docs: list) -> tuple[list, float, float]:
    """In-process (begin, end) logits per document with one torch thread, ms per document, and the
    share of that time spent in the experts."""
    from docassay.infra.model.checkpoint import load_layout
    from docassay.infra.model.layout import collate

    torch.set_num_threads(1)
    model, _ = load_layout(weights)
    out = [(o.begin[0].numpy(), o.end[0].numpy()) for o in (model(collate([d])) for d in docs)]
    spent = [0.0]
    started: dict[int, float] = {}
    for b in model.blocks:                  # time inside the experts (what the other ranks can take over)
        b.ffn.experts.register_forward_pre_hook(lambda mod, args: started.__setitem__(id(mod), time.perf_counter()))
        b.ffn.experts.register_forward_hook(
            lambda mod, args, res: spent.__setitem__(0, spent[0] + time.perf_counter() - started[id(mod)]))
    t0 = time.perf_counter()
    for d in docs:
        model(collate([d]))
    total = time.perf_counter() - t0
    return out, total * 1e3 / len(docs), spent[0] / total


def _same(got, want) -> bool:
    return np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


class Load:
    """Closed-loop callers: each sends one document, waits for the answer, checks it, sends the next."""

    def __init__(self, srv, docs: list, refs: list, clients: int) -> None:
        self.docs, self.refs = docs, refs
        self.done: list[tuple[float, float, int]] = []         # (t0, t1, words)
        self.failures: list[str] = []
        self.mismatches = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run, args=(srv.client(timeout_s=300), i), daemon=True)
                         for i in range(clients)]
        for t in self._threads:
            t.start()

    def _run(self, client, seed: int) -> None:
        rng = np.random.default_rng(seed)
        while not self._stop.is_set():
            j = int(rng.integers(len(self.docs)))
            t0 = time.perf_counter()
            try:
                (got,) = client.read([self.docs[j]])
            except Exception as exc:                       # noqa: BLE001  every failure counts
                with self._lock:
                    self.failures.append(f"{type(exc).__name__}: {exc}")
                continue
            t1 = time.perf_counter()
            with self._lock:
                self.done.append((t0, t1, self.docs[j].n_words))
                self.mismatches += not _same(got, self.refs[j])

    def window(self, t0: float, t1: float) -> tuple[int, int]:
        with self._lock:
            inside = [(a, b, w) for a, b, w in self.done if a >= t0 and b <= t1]
        return len(inside), sum(w for _, _, w in inside)

    def longest(self, t0: float, t1: float) -> float:
        with self._lock:
            return max((b - a for a, b, _ in self.done if b >= t0 and a <= t1), default=0.0)

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(120)


def main(argv: list[str] | None = None) -> int:
    from docassay.infra.serve.process import ServerProcess

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--d-expert", type=int, default=2048)
    ap.add_argument("--routing", choices=("token", "expert"), default="token")
    ap.add_argument("--clients", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--docs", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="serve-layout-bench-"))
    weights = _weights(tmp / "layout-1mb.pt", a.d_expert, a.routing, a.seed)
    from docassay.infra.model.checkpoint import load_layout
    model, _ = load_layout(weights)
    expert_mb = model.expert_bytes() / 1e6
    docs = _docs(a.docs, a.seed)
    refs, local_ms, expert_share = _reference(weights, docs)
    words = [d.n_words for d in docs]
    lines = [f"layout reader d_model 64, 2 layers x 8 experts, d_expert {a.d_expert}: {expert_mb:.2f} MB per expert "
             f"(float32), {model.n_params() * 4 / 1e6:.1f} MB in all; routing {a.routing}; {len(docs)} synthetic "
             f"documents, {min(words)}-{max(words)} words (mean {np.mean(words):.0f}); in-process {local_ms:.1f} ms "
             f"per document (1 thread), {expert_share:.0%} of it in the experts", ""]

    srv = ServerProcess(weights, max_ranks=M, ranks=1, token=TOKEN, extra=("--model", "layout"),
                        log=tmp / "server.log")
    rows, scales = [], []
    try:
        client = srv.client(timeout_s=300)
        equal_at = {}
        load = Load(srv, docs, refs, a.clients)
        for k in (1, 2, 3, 2, 1):
            if client.status().active_ranks != k:
                t_s = time.perf_counter()
                rep = client.scale(k)
                scales.append((rep, load.longest(t_s, time.perf_counter())))
            time.sleep(0.5)                                 # settle
            t0 = time.perf_counter()
            time.sleep(a.seconds)
            t1 = time.perf_counter()
            n, w = load.window(t0, t1)
            st = client.status(refresh=True)
            mem = [(m["rank"], m["rss_bytes"], m["expert_bytes"], m["copies"]) for m in st.memory]
            equal_at[k] = all(_same(g, r) for g, r in zip(client.read(docs), refs))
            rows.append((k, n / (t1 - t0), w / (t1 - t0), mem, equal_at[k]))
        load.stop()
        final = client.status()
    finally:
        srv.stop()

    lines += ["| active ranks | requests/s | words/s | expert bytes per rank (copies) | RSS per rank | "
              "every document equal |", "|---|---|---|---|---|---|"]
    for k, rps, wps, mem, eq in rows:
        eb = ", ".join(f"r{r} {e / 1e6:.1f} MB ({c})" for r, _, e, c in mem)
        rss = ", ".join(f"r{r} {s / 2**20:.0f} MiB" for r, s, _, _ in mem)
        lines.append(f"| {k} | {rps:.1f} | {wps:.0f} | {eb} | {rss} | {'yes' if eq else 'NO'} |")
    lines += ["", "| scale | total ms | moves ms | copies moved | MB moved | longest request during it (ms) |",
              "|---|---|---|---|---|---|"]
    for rep, longest in scales:
        lines.append(f"| {rep['from_ranks']} -> {rep['to_ranks']} | {rep['total_s'] * 1e3:.0f} | "
                     f"{rep['move_s'] * 1e3:.0f} | {rep['moved_copies']} | {rep['moved_bytes'] / 1e6:.1f} | "
                     f"{longest * 1e3:.0f} |")
    lines += ["", f"requests answered {len(load.done)}, failed {len(load.failures)}, answers not bit-identical to "
                  f"the in-process reader {load.mismatches}; server counters: failed {final.counters.failed}, "
                  f"timeouts {final.counters.timeouts}"]
    text = "\n".join(lines)
    print(text)
    if load.failures:
        print("first failures:", load.failures[:3], file=sys.stderr)
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(text + "\n")
    return 0 if not load.failures and not load.mismatches and all(r[4] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
