"""What the rule sandbox costs: run the example invoice rule pack on one record, sandboxed and not.

    python -m bench.rule_sandbox_cost [--dsn DSN] [--runs 200]

Without --dsn an embedded server is started in a temporary folder (and stopped). Prints the median
wall time of one `run_rules` call over the whole pack (every rule in its own transaction) with
`sandbox=True` (SET LOCAL ROLE docassay_rule, search_path, work_mem, temp_file_limit) and `False`.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import psycopg

from docassay.infra.db import embedded
from docassay.rules import load_rules, run_rules

ROOT = Path(__file__).resolve().parents[1]
RECORD = {"invoice_number": "471102", "issue_date": "2024-03-01", "net_total": 100.0, "tax_total": 19.0,
          "gross_total": 119.0, "currency": "EUR",
          "line_items": [{"description": "a", "quantity": 2, "unit_price": 30.0, "line_total": 60.0},
                         {"description": "b", "quantity": 1, "unit_price": 40.0, "line_total": 40.0}]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsn")
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args(argv)
    import json
    schema = json.loads((ROOT / "examples/invoices/schema.json").read_text())
    rules = load_rules(ROOT / "examples/invoices/rules")
    tmp = None
    dsn = args.dsn
    if dsn is None:
        tmp = Path(tempfile.mkdtemp(prefix="docassay-rulecost-", dir="/tmp"))
        dsn = embedded.ensure_running(data_dir=tmp / "pg").dsn
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            for sandbox in (False, True):
                run_rules(conn, schema, RECORD, rules, timeout_ms=2000, sandbox=sandbox)     # warm (and set up)
                times = []
                for _ in range(args.runs):
                    t0 = time.perf_counter()
                    run_rules(conn, schema, RECORD, rules, timeout_ms=2000, sandbox=sandbox)
                    times.append((time.perf_counter() - t0) * 1e3)
                print(f"sandbox={sandbox}: {len(rules)} rules, median {statistics.median(times):.2f} ms per record "
                      f"(p90 {sorted(times)[int(0.9 * len(times))]:.2f} ms, {args.runs} runs)")
    finally:
        if tmp is not None:
            embedded.stop(tmp / "pg")
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
