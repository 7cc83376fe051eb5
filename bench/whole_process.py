"""Whole CLI processes, start-up included, as a user runs them: docassay against invoice2data and
against the parse-only floor, on the same PDFs, in interleaved rounds; figures are medians.

    bash bench/setup_invoice2data.sh                   # once: invoice2data in bench/.venv-i2d
    python -m bench.whole_process [--data ../shared/data, or $DOCASSAY_DEV_DATA] [--rounds 3] [--generator model] [--out FILE]

Once, in a fresh home: `docassay extract` over every PDF (the first run: new formats learned;
its wall time and the per-document latency of the rows that matched `new` are the new path),
then a second run over every PDF (the one a user makes next). The documents that second run
matched as `known` run once more together (failed replays included: troubleshooter, re-learning);
those whose replay verified (`passed`) are the known-path set. Then `--rounds` rounds, each
running once, in this order, each a fresh process:
  docassay known     `docassay extract` of the known-path set on that library
  invoice2data       `invoice2data --input-reader pdftotext` on the same files (one process)
  parse floor        docassay's PDF parser alone over the same files (one process)
  pdftotext          `pdftotext -layout`, one process per file
  one document       `docassay extract` of one known document
  usage error        `docassay extract` of a missing input (exit 2)
  help               `docassay --help`
Per run: wall seconds, documents per second (documents / wall), the process's peak RSS (the
embedded PostgreSQL server runs in its own processes and is not counted). For docassay runs
also p50/p95 of the rows' `timings_ms.total` and the median per stage. The known path must
reach 2x invoice2data's documents per second (`ratio` in the output).
The embedded PostgreSQL server this benchmark started is stopped at the end.
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from bench.tables import md_table

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = Path(os.environ.get("DOCASSAY_DEV_DATA")
                    or next((p for p in (ROOT.parent / "shared" / "data", ROOT.parent.parent / "shared" / "data")
                             if p.is_dir()), ROOT.parent / "shared" / "data"))
"""The dev data: $DOCASSAY_DEV_DATA, else `../shared/data` from a checkout (or from a worktree one level deeper)."""
SCHEMA = ROOT / "examples" / "invoices" / "schema.json"
RULES = ROOT / "examples" / "invoices" / "rules"
I2D_BIN = ROOT / "bench" / ".venv-i2d" / "bin" / "invoice2data"
PARSE_FLOOR = """
import sys, json
from docassay.extractors.parsers import parse
from docassay.infra.config import Settings
s = Settings.load()
files = json.load(open(sys.argv[1]))
for f in files:
    parse(f, open(f, "rb").read(), settings=s)
"""


@dataclass
class Run:
    name: str
    wall_s: float
    rc: int
    peak_rss_mb: float
    documents: int

    @property
    def docs_per_s(self) -> float | None:
        return self.documents / self.wall_s if self.wall_s > 0 and self.documents else None


@dataclass
class Figures:
    name: str
    documents: int
    walls: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)
    rcs: list[int] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    stages_ms: dict[str, list[float]] = field(default_factory=dict)

    def add(self, run: Run, rows: list[dict] | None = None) -> None:
        self.walls.append(run.wall_s)
        self.rss.append(run.peak_rss_mb)
        self.rcs.append(run.rc)
        for r in rows or []:
            t = r.get("timings_ms") or {}
            if "total" in t:
                self.latencies_ms.append(t["total"])
            for k, v in t.items():
                if k != "total":
                    self.stages_ms.setdefault(k, []).append(v)

    def to_json(self) -> dict:
        wall = statistics.median(self.walls) if self.walls else None
        return {"name": self.name, "documents": self.documents, "runs": len(self.walls),
                "wall_s_median": wall, "walls_s": [round(w, 3) for w in self.walls],
                "docs_per_s": (self.documents / wall) if wall and self.documents else None,
                "p50_ms": _pct(self.latencies_ms, 50), "p95_ms": _pct(self.latencies_ms, 95),
                "stage_median_ms": {k: round(statistics.median(v), 2) for k, v in self.stages_ms.items()},
                "stage_share": _shares(self.stages_ms),
                "peak_rss_mb": max(self.rss) if self.rss else None, "exit_statuses": sorted(set(self.rcs))}


def _pct(xs: Sequence[float], q: float) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    k = max(0, min(len(s) - 1, int(round(q / 100 * (len(s) - 1)))))
    return round(s[k], 2)


def _shares(stages: dict[str, list[float]]) -> dict[str, float]:
    sums = {k: sum(v) for k, v in stages.items()}
    total = sum(sums.values()) or 1.0
    return {k: round(v / total, 3) for k, v in sorted(sums.items(), key=lambda kv: -kv[1])}


def timed(name: str, argv: Sequence[str], documents: int, *, env: dict | None = None) -> Run:
    """Run `argv` as a child process; wall time and its peak RSS (wait4 rusage)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    err = b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if proc.stderr is not None:
        err = proc.stderr.read()
        proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 2) and err:
        print(f"[{name}] exit {proc.returncode}: {err.decode(errors='replace')[-800:]}", file=sys.stderr)
    return Run(name, wall, proc.returncode, usage.ru_maxrss / 1024, documents)


