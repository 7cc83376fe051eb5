"""Amazon Textract: AnalyzeDocument (FORMS, TABLES) responses as a `Document`.

    TextractJsonParser   a saved response (`{"Blocks": [...]}`, or a list of paginated ones);
                         registry entry `textract`, found by content like every parser
    analyze(data, source, settings, client=None) -> Document
                         calls Textract for an image or a scanned PDF; `parse` routes here when
                         `Settings.ocr_engine == "textract"` (CLI `--parser textract`)
    blocks_to_pages(blocks, sizes, budget) -> list[Page]
                         the mapping both share

How the API is called. A document already in S3 (`s3://bucket/key`) goes to the asynchronous
StartDocumentAnalysis / GetDocumentAnalysis pair (any number of pages; polled until done within
`parse_timeout_s`, every result page followed through `NextToken`). Local bytes go to the
synchronous AnalyzeDocument, one call per page (a multi-page PDF is split into one-page PDFs, a
multi-frame TIFF into PNG frames), each at most `SYNC_MAX_BYTES`.

How blocks map (Textract geometry is relative, 0..1, origin top-left, like ours):
    PAGE                 a `Page`; its number is the block's `Page` field (1 when absent). Width and
                         height are the document's own (image pixels, PDF points) when known, else
                         `DEFAULT_PAGE_SIZE`; every box is scaled by them.
    WORD                 a `Word` (text cleaned, `BoundingBox` scaled; a `Polygon` stands in when
                         the box is missing).
    LINE                 Textract's lines are segments of a printed row (a label and an amount far
                         to its right come as two LINEs), so rows are rebuilt from the words'
                         geometry with `build_lines`, as for OCR line files: every Textract LINE
                         ends up, words in order, inside one `Line`.
    KEY_VALUE_SET        a `KeyValue` per KEY block: its CHILD words, the words of the VALUE block
                         it points to, both boxes, confidence = the lower of the two (0..1).
    TABLE / CELL         a `Table` per TABLE: cells at RowIndex/ColumnIndex (1-based there,
                         0-based here) with their spans; COLUMN_HEADER cells have `header`; a
                         MERGED_CELL becomes one cell (text of its parts, its span) at its
                         top-left. Pages of a response without TABLE blocks get `detect_tables`.
    SELECTION_ELEMENT    "X" in the text of the key-value or cell that holds it when SELECTED.

Malformed responses are `ParseError(kind="corrupt")` naming the block; service failures are
`ParseError` too (a bad or unsupported document, too large, or `unreadable` when Textract could not
be reached), so a batch goes on.
"""
from __future__ import annotations

import io
import math
import time
from dataclasses import dataclass
from typing import Any, Mapping, Sequence, TypeGuard

from docassay.extractors.document import BBox, Cell, Document, KeyValue, Page, Table, Word
from docassay.extractors.errors import ParseError
from docassay.extractors.parsers.base import Budget, Parser
from docassay.extractors.parsers.jsonguard import load_json
from docassay.extractors.parsers.words import clean_text
from docassay.extractors.tables import detect_tables
from docassay.infra.config import Settings

__all__ = ["TextractJsonParser", "analyze", "blocks_to_pages", "needs_textract", "DEFAULT_PAGE_SIZE",
           "FEATURES", "SYNC_MAX_BYTES"]

FEATURES = ["FORMS", "TABLES"]
DEFAULT_PAGE_SIZE = (1000.0, 1294.0)     # US Letter proportions, when the page's own size is unknown
SYNC_MAX_BYTES = 10 * 1024 * 1024        # AnalyzeDocument's limit for bytes sent inline
POLL_FIRST_S = 0.5                       # asynchronous job: first wait, doubled up to POLL_MAX_S
POLL_MAX_S = 5.0
ENGINE = "textract"


class TextractJsonParser(Parser):
    """A saved Textract response: `{"Blocks": [...]}` or a JSON list of such (paginated output)."""
    name = "textract"
    kind = "textract"

    def sniff(self, data: bytes, source: str) -> bool:
        head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
        return head[:1] in (b"{", b"[") and b'"Blocks"' in head

    def parse(self, data: bytes, source: str, settings: Settings) -> Document:
        budget = Budget.for_settings(settings, source)
        doc = load_json(data.removeprefix(b"\xef\xbb\xbf"), max_depth=settings.limits.max_json_depth,
                        max_values=settings.limits.max_json_values,
                        what="the Textract JSON file", source=source)
        responses = doc if isinstance(doc, list) else [doc]
        blocks: list[Any] = []
        for i, r in enumerate(responses):
            if not isinstance(r, dict) or not isinstance(r.get("Blocks"), list):
                where = f"item {i} of the list" if isinstance(doc, list) else "the file"
                raise ParseError(f'{where} is not a Textract response (an object with a "Blocks" array)',
                                 kind="corrupt", source=source)
            blocks.extend(r["Blocks"])
        pages = blocks_to_pages(blocks, {}, budget)
        return self.document(data, source, pages, blocks=len(blocks), textract="file")


