"""What every benchmark command shares: its options, the session it opens, where its JSON goes,
and a description of the machine it ran on."""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

from bench.datasets import DEFAULT_DATA, SETS, SynthSize
from bench.session import Session, SessionConfig

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


def _sets(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",") if s.strip()]
    bad = [n for n in names if n not in SETS]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown set(s) {', '.join(bad)}; choose from {', '.join(SETS)}")
    return names


def add_common(ap: argparse.ArgumentParser, *, default_sets: Sequence[str]) -> None:
    ap.add_argument("--sets", type=_sets, default=list(default_sets),
                    help=f"comma-separated, from: {', '.join(SETS)} (default: {','.join(default_sets)})")
    ap.add_argument("--formats", type=int, default=10, help="synthetic sets: formats (default 10)")
    ap.add_argument("--docs", type=int, default=3, help="synthetic sets: documents per format (default 3)")
    ap.add_argument("--seed", type=int, default=0, help="synthetic sets: seed of the format draw (default 0)")
    ap.add_argument("--limit", type=int, help="first N documents of each set")
    ap.add_argument("--images", action="store_true", help="dev receipts: read the scans (OCR) where present")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="dev data folder (default ../shared/data)")
    ap.add_argument("--db", help="PostgreSQL DSN (default: an embedded server for this run, removed after)")
    ap.add_argument("--in-process", action="store_true",
                    help="run passes in this process (faster start; peak memory then mixes passes)")
    ap.add_argument("--out", type=Path, help="JSON report (default bench/results/<command>.json)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder (documents, homes, rows)")


def session_from(args: argparse.Namespace) -> Session:
    return Session(SessionConfig(data=args.data, db=args.db, synth=SynthSize(args.formats, args.docs, args.seed),
                                 limit=args.limit, images=args.images, isolate=not args.in_process, keep=args.keep))


def machine() -> dict:
    """The machine, as BENCHMARKS.md states it."""
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip() or None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
        if commit and dirty:
            commit += f" + uncommitted changes in {len(dirty.splitlines())} tracked files"
    except OSError:
        commit = None
    return {"nproc": os.cpu_count(), "cpu": cpu, "memory_gib": mem, "python": platform.python_version(),
            "platform": platform.platform(), "commit": commit, "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}


def print_and_save(args: argparse.Namespace, command: str, text: str, payload: dict) -> Path:
    """Print the tables; write the JSON report (with the machine and the options)."""
    print(text)
    return save(args, command, payload)


def save(args: argparse.Namespace, command: str, payload: dict) -> Path:
    """Write the JSON report (with the machine and the options) to --out or bench/results/<command>.json."""
    out = args.out or RESULTS / f"{command}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = dict(payload)
    doc = {"command": "python -m bench." + command, "machine": payload.pop("machine", None) or machine(),
           "options": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}, **payload}
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False, default=str) + "\n", "utf-8")
    print(f"\n(JSON: {out})", file=sys.stderr)
    return out
