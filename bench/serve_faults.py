"""A model-server rank killed under load (issue 18): requests failed, time to detect, time to serve again.

    python bench/serve_faults.py [--weights PATH] [--clients 16] [--runs 3] [--out bench/results/serve_faults.md]

Per run: a server of 4 ranks, 3 active (`docassay model serve --max-ranks 4 --ranks 3`), `--clients`
closed-loop callers (each sends one document of the bundled examples, checks the answer bit for bit
against the single-process model, sends the next), then `kill -9` of one worker rank:

  active   rank 1, which holds experts and runs rows of every batch
  idle     rank 3, which holds nothing and listens only on the parent group

Figures: requests answered / failed / wrong during the run; detect = kill -> rank 0 saw it (the
`since` of the lost rank in status); serve again = kill -> the re-formed world serving (since +
`recovered_s`); the longest client latency of a request in flight at the kill or sent until the
world served again; after the loss, every document scored again and compared bit for bit; then a
scale back up to 3 active ranks (the idle survivor), and every document compared again.

Weights: `--weights`, else the shipped `infra/model/weights/moe.pt` (as bench/serve_bench.py).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.serve_bench import _reference, _weights  # noqa: E402

TOKEN = "bench-admin-token"
VICTIM = {"active": 1, "idle": 3}


class Callers:
    """Closed-loop callers; every answer compared with the single-process scores."""

    def __init__(self, url: str, docs, refs, n: int) -> None:
        from docassay.infra.serve.client import ModelClient
        self.docs, self.refs = docs, refs
        self.done: list[tuple[float, float]] = []            # (sent, answered), time.time()
        self.failures: list[str] = []
        self.wrong = 0
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(ModelClient(url, timeout_s=300), s), daemon=True)
                         for s in range(n)]
        for t in self._threads:
            t.start()

    def _run(self, client, seed: int) -> None:
        rng = random.Random(seed)
        while not self._stop.is_set():
            i = rng.randrange(len(self.docs))
            t0 = time.time()
            try:
                (got,) = client.score([self.docs[i]])
            except Exception as exc:                          # noqa: BLE001  every failure counts
                self.failures.append(f"{type(exc).__name__}: {exc}")
                continue
            self.done.append((t0, time.time()))
            if not np.array_equal(got, self.refs[i]):
                self.wrong += 1

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(300)


def _docs() -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The bundled example invoices and receipts, featurised as the pipeline featurises them (the
    documents the parsers take; e-invoice XML goes to another step)."""
    from docassay.extractors.errors import ParseError
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
            try:
                ix = DocIndex(parse(src))
            except ParseError:
                continue
            loc = detect_locale(ix)
            props = {s.name: propose(ix, s, loc) for s in specs}
            baseline.score_proposals(ix, specs, props)
            f = featurize(ix, specs, props)
            if f.proposals:
                out.append((f.ids, f.id_start, f.num))
    return out


def _workers(pid: int) -> list[int]:
    cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
    kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return sorted(int(k) for k in kids
                  if Path(f"/proc/{k}/cmdline").exists() and Path(f"/proc/{k}/cmdline").read_bytes() == cmd)


def _identical(client, docs, refs) -> bool:
    return all(np.array_equal(g, w) for g, w in zip(client.score(docs), refs))