# ----------------------------------------------------------------------------------- the mapping

@dataclass(frozen=True)
class _Block:
    id: str
    type: str
    page: int
    raw: Mapping[str, Any]
    index: int                       # position in the response, for error messages

    def children(self, kind: str = "CHILD") -> list[str]:
        out: list[str] = []
        for rel in self.raw.get("Relationships") or ():
            if isinstance(rel, Mapping) and rel.get("Type") == kind:
                out.extend(str(i) for i in rel.get("Ids") or ())
        return out

    @property
    def entity_types(self) -> tuple[str, ...]:
        return tuple(str(e) for e in self.raw.get("EntityTypes") or ())

    @property
    def confidence(self) -> float | None:
        c = self.raw.get("Confidence")
        return float(c) / 100.0 if isinstance(c, (int, float)) and math.isfinite(c) else None


def blocks_to_pages(blocks: Sequence[Any], sizes: Mapping[int, tuple[float, float]], budget: Budget) -> list[Page]:
    """Pages of a Textract response (see the module docstring for the mapping).

    `sizes` maps a page number to its (width, height) in the document's unit; missing pages get
    `DEFAULT_PAGE_SIZE`. Raises `ParseError(kind="corrupt")` on a malformed block and
    `too_large` past `max_pages` / `max_words_per_page`.
    """
    src = budget.source
    by_id: dict[str, _Block] = {}
    order: list[_Block] = []
    for i, raw in enumerate(blocks):
        if not isinstance(raw, Mapping) or not isinstance(raw.get("Id"), str) or not isinstance(raw.get("BlockType"), str):
            raise ParseError(f"Blocks[{i}] of the Textract response has no Id or BlockType", kind="corrupt", source=src)
        page = raw.get("Page", 1)
        if not isinstance(page, int) or isinstance(page, bool) or page < 1:
            raise ParseError(f"Blocks[{i}] has an invalid Page number {page!r}", kind="corrupt", source=src)
        b = _Block(raw["Id"], raw["BlockType"], page, raw, i)
        by_id.setdefault(b.id, b)
        order.append(b)
    numbers = sorted({b.page for b in order}) or [1]
    budget.check_pages(numbers[-1])
    has_tables = any(b.type == "TABLE" for b in order)
    pages: list[Page] = []
    for n in range(1, numbers[-1] + 1):
        budget.check_time(f"Textract page {n}")
        width, height = sizes.get(n, DEFAULT_PAGE_SIZE)
        mine = [b for b in order if b.page == n]
        words = [Word(t, _bbox(b, width, height, src)) for b in mine if b.type == "WORD"
                 for t in [clean_text(str(b.raw.get("Text") or "")).strip()] if t]
        budget.check_words(len(words), n)
        page = Page.from_words(n, float(width), float(height), words, source="textract")
        page.key_values = _key_values(mine, by_id, width, height, src)
        page.tables = _tables(mine, by_id, width, height, src) if has_tables else detect_tables(page)
        pages.append(page)
    return pages


def _bbox(b: _Block, width: float, height: float, source: str) -> BBox:
    geo = b.raw.get("Geometry")
    box = geo.get("BoundingBox") if isinstance(geo, Mapping) else None
    if isinstance(box, Mapping):
        vals = [box.get(k) for k in ("Left", "Top", "Width", "Height")]
        if _finite(vals):
            left, top, w, h = (float(v) for v in vals)
            return BBox(left * width, top * height, (left + w) * width, (top + h) * height)
    poly = geo.get("Polygon") if isinstance(geo, Mapping) else None
    if isinstance(poly, list) and poly:
        xs = [p.get("X") for p in poly if isinstance(p, Mapping)]
        ys = [p.get("Y") for p in poly if isinstance(p, Mapping)]
        if len(xs) == len(poly) and _finite(xs) and _finite(ys):
            return BBox(min(xs) * width, min(ys) * height, max(xs) * width, max(ys) * height)
    raise ParseError(f"Blocks[{b.index}] ({b.type} {b.id}) has no usable Geometry", kind="corrupt", source=source)


def _finite(values: list[Any]) -> TypeGuard[list[float]]:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values)


def _text(b: _Block, by_id: Mapping[str, _Block]) -> str:
    """Text of a block from its CHILD words (and selection marks), in the order given."""
    parts: list[str] = []
    for cid in b.children():
        c = by_id.get(cid)
        if c is None:
            continue
        if c.type == "WORD":
            t = clean_text(str(c.raw.get("Text") or "")).strip()
            if t:
                parts.append(t)
        elif c.type == "SELECTION_ELEMENT" and c.raw.get("SelectionStatus") == "SELECTED":
            parts.append("X")
    return " ".join(parts)