def timed_many(name: str, argvs: Sequence[Sequence[str]], documents: int) -> Run:
    """One process per argv, one after another (pdftotext per file): summed wall, max RSS."""
    wall, rss, rc = 0.0, 0.0, 0
    for argv in argvs:
        r = timed(name, argv, 1)
        wall, rss, rc = wall + r.wall_s, max(rss, r.peak_rss_mb), rc or r.rc
    return Run(name, wall, rc, rss, documents)


def rows_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--generator", default="model", choices=("model", "baseline"))
    ap.add_argument("--limit", type=int, default=0, help="first N PDFs only (0: all)")
    ap.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = ap.parse_args(argv)
    py = sys.executable
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PREFECT_API_URL", None)
    pdfs = sorted(str(p) for p in (args.data / "invoices").glob("*.pdf"))
    if args.limit:
        pdfs = pdfs[:args.limit]
    work = Path(tempfile.mkdtemp(prefix="docassay-whole-"))
    home = work / "home"
    docs = work / "docs"
    docs.mkdir()
    for p in pdfs:                 # copies: the CLI reads folders, not lists, and refuses symbolic links
        shutil.copyfile(p, docs / Path(p).name)
    cli = [py, "-m", "docassay.flows.cli"]
    extract = [*cli, "extract", "--schema", str(SCHEMA), "--rules", str(RULES), "--home", str(home),
               "--generator", args.generator, "--quiet", "--overwrite"]   # rounds reuse their --out folders
    results: dict[str, Figures] = {}
    try:
        first = timed("first run", [*extract, str(docs), "--out", str(work / "first")], len(pdfs), env=env)
        first_rows = rows_of(work / "first" / "results.jsonl")
        fig = results["first run (all, formats learned)"] = Figures("first run", len(pdfs))
        fig.add(first, first_rows)
        new = results["new path (first run's new rows)"] = Figures("new path", 0)
        new.add(Run("new", 0, 0, first.peak_rss_mb, 0), [r for r in first_rows if r["format"]["match"] == "new"])
        second = timed("second run", [*extract, str(docs), "--out", str(work / "second")], len(pdfs), env=env)
        second_rows = rows_of(work / "second" / "results.jsonl")
        results["second run (all)"] = Figures("second run", len(pdfs))
        results["second run (all)"].add(second, second_rows)
        matched = [r["source"] for r in second_rows if r["format"]["match"] == "known"]
        known = [r["source"] for r in second_rows if r["format"]["match"] == "known" and r["status"] == "passed"]
        mdir = work / "matched"
        mdir.mkdir()
        for src in matched:
            shutil.copyfile(src, mdir / Path(src).name)
        r = timed("docassay matched", [*extract, str(mdir), "--out", str(work / "mk")], len(matched), env=env)
        results["docassay, every known-matched document (once)"] = Figures("matched", len(matched))
        results["docassay, every known-matched document (once)"].add(r, rows_of(work / "mk" / "results.jsonl"))
        kdir = work / "known"
        kdir.mkdir()
        for src in known:
            shutil.copyfile(src, kdir / Path(src).name)
        klist = work / "known.json"
        klist.write_text(json.dumps([os.path.realpath(s) for s in known]))
        one = work / "one"
        one.mkdir()
        if known:
            shutil.copyfile(known[0], one / Path(known[0]).name)
        have_i2d = I2D_BIN.exists()
        for _ in range(args.rounds):
            r = timed("docassay known", [*extract, str(kdir), "--out", str(work / "k")], len(known), env=env)
            results.setdefault("docassay known path (replays that verify)", Figures("docassay known", len(known))).add(
                r, rows_of(work / "k" / "results.jsonl"))
            if have_i2d:
                r = timed("invoice2data", [str(I2D_BIN), "--input-reader", "pdftotext",
                                           *[os.path.realpath(s) for s in known]], len(known), env=env)
                results.setdefault("invoice2data (same files)", Figures("invoice2data", len(known))).add(r)
            r = timed("parse floor", [py, "-c", PARSE_FLOOR, str(klist)], len(known), env=env)
            results.setdefault("docassay parse only (one process)", Figures("parse floor", len(known))).add(r)
            r = timed_many("pdftotext", [["pdftotext", "-layout", os.path.realpath(s), "/dev/null"] for s in known],
                           len(known))
            results.setdefault("pdftotext -layout, one process per file", Figures("pdftotext", len(known))).add(r)
            r = timed("one document", [*extract, str(one), "--out", str(work / "o")], 1, env=env)
            results.setdefault("docassay one known document", Figures("one", 1)).add(
                r, rows_of(work / "o" / "results.jsonl"))
            r = timed("usage error", [*extract, str(work / "missing"), "--out", str(work / "m")], 0, env=env)
            results.setdefault("usage error (missing input)", Figures("usage", 0)).add(r)
            r = timed("help", [*cli, "--help"], 0, env=env)
            results.setdefault("docassay --help", Figures("help", 0)).add(r)
    finally:
        _stop_embedded(home, env)
        shutil.rmtree(work, ignore_errors=True)
    report = {k: v.to_json() for k, v in results.items()}
    k, i = report.get("docassay known path (replays that verify)"), report.get("invoice2data (same files)")
    if k and i and k["docs_per_s"] and i["docs_per_s"]:
        report["ratio_known_vs_invoice2data"] = round(k["docs_per_s"] / i["docs_per_s"], 2)
    report["meta"] = {"pdfs": len(pdfs), "known_matched": len(matched), "known_passed": len(known),
                      "rounds": args.rounds, "generator": args.generator,
                      "cpus": os.cpu_count(), "load_avg": os.getloadavg()}
    print(table(report))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2))
    return 0


