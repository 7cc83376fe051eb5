"""Simple table detection on synthetic pages and on a real invoice."""
from __future__ import annotations

from pathlib import Path

import pytest

from docassay.extractors.document import BBox, Page, Word
from docassay.extractors.tables import detect_tables, line_segments

INVOICE = Path("/work/shared/data/invoices/zugferd-fx22-en16931-einfach.pdf")


def page_of(rows: list[list[tuple[float, str]]], line_height: float = 14.0) -> Page:
    """A page whose row r has words (x, text) at y = r * line_height, 10 pt high, 6 pt per char."""
    words = [Word(text, BBox(x, r * line_height, x + 6 * len(text), r * line_height + 10))
             for r, row in enumerate(rows) for x, text in row]
    return Page.from_words(1, 600, 800, words)


HEADER = [(50, "Description"), (250, "Qty"), (320, "Price"), (400, "Amount")]


def test_line_segments_split_at_wide_gaps():
    page = page_of([[(50, "Gross"), (86, "total"), (300, "12.50")]])
    assert [s.text for s in line_segments(page.line_words(page.lines[0]))] == ["Gross total", "12.50"]


def test_header_and_rows_make_a_table():
    page = page_of([
        [(50, "INVOICE"), (300, "No."), (330, "17")],
        HEADER,
        [(50, "Paper"), (86, "A4"), (256, "2"), (320, "4.50"), (406, "9.00")],
        [(50, "Toner"), (256, "1"), (314, "60.00"), (400, "60.00")],
        [],
        [(50, "Thank"), (86, "you")],                     # after a blank line: not a continuation
    ])
    tables = detect_tables(page)
    assert len(tables) == 1
    t = tables[0]
    assert (t.n_rows, t.n_cols) == (3, 4)
    assert t.grid() == [["Description", "Qty", "Price", "Amount"],
                        ["Paper A4", "2", "4.50", "9.00"],
                        ["Toner", "1", "60.00", "60.00"]]
    assert all(c.header == (c.row == 0) for c in t.cells)
    assert t.bbox.y0 == 14 and t.bbox.y1 == 3 * 14 + 10
    amount = next(c for c in t.cells if c.row == 2 and c.col == 3)
    assert amount.bbox.as_list() == [400, 42, 430, 52]


def test_wrapped_description_continues_its_row():
    page = page_of([
        HEADER,
        [(50, "Service"), (256, "1"), (320, "10.00"), (400, "10.00")],
        [(50, "(on-site)")],
        [(50, "Travel"), (256, "2"), (326, "5.00"), (400, "10.00")],
    ])
    (t,) = detect_tables(page)
    assert t.grid()[1] == ["Service (on-site)", "1", "10.00", "10.00"]
    assert t.n_rows == 3


def test_no_table_without_enough_rows_or_columns():
    assert detect_tables(page_of([HEADER, [(50, "Only"), (256, "1"), (320, "2.00"), (400, "2.00")]])) == []
    assert detect_tables(page_of([[(50, "Name:"), (200, "ACME")], [(50, "Date:"), (200, "today")],
                                  [(50, "Total:"), (200, "3.00")]])) == []
    prose = [[(50, "Lorem"), (92, "ipsum"), (134, "dolor"), (176, "sit")] for _ in range(5)]
    assert detect_tables(page_of(prose)) == []


def test_a_heading_ends_the_table():
    rows = [HEADER,
            [(50, "Paper"), (256, "2"), (320, "4.50"), (406, "9.00")],
            [(50, "Toner"), (256, "1"), (314, "60.00"), (400, "60.00")]]
    page = page_of(rows)
    big = Word("Totals", BBox(50, 3 * 14 + 4, 110, 3 * 14 + 24))          # 20 pt heading
    page = Page.from_words(1, 600, 800, page.words + [big])
    (t,) = detect_tables(page)
    assert t.n_rows == 3 and "Totals" not in {c.text for c in t.cells}


@pytest.mark.skipif(not INVOICE.exists(), reason="dev invoice not present")
def test_real_invoice_items_table():
    from docassay.extractors.parsers import parse
    page = parse(INVOICE).pages[1]
    items = next(t for t in page.tables if any(c.text == "Nettobetrag" for c in t.cells))
    grid = items.grid()
    header = grid[0]
    assert [h for h in header if h][:2] == ["Pos", "Art-Nr (Art)"] or "Pos" in header
    col = {name: header.index(name) for name in ("Pos", "Beschreibung", "Nettopreis", "Menge", "Nettobetrag")}
    body = grid[1:]
    assert [r[col["Pos"]] for r in body] == ["1", "2"]
    assert [r[col["Nettobetrag"]] for r in body] == ["198,00", "275,00"]
    assert [r[col["Menge"]] for r in body] == ["20 Stk", "50 Stk"]
    assert body[0][col["Beschreibung"]].startswith("Trennblätter A4")
    assert body[1][col["Nettopreis"]] == "5,5000"
    tax = next(t for t in page.tables if any(c.text == "Steuerbetrag" for c in t.cells))
    assert [row[-1] for row in tax.grid()[1:]] == ["19,25", "37,62"]
