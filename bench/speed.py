"""Speed per path: pages/s, documents/s, p50/p95 latency per document, peak memory, time by stage.

    python -m bench.speed [--sets synth-invoices-unseen,dev-invoices] [--repeat 3] [--out FILE]

Per set: one first batch learns the formats (not timed for the table); then, `--repeat` times,
  known path  the same documents replayed on that library (every matched document reads by its
              stored instructions: no generator, no fixer)
  new path    the documents on an empty library with reuse off (generator, verify, fixer, learn)
each pass in a fresh process (its max RSS is the pass's peak memory). Figures are medians over the
repeats. Latency is the pipeline's own per-document `timings_ms.total` (read → verify/repair; the
final database write of the result is not in it); docs/s = documents ÷ summed latency on that path
(sequential, one document at a time on one core); `pass docs/s` = documents ÷ the pass's wall time
(includes that write). Embedded PostgreSQL runs in its own processes; its memory is not counted.
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
from dataclasses import asdict, dataclass, field
from typing import Sequence

from bench.cli import add_common, print_and_save, session_from
from bench.passes import BenchRow, PassResult
from bench.session import VARIANTS
from bench.tables import md_table

DEFAULT_SETS = ("synth-invoices-unseen", "dev-invoices")


@dataclass
class PathSpeed:
    documents: int
    pages: int
    docs_per_s: float | None
    pages_per_s: float | None
    p50_ms: float | None
    p95_ms: float | None
    stage_median_ms: dict[str, float] = field(default_factory=dict)
    stage_share: dict[str, float] = field(default_factory=dict)
    peak_rss_mb: float | None = None
    start_rss_mb: float | None = None
    pass_docs_per_s: float | None = None
    repeats: int = 1

    def to_json(self) -> dict:
        return asdict(self)


def percentile(sorted_xs: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of an ascending list (q in [0, 1])."""
    if not sorted_xs:
        raise ValueError("percentile of nothing")
    k = max(0, min(len(sorted_xs) - 1, math.ceil(q * len(sorted_xs)) - 1))
    return float(sorted_xs[k])


def latency_speed(latencies_ms: Sequence[float], pages: Sequence[int],
                  stages: Sequence[dict[str, float]] = ()) -> PathSpeed:
    """Figures from per-document latencies (ms), page counts and optional per-stage times."""
    if not latencies_ms:
        return PathSpeed(0, 0, None, None, None, None)
    lat = sorted(latencies_ms)
    total_s = sum(lat) / 1000
    per: dict[str, list[float]] = {}
    for st in stages:
        for k, v in st.items():
            per.setdefault(k, []).append(v)
    return PathSpeed(len(lat), sum(pages), round(len(lat) / total_s, 2) if total_s else None,
                     round(sum(pages) / total_s, 2) if total_s else None,
                     round(percentile(lat, 0.5), 1), round(percentile(lat, 0.95), 1),
                     {k: round(statistics.median(v), 1) for k, v in sorted(per.items())},
                     {k: round(sum(v) / sum(lat), 3) for k, v in sorted(per.items())})


def path_speed(rows: Sequence[BenchRow], path: str | None, result: PassResult | None = None) -> PathSpeed:
    """Speed of the rows that took `path` (new | known; None: every row that was read)."""
    sel = [r for r in rows if r.status != "error" and (path is None or r.match == path)]
    sp = latency_speed([r.timings_ms["total"] for r in sel], [r.pages or 1 for r in sel],
                       [{k: v for k, v in r.timings_ms.items() if k != "total"} for r in sel])
    if result is not None:
        sp.peak_rss_mb, sp.start_rss_mb = result.peak_rss_mb, result.start_rss_mb
        sp.pass_docs_per_s = round(len(result.rows) / result.wall_s, 2) if result.wall_s else None
    return sp


def median_speed(runs: Sequence[PathSpeed]) -> PathSpeed:
    """Median of each figure over repeated runs (stage figures per stage)."""
    runs = [r for r in runs if r.documents]
    if not runs:
        return PathSpeed(0, 0, None, None, None, None, repeats=0)

    def med(name: str) -> float | None:
        xs = [getattr(r, name) for r in runs if getattr(r, name) is not None]
        return round(statistics.median(xs), 2) if xs else None

    def med_dict(name: str) -> dict[str, float]:
        keys = sorted({k for r in runs for k in getattr(r, name)})
        return {k: round(statistics.median([getattr(r, name)[k] for r in runs if k in getattr(r, name)]), 3)
                for k in keys}

    return PathSpeed(int(statistics.median(r.documents for r in runs)), int(statistics.median(r.pages for r in runs)),
                     med("docs_per_s"), med("pages_per_s"), med("p50_ms"), med("p95_ms"),
                     med_dict("stage_median_ms"), med_dict("stage_share"), med("peak_rss_mb"), med("start_rss_mb"),
                     med("pass_docs_per_s"), len(runs))


STAGE_ORDER = ("read", "parse", "index", "fingerprint", "match", "extract", "generate", "verify", "repair", "learn")


def stage_text(sp: PathSpeed) -> str:
    keys = [k for k in STAGE_ORDER if k in sp.stage_median_ms] + \
        [k for k in sp.stage_median_ms if k not in STAGE_ORDER]
    return ", ".join(f"{k} {sp.stage_median_ms[k]:g} ({100 * sp.stage_share.get(k, 0):.0f}%)" for k in keys)


def _rss(sp: PathSpeed) -> str:
    if sp.peak_rss_mb is None:
        return "-"
    return f"{sp.peak_rss_mb:g}" + (f" ({sp.start_rss_mb:g})" if sp.start_rss_mb is not None else "")


def speed_table(entries: dict[str, PathSpeed]) -> str:
    rows = [[name, sp.documents, sp.pages, sp.docs_per_s, sp.pages_per_s, sp.p50_ms, sp.p95_ms,
             sp.pass_docs_per_s, _rss(sp), sp.repeats, stage_text(sp)] for name, sp in entries.items()]
    return md_table(["set / path", "docs", "pages", "docs/s", "pages/s", "p50 ms", "p95 ms", "pass docs/s",
                     "peak RSS MB (before 1st doc)", "runs", "median ms per stage (share of time)"],
                    [[("-" if c is None else (f"{c:g}" if isinstance(c, float) else c)) for c in r] for r in rows])


def measure(session, set_name: str, repeat: int) -> dict[str, PathSpeed]:
    """Known- and new-path speed of one set: medians over `repeat` replay and all-new passes."""
    variant = VARIANTS["full"]
    session.first_batch(set_name, variant)
    known, new = [], []
    for _ in range(max(1, repeat)):
        rp = session.replay(set_name, variant)
        known.append(path_speed(rp.rows, "known", rp))
        nw = session.all_new(set_name, variant)
        new.append(path_speed(nw.rows, "new", nw))
    return {f"{set_name} / known format": median_speed(known), f"{set_name} / new format": median_speed(new)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common(ap, default_sets=DEFAULT_SETS)
    ap.add_argument("--repeat", type=int, default=3, help="runs per path; figures are medians (default 3)")
    args = ap.parse_args(argv)
    with session_from(args) as s:
        entries: dict[str, PathSpeed] = {}
        for set_name in args.sets:
            entries.update(measure(s, set_name, args.repeat))
    text = "## Speed (medians over runs; sequential, one document at a time)\n\n" + speed_table(entries)
    print_and_save(args, "speed", text, {"repeat": args.repeat, "speed": {k: v.to_json() for k, v in entries.items()}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
