"""Peak memory and time of hostile inputs: each parsed alone in a fresh process, then as one batch.

    python -m bench.hostile_inputs [--code DIR] [--work DIR] [--skip-batch]

`--code` is the checkout whose docassay is measured (default: this one), so the same inputs can be
measured on main and on a branch. Inputs (written under --work, generated, nothing downloaded):

    image-bomb.pdf      one page, no text, one 20000x20000 grey image (about 0.4 MB, FlateDecode)
    million-lines.ocr.json   an OCR line file of 1,000,000 lines (about 48 MB)
    many-values.ocr.json     one line and 3,000,000 other JSON values (about 6 MB)
    invoice.txt         an ordinary plain-text invoice (the batch goes on)

For each input: peak RSS of a child process that imports docassay and parses it (`ru_maxrss` of
that child; the import alone is reported as `baseline`), wall time, and the outcome. Then the
batch: `docassay extract` of the folder at --concurrency 2 with the baseline generator and a
fresh home, its peak RSS and wall time (the embedded PostgreSQL is a separate process, not counted).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_PARSE = """
import sys, json
from docassay.extractors.parsers import parse
from docassay.extractors.errors import ParseError
from docassay.infra.config import Settings
path = sys.argv[1]
if path == "-":
    print(json.dumps({"outcome": "import only"})); sys.exit(0)
try:
    doc = parse(path, settings=Settings())
    print(json.dumps({"outcome": f"parsed: {len(doc.pages)} page(s)"}))
except ParseError as exc:
    print(json.dumps({"outcome": f"{exc.kind}: {exc.message[:120]}"}))
"""


def image_bomb(path: Path, side: int = 20000) -> None:
    z = zlib.compressobj(9)
    row = bytes(side)
    stream = b"".join(z.compress(row) for _ in range(side)) + z.flush()
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im0 4 0 R >> >> "
            b"/Contents 5 0 R >>",
            b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 "
            b"/Filter /FlateDecode /Length %d >>\nstream\n" % (side, side, len(stream)) + stream + b"\nendstream"]
    content = b"q 612 0 0 792 0 0 cm /Im0 Do Q"
    objs.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for i, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    path.write_bytes(bytes(out))


def write_inputs(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    image_bomb(folder / "image-bomb.pdf")
    line = '{"text": "x", "quad": [0, 0, 1, 0, 1, 1, 0, 1]}'
    (folder / "million-lines.ocr.json").write_text('{"lines": [' + ", ".join([line] * 1_000_000) + "]}")
    (folder / "many-values.ocr.json").write_text(
        '{"lines": [' + line + '], "junk": [' + ", ".join(["0"] * 3_000_000) + "]}")
    (folder / "invoice.txt").write_text("RECHNUNG\nRechnungsnummer: 4711\nDatum: 01.02.2024\n"
                                        "Nettobetrag: 100,00 EUR\nMwSt 19%: 19,00 EUR\nGesamtbetrag: 119,00 EUR\n")
    return sorted(folder.iterdir())


def measure_one(cmd: list[str], code: Path, env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """Run `cmd` under a fresh intermediate Python so that RUSAGE_CHILDREN is that child alone."""
    probe = ("import resource, subprocess, sys, time, json, os\n"
             "t0 = time.perf_counter()\n"
             "p = subprocess.run(json.loads(sys.argv[1]), capture_output=True, text=True, "
             "env={**os.environ, **json.loads(sys.argv[2])})\n"
             "print(json.dumps({'rss_kb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
             "'wall_s': time.perf_counter() - t0, 'out': (p.stdout.strip() or p.stderr.strip()[-300:])}))\n")
    p = subprocess.run([sys.executable, "-c", probe, json.dumps(cmd), json.dumps({"PYTHONPATH": str(code), **(env or {})})],
                       cwd=code, capture_output=True, text=True)
    j = json.loads(p.stdout)
    return j["rss_kb"] / 1024, j["wall_s"], j["out"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--code", type=Path, default=ROOT)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--skip-batch", action="store_true")
    args = ap.parse_args(argv)
    code = args.code.resolve()
    work = args.work or Path(tempfile.mkdtemp(prefix="docassay-hostile-", dir="/tmp"))
    inputs = write_inputs(work / "in")
    print(f"code: {code}\n")
    print("| input | bytes | peak RSS MB | wall s | outcome |\n|---|---:|---:|---:|---|")
    rss, wall, out = measure_one([sys.executable, "-c", _PARSE, "-"], code)
    print(f"| baseline (import only) | 0 | {rss:.0f} | {wall:.1f} | - |")
    for p in inputs:
        rss, wall, out = measure_one([sys.executable, "-c", _PARSE, str(p)], code)
        try:
            outcome = json.loads(out)["outcome"]
        except ValueError:
            outcome = out[-120:]
        print(f"| {p.name} | {p.stat().st_size:,} | {rss:.0f} | {wall:.1f} | {outcome.replace('|', '/')} |")
    if not args.skip_batch:
        home = work / "home"
        cmd = [sys.executable, "-m", "docassay.flows.cli", "extract", str(work / "in"), "--schema",
               str(code / "examples/invoices/schema.json"), "--out", str(work / "out"), "--home", str(home),
               "--generator", "baseline", "--concurrency", "2", "--quiet"]
        try:
            rss, wall, out = measure_one(cmd, code)
        finally:
            subprocess.run([sys.executable, "-c", "import sys; from infra.db import embedded; "
                            "embedded.stop(embedded.data_dir_for(__import__('pathlib').Path(sys.argv[1])))", str(home)],
                           cwd=code, env={**os.environ, "PYTHONPATH": str(code)}, capture_output=True)
        rows = [json.loads(l) for l in (work / "out" / "results.jsonl").read_text().splitlines()] \
            if (work / "out" / "results.jsonl").exists() else []
        kinds = ", ".join(f"{Path(r['source']).name}: {r['status']}"
                          + (f" ({r['error']['kind']})" if r.get("error") else "") for r in rows)
        print(f"\nbatch (docassay extract, --concurrency 2): peak RSS {rss:.0f} MB, wall {wall:.1f} s; {kinds}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
