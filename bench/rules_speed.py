"""The rules gate alone: milliseconds per record for a rule pack run as one statement (the
default) and rule by rule (one READ ONLY transaction per rule, the earlier way).

    python -m bench.rules_speed [--records 50] [--home /tmp/rules-bench-home]

The example invoice schema and rule pack, each dev invoice's ground truth as the record, on the
embedded PostgreSQL under --home (stopped at the end when this run started it).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

from bench.whole_process import DEFAULT_DATA, RULES, SCHEMA


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--records", type=int, default=50)
    ap.add_argument("--home", type=Path)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = ap.parse_args(argv)
    from docassay.infra.config import Settings
    from docassay.infra.db import connect, embedded
    from docassay.rules import load_rules, relation_schema, run_rules, runner

    home = args.home or Path(tempfile.mkdtemp(prefix="docassay-rules-bench-"))
    schema = json.loads(SCHEMA.read_text())
    rules = load_rules(RULES)
    records = [json.loads(p.read_text()) for p in sorted((args.data / "invoices").glob("*.json"))][:args.records]
    server = embedded.ensure_running(home)
    together = runner._run_together
    try:
        with connect(Settings.load(home=home)) as conn:
            conn.autocommit = True
            rs = relation_schema(schema)
            out = {}
            for mode in ("one statement", "rule by rule", "one statement ", "rule by rule "):
                runner._run_together = together if mode.startswith("one") else (lambda *a, **k: None)
                run_rules(conn, rs, records[0], rules, timeout_ms=2000)
                ms = []
                for rec in records:
                    t = time.perf_counter()
                    run_rules(conn, rs, rec, rules, timeout_ms=2000)
                    ms.append((time.perf_counter() - t) * 1000)
                out.setdefault(mode.strip(), []).append(statistics.median(ms))
    finally:
        runner._run_together = together
        if server.started:
            embedded.stop(server.data_dir)
    for mode, v in out.items():
        print(f"{mode}: {len(rules)} rules, median {statistics.median(v):.1f} ms per record "
              f"(two interleaved passes over {len(records)} records: {', '.join(f'{x:.1f}' for x in v)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