def _key_values(mine: list[_Block], by_id: Mapping[str, _Block], w: float, h: float, src: str) -> list[KeyValue]:
    out: list[KeyValue] = []
    for b in mine:
        if b.type != "KEY_VALUE_SET" or "KEY" not in b.entity_types:
            continue
        values = [by_id[v] for v in b.children("VALUE") if v in by_id]
        text = " ".join(t for t in (_text(v, by_id) for v in values) if t)
        vbox = BBox.enclosing(_bbox(v, w, h, src) for v in values) if values else None
        confs = [c for c in [b.confidence, *(v.confidence for v in values)] if c is not None]
        out.append(KeyValue(_text(b, by_id), text, _bbox(b, w, h, src), vbox, min(confs) if confs else None))
    return out


def _tables(mine: list[_Block], by_id: Mapping[str, _Block], w: float, h: float, src: str) -> list[Table]:
    tables: list[Table] = []
    for t in mine:
        if t.type != "TABLE":
            continue
        kids = [by_id[c] for c in t.children() if c in by_id]
        cells: dict[tuple[int, int], Cell] = {}
        for c in kids:
            if c.type != "CELL":
                continue
            r, k = _index(c, "RowIndex", src), _index(c, "ColumnIndex", src)
            cells[(r, k)] = Cell(r - 1, k - 1, _text(c, by_id), _bbox(c, w, h, src),
                                 _index(c, "RowSpan", src, 1), _index(c, "ColumnSpan", src, 1),
                                 header="COLUMN_HEADER" in c.entity_types)
        for m in (c for c in kids if c.type == "MERGED_CELL"):
            parts = [by_id[i] for i in m.children() if i in by_id and by_id[i].type == "CELL"]
            keys = sorted((_index(p, "RowIndex", src), _index(p, "ColumnIndex", src)) for p in parts)
            if not keys:
                continue
            for key in keys[1:]:
                cells.pop(key, None)
            first = cells.get(keys[0])
            text = " ".join(t for t in (_text(p, by_id) for p in sorted(
                parts, key=lambda p: (_index(p, "RowIndex", src), _index(p, "ColumnIndex", src)))) if t)
            cells[keys[0]] = Cell(keys[0][0] - 1, keys[0][1] - 1, text, _bbox(m, w, h, src),
                                  _index(m, "RowSpan", src, 1), _index(m, "ColumnSpan", src, 1),
                                  header=bool(first and first.header) or "COLUMN_HEADER" in m.entity_types)
        if not cells:
            continue
        ordered = sorted(cells.values(), key=lambda c: (c.row, c.col))
        n_rows = max(c.row + c.row_span for c in ordered)
        n_cols = max(c.col + c.col_span for c in ordered)
        tables.append(Table(_bbox(t, w, h, src), n_rows, n_cols, ordered))
    return tables


def _index(b: _Block, key: str, source: str, default: int | None = None) -> int:
    v = b.raw.get(key, default)
    if not isinstance(v, int) or isinstance(v, bool) or v < 1 or v > 10_000:
        raise ParseError(f"Blocks[{b.index}] ({b.type} {b.id}) has an invalid {key} {v!r}",
                         kind="corrupt", source=source)
    return v


# ---------------------------------------------------------------------------------- calling the API

def needs_textract(parser_kind: str, data: bytes) -> bool:
    """Whether a document of this kind goes to Textract: images always, PDFs when some page has
    no text layer (a scan). A PDF that cannot even be opened is left to the PDF parser, which
    says why."""
    if parser_kind == "image":
        return True
    if parser_kind != "pdf":
        return False
    import pypdfium2 as pdfium

    from docassay.extractors.parsers.pdf import PDFIUM_LOCK
    with PDFIUM_LOCK:
        try:
            pdf = pdfium.PdfDocument(data)
        except pdfium.PdfiumError:
            return False
        try:
            for i in range(len(pdf)):
                page = pdf[i]
                try:
                    tp = page.get_textpage()
                    try:
                        if tp.count_chars() == 0:
                            return True
                    finally:
                        tp.close()
                finally:
                    page.close()
            return False
        finally:
            pdf.close()


