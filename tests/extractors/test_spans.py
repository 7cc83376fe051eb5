import pytest

from builders import make_doc
from docassay.extractors.spans import DocIndex


def test_segments_split_on_wide_gaps():
    doc = make_doc([(50, 100, "Invoice No:"), (300, 100, "INV-2020-001")])
    ix = DocIndex(doc)
    segs = ix.page(1).segments_by_line[0]
    assert [s.text for s in segs] == ["Invoice No:", "INV-2020-001"]


def test_typed_spans_and_partial_word_boxes():
    doc = make_doc([(50, 100, "Total RM9.00   Datum:05.03.2018")])
    ix = DocIndex(doc)
    amounts = ix.spans("amount")
    assert [a.value for a in amounts] == [9.0]
    dates = ix.spans("date")
    assert [d.value for d in dates] == ["2018-03-05"]
    word_box = doc.pages[0].words[2].bbox                      # "Datum:05.03.2018"
    assert dates[0].bbox.x0 == pytest.approx(word_box.x0 + 6 * 6.0)
    assert dates[0].bbox.x1 == pytest.approx(word_box.x1)
    assert not any(a.text.startswith("05") for a in amounts), "a date is not an amount"


def test_find_label_matches_whole_tokens_and_counts_occurrences():
    doc = make_doc([(50, 100, "Name: Lieferant GmbH"), (50, 200, "Name: Kunden AG"), (50, 300, "Surname: X")])
    ix = DocIndex(doc)
    hits = ix.find_label("name")
    assert [(h.line, h.order) for h in hits] == [(0, 0), (1, 1)]
    assert ix.find_label("Name:")[0].seg_end == len("Name:")


def test_hostile_text_is_just_text():
    doc = make_doc([(10, 10, "'; DROP TABLE doc; -- ../../etc/passwd \x1b[31m")])
    ix = DocIndex(doc)
    assert ix.spans("text")
    assert ix.find_label("drop table") and not ix.spans("date")


def _sized_doc(words):
    """(x0, y0, x1, y1, text) words on one page: boxes of any height."""
    from docassay.extractors.document import BBox, Document, Page, Word
    page = Page.from_words(1, 600.0, 800.0, [Word(t, BBox(x0, y0, x1, y1), font_size=y1 - y0) for x0, y0, x1, y1, t in words],
                           source="synthetic")
    return Document(source="t", sha256="0" * 64, kind="synthetic", pages=[page], parser="test")


def test_a_stamp_beside_a_name_is_its_own_segment():
    # "POSTED" stamped twice as tall, a small gap after the name: not part of it.
    doc = _sized_doc([(60, 156, 170, 190, "YONG"), (176, 156, 290, 190, "ENTERPRISE"), (300, 130, 420, 192, "POSTED"),
                      (60, 200, 100, 234, "NO"), (106, 200, 120, 234, "7"), (126, 200, 300, 234, "JALAN")])
    lines = DocIndex(doc).page(1).segments_by_line
    assert [s.text for s in lines[0]] == ["YONG ENTERPRISE", "POSTED"]
    assert [s.text for s in lines[1]] == ["NO 7 JALAN"]          # a one-character word keeps its line


def test_same_sized_words_stay_one_segment():
    doc = _sized_doc([(60, 156, 170, 190, "YONG"), (176, 150, 290, 196, "ENTERPRISE")])   # 34 vs 46: alike
    assert [s.text for s in DocIndex(doc).page(1).segments_by_line[0]] == ["YONG ENTERPRISE"]
