"""The life of a format, end to end on a real PostgreSQL with synthetic invoices:

a new format is learned (its first documents become golden references, their bytes kept); a
second version that would break a golden document is refused by the reference gate; a drifted
layout (the sender renamed its labels) fails its replays, is detected as drift and re-learned as
the format's next version through the reference gate; a duplicate invoice is caught as a stale
value and is not "repaired" into passing.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from docassay.extractors.instructions.language import Instructions, Locator
from docassay.extractors.parsers import parse
from docassay.extractors.synth import to_pdf
from docassay.extractors.synth.generator import make_document, make_format
from docassay.flows import lifecycle
from docassay.flows.batch import load_schema, run_batch
from docassay.flows.context import Job, open_context
from docassay.flows.pipeline import process_document
from docassay.infra import store
from docassay.infra.config import Settings

ROOT = Path(__file__).resolve().parents[2]
FORMAT_SEED = 1946619406                  # a dev-split synthetic format (never a training format)
RENAMED = {"invoice_number": "Belegkennung", "issue_date": "Ausgestellt am",
           "gross_total": "Zahlbetrag gesamt", "net_total": "Warenwert netto"}


def header_schema() -> dict:
    """The example invoice schema cut down to its header (its x-docassay keywords kept)."""
    full = load_schema(ROOT / "examples/invoices/schema.json")
    keep = ["invoice_number", "issue_date", "seller_name", "gross_total", "currency"]
    return dict(full, required=keep, properties={k: full["properties"][k] for k in keep})


def write(folder: Path, fmt, seeds) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for s in seeds:
        sd = make_document(fmt, s)
        p = folder / f"{sd.doc_id}.pdf"
        p.write_bytes(to_pdf(sd))
        out.append(str(p))
    return out


def errors(row) -> list[tuple[str, str]]:
    return [(v["gate"], v["rule"]) for v in row.verification["violations"] if v["severity"] == "error"]


@pytest.mark.slow
def test_life_of_a_format(tmp_path: Path, pg_fresh_dsn: str) -> None:
    settings = Settings.load(home=tmp_path / "home", db=pg_fresh_dsn, concurrency=1)
    # min_confidence 0: the gates alone decide (this test is about the format's life, not confidence;
    # tests/flows/test_trust.py covers learning only above the target)
    job = Job(schema=header_schema(), settings=settings, policy=lifecycle.LifecyclePolicy(drift_threshold=2),
              min_confidence=0.0, generator="baseline")
    fmt = make_format(FORMAT_SEED)
    drifted = dataclasses.replace(fmt, style=dataclasses.replace(fmt.style, labels={**fmt.style.labels, **RENAMED}))
    originals = write(tmp_path / "in", fmt, [0, 1, 2])
    with open_context(settings) as ctx:
        # 1. A new format is learned; later documents replay it; all three become golden.
        rows = run_batch(originals, job, ctx, concurrency=1)
        assert [r.status for r in rows] == ["passed"] * 3, [errors(r) for r in rows]
        assert [r.format["match"] for r in rows] == ["new", "known", "known"]
        fid = rows[0].format["id"]
        golden = store.golden_set(ctx.conn, fid)
        assert len(golden) == 3 and all(g["object_key"] for g in golden)
        assert golden[0]["reason"] == "first document of the format"
        v1 = store.active_version(ctx.conn, fid)
        assert v1.version == 1 and v1.produced_by == "baseline" and v1.meta["reason"] == "first document"

        # 2. A second version that would break the golden documents is refused.
        current = Instructions.from_json(v1.instructions)
        broken = current.with_field("gross_total", dataclasses.replace(
            current.fields["gross_total"], locator=Locator(by="region", page=1, bbox=(0.0, 0.0, 0.02, 0.02)),
            fallbacks=()))
        prop = lifecycle.propose_version(job, ctx.conn, ctx.objects, fid, broken, produced_by="person:test",
                                         reason="person")
        assert not prop.accepted and prop.gate.details["new_failures"] == 3
        assert {v.field for v in prop.gate.violations} == {"gross_total"}
        v2 = store.get_version(ctx.conn, fid, prop.version)
        assert v2.status == "rejected" and v2.meta["refused"] and v2.meta["reference"]["kept"] == 0
        assert store.active_version(ctx.conn, fid).version == 1

        # 3. The sender renames its labels: replays fail; the second failure in a row is drift, and
        #    the re-learned instructions become version 3 through the reference gate.
        drift_docs = write(tmp_path / "drift", drifted, [10, 11])
        first = process_document(drift_docs[0], job, ctx)
        assert first.status == "needs_review" and first.format == {**first.format, "id": fid, "match": "known"}
        assert ("coverage", "required") in errors(first)
        assert store.get_health(ctx.conn, fid).consecutive_failures == 1
        second = process_document(drift_docs[1], job, ctx)
        assert second.status == "repaired", errors(second)
        assert second.format["id"] == fid and second.format["version"] == 3
        assert "drift" in second.repairs[0]["how"]
        v3 = store.active_version(ctx.conn, fid)
        assert v3.version == 3 and "drift" in v3.produced_by and v3.meta["reason"] == "drift"
        assert v3.meta["reference"]["kept"] == 3 and v3.meta["reference"]["new_failures"] == 0
        assert store.get_health(ctx.conn, fid).consecutive_failures == 0
        # Both layouts now read with the new version.
        assert process_document(drift_docs[0], job, ctx).status == "passed"
        assert process_document(originals[1], job, ctx).status == "passed"

        # 4. The same invoice sent again as another file is a duplicate: caught, not repaired.
        doc = parse(originals[1], Path(originals[1]).read_bytes(), settings=settings)
        resent = dataclasses.replace(doc, sha256="f" * 64)
        dup = process_document("resent.pdf", job, ctx, document=resent)
        assert dup.status == "needs_review"
        stale = [v for v in dup.verification["violations"] if v["gate"] == "stale"]
        assert stale and stale[0]["rule"] == "duplicate" and stale[0]["field"] == "invoice_number"
        assert stale[0]["repairable"] is False and not dup.repairs
