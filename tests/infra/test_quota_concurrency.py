"""Several processes spend one quota at once against one real PostgreSQL: nothing is overspent."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from docassay.infra.config import Settings
from docassay.infra.db import Database
from docassay.infra.quota import Subject, usage

WORKER = Path(__file__).with_name("quota_worker.py")


def test_concurrent_processes_never_overspend(pg_fresh_dsn: str) -> None:
    sys.path.insert(0, str(WORKER.parent))
    from quota_worker import LIMITS, MAX_COST
    sys.path.pop(0)
    Database(pg_fresh_dsn).connect().close()          # migrate once, before the workers race
    start_at = time.time() + 3.0
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(WORKER.parents[2]), os.environ.get("PYTHONPATH", "")])}
    procs = [subprocess.Popen([sys.executable, str(WORKER), pg_fresh_dsn, str(start_at), str(seed), "3"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for seed in (1, 2, 3)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err[-2000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    settings = Settings.load(db=pg_fresh_dsn, **LIMITS)
    with Database(pg_fresh_dsn).connect() as conn:
        u = usage(conn, settings, Subject("project", "shared"))
        open_reservations = conn.execute("SELECT count(*) FROM quota_reservations").fetchone()[0]
    granted_in = sum(r["input"] for r in results)
    granted_out = sum(r["output"] for r in results)
    overspend = max(0, u.used_input - u.limit.input_tokens) + max(0, u.used_output - u.limit.output_tokens)
    print(f"\nquota concurrency: 3 processes x 3 threads, {sum(r['calls'] for r in results)} calls, "
          f"used {u.used_input}/{u.limit.input_tokens} input, {u.used_output}/{u.limit.output_tokens} output, "
          f"overspend {overspend}")
    assert overspend == 0
    assert (u.used_input, u.used_output) == (granted_in, granted_out), "every granted token is accounted once"
    assert (u.reserved_input, u.reserved_output, open_reservations) == (0, 0, 0)
    assert u.calls == sum(r["calls"] for r in results)
    assert all(len(r["refused_at"]) == 3 for r in results), "every thread ends at a refusal"
    # No thread was refused while its call still fitted: what is left is less than a refused cost.
    assert u.remaining_input < MAX_COST or u.remaining_output < MAX_COST // 5
    assert u.refused == 9