def analyze(data: bytes, source: str, settings: Settings, *, parser_kind: str, client: Any | None = None) -> Document:
    """Read an image or PDF with Textract AnalyzeDocument (FORMS, TABLES); see the module docstring."""
    budget = Budget.for_settings(settings, source)
    if client is None:
        from docassay.infra.aws import client as aws_client
        client = aws_client("textract")
    sizes, page_bytes = _split(data, source, parser_kind, budget)
    if source.startswith("s3://"):
        blocks = _analyze_s3(client, source, budget)
    else:
        blocks = []
        for n, part in enumerate(page_bytes, start=1):
            budget.check_time(f"Textract page {n}")
            if len(part) > SYNC_MAX_BYTES:
                raise ParseError(f"page {n} is {len(part):,} bytes, more than the {SYNC_MAX_BYTES:,} Textract "
                                 f"accepts inline; put the document in S3 and pass its s3:// URL",
                                 kind="too_large", source=source, page=n)
            resp = _call(client, "analyze_document", source, Document={"Bytes": part}, FeatureTypes=FEATURES)
            for b in resp.get("Blocks") or ():
                if isinstance(b, Mapping):
                    blocks.append({**b, "Page": n})   # one page per call: number it as in the document
    pages = blocks_to_pages(blocks, sizes, budget)
    doc = TextractJsonParser().document(data, source, pages, blocks=len(blocks), textract="api")
    doc.parser = "textract-api"
    return doc


def _split(data: bytes, source: str, kind: str, budget: Budget) -> tuple[dict[int, tuple[float, float]], list[bytes]]:
    """Page sizes in the document's unit, and one payload per page for AnalyzeDocument."""
    sizes: dict[int, tuple[float, float]] = {}
    parts: list[bytes] = []
    if kind == "pdf":
        import pypdfium2 as pdfium

        from docassay.extractors.parsers.pdf import PDFIUM_LOCK, _open
        with PDFIUM_LOCK:
            pdf = _open(data, source)
            try:
                n = len(pdf)
                budget.check_pages(n)
                for i in range(n):
                    w, h = pdf[i].get_size()
                    sizes[i + 1] = (float(w), float(h))
                if n == 1 or source.startswith("s3://"):
                    return sizes, [data]
                for i in range(n):
                    one = pdfium.PdfDocument.new()
                    one.import_pages(pdf, [i])
                    buf = io.BytesIO()
                    one.save(buf)
                    one.close()
                    parts.append(buf.getvalue())
                return sizes, parts
            finally:
                pdf.close()
    from PIL import Image
    try:
        img = Image.open(io.BytesIO(data))
    except (OSError, SyntaxError, ValueError) as exc:       # what Pillow raises for damaged files
        raise ParseError(f"the image is damaged and cannot be read ({exc})", kind="corrupt", source=source) from exc
    with img:
        frames = getattr(img, "n_frames", 1)
        budget.check_pages(frames)
        for i in range(frames):
            img.seek(i)
            budget.check_pixels(img.width, img.height, i + 1)
            sizes[i + 1] = (float(img.width), float(img.height))
            if frames > 1 and not source.startswith("s3://"):
                buf = io.BytesIO()
                img.convert("RGB").save(buf, format="PNG")
                parts.append(buf.getvalue())
        return sizes, (parts or [data])


def _analyze_s3(client: Any, url: str, budget: Budget) -> list[Mapping[str, Any]]:
    bucket, _, key = url[len("s3://"):].partition("/")
    job = _call(client, "start_document_analysis", url,
                DocumentLocation={"S3Object": {"Bucket": bucket, "Name": key}}, FeatureTypes=FEATURES)
    job_id = job["JobId"]
    wait = POLL_FIRST_S
    blocks: list[Mapping[str, Any]] = []
    token: str | None = None
    while True:
        budget.check_time("waiting for Textract")
        args = {"JobId": job_id, **({"NextToken": token} if token else {})}
        resp = _call(client, "get_document_analysis", url, **args)
        status = resp.get("JobStatus")
        if status == "IN_PROGRESS":
            time.sleep(wait)
            wait = min(wait * 2, POLL_MAX_S)
            continue
        if status not in ("SUCCEEDED", "PARTIAL_SUCCESS"):
            raise ParseError(f"Textract could not analyse the document ({status}: "
                             f"{resp.get('StatusMessage') or 'no message'})", kind="corrupt", source=url)
        blocks.extend(b for b in resp.get("Blocks") or () if isinstance(b, Mapping))
        token = resp.get("NextToken")
        if not token:
            return blocks


_ERROR_KINDS = {"BadDocumentException": "corrupt", "UnsupportedDocumentException": "unsupported",
                "DocumentTooLargeException": "too_large", "InvalidS3ObjectException": "unreadable"}


def _call(client: Any, op: str, source: str, **kwargs: Any) -> dict:
    from botocore.exceptions import BotoCoreError, ClientError
    try:
        return getattr(client, op)(**kwargs)
    except (ClientError, BotoCoreError) as exc:   # every service failure is this document's row
        code = str(getattr(exc, "response", {}).get("Error", {}).get("Code", "")) or type(exc).__name__
        raise ParseError(f"Textract {op} failed: {code}: {exc}", kind=_ERROR_KINDS.get(code, "unreadable"),
                         source=source) from exc
