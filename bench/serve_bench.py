"""Model server figures: reconfiguration vs cold restart, client downtime, throughput and memory per rank.

    python bench/serve_bench.py [--weights PATH] [--clients 4] [--seconds 8] [--out bench/results/serve.md]
    python bench/serve_bench.py --d-model 128 --d-expert 2048 --experts 16 --parts memory   # bigger experts

Weights: `--weights`, else the shipped `infra/model/weights/moe.pt`, else a freshly initialised ranker
of the shipped configuration (or of `--d-model/--d-expert/--experts`). Documents: the bundled example
invoices and receipts, featurised as the pipeline featurises them (one token per proposal).

Parts (all by default):
  throughput  tokens/s with `--clients` concurrent callers for `--seconds` at 1, 2, 4 active ranks,
              and memory per rank (RSS, expert bytes) at each size
  scale       1 -> 2 -> 4 -> 2 -> 1 under that steady load: each reconfiguration's pause / plan / moves /
              switch, the longest client latency during it, failed requests; after every scale, every
              document is scored again and compared bit for bit with the single-process model
  restart     a cold restart at each new size (stop the server, start `docassay model serve` again,
              until it answers), the baseline for the reconfiguration times
  memory      expert bytes and RSS given back by ranks that go idle
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
M = 4
SEQUENCE = (2, 4, 2, 1)
TOKEN = "bench-admin-token"


@dataclass
class Load:
    """Closed-loop callers: each sends one document, waits for the answer, sends the next."""
    url: str
    docs: list
    clients: int
    stop: threading.Event = field(default_factory=threading.Event)
    done: list = field(default_factory=list)          # (t0, t1, tokens)
    failures: list = field(default_factory=list)
    threads: list = field(default_factory=list)

    def start(self) -> "Load":
        from docassay.infra.serve.client import ModelClient
        from docassay.infra.serve.errors import ServeError

        def run(seed: int) -> None:
            rng = random.Random(seed)
            c = ModelClient(self.url, timeout_s=300)
            while not self.stop.is_set():
                d = self.docs[rng.randrange(len(self.docs))]
                t0 = time.perf_counter()
                try:
                    c.score([d])
                except ServeError as exc:
                    self.failures.append(f"{type(exc).__name__}: {exc}")
                    continue
                self.done.append((t0, time.perf_counter(), int(d[2].shape[0])))
        self.threads = [threading.Thread(target=run, args=(s,), daemon=True) for s in range(self.clients)]
        for t in self.threads:
            t.start()
        return self

    def finish(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(300)


def _docs() -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    from docassay.extractors.instructions import baseline
    from docassay.extractors.instructions.generator import detect_locale, schema_fields
    from docassay.extractors.instructions.model_features import featurize
    from docassay.extractors.instructions.proposals import propose
    from docassay.extractors.parsers import parse
    from docassay.extractors.spans import DocIndex
    from docassay.flows.batch import collect_sources, ground_truth_sidecar

    out = []
    for kind in ("invoices", "receipts"):
        schema = json.loads((ROOT / "examples" / kind / "schema.json").read_text())
        specs, _ = schema_fields(schema)
        for src in collect_sources([str(ROOT / "examples" / kind / "documents")], skip=ground_truth_sidecar):
            if src.endswith(".xml"):                # a bare e-invoice: read from its XML, never by the model
                continue
            ix = DocIndex(parse(src))
            loc = detect_locale(ix)
            props = {s.name: propose(ix, s, loc) for s in specs}
            baseline.score_proposals(ix, specs, props)
            f = featurize(ix, specs, props)
            if f.proposals:
                out.append((f.ids, f.id_start, f.num))
    return out


def _weights(args: argparse.Namespace, tmp: Path) -> tuple[Path, str]:
    from docassay.extractors.instructions.model_features import FEATURE_VERSION, N_BUCKETS, N_NUMERIC
    from docassay.extractors.instructions.model_scorer import DEFAULT_WEIGHTS
    from docassay.infra.model.checkpoint import save
    from docassay.infra.model.moe import MoEConfig, ProposalRanker

    if args.weights:
        return Path(args.weights), f"{args.weights}"
    custom = args.d_model or args.d_expert or args.experts
    if DEFAULT_WEIGHTS.is_file() and not custom:
        return DEFAULT_WEIGHTS, "shipped weights"
    torch.manual_seed(0)
    kw = {k: v for k, v in (("d_model", args.d_model), ("d_expert", args.d_expert), ("n_experts", args.experts)) if v}
    cfg = MoEConfig(n_buckets=N_BUCKETS, n_numeric=N_NUMERIC, **kw)
    path = save(tmp / "bench.pt", ProposalRanker(cfg), {"feature_version": FEATURE_VERSION})
    return path, f"freshly initialised (d_model {cfg.d_model}, d_expert {cfg.d_expert}, {cfg.n_experts} experts, {cfg.n_layer} layers)"


@torch.no_grad()
def _reference(weights: Path, docs) -> list[np.ndarray]:
    from docassay.infra.model.checkpoint import load
    model, _ = load(weights)
    torch.set_num_threads(1)
    out = []
    for ids, start, num in docs:
        logits = model(torch.from_numpy(ids), torch.from_numpy(start[:-1]), torch.from_numpy(num),
                       torch.zeros(num.shape[0], dtype=torch.long)).logits
        out.append(torch.sigmoid(logits).numpy())
    return out


def _identical(client, docs, refs) -> tuple[int, float]:
    got = client.score(docs)
    diff = max(float(np.abs(g - r).max()) if g.size else 0.0 for g, r in zip(got, refs))
    return sum(not np.array_equal(g, r) for g, r in zip(got, refs)), diff


def _memory(client) -> list[dict]:
    return [{"rank": m["rank"], "rss_mib": round(m["rss_bytes"] / 2**20, 1), "expert_kib": round(m["expert_bytes"] / 2**10, 1),
             "copies": m["copies"]} for m in client.status(refresh=True).memory]


def throughput(srv, docs, args) -> list[dict]:
    admin = srv.client(timeout_s=300)
    rows = []
    for k in (1, 2, 4):
        if admin.status().active_ranks != k:
            admin.scale(k)
        load = Load(srv.url, docs, args.clients).start()
        time.sleep(1.0)                                   # warm-up, not counted
        n0 = len(load.done)
        t0 = time.perf_counter()
        time.sleep(args.seconds)
        t1 = time.perf_counter()
        window = load.done[n0:]
        load.finish()
        tokens = sum(n for a, b, n in window if b <= t1)
        lat = [b - a for a, b, _ in window]
        rows.append({"active": k, "tokens_per_s": round(tokens / (t1 - t0)), "docs_per_s": round(len(window) / (t1 - t0), 1),
                     "p50_ms": round(statistics.median(lat) * 1e3, 1) if lat else None,
                     "failed": len(load.failures), "memory": _memory(admin)})
        print(f"throughput at {k}: {rows[-1]['tokens_per_s']} tokens/s", file=sys.stderr, flush=True)
    return rows


def scale_sequence(srv, docs, refs, args) -> dict:
    admin = srv.client(timeout_s=300)
    if admin.status().active_ranks != 1:
        admin.scale(1)
    mismatches, max_diff = _identical(admin, docs, refs)
    checks = [{"after": "start (1)", "mismatched_docs": mismatches, "max_abs_diff": max_diff}]
    load = Load(srv.url, docs, args.clients).start()
    time.sleep(2.0)
    steady_from = time.perf_counter()
    windows, reports = [], []
    for k in SEQUENCE:
        time.sleep(args.between)
        a = time.perf_counter()
        reports.append(admin.scale(k))
        windows.append((a, time.perf_counter()))
        mismatches, max_diff = _identical(admin, docs, refs)
        checks.append({"after": f"{reports[-1]['from_ranks']}->{k}", "mismatched_docs": mismatches, "max_abs_diff": max_diff})
    time.sleep(args.between)
    load.finish()
    steady = [b - a for a, b, _ in load.done if a >= steady_from and not any(a < w1 and b > w0 for w0, w1 in windows)]
    rows = []
    for rep, (w0, w1) in zip(reports, windows):
        during = [b - a for a, b, _ in load.done if a < w1 and b > w0]
        rows.append({"from": rep["from_ranks"], "to": rep["to_ranks"],
                     **{k: round(rep[k] * 1e3, 2) for k in ("pause_s", "plan_s", "move_s", "switch_s", "total_s")},
                     "moved_copies": rep["moved_copies"], "moved_kib": round(rep["moved_bytes"] / 2**10, 1),
                     "released": {r: round(b / 2**10, 1) for r, b in rep["released_bytes"].items()},
                     "rss_returned_mib": {m["rank"]: round((m["rss_before"] - m["rss_bytes"]) / 2**20, 2)
                                          for m in rep["memory"] if m["rank"] >= rep["to_ranks"] and m["expert_bytes_before"]},
                     "requests_overlapping": len(during),
                     "max_latency_during_ms": round(max(during) * 1e3, 1) if during else None})
    return {"reconfigurations": rows, "checks": checks, "requests": len(load.done), "failed": len(load.failures),
            "failures": load.failures[:5], "steady_p50_ms": round(statistics.median(steady) * 1e3, 1) if steady else None,
            "steady_max_ms": round(max(steady) * 1e3, 1) if steady else None}


def restarts(weights: Path, log_dir: Path, srv) -> tuple[list[dict], object]:
    from docassay.infra.serve.process import ServerProcess
    rows = []
    current = srv
    for k in SEQUENCE:
        t0 = time.perf_counter()
        current.stop()
        t_stop = time.perf_counter() - t0
        current = ServerProcess(weights, max_ranks=M, ranks=k, token=TOKEN, log=log_dir / f"restart-{k}.log")
        current.client().wait_ready()
        total = time.perf_counter() - t0
        rows.append({"to": k, "stop_s": round(t_stop, 2), "start_to_ready_s": round(current.ready_s, 2),
                     "server_startup_s": current.ready["startup_s"], "restart_s": round(total, 2)})
        print(f"cold restart at {k}: {total:.1f} s", file=sys.stderr, flush=True)
    return rows, current


def memory_part(srv) -> list[dict]:
    admin = srv.client(timeout_s=300)
    rows = []
    for k in (4, 2, 1):
        if admin.status().active_ranks == k:
            continue
        rep = admin.scale(k)
        for m in rep["memory"]:
            if m["expert_bytes_before"] > m["expert_bytes"]:
                rows.append({"scale": f"{rep['from_ranks']}->{k}", "rank": m["rank"], "idle": m["rank"] >= k,
                             "expert_kib_before": round(m["expert_bytes_before"] / 2**10, 1),
                             "expert_kib_after": round(m["expert_bytes"] / 2**10, 1),
                             "rss_mib_before": round(m["rss_before"] / 2**20, 1), "rss_mib_after": round(m["rss_bytes"] / 2**20, 1)})
    return rows


def markdown(res: dict) -> str:
    out = ["# Model server (elastic expert parallelism)\n",
           f"`python bench/serve_bench.py {res['argv']}` — {res['when']}; weights: {res['weights']}; "
           f"{res['n_docs']} example documents ({res['tokens_per_doc']} proposal tokens each on average); "
           f"M = {M} ranks, gloo on CPU, 1 torch thread per rank, {res['clients']} concurrent clients; "
           f"machine: {res['machine']}.\n"]
    if "scale" in res:
        s = res["scale"]
        out += ["## Reconfiguration under load (ms)\n",
                "| scale | pause | plan | moves | switch | total | copies moved | KiB moved | longest client latency during it (ms) | cold restart at new size (s) | restart / reconfiguration |",
                "|---|---|---|---|---|---|---|---|---|---|---|"]
        for i, r in enumerate(s["reconfigurations"]):
            rs = res.get("restart", [None] * 4)[i] if res.get("restart") else None
            ratio = f"{rs['restart_s'] * 1e3 / r['total_s']:.0f}x" if rs else "-"
            out.append(f"| {r['from']}→{r['to']} | {r['pause_s']} | {r['plan_s']} | {r['move_s']} | {r['switch_s']} | "
                       f"{r['total_s']} | {r['moved_copies']} | {r['moved_kib']} | {r['max_latency_during_ms']} "
                       f"({r['requests_overlapping']} requests) | {rs['restart_s'] if rs else '-'} | {ratio} |")
        out += ["", f"Requests during the whole sequence: {s['requests']}, failed: **{s['failed']}**. "
                    f"Steady-state latency outside scales: median {s['steady_p50_ms']} ms, max {s['steady_max_ms']} ms.", "",
                "Outputs after every scale, all documents, against the single-process model (1 thread):", "",
                "| after | documents not bit-identical | max abs difference |", "|---|---|---|"]
        out += [f"| {c['after']} | {c['mismatched_docs']} | {c['max_abs_diff']:.3g} |" for c in s["checks"]]
    if res.get("restart"):
        out += ["", "## Cold restart (stop the server, start `docassay model serve --max-ranks 4 --ranks K`, until it answers)", "",
                "| to | stop (s) | start to ready (s) | of which world + weights + placement (s) | restart total (s) |", "|---|---|---|---|---|"]
        out += [f"| {r['to']} | {r['stop_s']} | {r['start_to_ready_s']} | {r['server_startup_s']} | {r['restart_s']} |" for r in res["restart"]]
    if res.get("throughput"):
        out += ["", "## Throughput and memory per rank", "",
                "| active ranks | tokens/s | documents/s | median latency (ms) | failed | memory per rank: RSS MiB / expert KiB (copies) |",
                "|---|---|---|---|---|---|"]
        for r in res["throughput"]:
            mem = "; ".join(f"r{m['rank']} {m['rss_mib']} / {m['expert_kib']} ({m['copies']})" for m in r["memory"])
            out.append(f"| {r['active']} | {r['tokens_per_s']} | {r['docs_per_s']} | {r['p50_ms']} | {r['failed']} | {mem} |")
    if res.get("memory"):
        out += ["", "## Memory given back by ranks that drop experts", "",
                "| scale | rank | goes idle | expert KiB before → after | RSS MiB before → after |", "|---|---|---|---|---|"]
        out += [f"| {r['scale']} | {r['rank']} | {'yes' if r['idle'] else 'no'} | {r['expert_kib_before']} → {r['expert_kib_after']} | "
                f"{r['rss_mib_before']} → {r['rss_mib_after']} |" for r in res["memory"]]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--weights")
    p.add_argument("--d-model", type=int)
    p.add_argument("--d-expert", type=int)
    p.add_argument("--experts", type=int)
    p.add_argument("--clients", type=int, default=4)
    p.add_argument("--seconds", type=float, default=8.0, help="measured seconds per throughput point")
    p.add_argument("--between", type=float, default=1.5, help="seconds of steady load between scales")
    p.add_argument("--parts", default="throughput,scale,restart,memory")
    p.add_argument("--out", type=Path, help="write the markdown table here (and the raw figures beside it as .json)")
    p.add_argument("--append", action="store_true", help="append to --out instead of replacing it")
    p.add_argument("--label", default="", help="a heading for this run (and the suffix of its .json)")
    args = p.parse_args(argv)
    parts = set(args.parts.split(","))
    from docassay.infra.serve.process import ServerProcess

    with tempfile.TemporaryDirectory(prefix="serve-bench-") as tmp:
        tmp = Path(tmp)
        weights, wdesc = _weights(args, tmp)
        docs = _docs()
        refs = _reference(weights, docs)
        res = {"argv": " ".join(argv if argv is not None else sys.argv[1:]), "when": time.strftime("%Y-%m-%d %H:%M"),
               "weights": wdesc, "n_docs": len(docs), "tokens_per_doc": round(sum(d[2].shape[0] for d in docs) / len(docs)),
               "clients": args.clients, "machine": f"{os.cpu_count()} CPU cores, shared"}
        srv = ServerProcess(weights, max_ranks=M, ranks=1, token=TOKEN, log=tmp / "server.log")
        try:
            if "throughput" in parts:
                res["throughput"] = throughput(srv, docs, args)
            if "scale" in parts:
                res["scale"] = scale_sequence(srv, docs, refs, args)
            if "memory" in parts:
                res["memory"] = memory_part(srv)
            if "restart" in parts:
                res["restart"], srv = restarts(weights, tmp, srv)
        finally:
            srv.stop()
    text = markdown(res)
    if args.label:
        text = text.replace("# Model server (elastic expert parallelism)\n", f"# Model server: {args.label}\n", 1)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "a" if args.append else "w") as fh:
            fh.write(("\n" if args.append else "") + text)
        stem = args.out.stem + (f"-{args.label.split()[0].lower()}" if args.label else "")
        args.out.with_name(stem + ".json").write_text(json.dumps(res, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
