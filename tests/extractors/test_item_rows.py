"""execute_table: what continues an item's description and what ends the table (hand-made pages)."""
from builders import make_doc
from docassay.extractors.instructions.executor import execute_table
from docassay.extractors.instructions.language import Column, Locale, TableRule
from docassay.extractors.spans import DocIndex

LOCALE = Locale(decimal=",", date_order="DMY", currency="EUR")
RULE = TableRule(columns={"description": Column(header="Bezeichnung", type="text"),
                          "quantity": Column(header="Menge", type="number"),
                          "line_total": Column(header="Betrag", type="amount")},
                 row_key="line_total", multiline="description", stop=("Gesamtbetrag",))


def _rows(items):
    head = [(40, 100, "Bezeichnung"), (300, 100, "Menge"), (450, 100, "Betrag")]
    return execute_table(DocIndex(make_doc(head + items)), RULE, LOCALE)[0]


def test_a_wrapped_name_continues_its_description():
    rows = _rows([(40, 115, "Gelierzucker"), (300, 115, "50"), (450, 115, "72,50"), (40, 127, "Extra 250g")])
    assert rows == [{"description": "Gelierzucker Extra 250g", "quantity": 50.0, "line_total": 72.5}]


def test_a_note_after_a_gap_or_across_columns_is_not_the_description():
    rows = _rows([(40, 115, "Physiotherapie"), (300, 115, "10"), (450, 115, "260,00"),
                  (40, 150, "Behandlungen laut Verordnung")])          # a note, two lines below
    assert rows[0]["description"] == "Physiotherapie"
    rows = _rows([(40, 115, "Hausbesuch"), (300, 115, "10"), (450, 115, "120,00"),
                  (40, 127, "An folgenden Terminen im Oktober und November des Jahres")])   # runs across the columns
    assert rows[0]["description"] == "Hausbesuch"


def test_a_heading_or_a_reference_closes_the_description():
    rows = _rows([(40, 115, "Zitronensäure"), (300, 115, "100"), (450, 115, "100,00"),
                  (40, 127, "Weitere Eigenschaften:"), (40, 139, "Glasflasche")])
    assert rows[0]["description"] == "Zitronensäure"


def test_another_tables_header_ends_the_items():
    rows = _rows([(40, 115, "Trennblätter"), (300, 115, "20"), (450, 115, "198,00"),
                  (40, 160, "Warenwert"), (200, 160, "Nettobetrag"), (450, 160, "Endbetrag"),
                  (40, 172, "198,00"), (300, 172, "19"), (450, 172, "235,62")])
    assert rows == [{"description": "Trennblätter", "quantity": 20.0, "line_total": 198.0}]


def test_a_row_whose_description_has_no_letter_is_no_item():
    rows = _rows([(40, 115, "Trennblätter"), (300, 115, "20"), (450, 115, "198,00"),
                  (40, 140, "8,10 3,00"), (450, 140, "382,47")])
    assert rows == [{"description": "Trennblätter", "quantity": 20.0, "line_total": 198.0}]


def test_an_article_code_alone_on_the_row_line_gives_way_to_the_name_below():
    rows = _rows([(40, 115, "ZS997"), (300, 115, "100"), (450, 115, "100,00"), (40, 127, "Zitronensäure 100ml")])
    assert rows[0]["description"] == "Zitronensäure 100ml"
    rows = _rows([(40, 115, "M8"), (300, 115, "100"), (450, 115, "100,00")])        # a code alone stays
    assert rows[0]["description"] == "M8"
    rows = _rows([(40, 115, "Schrauben M8"), (300, 115, "100"), (450, 115, "100,00"), (40, 127, "verzinkt")])
    assert rows[0]["description"] == "Schrauben M8 verzinkt"
