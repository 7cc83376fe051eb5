"""Runs invoice2data on a list of files and prints one JSON report (stdout). Runs INSIDE the
invoice2data virtualenv (bench/.venv-i2d, made by bench/setup_invoice2data.sh): standard library
and invoice2data only, never docassay.

    bench/.venv-i2d/bin/python bench/i2d_worker.py LIST.json [--repeat N]

LIST.json is a JSON array of file paths. Templates are invoice2data's built-in ones, loaded once
(timed apart); each file is read with invoice2data's default input cascade (`extract_data` with no
`input_module`). Per file: the template that matched (or null), the raw output made JSON-safe
(dates as ISO strings), and the milliseconds of each repeat. Peak RSS of this process at the end.
invoice2data caches the text of a file it has read (functools.lru_cache in `invoice2data.input`);
those caches are cleared before every timed call, so a repeat reads the PDF again as a new file would.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import resource
import sys
import time
from decimal import Decimal


def json_safe(value: object) -> object:
    """invoice2data returns datetimes, Decimals and nested lists/dicts; make them JSON values."""
    if isinstance(value, (dt.datetime, dt.date)):
        return value.date().isoformat() if isinstance(value, dt.datetime) else value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def clear_text_caches() -> int:
    """Clear every lru_cache of invoice2data's input modules; returns how many were cleared."""
    n = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("invoice2data.input") or module is None:
            continue
        for value in vars(module).values():
            if callable(getattr(value, "cache_clear", None)) and getattr(value, "__module__", "") == name:
                value.cache_clear()
                n += 1
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("list", help="JSON array of file paths")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args(argv)
    logging.disable(logging.CRITICAL)            # invoice2data logs every miss at ERROR

    import importlib.metadata

    from invoice2data import extract_data
    from invoice2data.extract.loader import read_templates

    paths = json.loads(open(args.list, encoding="utf-8").read())
    t0 = time.perf_counter()
    templates = read_templates()
    load_s = time.perf_counter() - t0
    results = []
    for path in paths:
        ms: list[float] = []
        out: dict = {}
        error = None
        for _ in range(max(1, args.repeat)):
            clear_text_caches()
            t = time.perf_counter()
            try:
                out = extract_data(path, templates=templates) or {}
            except Exception as exc:        # noqa: BLE001 - a crash on one file is that file's result
                out, error = {}, f"{type(exc).__name__}: {exc}"[:300]
            ms.append((time.perf_counter() - t) * 1000)
        results.append({"path": path, "template": out.get("template_name") if out else None,
                        "output": json_safe(out), "ms": [round(m, 3) for m in ms], "error": error})
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:                                         # VmHWM: this process's own peak (ru_maxrss keeps the parent's)
        for line in open("/proc/self/status", encoding="ascii"):
            if line.startswith("VmHWM:"):
                peak_kb = int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    json.dump({"version": importlib.metadata.version("invoice2data"), "templates": len(templates),
               "template_load_s": round(load_s, 4), "peak_rss_mb": round(peak_kb / 1024, 1),
               "results": results}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
