"""What each way of orchestrating `docassay extract` costs a one-document run, whole process.

    python -m bench.orchestrators [--rounds 3] [--port 4327]

Interleaved rounds of the same one-document `extract` (a known format, so no model), each a
fresh process:
  local              --orchestrator local: a thread pool, no Prefect import, no server
  prefect ephemeral  --orchestrator prefect, no PREFECT_API_URL: Prefect starts its temporary server
  prefect server     --orchestrator prefect with PREFECT_API_URL of a `prefect server start` this
                     benchmark started once before the rounds (what "keep one server" costs per run)
Also the server's own start time (until its health endpoint answers). Medians of wall seconds.
Everything this benchmark starts (the Prefect server, the embedded PostgreSQL) is stopped at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Sequence

from bench.tables import md_table
from bench.whole_process import ROOT, SCHEMA, _stop_embedded, timed

DOC = sorted((ROOT / "examples/invoices/documents").glob("*.pdf"))[0]


def _wait_healthy(url: str, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as r:
                if r.status == 200:
                    return True
        except OSError:
            time.sleep(0.2)
    return False


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--port", type=int, default=4327)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="docassay-orch-"))
    home, docs = work / "home", work / "docs"
    docs.mkdir()
    shutil.copy(DOC, docs / DOC.name)
    base = {**os.environ, "PYTHONPATH": str(ROOT), "PREFECT_HOME": str(work / "prefect")}
    base.pop("PREFECT_API_URL", None)
    api = f"http://127.0.0.1:{args.port}/api"
    cmd = [sys.executable, "-m", "docassay.flows.cli", "extract", str(docs), "--schema", str(SCHEMA), "--home", str(home),
           "--generator", "baseline", "--quiet"]
    prefect_bin = Path(sys.executable).parent / "prefect"
    server = None
    walls: dict[str, list[float]] = {}
    try:
        timed("learn", [*cmd, "--out", str(work / "learn"), "--orchestrator", "local"], 1, env=base)
        t0 = time.perf_counter()
        server = subprocess.Popen([str(prefect_bin), "server", "start", "--host", "127.0.0.1", "--port", str(args.port)],
                                  env=base, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        healthy = _wait_healthy(api, 180)
        walls["prefect server start (once)"] = [time.perf_counter() - t0] if healthy else []
        for _ in range(args.rounds):
            for name, extra, env in (("local", ["--orchestrator", "local"], base),
                                     ("prefect ephemeral", ["--orchestrator", "prefect"], base),
                                     ("prefect server", ["--orchestrator", "prefect"], {**base, "PREFECT_API_URL": api})):
                if name == "prefect server" and not healthy:
                    continue
                r = timed(name, [*cmd, "--out", str(work / "o"), *extra], 1, env=env)
                walls.setdefault(name, []).append(r.wall_s if r.rc == 0 else float("nan"))
    finally:
        if server is not None:
            os.killpg(server.pid, 15)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, 9)
        _stop_embedded(home, base)
    report = {k: {"median_s": statistics.median(v) if v else None, "runs_s": [round(x, 2) for x in v]}
              for k, v in walls.items()}
    print(md_table(["run", "median wall s", "runs"],
                   [[k, "-" if v["median_s"] is None else f"{v['median_s']:.2f}", ", ".join(map(str, v["runs_s"]))]
                    for k, v in report.items()]))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
