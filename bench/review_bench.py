"""What review costs and what a correction teaches (the review station and `extract --report`).

    python -m bench.review_bench [--formats 12] [--db DSN]

1. Teaching, on synthetic invoices of `unseen` formats (never a training format; no dev data):
   per format, document 0 of the original layout is learned; then the sender renames its labels
   (the drift of tests/flows/test_lifecycle.py) and document 10 of the renamed layout goes to
   review. A reviewer corrects the fields whose printed value differs from the record (values as
   the ground truth has them; seller_name left out: the synthetic layout prints the street in its
   line). Documents 11 and 12 of the renamed layout are then processed, in this database and in a
   control database where nobody corrected anything. Drift re-learning is switched off in both
   (drift_threshold 99), so what changes is the correction alone. Printed: how many corrections
   taught (how), the next documents' statuses and their field accuracy against the ground truth.
2. Speed, on the same documents: a page image cold (pypdfium2 render) and warm (cache), the
   document view cold and warm (TestClient, in-process), and report.html for the batch (time,
   size).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from docassay.extractors.synth import to_pdf
from docassay.extractors.synth.generator import format_seeds, make_document, make_format
from docassay.flows import lifecycle
from docassay.flows import review_actions as ra
from docassay.flows.batch import load_rule_pack, load_schema
from docassay.flows.context import Job, open_context
from docassay.flows.pipeline import process_document
from docassay.flows.results import ResultsWriter
from docassay.infra.config import Settings
from docassay.infra.db.scratch import fresh_database

ROOT = Path(__file__).resolve().parents[1]
RENAMED = {"invoice_number": "Belegkennung", "issue_date": "Ausgestellt am",
           "gross_total": "Zahlbetrag gesamt", "net_total": "Warenwert netto"}
SCALARS = ("invoice_number", "issue_date", "due_date", "seller_vat_id", "buyer_name", "currency", "net_total",
           "tax_total", "gross_total")
NEXT = (11, 12)


def _write(folder: Path, fmt, seed: int) -> tuple[str, dict]:
    sd = make_document(fmt, seed)
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / f"{sd.doc_id}.pdf"
    p.write_bytes(to_pdf(sd))
    return str(p), sd.truth


def _accuracy(record: dict, truth: dict) -> tuple[int, int]:
    keys = [k for k in SCALARS if truth.get(k) is not None]
    return sum(ra._exact(truth[k], record.get(k)) for k in keys), len(keys)


def _job(settings: Settings) -> Job:
    return Job(schema=load_schema(ROOT / "examples/invoices/schema.json"),
               rules=load_rule_pack(ROOT / "examples/invoices/rules"), settings=settings,
               policy=lifecycle.LifecyclePolicy(drift_threshold=99), generator="baseline")


def run(formats: int, admin_dsn: str, scratch: Path) -> dict:
    out: dict = {"formats": formats, "taught": {}, "reviewed": 0, "skipped": 0,
                 "next": {"corrected": {}, "control": {}}, "accuracy": {"corrected": [0, 0], "control": [0, 0]},
                 "speed": {}}
    seeds = format_seeds("unseen", formats)
    with fresh_database(admin_dsn) as dsn, fresh_database(admin_dsn) as control_dsn:
        arms = {"corrected": Settings.load(home=scratch / "home", db=dsn, concurrency=1),
                "control": Settings.load(home=scratch / "home-control", db=control_dsn, concurrency=1)}
        jobs = {k: _job(s) for k, s in arms.items()}
        results: list = []
        with open_context(arms["corrected"]) as ctx, open_context(arms["control"]) as cctx:
            ctxs = {"corrected": ctx, "control": cctx}
            for fs in seeds:
                fmt = make_format(fs)
                drifted = dataclasses.replace(fmt, style=dataclasses.replace(
                    fmt.style, labels={**fmt.style.labels, **RENAMED}))
                first, _ = _write(scratch / f"f{fs}", fmt, 0)
                review, truth = _write(scratch / f"f{fs}", drifted, 10)
                for arm in arms:
                    process_document(first, jobs[arm], ctxs[arm])
                row = process_document(review, jobs["corrected"], ctx)
                process_document(review, jobs["control"], cctx)
                results.append(row)
                if row.status not in ("needs_review", "passed", "repaired"):
                    out["skipped"] += 1
                    continue
                fix = {k: truth[k] for k in SCALARS if truth.get(k) is not None and not ra._exact(truth[k], row.record.get(k))}
                if not fix:
                    out["skipped"] += 1
                    continue
                d = ra.correct(ra.Session(ctx, jobs["corrected"]), row.sha256,
                               ra.corrections_from(row.record, fix, typed=True), by="bench")
                out["reviewed"] += 1
                how = d.teaching.how if d.teaching else "not_taught"
                out["taught"][how] = out["taught"].get(how, 0) + 1
                if how == "not_taught":
                    out.setdefault("why_not", []).append(d.teaching.why[:300] if d.teaching else "")
                for s in NEXT:
                    path, t = _write(scratch / f"f{fs}", drifted, s)
                    for arm in arms:
                        r = process_document(path, jobs[arm], ctxs[arm])
                        out["next"][arm][r.status] = out["next"][arm].get(r.status, 0) + 1
                        ok, n = _accuracy(r.record, t)
                        out["accuracy"][arm][0] += ok
                        out["accuracy"][arm][1] += n
                        if arm == "corrected":
                            results.append(r)
            out["speed"] = _speed(arms["corrected"], jobs["corrected"], ctx, results, scratch)
    return out


def _speed(settings: Settings, job: Job, ctx, rows: list, scratch: Path) -> dict:
    from starlette.testclient import TestClient

    from docassay.flows.report import write_report
    from docassay.flows.review_app.app import AppConfig, create_app
    from docassay.flows.review_app.security import SecurityConfig
    client = TestClient(create_app(AppConfig(settings=settings, job=job, security=SecurityConfig()), ctx),
                        base_url="http://127.0.0.1:8790")
    shas = [r.sha256 for r in rows if r.sha256][:20]
    img_cold, img_warm, view_cold, view_warm = [], [], [], []
    for sha in shas:
        t = time.perf_counter()
        assert client.get(f"/doc/{sha}").status_code == 200
        view_cold.append(time.perf_counter() - t)
        t = time.perf_counter()
        client.get(f"/doc/{sha}")
        view_warm.append(time.perf_counter() - t)
        t = time.perf_counter()
        r = client.get(f"/doc/{sha}/page/1.png")
        img_cold.append(time.perf_counter() - t)
        if r.status_code != 200:
            img_cold.pop()
            continue
        t = time.perf_counter()
        client.get(f"/doc/{sha}/page/1.png")
        img_warm.append(time.perf_counter() - t)
    w = ResultsWriter(scratch / "out" / "results.jsonl")
    for r in rows:
        w.write(r)
    w.close()
    t = time.perf_counter()
    info = write_report(scratch / "out" / "results.jsonl", settings, job.schema)
    report_s = time.perf_counter() - t
    ms = lambda xs: round(statistics.median(xs) * 1000, 1) if xs else None   # noqa: E731
    return {"documents": len(shas), "page_image_cold_ms": ms(img_cold), "page_image_warm_ms": ms(img_warm),
            "document_view_cold_ms": ms(view_cold), "document_view_warm_ms": ms(view_warm),
            "report_documents": info.documents, "report_pages": info.pages_drawn, "report_s": round(report_s, 2),
            "report_mb": round(info.bytes / 1e6, 2)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--formats", type=int, default=12)
    ap.add_argument("--db", help="PostgreSQL DSN of a server to make scratch databases on (default: embedded)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="docassay-review-bench-", dir="/var/tmp") as tmp:
        scratch = Path(tmp)
        server = None
        dsn = args.db
        if dsn is None:
            from docassay.infra.db import embedded
            server = embedded.ensure_running(data_dir=scratch / "pg")
            dsn = server.dsn
        try:
            t = time.perf_counter()
            res = run(args.formats, dsn, scratch)
            res["wall_s"] = round(time.perf_counter() - t, 1)
        finally:
            if server is not None:
                from docassay.infra.db import embedded
                embedded.stop(server.data_dir)
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
