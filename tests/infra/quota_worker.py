"""A process that spends one shared quota as fast as it can (tests/infra/test_quota_concurrency.py).

    python quota_worker.py DSN START_AT SEED THREADS

Each thread reserves a random cost, holds it a moment, settles the same count, and stops at its
first refusal. Prints one JSON line: the tokens this process was granted and its refusals.
"""
from __future__ import annotations

import json
import random
import sys
import threading
import time

from docassay.infra.config import Settings
from docassay.infra.db import Database
from docassay.infra.quota import QuotaBudget, subjects_for

LIMITS = dict(quota_project="shared", quota_user="worker", quota_project_input_tokens=20_000,
              quota_project_output_tokens=4_000, quota_user_input_tokens=1_000_000, quota_user_output_tokens=100_000)
MAX_COST = 500


def main(dsn: str, start_at: float, seed: int, threads: int) -> None:
    settings = Settings.load(db=dsn, **LIMITS)
    budget = QuotaBudget(Database(dsn), settings, subjects_for(settings))
    budget.usages()                                   # connect and migrate before the start signal
    granted = {"input": 0, "output": 0, "calls": 0, "refused_at": []}
    lock = threading.Lock()

    def spend(k: int) -> None:
        rng = random.Random(seed * 100 + k)
        while True:
            cost_in, cost_out = rng.randint(50, MAX_COST), rng.randint(5, MAX_COST // 5)
            r = budget.reserve(cost_in, cost_out)
            if r is None:
                with lock:
                    granted["refused_at"].append([cost_in, cost_out])
                return
            time.sleep(rng.random() * 0.002)
            r.settle(cost_in, cost_out)
            with lock:
                granted["input"] += cost_in
                granted["output"] += cost_out
                granted["calls"] += 1

    time.sleep(max(0.0, start_at - time.time()))
    workers = [threading.Thread(target=spend, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    budget.close()
    print(json.dumps(granted))


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