def one_run(weights: Path, docs, refs, scenario: str, args, log: Path) -> dict:
    from docassay.infra.serve.process import ServerProcess
    srv = ServerProcess(weights, max_ranks=4, ranks=3, token=TOKEN, log=log)
    try:
        client = srv.client(timeout_s=120)
        assert _identical(client, docs, refs)
        load = Callers(srv.url, docs, refs, args.clients)
        time.sleep(args.before)
        victim = VICTIM[scenario]
        killed = time.time()
        os.kill(_workers(srv.proc.pid)[victim - 1], signal.SIGKILL)
        seen_in_status = None
        while time.time() - killed < 60:
            st = client.status()
            if victim in st.lost_ranks and st.state == "serving":
                seen_in_status = time.time() - killed
                break
            time.sleep(0.02)
        time.sleep(args.after)
        load.stop()
        st = client.status()
        (lost,) = [x for x in st.lost if x.rank == victim]
        serving_again = lost.since + lost.recovered_s
        hit = [b - a for a, b in load.done if a <= serving_again and b >= killed]
        equal_after = _identical(client, docs, refs)
        rep = client.scale(3)
        equal_scaled = _identical(client, docs, refs)
        return {"scenario": scenario, "requests": len(load.done) + len(load.failures), "failed": len(load.failures),
                "wrong": load.wrong, "failures": load.failures[:3],
                "detect_s": round(lost.since - killed, 3), "serve_again_s": round(serving_again - killed, 3),
                "recovered_s": lost.recovered_s, "status_shows_s": round(seen_in_status or -1, 3),
                "worst_latency_s": round(max(hit, default=0.0), 3), "seen_by": lost.seen_by,
                "restored_copies": lost.restored_copies, "active_after": lost.active_ranks,
                "equal_after": equal_after, "scale_to_3_s": round(rep["total_s"], 3), "equal_after_scale": equal_scaled,
                "failed_counter": st.counters.failed}
    finally:
        srv.stop()


def markdown(res: dict) -> str:
    lines = [f"`python bench/serve_faults.py {res['argv']}` — {res['when']}; weights: {res['weights']}; "
             f"{res['n_docs']} documents, {res['clients']} callers; {res['machine']}", "",
             "| rank killed | run | requests | failed | wrong | detect (s) | serving again (s) | re-form (s) | "
             "worst latency (s) | seen by | copies read again | equal after | scale to 3 (s) | equal after scale |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for i, r in enumerate(res["runs"]):
        lines.append(f"| {r['scenario']} | {i + 1} | {r['requests']} | {r['failed']} | {r['wrong']} | {r['detect_s']:.3f} | "
                     f"{r['serve_again_s']:.3f} | {r['recovered_s']:.3f} | {r['worst_latency_s']:.3f} | {r['seen_by']} | "
                     f"{r['restored_copies']} | {r['equal_after']} | {r['scale_to_3_s']:.3f} | {r['equal_after_scale']} |")
    runs = res["runs"]
    lines += ["", f"Totals: {sum(r['requests'] for r in runs)} requests, {sum(r['failed'] for r in runs)} failed, "
              f"{sum(r['wrong'] for r in runs)} wrong; serving again after a median "
              f"{statistics.median(r['serve_again_s'] for r in runs):.3f} s (max {max(r['serve_again_s'] for r in runs):.3f} s)."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--weights")
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--runs", type=int, default=3, help="runs per scenario")
    p.add_argument("--scenarios", default="active,idle")
    p.add_argument("--before", type=float, default=2.0, help="seconds of load before the kill")
    p.add_argument("--after", type=float, default=2.0, help="seconds of load after status shows the loss")
    p.add_argument("--out", type=Path, help="write the markdown table here (and the raw figures beside it as .json)")
    args = p.parse_args(argv)
    args.d_model = args.d_expert = args.experts = None
    with tempfile.TemporaryDirectory(prefix="serve-faults-") as tmp:
        tmp = Path(tmp)
        weights, wdesc = _weights(args, tmp)
        docs = _docs()
        refs = _reference(weights, docs)
        res = {"argv": " ".join(argv if argv is not None else sys.argv[1:]), "when": time.strftime("%Y-%m-%d %H:%M"),
               "weights": wdesc, "n_docs": len(docs), "clients": args.clients,
               "machine": f"{os.cpu_count()} CPU cores, shared", "runs": []}
        for scenario in args.scenarios.split(","):
            for i in range(args.runs):
                res["runs"].append(one_run(weights, docs, refs, scenario, args, tmp / f"{scenario}-{i}.log"))
                print(json.dumps(res["runs"][-1]), flush=True)
    text = markdown(res)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        args.out.with_suffix(".json").write_text(json.dumps(res, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
