"""Textract AnalyzeDocument responses (FORMS, TABLES) built from synthetic documents.

The shape follows the Textract documentation (Block: Id, BlockType, Confidence, Text, Geometry
{BoundingBox {Width, Height, Left, Top}, Polygon [{X, Y} x 4]}, Relationships [{Type, Ids}],
EntityTypes, RowIndex/ColumnIndex/RowSpan/ColumnSpan, Page). The content is the synthetic
document's exact words, so a test knows what the mapping must give back:

    PAGE                 one per page
    LINE + WORD          one LINE per line of the document, its words as CHILD WORDs
    KEY_VALUE_SET        KEY = a field's printed label, VALUE = the field's words (fields whose
                         label sits left of or above the value)
    TABLE + CELL         the line items: a header row (COLUMN_HEADER) and one row per item
    SELECTION_ELEMENT    one selected check box, as the VALUE of an extra key "Paid"
"""
from __future__ import annotations

import uuid
from typing import Any

from docassay.extractors.document import BBox
from docassay.extractors.synth import SynthDoc
from docassay.extractors.synth.types import ITEM_COLUMNS


def _geometry(b: BBox, w: float, h: float) -> dict[str, Any]:
    left, top, right, bottom = b.x0 / w, b.y0 / h, b.x1 / w, b.y1 / h
    return {"BoundingBox": {"Width": right - left, "Height": bottom - top, "Left": left, "Top": top},
            "Polygon": [{"X": left, "Y": top}, {"X": right, "Y": top}, {"X": right, "Y": bottom},
                        {"X": left, "Y": bottom}]}


class _Builder:
    def __init__(self, w: float, h: float, page: int | None) -> None:
        self.w, self.h, self.page = w, h, page
        self.blocks: list[dict[str, Any]] = []

    def add(self, kind: str, box: BBox, *, children: list[str] = (), conf: float = 99.1, **extra: Any) -> str:
        bid = str(uuid.uuid4())
        block: dict[str, Any] = {"BlockType": kind, "Confidence": conf, "Geometry": _geometry(box, self.w, self.h),
                                 "Id": bid, **extra}
        if children:
            block["Relationships"] = [{"Type": "CHILD", "Ids": list(children)}]
        if self.page is not None:
            block["Page"] = self.page
        self.blocks.append(block)
        return bid


def response_for(sd: SynthDoc, *, with_page_numbers: bool = True, checkbox: bool = True) -> dict[str, Any]:
    """An AnalyzeDocument-shaped response for every page of `sd` (see the module docstring)."""
    blocks: list[dict[str, Any]] = []
    doc = sd.document
    for page in doc.pages:
        b = _Builder(page.width, page.height, page.number if with_page_numbers else None)
        word_ids: list[str] = [""] * len(page.words)
        line_ids: list[str] = []
        page_block = b.add("PAGE", BBox(0, 0, page.width, page.height))
        for line in page.lines:
            kids = []
            for i in line.word_ids:
                word_ids[i] = b.add("WORD", page.words[i].bbox, Text=page.words[i].text, TextType="PRINTED")
                kids.append(word_ids[i])
            # Textract lists a LINE before its WORDs; order in the list does not matter to the mapping.
            line_ids.append(b.add("LINE", line.bbox, children=kids, Text=" ".join(page.words[i].text for i in line.word_ids)))
        for span in sd.truth_spans.fields.values():
            if span.page != page.number or span.anchor is None or span.anchor.relation not in ("left", "above"):
                continue
            value = b.add("KEY_VALUE_SET", span.bbox, children=[word_ids[i] for i in span.word_ids],
                          EntityTypes=["VALUE"], conf=93.0)
            b.add("KEY_VALUE_SET", span.anchor.bbox, children=[word_ids[i] for i in span.anchor.word_ids],
                        EntityTypes=["KEY"], conf=95.5)
            b.blocks[-1]["Relationships"].append({"Type": "VALUE", "Ids": [value]})
        if checkbox and page.number == 1:
            box = BBox(page.width * 0.8, page.height * 0.02, page.width * 0.82, page.height * 0.03)
            mark = b.add("SELECTION_ELEMENT", box, SelectionStatus="SELECTED")
            value = b.add("KEY_VALUE_SET", box, children=[mark], EntityTypes=["VALUE"], conf=90.0)
            key_box = BBox(page.width * 0.7, page.height * 0.02, page.width * 0.75, page.height * 0.03)
            key_word = b.add("WORD", key_box, Text="Paid", TextType="PRINTED")
            line_ids.append(b.add("LINE", key_box, children=[key_word], Text="Paid"))
            b.add("KEY_VALUE_SET", key_box, children=[key_word], EntityTypes=["KEY"])
            b.blocks[-1]["Relationships"].append({"Type": "VALUE", "Ids": [value]})
        items = [it for it in sd.truth_spans.items if it.page == page.number]
        if items:
            cols = [c for c in ITEM_COLUMNS if any(c in it.cells for it in items)]
            cells: list[str] = []
            boxes: list[BBox] = []
            for ci, col in enumerate(cols, start=1):
                head = next((it.cells[col].header for it in items if col in it.cells and it.cells[col].header), None)
                if head is not None:
                    cells.append(b.add("CELL", head.bbox, children=[word_ids[i] for i in head.word_ids],
                                       RowIndex=1, ColumnIndex=ci, RowSpan=1, ColumnSpan=1,
                                       EntityTypes=["COLUMN_HEADER"]))
                    boxes.append(head.bbox)
            for ri, it in enumerate(items, start=2):
                for ci, col in enumerate(cols, start=1):
                    cell = it.cells.get(col)
                    box = cell.bbox if cell else it.bbox
                    cells.append(b.add("CELL", box, children=[word_ids[i] for i in cell.word_ids] if cell else [],
                                       RowIndex=ri, ColumnIndex=ci, RowSpan=1, ColumnSpan=1))
                    boxes.append(box)
            b.add("TABLE", BBox.enclosing(boxes), children=cells, EntityTypes=["STRUCTURED_TABLE"])
        b.blocks[0]["Relationships"] = [{"Type": "CHILD", "Ids": line_ids}]
        assert b.blocks[0]["Id"] == page_block
        blocks.extend(b.blocks)
    return {"DocumentMetadata": {"Pages": len(doc.pages)}, "Blocks": blocks,
            "AnalyzeDocumentModelVersion": "1.0"}
