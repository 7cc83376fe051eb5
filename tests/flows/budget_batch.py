"""One batch in its own process, built exactly as `docassay extract --generator model` builds it
(flows.jobs.build_job, with the metered stand-in of budget_support), run through the plain
`run_batch` path (no Prefect server to start), for tests/flows/test_budget_concurrency.py:

    python budget_batch.py START_AT FOLDER OUT HOME DSN PROJECT USER
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from budget_support import install  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def main(start_at: float, folder: str, out: str, home: str, dsn: str, project: str, user: str) -> int:
    install()
    from docassay.flows.batch import collect_sources, ground_truth_sidecar, run_batch
    from docassay.flows.context import open_context
    from docassay.flows.jobs import JobOptions, build_job
    from docassay.flows.results import ResultsWriter

    job = build_job(JobOptions(schema=ROOT / "examples/invoices/schema.json", rules=ROOT / "examples/invoices/rules",
                               home=home, db=dsn, generator="model", project=project, user=user))
    job.budget.check()
    sources = collect_sources([folder], skip=ground_truth_sidecar)
    writer = ResultsWriter(Path(out) / "results.jsonl")
    with open_context(job.settings) as ctx:
        ctx.conn  # noqa: B018                          # connected and migrated before the start signal
        time.sleep(max(0.0, start_at - time.time()))
        run_batch(sources, job, ctx, writer=writer)
    writer.close()
    job.budget.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(float(sys.argv[1]), *sys.argv[2:8]))