def table(report: dict) -> str:
    rows = []
    for name, f in report.items():
        if not isinstance(f, dict) or "wall_s_median" not in f:
            continue
        stages = ", ".join(f"{k} {v:g}" for k, v in list(f["stage_median_ms"].items())[:6])
        rows.append([name, f["documents"], _f(f["wall_s_median"], 2), _f(f["docs_per_s"], 1), _f(f["p50_ms"], 0),
                     _f(f["p95_ms"], 0), stages or "-", _f(f["peak_rss_mb"], 0), ",".join(map(str, f["exit_statuses"]))])
    text = md_table(["run", "docs", "wall s (median)", "docs/s", "p50 ms", "p95 ms", "stage medians ms",
                     "peak RSS MB", "exit"], rows)
    if "ratio_known_vs_invoice2data" in report:
        text += f"\n\nknown path vs invoice2data, documents per second: {report['ratio_known_vs_invoice2data']}x"
    return text


def _f(x: float | None, digits: int) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _stop_embedded(home: Path, env: dict) -> None:
    code = ("import sys; from pathlib import Path; from docassay.infra.db import embedded; "
            "embedded.stop(embedded.data_dir_for(Path(sys.argv[1])))")
    subprocess.run([sys.executable, "-c", code, str(home)], env=env, cwd=ROOT, check=False)


if __name__ == "__main__":
    sys.exit(main())
