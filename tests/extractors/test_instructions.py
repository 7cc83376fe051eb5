import json

import pytest

from builders import make_doc
from docassay.extractors.errors import InstructionError
from docassay.extractors.instructions.executor import execute
from docassay.extractors.instructions.language import Instructions, validate_instructions

INS = {
    "docassay_instructions": 1,
    "locale": {"decimal": ",", "date_order": "DMY"},
    "fields": {
        "invoice_number": {"type": "identifier", "locator": {"by": "anchor", "label": "Rechnungsnummer", "relation": "right"}},
        "issue_date": {"type": "date", "locator": {"by": "anchor", "label": "Datum", "relation": "below"}},
        "gross_total": {"type": "amount", "locator": {"by": "anchor", "label": "Gesamtbetrag", "relation": "right", "occurrence": -1}},
        "currency": {"type": "currency", "locator": {"by": "detect", "what": "currency"}},
        "seller_name": {"type": "text", "locator": {"by": "region", "page": 1, "bbox": [0, 0, 0.5, 0.1], "pick": "first"}},
    },
    "tables": {
        "line_items": {"columns": {"description": {"header": "Bezeichnung", "type": "text"},
                                   "quantity": {"header": "Menge", "type": "number"},
                                   "line_total": {"header": "Betrag", "type": "amount"}},
                       "row_key": "line_total", "multiline": "description", "stop": ["Gesamtbetrag"]},
    },
}


def _doc(number="R-1001", total="1.234,50", day="05.03.2018"):
    return make_doc([
        (40, 20, "Muster GmbH"),
        (40, 120, "Rechnungsnummer:"), (200, 120, number),
        (400, 120, "Datum"), (400, 132, day),
        (40, 200, "Bezeichnung"), (300, 200, "Menge"), (450, 200, "Betrag"),
        (40, 215, "Schrauben M4"), (300, 215, "10"), (450, 215, "1.000,00 EUR"),
        (40, 227, "verzinkt"),
        (40, 240, "Muttern"), (300, 240, "5"), (450, 240, "234,50 EUR"),
        (40, 300, "Gesamtbetrag"), (450, 300, total + " EUR"),
    ])


def test_round_trip_and_schema():
    ins = Instructions.from_json(INS)
    assert ins.to_json() == json.loads(json.dumps(INS)) or validate_instructions(ins.to_json()) == []
    assert Instructions.from_json(ins.to_json()) == ins


def test_bad_instructions_report_every_error_with_path():
    bad = json.loads(json.dumps(INS))
    bad["fields"]["issue_date"]["locator"]["relation"] = "diagonal"
    bad["locale"]["decimal"] = ";"
    with pytest.raises(InstructionError) as e:
        Instructions.from_json(bad)
    errs = e.value.context["errors"]
    assert any(x.startswith("locale/decimal") for x in errs)
    assert any(x.startswith("fields/issue_date/locator") for x in errs)


def test_replay_gives_values_and_provenance():
    ins = Instructions.from_json(INS)
    ext = execute(ins, _doc())
    r = ext.record
    assert r["invoice_number"] == "R-1001"
    assert r["issue_date"] == "2018-03-05"
    assert r["gross_total"] == 1234.5
    assert r["currency"] == "EUR"
    assert r["seller_name"] == "Muster GmbH"
    assert r["line_items"] == [
        {"description": "Schrauben M4 verzinkt", "quantity": 10.0, "line_total": 1000.0},
        {"description": "Muttern", "quantity": 5.0, "line_total": 234.5},
    ]
    p = ext.provenance["invoice_number"]
    assert p.page == 1 and p.text == "R-1001" and "Rechnungsnummer" in p.anchor
    assert p.bbox.x0 == pytest.approx(200)
    assert "line_items/1/line_total" in ext.provenance


def test_same_format_other_values():
    ins = Instructions.from_json(INS)
    r = execute(ins, _doc(number="R-2002", total="99,00", day="31.12.2019")).record
    assert (r["invoice_number"], r["gross_total"], r["issue_date"]) == ("R-2002", 99.0, "2019-12-31")


def test_locale_decides_day_month_order():
    ins = Instructions.from_json({**INS, "locale": {"decimal": ",", "date_order": "MDY"}})
    assert execute(ins, _doc(day="05.03.2018")).record["issue_date"] == "2018-05-03"


def test_missing_label_means_missing_value_and_alternatives_offered():
    ins = Instructions.from_json(INS)
    doc = make_doc([(40, 20, "Other Corp"), (40, 300, "Gesamtbetrag"), (450, 300, "1,500")])
    ext = execute(ins, doc)
    assert "invoice_number" in ext.missing and "issue_date" in ext.missing
    assert ext.record["gross_total"] == 1.5
    assert 1500.0 in [a.value for a in ext.alternatives["gross_total"]]   # the other decimal convention
