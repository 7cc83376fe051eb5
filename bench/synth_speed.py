"""Documents per second of the synthetic generator: Document + truth only, + PDF, + PNG.

    python bench/synth_speed.py [--formats 40] [--docs 10] [--render-docs 60] [--dpi 150] [--workers 1]

Prints one table row per (kind, stage). `--workers 2` runs the Document-only stage in that many
processes (one per core) to show the rate a 2-core machine reaches.
"""
from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor

from docassay.extractors.synth import generate, to_pdf, to_png


def _count(args: tuple[int, int, str, int]) -> int:
    n_formats, docs, kind, seed = args
    return sum(1 for _ in generate(n_formats, docs, kind=kind, seed=seed, split="train"))


def bench(kind: str, n_formats: int, docs: int, render_docs: int, dpi: int, workers: int) -> list[tuple]:
    rows = []
    t = time.perf_counter()
    if workers > 1:
        with ProcessPoolExecutor(workers) as ex:
            n = sum(ex.map(_count, [(n_formats // workers, docs, kind, 100 + w) for w in range(workers)]))
    else:
        n = _count((n_formats, docs, kind, 100))
    dt = time.perf_counter() - t
    rows.append((kind, f"document+truth ({workers} proc)", n, dt))
    sample = list(generate(max(1, render_docs // 5), 5, kind=kind, seed=7, split="train"))[:render_docs]
    t = time.perf_counter()
    pages = 0
    for sd in sample:
        to_pdf(sd)
        pages += sd.n_pages
    dt_pdf = time.perf_counter() - t
    rows.append((kind, "pdf (render only)", len(sample), dt_pdf))
    t = time.perf_counter()
    for sd in sample:
        to_png(sd, dpi)
    dt_png = time.perf_counter() - t
    rows.append((kind, f"png @{dpi} dpi (pdf+raster)", len(sample), dt_png))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--formats", type=int, default=40)
    ap.add_argument("--docs", type=int, default=10)
    ap.add_argument("--render-docs", type=int, default=60)
    ap.add_argument("--dpi", type=int, default=150)
    ap.add_argument("--workers", type=int, default=1)
    a = ap.parse_args()
    print(f"{'kind':8} {'stage':34} {'docs':>6} {'seconds':>8} {'docs/s':>8}")
    for kind in ("invoice", "receipt"):
        for k, stage, n, dt in bench(kind, a.formats, a.docs, a.render_docs, a.dpi, a.workers):
            print(f"{k:8} {stage:34} {n:6d} {dt:8.2f} {n / dt:8.1f}")


if __name__ == "__main__":
    main()
