"""`build_lines`: words grouped into rows by their boxes (synthetic word boxes)."""
from __future__ import annotations

from docassay.extractors.document import BBox, Word, build_lines


def words_of(rows: list[tuple[float, float, list[tuple[float, str]]]]) -> list[Word]:
    """Words (x, text) of rows (y0, height), 10 px per character."""
    return [Word(text, BBox(x, y0, x + 10 * len(text), y0 + h))
            for y0, h, row in rows for x, text in row]


def texts(words: list[Word]) -> list[str]:
    return [line.text for line in build_lines(words)[1]]


def test_two_tight_rows_stacked_over_each_other_stay_two_lines():
    # Two rows of a shop name whose boxes overlap by half their height (a tightly set header):
    # the second row's words stand under the first row's words, so they cannot be on one line.
    words = words_of([(298, 60, [(112, "AIK"), (152, "HUAT"), (202, "HARDWARE")]),
                      (328, 58, [(114, "ENTERPRISE"), (224, "(SETIA")])])
    assert texts(words) == ["AIK HUAT HARDWARE", "ENTERPRISE (SETIA"]


def test_label_and_amount_side_by_side_still_join_although_offset_vertically():
    # The same vertical offset, but the amount stands to the right of the label: one row.
    words = words_of([(298, 60, [(50, "TOTAL:")]), (328, 58, [(400, "9.00")])])
    assert texts(words) == ["TOTAL:   9.00"]


def test_rows_that_only_touch_are_separate_and_a_level_row_is_one():
    words = words_of([(100, 20, [(10, "Date"), (60, "12/03/2019")]),
                      (118, 20, [(10, "Cashier"), (90, "Ann")]),
                      (160, 20, [(10, "Total"), (300, "5.00")])])
    assert texts(words) == ["Date 12/03/2019", "Cashier Ann", "Total   5.00"]


def test_a_small_horizontal_touch_does_not_split_a_row():
    # OCR boxes of neighbouring words may overlap by a pixel or two; that is not stacking.
    words = [Word("Grand", BBox(10, 100, 62, 120)), Word("Total", BBox(60, 101, 110, 121)),
             Word("12.00", BBox(300, 100, 350, 120))]
    assert texts(words) == ["Grand Total   12.00"]


def test_a_tall_title_beside_two_rows_does_not_join_them():
    # "Factura" in a large font spans the seller's name and the street under it, printed beside
    # it in a small font; its line took the street's first word ("Paseo") away from the street.
    words = [Word("Factura", BBox(58.7, 45.2, 135.5, 71.3)),
             Word("Servicios", BBox(462.5, 48.1, 499.7, 58.2)), Word("Ruiz", BBox(503.0, 48.1, 520.1, 58.2)),
             Word("Paseo", BBox(445.0, 58.6, 468.1, 68.6)), Word("de", BBox(471.0, 58.6, 479.8, 68.6)),
             Word("los", BBox(483.1, 58.6, 493.1, 68.6)), Word("Olivos,", BBox(496.1, 58.6, 521.0, 68.6))]
    assert texts(words) == ["Factura   Servicios Ruiz", "Paseo de los Olivos,"]


def test_a_skewed_row_of_mixed_heights_stays_one_line():
    # An OCR row on a skewed scan: a tall description, a quantity and an amount whose boxes
    # overlap each other only partly (from a SROIE receipt).
    words = [Word("1", BBox(1561, 2927, 1590, 2983)), Word("BUTA", BBox(1722, 2886, 1882, 2980)),
             Word("SET", BBox(2362, 2886, 2482, 2980)), Word("19.90", BBox(2784, 2874, 2983, 2941))]
    assert texts(words) == ["1   BUTA   SET   19.90"]
