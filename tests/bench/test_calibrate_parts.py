"""bench.calibrate's print-only parts: `dev-invoices-print.<split>` is the split's dev invoices with
their e-invoice attachments removed, selectable with `--parts` (tiny: one PDF, no pass run)."""
from __future__ import annotations

from pathlib import Path

from bench import calibrate
from bench.datasets import BenchDoc


def _hybrid(tmp_path: Path) -> Path:
    from docassay.extractors.synth import make_document, make_format, to_pdf
    from docassay.extractors.synth.einvoice import embed_xml, to_cii
    doc = make_document(make_format(3), 5)
    p = tmp_path / "hybrid.pdf"
    p.write_bytes(embed_xml(to_pdf(doc), to_cii(doc.truth)))
    return p


def _xml_count(pdf: bytes) -> int:
    from docassay.extractors.einvoice.attachments import embedded_xml
    return len(embedded_xml(pdf, "t.pdf", 10**7).xml)


def test_part_names():
    assert calibrate.part_set("dev-invoices-print.dev-tune") == ("dev-invoices", "dev-tune", True)
    assert calibrate.part_set("dev-invoices.dev-tune") == ("dev-invoices", "dev-tune", False)
    assert calibrate.part_set("synth-invoices-unseen") == ("synth-invoices-unseen", "", False)
    assert "dev-invoices-print.dev-tune" not in calibrate.PARTS + calibrate.EVAL_PARTS   # opt-in only


def test_print_parts_strip_the_attachment_and_keep_the_split(tmp_path, monkeypatch):
    hybrid = _hybrid(tmp_path)
    assert _xml_count(hybrid.read_bytes()) == 1
    docs = [BenchDoc(f"zugferd-{i}", str(hybrid), {}, "invoice", origin="zugferd", group=f"g{i}") for i in range(6)]

    class FakeSession:
        scratch = tmp_path / "scratch"

        def docs(self, set_name):
            assert set_name == "dev-invoices"
            return docs

    plain = calibrate._parts_docs(FakeSession(), "dev-invoices.dev-tune")
    printed = calibrate._parts_docs(FakeSession(), "dev-invoices-print.dev-tune")
    assert [d.doc_id for d in printed] == [d.doc_id for d in plain] and plain
    assert all(d.path == str(hybrid) for d in plain)
    for d in printed:
        assert d.path != str(hybrid) and _xml_count(Path(d.path).read_bytes()) == 0
        assert d.truth == {} and d.origin == "zugferd"
