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
