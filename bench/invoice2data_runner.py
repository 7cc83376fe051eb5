"""invoice2data, run from its own virtualenv as a subprocess, its output mapped to canonical keys.

    if available(): run = run_invoice2data(paths, repeat=3)
    record = to_canonical(run.results[path].output)

The virtualenv is `bench/.venv-i2d` (made by `bench/setup_invoice2data.sh`; `$DOCASSAY_I2D_PYTHON`
points elsewhere). `bench/i2d_worker.py` runs inside it with invoice2data's built-in templates.
The key mapping is the one the dev data README describes for invoice2data's own `tests/compare`
files: invoice_number, date -> issue_date, date_due -> due_date, issuer -> seller_name,
vat -> seller_vat_id, currency, amount -> gross_total, amount_untaxed -> net_total,
amount_tax -> tax_total, lines -> line_items (name|desc -> description, qty -> quantity,
price_unit|price -> unit_price, price_subtotal -> line_total; a line with a price but neither
quantity nor subtotal is a per-line charge -> line_total).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / "bench" / ".venv-i2d"
WORKER = ROOT / "bench" / "i2d_worker.py"
PYTHON_ENV = "DOCASSAY_I2D_PYTHON"

SCALAR_KEYS = {"invoice_number": "invoice_number", "date": "issue_date", "date_due": "due_date",
               "issuer": "seller_name", "vat": "seller_vat_id", "currency": "currency",
               "amount": "gross_total", "amount_untaxed": "net_total", "amount_tax": "tax_total"}
NUMBER_KEYS = {"gross_total", "net_total", "tax_total", "quantity", "unit_price", "line_total"}


def python_path() -> Path:
    env = os.environ.get(PYTHON_ENV)
    return Path(env) if env else VENV / "bin" / "python"


def available() -> bool:
    """True when invoice2data's interpreter exists (run bench/setup_invoice2data.sh to make it)."""
    return python_path().exists()


@dataclass
class I2DResult:
    path: str
    template: str | None
    output: dict
    ms: list[float]
    error: str | None = None


@dataclass
class I2DRun:
    version: str
    templates: int
    template_load_s: float
    peak_rss_mb: float
    results: dict[str, I2DResult] = field(default_factory=dict)   # by input path


def run_invoice2data(paths: Sequence[str], *, repeat: int = 1, timeout_s: float | None = None) -> I2DRun:
    """Run invoice2data on `paths` (each `repeat` times) in one subprocess of its own virtualenv."""
    if not available():
        raise FileNotFoundError(f"no invoice2data interpreter at {python_path()}: run bench/setup_invoice2data.sh")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(list(paths), f)
        listing = f.name
    try:
        proc = subprocess.run([str(python_path()), str(WORKER), listing, "--repeat", str(repeat)],
                              capture_output=True, text=True, timeout=timeout_s)
    finally:
        os.unlink(listing)
    if proc.returncode != 0:
        raise RuntimeError(f"invoice2data worker failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    d = json.loads(proc.stdout)
    run = I2DRun(d["version"], d["templates"], d["template_load_s"], d["peak_rss_mb"])
    for r in d["results"]:
        run.results[r["path"]] = I2DResult(r["path"], r["template"], r["output"] or {}, r["ms"], r.get("error"))
    return run


_NUM = re.compile(r"^[+-]?\d+(\.\d+)?$")


def to_number(value: Any) -> float | None:
    """A number from invoice2data's output (floats, or strings such as '1,234.50' / '0.01')."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        s = value.strip().replace(" ", "")
        if "," in s and "." in s:
            s = s.replace(",", "") if s.rfind(".") > s.rfind(",") else s.replace(".", "").replace(",", ".")
        elif "," in s:
            s = s.replace(",", ".") if len(s) - s.rfind(",") - 1 in (1, 2) else s.replace(",", "")
        return float(s) if _NUM.match(s) else None
    return None


def _line(raw: Mapping[str, Any]) -> dict | None:
    out: dict[str, Any] = {}
    desc = raw.get("name") or raw.get("desc") or raw.get("description")
    if desc:
        out["description"] = str(desc).strip()
    qty = to_number(raw.get("qty", raw.get("quantity")))
    price = to_number(raw.get("price_unit", raw.get("price")))
    subtotal = to_number(raw.get("price_subtotal", raw.get("line_total")))
    if qty is not None:
        out["quantity"] = qty
    if subtotal is not None:
        out["line_total"] = subtotal
    if price is not None:
        if qty is None and subtotal is None:
            out["line_total"] = price               # a per-line charge
        else:
            out["unit_price"] = price
    return out if len(out) > 1 or "description" in out else None


def to_canonical(output: Mapping[str, Any]) -> dict:
    """invoice2data's output dict in the canonical keys of the dev data (unmapped keys dropped)."""
    rec: dict[str, Any] = {}
    for src, dst in SCALAR_KEYS.items():
        v = output.get(src)
        if v is None or v == "":
            continue
        if dst in NUMBER_KEYS:
            n = to_number(v)
            if n is not None:
                rec[dst] = n
        elif dst in ("issue_date", "due_date"):
            rec[dst] = str(v)[:10]
        else:
            rec[dst] = str(v).strip()
    lines = output.get("lines") or output.get("line_items")
    if isinstance(lines, list):
        items = [x for x in (_line(r) for r in lines if isinstance(r, Mapping)) if x]
        if items:
            rec["line_items"] = items
    return rec
