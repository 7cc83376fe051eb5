"""Textract responses into the Document model: saved JSON, the asynchronous API on moto, the
synchronous AnalyzeDocument through botocore's Stubber (moto does not implement it)."""
from __future__ import annotations

import io
import json
from typing import Any

import pytest
from PIL import Image

from docassay.extractors.document import Document
from docassay.extractors.errors import ParseError
from docassay.extractors.parsers import detect, parse
from docassay.extractors.parsers.textract import DEFAULT_PAGE_SIZE, FEATURES, needs_textract
from docassay.extractors.synth import SynthDoc, generate, to_pdf, to_png
from docassay.infra.config import Settings
from textract_blocks import response_for

boto3 = pytest.importorskip("boto3")
moto = pytest.importorskip("moto")


@pytest.fixture(scope="module")
def invoice() -> SynthDoc:
    return next(iter(generate(1, 1, kind="invoice", seed=3, split="dev")))


def _json(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def _close(a: float, b: float, tol: float = 0.01) -> bool:
    return abs(a - b) <= tol


def test_saved_response_maps_pages_words_lines_and_geometry(invoice: SynthDoc) -> None:
    data = _json(response_for(invoice))
    assert detect(data, "analysis.json").name == "textract"
    doc = parse("analysis.json", data)
    assert doc.kind == "textract" and doc.parser == "textract" and len(doc.pages) == len(invoice.document.pages)
    for got, want in zip(doc.pages, invoice.document.pages):
        assert got.source == "textract"
        # sizes are unknown in a saved response: boxes are scaled to the default page size
        sx, sy = DEFAULT_PAGE_SIZE[0] / want.width, DEFAULT_PAGE_SIZE[1] / want.height
        assert (got.width, got.height) == DEFAULT_PAGE_SIZE
        want_words = sorted((w.text, round(w.bbox.x0 * sx, 1), round(w.bbox.y0 * sy, 1)) for w in want.words)
        got_words = sorted((w.text, round(w.bbox.x0, 1), round(w.bbox.y0, 1)) for w in got.words if w.text != "Paid")
        assert got_words == want_words
        # every printed line of the original comes back inside one line, its words in order
        rows = [[w.text for w in got.line_words(ln)] for ln in got.lines]
        for ln in want.lines:
            words = [want.words[i].text for i in ln.word_ids]
            assert any(_contains(row, words) for row in rows), words


def _contains(row: list[str], words: list[str]) -> bool:
    return any(row[i:i + len(words)] == words for i in range(len(row) - len(words) + 1))


def test_key_values_tables_cells_and_selection_marks(invoice: SynthDoc) -> None:
    doc = parse("analysis.json", _json(response_for(invoice)))
    page = doc.pages[0]
    kv = {k.key: k for k in page.key_values}
    anchored = {f: s for f, s in invoice.truth_spans.fields.items()
                if s.page == 1 and s.anchor is not None and s.anchor.relation in ("left", "above")}
    assert len(anchored) >= 3
    for span in anchored.values():
        got = kv[span.anchor.text]
        assert got.value == span.text and got.confidence == pytest.approx(0.93)
        sx, sy = DEFAULT_PAGE_SIZE[0] / invoice.document.pages[0].width, DEFAULT_PAGE_SIZE[1] / invoice.document.pages[0].height
        assert got.value_bbox is not None and _close(got.value_bbox.x0, span.bbox.x0 * sx, 0.05)
        assert _close(got.key_bbox.y0, span.anchor.bbox.y0 * sy, 0.05)
    assert kv["Paid"].value == "X", "a SELECTED selection element reads as X"
    assert len(page.tables) == 1
    table = page.tables[0]
    items = [it for it in invoice.truth_spans.items if it.page == 1]
    grid = table.grid()
    assert table.n_rows == len(items) + 1
    assert all(c.header for c in table.cells if c.row == 0) and not any(c.header for c in table.cells if c.row > 0)
    for r, it in enumerate(items, start=1):
        assert [cell for cell in grid[r] if cell] == [it.cells[c].text for c in ("description", "quantity", "unit_price", "line_total") if c in it.cells]


def test_paginated_responses_and_page_numbers() -> None:
    docs = list(generate(1, 2, kind="invoice", seed=5, split="dev"))
    first, second = response_for(docs[0]), response_for(docs[1])
    for b in second["Blocks"]:
        b["Page"] = b["Page"] + len(docs[0].document.pages)
    doc = parse("out.json", _json([first, second]))     # Textract's async output: one JSON per result page
    assert len(doc.pages) == len(docs[0].document.pages) + len(docs[1].document.pages)
    assert [p.number for p in doc.pages] == list(range(1, len(doc.pages) + 1))
    assert all(p.words for p in doc.pages)


def test_merged_cells_become_one_cell_with_its_span() -> None:
    def cell(i: str, r: int, c: int, text_ids: list[str]) -> dict:
        return {"BlockType": "CELL", "Id": i, "RowIndex": r, "ColumnIndex": c, "RowSpan": 1, "ColumnSpan": 1,
                "Geometry": {"BoundingBox": {"Left": 0.1 * c, "Top": 0.1 * r, "Width": 0.1, "Height": 0.1}},
                "Relationships": [{"Type": "CHILD", "Ids": text_ids}] if text_ids else []}

    def word(i: str, text: str, c: int, r: int) -> dict:
        return {"BlockType": "WORD", "Id": i, "Text": text,
                "Geometry": {"BoundingBox": {"Left": 0.1 * c + 0.01, "Top": 0.1 * r + 0.01, "Width": 0.05, "Height": 0.02}}}
    blocks = [word("w1", "Total", 1, 1), word("w2", "9.00", 3, 1), word("w3", "net", 1, 2), word("w4", "1", 2, 2),
              cell("c11", 1, 1, ["w1"]), cell("c12", 1, 2, []), cell("c13", 1, 3, ["w2"]),
              cell("c21", 2, 1, ["w3"]), cell("c22", 2, 2, ["w4"]), cell("c23", 2, 3, []),
              {"BlockType": "MERGED_CELL", "Id": "m1", "RowIndex": 1, "ColumnIndex": 1, "RowSpan": 1, "ColumnSpan": 2,
               "Geometry": {"BoundingBox": {"Left": 0.1, "Top": 0.1, "Width": 0.2, "Height": 0.1}},
               "Relationships": [{"Type": "CHILD", "Ids": ["c11", "c12"]}]},
              {"BlockType": "TABLE", "Id": "t", "Geometry": {"BoundingBox": {"Left": 0.1, "Top": 0.1, "Width": 0.3, "Height": 0.2}},
               "Relationships": [{"Type": "CHILD", "Ids": ["c11", "c12", "c13", "c21", "c22", "c23"]},
                                 {"Type": "MERGED_CELL", "Ids": ["m1"]}]}]
    blocks[-1]["Relationships"][0]["Ids"].append("m1")
    doc = parse("t.json", _json({"Blocks": blocks}))
    (table,) = doc.pages[0].tables
    first = [c for c in table.cells if c.row == 0]
    assert [(c.col, c.col_span, c.text) for c in first] == [(0, 2, "Total"), (2, 1, "9.00")]
    assert (table.n_rows, table.n_cols) == (2, 3)


@pytest.mark.parametrize("payload, kind, needle", [
    ({"Blocks": [{"BlockType": "WORD", "Text": "x"}]}, "corrupt", "no Id"),
    ({"Blocks": [{"BlockType": "WORD", "Id": "a", "Text": "x", "Geometry": {}}]}, "corrupt", "Geometry"),
    ({"Blocks": [{"BlockType": "WORD", "Id": "a", "Text": "x", "Page": 0,
                  "Geometry": {"BoundingBox": {"Left": 0, "Top": 0, "Width": 1, "Height": 1}}}]}, "corrupt", "Page"),
    ({"Blocks": [{"BlockType": "WORD", "Id": "a", "Text": "x",
                  "Geometry": {"BoundingBox": {"Left": 0, "Top": "0", "Width": 1, "Height": 1}}}]}, "corrupt", "Geometry"),
    ({"Blocks": [{"BlockType": "CELL", "Id": "c", "RowIndex": -1, "ColumnIndex": 1,
                  "Geometry": {"BoundingBox": {"Left": 0, "Top": 0, "Width": 1, "Height": 1}}},
                 {"BlockType": "TABLE", "Id": "t", "Relationships": [{"Type": "CHILD", "Ids": ["c"]}],
                  "Geometry": {"BoundingBox": {"Left": 0, "Top": 0, "Width": 1, "Height": 1}}}]}, "corrupt", "RowIndex"),
    ([{"Blocks": []}, {"nothing": 1}], "corrupt", "item 1"),
    ({"Blocks": []}, "no_text", "no text"),
])
def test_malformed_responses_are_parse_errors(payload: Any, kind: str, needle: str) -> None:
    with pytest.raises(ParseError) as err:
        parse("bad.json", _json(payload))
    assert err.value.kind == kind and needle in err.value.message


def test_deep_json_and_page_limits_are_enforced() -> None:
    deep = b'{"Blocks": [' + b"[" * 200 + b"]" * 200 + b"]}"
    with pytest.raises(ParseError) as err:
        parse("deep.json", deep)
    assert err.value.kind == "too_large"
    many = {"Blocks": [{"BlockType": "PAGE", "Id": "p", "Page": 10_000,
                        "Geometry": {"BoundingBox": {"Left": 0, "Top": 0, "Width": 1, "Height": 1}}}]}
    with pytest.raises(ParseError) as err:
        parse("many.json", _json(many))
    assert err.value.kind == "too_large" and "max_pages" in err.value.message


def test_only_scans_and_images_go_to_textract(invoice: SynthDoc) -> None:
    png = to_png(invoice, dpi=40)[0]
    scanned = io.BytesIO()
    Image.open(io.BytesIO(png)).convert("RGB").save(scanned, format="PDF")
    assert needs_textract("image", png)
    assert needs_textract("pdf", scanned.getvalue())
    assert not needs_textract("pdf", to_pdf(invoice)), "a PDF with a text layer is read locally"
    assert not needs_textract("text", b"hello")


def _settings(tmp_path) -> Settings:
    return Settings.load(home=tmp_path, ocr_engine="textract")


@pytest.mark.usefixtures("aws_offline")
def test_s3_documents_go_through_the_asynchronous_api_on_moto(invoice: SynthDoc, tmp_path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from moto import mock_aws
    from moto.textract.models import TextractBackend

    png = to_png(invoice, dpi=40)[0]
    width, height = Image.open(io.BytesIO(png)).size
    monkeypatch.setattr(TextractBackend, "BLOCKS", response_for(invoice)["Blocks"])
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="docs")
        s3.put_object(Bucket="docs", Key="inbox/scan.png", Body=png)
        doc = parse("s3://docs/inbox/scan.png", settings=_settings(tmp_path))   # bytes read from S3 too
    assert isinstance(doc, Document) and doc.kind == "textract" and doc.parser == "textract-api"
    assert doc.sha256 == Document.hash_bytes(png) and doc.meta["textract"] == "api"
    page = doc.pages[0]
    assert (page.width, page.height) == (float(width), float(height)), "boxes are in the image's pixels"
    want = invoice.document.pages[0]
    w0 = next(w for w in want.words if w.text == want.words[0].text)
    g0 = next(w for w in page.words if w.text == w0.text)
    assert _close(g0.bbox.x0 / width, w0.bbox.x0 / want.width) and _close(g0.bbox.y1 / height, w0.bbox.y1 / want.height)
    assert any(kv.key and kv.value for kv in page.key_values) and page.tables


@pytest.mark.usefixtures("aws_offline")
def test_local_pages_go_to_analyze_document_one_call_each(tmp_path) -> None:
    from botocore.stub import ANY, Stubber

    from docassay.extractors.parsers.textract import analyze

    docs = list(generate(1, 2, kind="invoice", seed=11, split="dev"))
    frames = [Image.open(io.BytesIO(to_png(d, dpi=30)[0])).convert("RGB") for d in docs]
    tiff = io.BytesIO()
    frames[0].save(tiff, format="TIFF", save_all=True, append_images=frames[1:])
    client = boto3.client("textract", region_name="us-east-1")
    with Stubber(client) as stub:
        for d in docs:
            stub.add_response("analyze_document", response_for(d, with_page_numbers=False),
                              {"Document": {"Bytes": ANY}, "FeatureTypes": FEATURES})
        doc = analyze(tiff.getvalue(), "two-pages.tif", _settings(tmp_path), parser_kind="image", client=client)
        stub.assert_no_pending_responses()
    assert [p.number for p in doc.pages] == [1, 2]
    assert {w.text for w in doc.pages[1].words} >= {w.text for w in docs[1].document.pages[0].words}
    assert (doc.pages[0].width, doc.pages[0].height) == (float(frames[0].width), float(frames[0].height))

    with Stubber(client) as stub:
        stub.add_client_error("analyze_document", "BadDocumentException", "bad document")
        with pytest.raises(ParseError) as err:
            analyze(to_png(docs[0], dpi=30)[0], "x.png", _settings(tmp_path), parser_kind="image", client=client)
    assert err.value.kind == "corrupt" and "BadDocumentException" in err.value.message
