"""Parser for pre-OCR'd line files: `{"lines": [{"text": str, "quad": [x1,y1,...,x4,y4]}]}`.

This is the layout of the SROIE OCR ground truth (/work/shared/data/receipts/*.ocr.json): one page,
coordinates in pixels of the original scan, corners clockwise from top-left. The page's width and
height are the largest coordinates seen (the scan's size is not in the file).

Lines are rebuilt with `build_lines` rather than kept as given. The given lines are annotation
boxes, not visual rows: a receipt row such as "TOTAL:  9.00" is often two boxes, and the amount box
may be listed far from its label (SROIE lists some amounts at the end of the file). Rebuilding from
word geometry puts label and amount on one line in reading order; `bench/pdf_parsers.py` measures
how often the printed total lands on the same line as a TOTAL label under both choices.
"""
from __future__ import annotations

from docassay.extractors.document import Document
from docassay.extractors.errors import ParseError
from docassay.extractors.parsers.base import Budget, Parser, finish_page
from docassay.extractors.parsers.jsonguard import load_json
from docassay.extractors.parsers.words import finite, words_from_lines
from docassay.infra.config import Settings

__all__ = ["OcrLinesParser", "read_lines"]


class OcrLinesParser(Parser):
    name = "ocr-lines"
    kind = "ocr-lines"

    def sniff(self, data: bytes, source: str) -> bool:
        head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
        return head.startswith(b"{") and b'"lines"' in head

    def parse(self, data: bytes, source: str, settings: Settings) -> Document:
        budget = Budget.for_settings(settings, source)
        n_lines = data.count(b'"quad"')                # an upper bound, before anything is parsed
        if n_lines > settings.limits.max_words_per_page:
            raise ParseError(f"the OCR line file has about {n_lines:,} lines, more than a page may hold "
                             f"({settings.limits.max_words_per_page:,} words, max_words_per_page); "
                             "refusing to parse it", kind="too_large", source=source)
        doc = load_json(data.removeprefix(b"\xef\xbb\xbf"), max_depth=settings.limits.max_json_depth,
                        what="the OCR line file", source=source, max_values=settings.limits.max_json_values)
        lines = read_lines(doc, source)
        words = words_from_lines(lines)
        budget.check_words(len(words), 1)
        width = max((max(q[0::2]) for _, q in lines), default=0.0)
        height = max((max(q[1::2]) for _, q in lines), default=0.0)
        page = finish_page(1, float(width), float(height), words, "ocr-lines", budget)
        return self.document(data, source, [page], lines=len(lines))


def read_lines(doc: object, source: str = "") -> list[tuple[str, list[float]]]:
    """The `(text, quad)` pairs of a decoded OCR line file, validated.

    Raises `ParseError(kind="corrupt")` naming the first malformed entry (e.g. `lines[3].quad`).
    """
    if not isinstance(doc, dict) or not isinstance(doc.get("lines"), list):
        raise ParseError('the OCR line file must be an object with a "lines" array',
                         kind="corrupt", source=source)
    out: list[tuple[str, list[float]]] = []
    for i, entry in enumerate(doc["lines"]):
        if not isinstance(entry, dict):
            raise ParseError(f"lines[{i}] of the OCR line file is not an object",
                             kind="corrupt", source=source)
        text, quad = entry.get("text"), entry.get("quad")
        if not isinstance(text, str):
            raise ParseError(f"lines[{i}].text of the OCR line file is not a string",
                             kind="corrupt", source=source)
        if not isinstance(quad, list) or len(quad) != 8 or not finite(quad):
            raise ParseError(f"lines[{i}].quad of the OCR line file must be 8 finite numbers "
                             f"[x1,y1,x2,y2,x3,y3,x4,y4]", kind="corrupt", source=source)
        out.append((text, [float(v) for v in quad]))
    return out
