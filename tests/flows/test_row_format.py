"""Row.format is a typed value (flows.results.RowFormat) written to results.jsonl as before."""
from __future__ import annotations

import json

from docassay.flows.results import Row, row_format, rows_from_text


def test_a_row_without_a_format_writes_the_empty_block() -> None:
    assert Row("a.pdf").to_json()["format"] == {"id": None, "version": None, "match": None, "similarity": None}
    assert Row("a.pdf").format is not Row("b.pdf").format, "each row its own block"


def test_row_format_rounds_the_similarity_and_keeps_the_key_order() -> None:
    fmt = row_format("fmt-1", 3, "known", 0.987654321)
    assert json.dumps(fmt) == '{"id": "fmt-1", "version": 3, "match": "known", "similarity": 0.9877}'
    assert row_format(match="einvoice") == {"id": None, "version": None, "match": "einvoice", "similarity": None}


def test_the_format_reads_back_from_results_text() -> None:
    row = Row("a.pdf", sha256="ab", status="passed", format=row_format("fmt-2", 1, "new", 0.5))
    [again] = rows_from_text(json.dumps(row.to_json()) + "\n", "results.jsonl")
    assert again.format == row.format and again.format["match"] == "new"
