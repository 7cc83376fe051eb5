"""Plain text: monospace grid geometry, encodings, form feeds, and table detection on text."""
from __future__ import annotations

import codecs

import pytest

from docassay.extractors.errors import ParseError
from docassay.extractors.parsers import parse
from docassay.extractors.parsers.text import CHAR_WIDTH, FONT_SIZE, LINE_HEIGHT


def test_words_sit_on_a_monospace_grid():
    doc = parse("t.txt", b"Invoice  No 42\n\n   Total:\t12,50\n")
    assert (doc.kind, doc.parser, doc.meta["encoding"]) == ("text", "text", "utf-8")
    page = doc.pages[0]
    assert page.source == "plain"
    boxes = {w.text: w.bbox.as_list() for w in page.words}
    assert boxes["Invoice"] == [0, 0, 7 * CHAR_WIDTH, FONT_SIZE]
    assert boxes["No"] == [9 * CHAR_WIDTH, 0, 11 * CHAR_WIDTH, FONT_SIZE]
    assert boxes["Total:"] == [3 * CHAR_WIDTH, 2 * LINE_HEIGHT, 9 * CHAR_WIDTH, 2 * LINE_HEIGHT + FONT_SIZE]
    assert boxes["12,50"][0] == 16 * CHAR_WIDTH                 # the tab expands to column 16
    assert (page.width, page.height) == (21 * CHAR_WIDTH, 4 * LINE_HEIGHT)
    assert [ln.text.split() for ln in page.lines] == [["Invoice", "No", "42"], ["Total:", "12,50"]]


def test_form_feed_starts_a_new_page_and_crlf_is_one_break():
    doc = parse("t.txt", b"page one\r\nline two\fpage two\f")
    assert [p.number for p in doc.pages] == [1, 2]
    assert [p.text for p in doc.pages] == ["page one\nline two", "page two"]


@pytest.mark.parametrize("data, encoding", [
    ("Straße 12 €".encode("utf-8"), "utf-8"),
    (codecs.BOM_UTF8 + "Straße 12 €".encode("utf-8"), "utf-8-sig"),
    ("Straße 12 €".encode("utf-16"), "utf-16"),
    ("Straße 12 €".encode("cp1252"), "cp1252"),
    (b"Stra\xdfe 12 \x81\x80", "latin-1"),                      # 0x81 is undefined in cp1252
])
def test_encodings(data, encoding):
    doc = parse("e.txt", data)
    assert doc.meta["encoding"] == encoding
    assert doc.pages[0].words[0].text == "Straße"


def test_wide_characters_take_two_columns():
    page = parse("w.txt", "合計 100\n".encode()).pages[0]
    assert page.words[1].bbox.x0 == 5 * CHAR_WIDTH


def test_text_limit():
    import dataclasses

    from docassay.infra.config import Limits, Settings
    cfg = Settings(limits=dataclasses.replace(Limits(), max_text_chars=10))
    with pytest.raises(ParseError) as info:
        parse("l.txt", b"x" * 11, settings=cfg)
    assert info.value.kind == "too_large" and "max_text_chars" in info.value.message


def test_text_table_is_detected():
    text = (b"Item            Qty     Price     Amount\n"
            b"Widget           2      10.00      20.00\n"
            b"Gadget blue      1       5.50       5.50\n"
            b"\n"
            b"Thank you for your business.\n")
    page = parse("t.txt", text).pages[0]
    assert len(page.tables) == 1
    assert page.tables[0].grid() == [["Item", "Qty", "Price", "Amount"],
                                     ["Widget", "2", "10.00", "20.00"],
                                     ["Gadget blue", "1", "5.50", "5.50"]]
