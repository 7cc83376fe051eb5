"""`python -m docassay.extractors.normalize [--data DIR]`: calls per second of each function, on a fixed
mix of real-world spans (and, when DIR holds the dev data, on every receipt OCR line)."""
from __future__ import annotations

import argparse
import glob
import json
import os
import time
from typing import Callable, Sequence

from docassay.extractors import normalize as nz

SPANS = (
    "1.234,56", "1,234.56", "1 234,56", "USD 12.00", "€ 1.234,56", "RM9.75 S", "(8.79)", "12,-",
    "NETT TOTAL: $9.20", "1,234", "19 %", "INV-2018/0042", "05.03.2018", "Tel: +49 89 1234567",
    "Gesamtbetrag", "DATE: 25/12/2018 8:13:39 PM", "August 3 , 2014", "3. März 2018",
    "TOTAL AMOUNT DUE ON August 3 , 2014 $4.11", "Lieferant GmbH", "", "x" * 300,
)


def rate(fn: Callable[[str], object], texts: Sequence[str], seconds: float = 0.4) -> float:
    n, t0 = 0, time.perf_counter()
    while True:
        for t in texts:
            fn(t)
        n += len(texts)
        dt = time.perf_counter() - t0
        if dt >= seconds:
            return n / dt


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m docassay.extractors.normalize", description=__doc__)
    ap.add_argument("--data", default=os.environ.get("DOCASSAY_DATA", "/work/shared/data"))
    args = ap.parse_args(argv)
    funcs: list[tuple[str, Callable[[str], object]]] = [
        ("parse_amount", nz.parse_amount), ("amount_readings", nz.amount_readings),
        ("parse_date", nz.parse_date), ("date_readings", nz.date_readings),
        ("parse_currency", nz.parse_currency), ("parse_percent", nz.parse_percent),
        ("find_amounts", nz.find_amounts), ("find_dates", nz.find_dates),
        ("normalize_identifier", nz.normalize_identifier), ("normalize_name", nz.normalize_name),
        ("fold", nz.fold), ("similarity vs 'Lieferant GmbH'", lambda t: nz.similarity(t, "Lieferant GmbH")),
    ]
    print(f"{'function':34s} {'mixed spans/s':>14s}")
    for name, fn in funcs:
        print(f"{name:34s} {rate(fn, SPANS):14,.0f}")
    lines: list[str] = []
    for path in sorted(glob.glob(os.path.join(args.data, "receipts", "*.ocr.json"))):
        with open(path, encoding="utf-8") as fh:
            lines.extend(x["text"] for x in json.load(fh)["lines"])
    if lines:
        print(f"\n{len(lines):,} SROIE OCR lines")
        for name, fn in funcs[:3] + funcs[6:8]:
            print(f"{name:34s} {rate(fn, lines, 1.0):14,.0f} lines/s")
        t0 = time.perf_counter()
        n_amt = sum(len(nz.find_amounts(t)) for t in lines)
        n_date = sum(len(nz.find_dates(t)) for t in lines)
        print(f"found {n_amt:,} amounts and {n_date:,} dates in {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
