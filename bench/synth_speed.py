"""Documents per second of the synthetic generator: Document + truth only, + PDF, + PNG, + noisy OCR lines.

    python bench/synth_speed.py [--formats 40] [--docs 10] [--render-docs 60] [--dpi 150] [--workers 1]
                                [--families all|NAME,...] [--by-family]

Prints one table row per (kind, stage). `--workers 2` runs the Document-only stage in that many
processes (one per core) to show the rate a 2-core machine reaches. `--families` draws only those
layout families (default: the train split's default, every family); `--by-family` prints the
Document-only and PDF rates of each family on its own.
"""
from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor

from docassay.extractors.synth import (
    ALL_INVOICE_FAMILIES,
    ALL_RECEIPT_FAMILIES,
    generate,
    to_noisy_ocr_lines,
    to_pdf,
    to_png,
)


def _count(args: tuple[int, int, str, int, object]) -> int:
    n_formats, docs, kind, seed, families = args
    return sum(1 for _ in generate(n_formats, docs, kind=kind, seed=seed, split="train", families=families))


def bench(kind: str, n_formats: int, docs: int, render_docs: int, dpi: int, workers: int,
          families: object = None) -> list[tuple]:
    rows = []
    t = time.perf_counter()
    if workers > 1:
        with ProcessPoolExecutor(workers) as ex:
            n = sum(ex.map(_count, [(n_formats // workers, docs, kind, 100 + w, families) for w in range(workers)]))
    else:
        n = _count((n_formats, docs, kind, 100, families))
    dt = time.perf_counter() - t
    rows.append((kind, f"document+truth ({workers} proc)", n, dt))
    sample = list(generate(max(1, render_docs // 5), 5, kind=kind, seed=7, split="train",
                           families=families))[:render_docs]
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
    t = time.perf_counter()
    for sd in sample:
        to_noisy_ocr_lines(sd, "medium", dpi)
    rows.append((kind, "ocr lines + medium noise", len(sample), time.perf_counter() - t))
    return rows


def by_family(kind: str, n_formats: int, docs: int) -> list[tuple]:
    rows = []
    for fam in ALL_INVOICE_FAMILIES if kind == "invoice" else ALL_RECEIPT_FAMILIES:
        t = time.perf_counter()
        sample = list(generate(n_formats, docs, kind=kind, seed=100, split="train", families=[fam]))
        dt = time.perf_counter() - t
        t = time.perf_counter()
        pages = 0
        for sd in sample:
            to_pdf(sd)
            pages += sd.n_pages
        rows.append((kind, fam, len(sample), dt, time.perf_counter() - t, pages / len(sample)))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--formats", type=int, default=40)
    ap.add_argument("--docs", type=int, default=10)
    ap.add_argument("--render-docs", type=int, default=60)
    ap.add_argument("--dpi", type=int, default=150)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--families", default=None, help="comma-separated layout families, or 'all' (default: all)")
    ap.add_argument("--by-family", action="store_true", help="the rate of each family on its own")
    a = ap.parse_args()
    if a.by_family:
        print(f"{'kind':8} {'family':14} {'docs':>6} {'pages/doc':>9} {'doc+truth/s':>11} {'+pdf docs/s':>11}")
        for kind in ("invoice", "receipt"):
            for k, fam, n, dt, dt_pdf, ppd in by_family(kind, a.formats, a.docs):
                print(f"{k:8} {fam:14} {n:6d} {ppd:9.2f} {n / dt:11.1f} {n / (dt + dt_pdf):11.1f}")
        return
    print(f"{'kind':8} {'stage':34} {'docs':>6} {'seconds':>8} {'docs/s':>8}")
    for kind in ("invoice", "receipt"):
        fams = a.families
        if fams and fams != "all":                  # a family list names one kind's families
            known = ALL_INVOICE_FAMILIES if kind == "invoice" else ALL_RECEIPT_FAMILIES
            fams = ",".join(f for f in fams.split(",") if f.strip() in known) or "classic"
        for k, stage, n, dt in bench(kind, a.formats, a.docs, a.render_docs, a.dpi, a.workers, fams):
            print(f"{k:8} {stage:34} {n:6d} {dt:8.2f} {n / dt:8.1f}")


if __name__ == "__main__":
    main()
