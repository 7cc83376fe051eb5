"""Rendering synthetic documents: PDF round trips (pdfium text, the project's parser), PNG, OCR lines,
and the on-disk data set."""
from __future__ import annotations

import io
import json
from collections import Counter

import numpy as np
import pypdfium2 as pdfium
import pytest
from PIL import Image

from docassay.extractors.synth import generate, make_document, make_format, to_ocr_lines, to_pdf, to_png, write_dataset
from docassay.extractors.synth.types import SynthDoc


@pytest.fixture(scope="module")
def docs() -> list[SynthDoc]:
    out = list(generate(12, 1, kind="invoice", seed=21))
    out += list(generate(6, 1, kind="receipt", seed=21))
    multi = next(sd for sd in generate(80, 1, kind="invoice", seed=8) if sd.n_pages > 1)
    return out + [multi]


def _pdf_texts(data: bytes) -> list[str]:
    pdf = pdfium.PdfDocument(data)
    try:
        return [" ".join(pdf[i].get_textpage().get_text_range().split()) for i in range(len(pdf))]
    finally:
        pdf.close()


def _span_chunks(sd: SynthDoc) -> list[tuple[int, str]]:
    """(page, text) of each printed line of every truth value (values that wrap give several)."""
    chunks: list[tuple[int, str]] = []
    groups = [(s.page, s.word_ids) for s in sd.truth_spans.fields.values()]
    groups += [(it.page, c.word_ids) for it in sd.truth_spans.items for c in it.cells.values()]
    for page, ids in groups:
        words = sd.document.pages[page - 1].words
        by_line: dict[int, list[str]] = {}
        for i in ids:
            by_line.setdefault(words[i].line, []).append(words[i].text)
        chunks += [(page, " ".join(ws)) for ws in by_line.values()]
    return chunks


def test_pdf_is_byte_identical_for_the_same_seed() -> None:
    fmt = make_format(31, "invoice")
    assert to_pdf(make_document(fmt, 2)) == to_pdf(make_document(make_format(31, "invoice"), 2))
    assert to_pdf(make_document(fmt, 2)) != to_pdf(make_document(fmt, 3))


def test_pdf_text_layer_holds_every_truth_value(docs: list[SynthDoc]) -> None:
    for sd in docs:
        texts = _pdf_texts(to_pdf(sd))
        assert len(texts) == sd.n_pages
        for page, chunk in _span_chunks(sd):
            assert chunk in texts[page - 1], (sd.doc_id, chunk)


def test_pdf_round_trip_through_the_project_parser(docs: list[SynthDoc]) -> None:
    parsers = pytest.importorskip("docassay.extractors.parsers")
    for sd in docs:
        parsed = parsers.parse(f"{sd.doc_id}.pdf", to_pdf(sd))
        assert len(parsed.pages) == sd.n_pages
        for mine, theirs in zip(sd.document.pages, parsed.pages):
            assert Counter(w.text for w in mine.words) == Counter(w.text for w in theirs.words), sd.doc_id
            assert abs(mine.width - theirs.width) < 0.5 and abs(mine.height - theirs.height) < 0.5
        # every truth word is found by the parser within a few points of where the layout put it
        for span in sd.truth_spans.fields.values():
            words = sd.document.pages[span.page - 1].words
            theirs = parsed.pages[span.page - 1].words
            for i in span.word_ids:
                w = words[i]
                assert any(o.text == w.text and abs(o.bbox.cx - w.bbox.cx) < 2 and abs(o.bbox.cy - w.bbox.cy) < 3
                           for o in theirs), (sd.doc_id, w)


def test_png_pages_and_determinism(docs: list[SynthDoc]) -> None:
    sd = docs[-1]                                   # the multi-page invoice
    pngs = to_png(sd, dpi=50)
    assert len(pngs) == sd.n_pages
    img = Image.open(io.BytesIO(pngs[0]))
    page = sd.document.pages[0]
    assert abs(img.size[0] - page.width * 50 / 72) <= 1 and abs(img.size[1] - page.height * 50 / 72) <= 1
    assert to_png(sd, dpi=50) == pngs
    receipt = next(d for d in docs if d.kind == "receipt")
    plain, noisy = to_png(receipt, dpi=60)[0], to_png(receipt, dpi=60, augment=True)[0]
    assert plain != noisy and to_png(receipt, dpi=60, augment=True)[0] == noisy


def test_ocr_lines_match_the_image(docs: list[SynthDoc]) -> None:
    receipt = next(d for d in docs if d.kind == "receipt")
    dpi = 100
    lines = to_ocr_lines(receipt, dpi)["lines"]
    assert all(set(line) == {"text", "quad"} and len(line["quad"]) == 8 for line in lines)
    img = Image.open(io.BytesIO(to_png(receipt, dpi)[0])).convert("L")
    inside = [img.crop((q[0], q[1], q[4], q[5])) for q in (line["quad"] for line in lines)]
    assert all(np.asarray(c).min() < 128 for c in inside if c.size[0] > 2)     # ink inside every quad
    joined = " ".join(line["text"] for line in lines)
    assert receipt.truth_spans.fields["total"].text in joined
    multi = to_ocr_lines(docs[-1], dpi)["lines"]
    assert {line["page"] for line in multi} == set(range(1, docs[-1].n_pages + 1))


def test_ocr_lines_read_by_the_project_parser(docs: list[SynthDoc]) -> None:
    parsers = pytest.importorskip("docassay.extractors.parsers")
    receipt = next(d for d in docs if d.kind == "receipt")
    data = json.dumps(to_ocr_lines(receipt)).encode()
    parsed = parsers.parse(f"{receipt.doc_id}.ocr.json", data)
    assert receipt.truth_spans.fields["total"].text in parsed.text


def test_write_dataset(tmp_path) -> None:
    rows = write_dataset(tmp_path, 2, 2, kind="receipt", split="unseen", seed=3, render=("png", "ocr", "pdf"), dpi=40)
    assert len(rows) == 4
    for r in rows:
        for key in ("document", "ground_truth", "spans", "ocr", "image"):
            assert (tmp_path / r[key]).exists(), key
        assert r["document"].endswith(".png") and r["set"] == "receipts" and r["split"] == "unseen"
        truth = json.loads((tmp_path / r["ground_truth"]).read_text())
        assert set(truth) == {"company", "date", "address", "total"}
    inv = write_dataset(tmp_path, 1, 1, kind="invoice", split="train", seed=3)
    again = write_dataset(tmp_path, 1, 1, kind="invoice", split="train", seed=3)
    assert inv == again
    manifest = [json.loads(line) for line in (tmp_path / "manifest.jsonl").read_text().splitlines()]
    assert len(manifest) == 5 and len({m["id"] for m in manifest}) == 5
    assert {"id", "set", "document", "ground_truth", "format_id", "split", "language", "pages"} <= set(manifest[-1])
    with pytest.raises(ValueError):
        write_dataset(tmp_path, 1, 1, render=("tiff",))
