"""E-invoices through the whole pipeline on real PostgreSQL: hybrids under use / check / ignore, a
swapped attachment, a standalone UBL credit note, hostile XML in a batch, and print-only copies read
by instructions learned from hybrids."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from docassay.extractors.synth import generate, to_pdf
from docassay.extractors.synth.einvoice import embed_xml, strip_attachments, to_cii, to_ubl
from docassay.flows.batch import load_rule_pack, load_schema, run_batch
from docassay.flows.context import Job, open_context
from docassay.flows.einvoice import GATE, RULE
from docassay.infra.config import Settings
from tests.extractors.test_einvoice_xmlsafe import LAUGHS, XXE_FILE

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "examples/invoices/schema.json"
RULES = ROOT / "examples/invoices/rules"


def _job(tmp_path: Path, dsn: str, mode: str) -> Job:
    settings = Settings.load(home=tmp_path / f"home-{mode}", db=dsn, concurrency=1)
    return Job(schema=load_schema(SCHEMA), rules=load_rule_pack(RULES), settings=settings, einvoice=mode,
               generator="baseline")


def _docs(n_formats: int = 2, n_docs: int = 2):
    return list(generate(n_formats, n_docs, kind="invoice", seed=7, split="dev"))


def _write(folder: Path, name: str, data: bytes) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_bytes(data)
    return str(p)


def _run(job: Job, sources: list[str]):
    with open_context(job.settings) as ctx:
        return run_batch(sources, job, ctx, concurrency=1)


def _violations(row) -> list[dict]:
    return [v for v in row.verification.get("violations", []) if v["rule"] == RULE]


def test_hybrid_use_reads_the_xml_with_print_provenance(tmp_path: Path, pg_fresh_dsn: str) -> None:
    sd = _docs(1, 1)[0]
    src = _write(tmp_path / "in", "h.pdf", embed_xml(to_pdf(sd), to_cii(sd.truth)))
    row, = _run(_job(tmp_path, pg_fresh_dsn, "use"), [src])
    assert row.status == "passed", row.verification
    assert row.record == sd.truth
    gate = row.verification["gates"][GATE]
    assert gate["passed"] and gate["details"]["syntax"] == "CII" and gate["details"]["attachment"] == "factur-x.xml"
    assert gate["details"]["learned"].startswith("new format"), gate["details"]
    assert row.format["match"] == "new" and row.format["id"]
    p = row.provenance["invoice_number"]
    assert p["source"] == "einvoice" and p["term"] == "BT-1" and p["page"] == 1 and len(p["bbox"]) == 4
    assert p["text"].replace(" ", "") == sd.truth["invoice_number"]


def test_hybrid_ignore_is_the_layout_path(tmp_path: Path, pg_fresh_dsn: str) -> None:
    sd = _docs(1, 1)[0]
    src = _write(tmp_path / "in", "h.pdf", embed_xml(to_pdf(sd), to_cii(sd.truth)))
    row, = _run(_job(tmp_path, pg_fresh_dsn, "ignore"), [src])
    assert GATE not in row.verification.get("gates", {})
    assert all("source" not in p for p in row.provenance.values()), "provenance from the layout reading"


def test_hybrid_check_compares_the_print(tmp_path: Path, pg_fresh_dsn: str) -> None:
    sd, other = _docs(2, 1)
    good = _write(tmp_path / "in", "good.pdf", embed_xml(to_pdf(sd), to_cii(sd.truth)))
    swapped = _write(tmp_path / "in", "swapped.pdf", embed_xml(to_pdf(sd), to_cii(other.truth)))
    rows = _run(_job(tmp_path, pg_fresh_dsn, "check"), [good, swapped])
    by = {Path(r.source).name: r for r in rows}
    g = by["good.pdf"].verification["gates"][GATE]
    assert g["details"]["mode"] == "check" and g["details"]["compared"] >= 3
    layout_right = {k for k, v in sd.truth.items() if by["good.pdf"].record.get(k) == v}
    assert not [v for v in _violations(by["good.pdf"]) if v["field"] in layout_right]
    bad = by["swapped.pdf"]
    assert bad.status == "needs_review"
    fields = {v["field"] for v in _violations(bad)}
    assert "invoice_number" in fields, _violations(bad)
    v = next(v for v in _violations(bad) if v["field"] == "invoice_number")
    assert v["expected"] == other.truth["invoice_number"] and v["actual"] == sd.truth["invoice_number"]
    assert "invoice_number" in v["message"] and "BT-1" in v["message"]


def test_swapped_attachment_under_use_needs_review(tmp_path: Path, pg_fresh_dsn: str) -> None:
    a, b = _docs(1, 2)                     # one sender's layout, two invoices
    job = _job(tmp_path, pg_fresh_dsn, "use")
    first = _write(tmp_path / "in", "a.pdf", embed_xml(to_pdf(a), to_cii(a.truth)))
    swapped = _write(tmp_path / "in", "b-with-a-xml.pdf", embed_xml(to_pdf(b), to_cii(a.truth)))
    r1, r2 = _run(job, [first, swapped])
    assert r1.status == "passed"
    assert r2.status == "needs_review", r2.verification
    fields = {v["field"] for v in _violations(r2)}
    assert "invoice_number" in fields and "gross_total" in fields
    assert r2.verification["gates"][GATE]["details"]["learned"].startswith("no: the print differs")


def test_standalone_ubl_credit_note_and_hostile_xml_in_one_batch(tmp_path: Path, pg_fresh_dsn: str) -> None:
    sd = _docs(1, 1)[0]
    folder = tmp_path / "in"
    cn = _write(folder, "credit.xml", to_ubl(sd.truth, credit_note=True))
    inv = _write(folder, "invoice.xml", to_cii(sd.truth))
    laughs = _write(folder, "laughs.xml", LAUGHS)
    xxe = _write(folder, "xxe.pdf", embed_xml(to_pdf(sd), XXE_FILE))
    broken = _write(folder, "broken.xml", b"<?xml version='1.0'?><Invoice><ID>1</Invoice>")
    rows = _run(_job(tmp_path, pg_fresh_dsn, "use"), [laughs, cn, xxe, broken, inv])
    by = {Path(r.source).name: r for r in rows}
    for name, kind in (("laughs.xml", "unsafe"), ("xxe.pdf", "unsafe"), ("broken.xml", "corrupt")):
        r = by[name]
        assert r.status == "error" and r.error["kind"] == kind, (name, r.error)
        assert "DTD" in r.error["message"] or "well-formed" in r.error["message"]
    c = by["credit.xml"]
    assert c.record == sd.truth, "a UBL credit note's amounts as its XML states them"
    assert c.verification["gates"][GATE]["details"]["credit_note"] is True
    assert c.format["match"] == "einvoice" and c.provenance["gross_total"]["source"] == "einvoice"
    assert c.provenance["gross_total"]["xpath"]
    assert by["invoice.xml"].record == sd.truth
    assert by["invoice.xml"].status in ("passed", "needs_review")
    assert c.status in ("passed", "needs_review")
    # The second document repeats the invoice number of the first: the stale gate says so.
    second = by["invoice.xml"] if rows.index(by["invoice.xml"]) > rows.index(c) else c
    if second.status == "needs_review":
        assert "stale" in json.dumps(second.verification)


def test_print_only_copies_replay_instructions_learned_from_hybrids(tmp_path: Path, pg_fresh_dsn: str) -> None:
    docs = _docs(2, 2)
    folder = tmp_path / "in"
    hybrids = [_write(folder, f"{sd.doc_id}.pdf", embed_xml(to_pdf(sd), to_cii(sd.truth))) for sd in docs]
    prints = [_write(folder / "print", f"{sd.doc_id}.pdf", strip_attachments(Path(h).read_bytes()))
              for sd, h in zip(docs, hybrids)]
    rows = _run(_job(tmp_path, pg_fresh_dsn, "use"), hybrids + prints)
    learned = rows[:len(hybrids)]
    assert all(r.verification["gates"][GATE]["passed"] for r in learned)
    copies = rows[len(hybrids):]
    assert all(r.format["match"] == "known" for r in copies), [r.format for r in copies]
    assert all(GATE not in r.verification.get("gates", {}) for r in copies), "the copies have no XML"
    right = sum(r.record.get(k) == v for r, sd in zip(copies, docs) for k, v in sd.truth.items() if k != "line_items")
    total = sum(1 for sd in docs for k in sd.truth if k != "line_items")
    assert right / total >= 0.9, (right, total)


def test_cli_and_job_options_take_the_mode() -> None:
    from docassay.flows.cli import build_parser
    from docassay.flows.jobs import JobOptions, build_job
    from docassay.infra.errors import ConfigError

    p = build_parser()
    assert p.parse_args(["extract", "x.pdf", "--schema", "s.json", "--out", "o"]).einvoice == "use"
    assert p.parse_args(["extract", "x.pdf", "--schema", "s.json", "--out", "o", "--einvoice", "check"]).einvoice == "check"
    args = p.parse_args(["deploy", "run-once", "--inbox", "i", "--dest", "d", "--schema", "s", "--einvoice", "ignore"])
    assert args.einvoice == "ignore"
    with pytest.raises(SystemExit):
        p.parse_args(["extract", "x.pdf", "--schema", "s.json", "--out", "o", "--einvoice", "trust"])
    with pytest.raises(ConfigError):
        build_job(JobOptions(schema=SCHEMA, generator="baseline", einvoice="trust"))
    assert build_job(JobOptions(schema=SCHEMA, generator="baseline", einvoice="check")).einvoice == "check"


def test_print_differs_as_a_warning_and_bare_xml_under_ignore(tmp_path: Path, pg_fresh_dsn: str) -> None:
    sd, other = _docs(2, 1)
    folder = tmp_path / "in"
    swapped = _write(folder, "swapped.pdf", embed_xml(to_pdf(sd), to_cii(other.truth)))
    job = _job(tmp_path, pg_fresh_dsn, "use")
    job.schema = {**job.schema, "x-docassay": {"einvoice": {"print_differs": "warning"}}}
    row, = _run(job, [swapped])
    assert _violations(row) and all(v["severity"] == "warning" for v in _violations(row))
    assert row.verification["gates"][GATE]["passed"]
    bare = _write(folder, "bare.xml", to_cii(sd.truth))
    row, = _run(_job(tmp_path, pg_fresh_dsn, "ignore"), [bare])
    assert row.status == "error" and row.error["kind"] == "unsupported" and "--einvoice" in row.error["message"]


def test_estimate_counts_bare_xml_invoices_as_needing_no_model(tmp_path: Path, pg_fresh_dsn: str) -> None:
    from docassay.flows.estimate import estimate_batch
    sd = _docs(1, 1)[0]
    xml = _write(tmp_path / "in", "inv.xml", to_ubl(sd.truth))
    job = _job(tmp_path, pg_fresh_dsn, "use")
    with open_context(job.settings) as ctx:
        est = estimate_batch([xml], job, ctx).to_json()
    assert (est["documents"], est["einvoice_xml"], est["need_model"], est["errors"]) == (1, 1, 0, 0)
