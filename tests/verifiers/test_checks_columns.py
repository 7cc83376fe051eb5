"""Conformance cases of the stacked-label checks (verifiers.checks.columns): labels over their
values, and a label whose value stands under it while another column's word is read across."""
from __future__ import annotations

from docassay.verifiers.checks import CHECKS
from docassay.verifiers.checks import columns as C
from tests.builders import make_doc
from tests.verifiers.checkkit import GOOD, RECEIPT, assert_conformant, at, by, ctx

# Two columns: invoice details stacked on the left (label over value), the delivery block on the right.
STACKED = [
    (300, 76, "Dirección de envío:"),
    (300, 88, "Meros Informática SA"),
    (50, 100, "Nº de factura:"), (300, 100, "10139 Valencia"),
    (50, 112, "FAC2020373234"),
    (50, 124, "Fecha operación:"),
    (50, 136, "14.12.2019"),
    (50, 148, "Fecha expedición:"),
    (50, 160, "24.12.2019"),
    (50, 190, "Cliente: 19-341630"),
    (50, 230, "Rechnungsdatum: 05.03.2018"),
]


def _ctx(field: str, value, text: str, **kw):
    doc = make_doc(STACKED, source="t.pdf")
    return ctx(dict(GOOD, **{field: value}), doc=doc, evidence={field: at(doc, field, text, **kw)})


def test_label_above_supports_its_own_field():
    assert by(C.label_above(_ctx("issue_date", "2019-12-24", "24.12.2019", how="position")),
              "issue_date", "label_above") == ["pass"]
    assert by(C.label_above(_ctx("invoice_number", "FAC2020373234", "FAC2020373234")),
              "invoice_number", "label_above") == ["pass"]


def test_label_above_contradicts_a_rival_label():
    s = C.label_above(_ctx("issue_date", "2019-12-14", "14.12.2019", how="position"))
    assert by(s, "issue_date", "label_above") == ["fail"]
    assert "Fecha operación" in next(x.detail for x in s if x.field == "issue_date")


def test_label_above_a_vat_id_under_the_other_partys_label():
    rows = [(50, 100, "Date de livraison"), (300, 100, "N° TVA client"), (50, 112, "16-09-2022"), (300, 112, "FR47900544217"),
            (50, 140, "TVA intracom."), (50, 152, "FR58904900481")]
    doc = make_doc(rows, source="t.pdf")
    theirs = ctx(dict(GOOD, seller_vat_id="FR47900544217"), doc=doc,
                 evidence={"seller_vat_id": at(doc, "seller_vat_id", "FR47900544217")})
    s = C.label_above(theirs)
    assert by(s, "seller_vat_id", "label_above") == ["fail"] and "client" in s[0].detail and "buyer's VAT ID" in s[0].detail
    yours = make_doc([(300, 100, "UW BTW-NUMMER:"), (300, 112, "NL187575459B99")], source="t.pdf")
    c = ctx(dict(GOOD, seller_vat_id="NL187575459B99"), doc=yours,
            evidence={"seller_vat_id": at(yours, "seller_vat_id", "NL187575459B99")})
    assert by(C.label_above(c), "seller_vat_id", "label_above") == ["fail"]           # addressed to the reader
    mine = ctx(dict(GOOD, seller_vat_id="FR58904900481"), doc=doc,
               evidence={"seller_vat_id": at(doc, "seller_vat_id", "FR58904900481")})
    assert by(C.label_above(mine), "seller_vat_id", "label_above") == []     # its own label: no pass for VAT IDs
    order = make_doc([(50, 100, "INVOICE NO"), (300, 100, "ORDER NUMBER"), (50, 112, "2024-276"),
                      (300, 112, "CMD24655200")], source="t.pdf")
    c = ctx(dict(GOOD, seller_vat_id="CMD24655200"), doc=order,
            evidence={"seller_vat_id": at(order, "seller_vat_id", "CMD24655200")})
    s = C.label_above(c)
    assert by(s, "seller_vat_id", "label_above") == ["fail"] and "order number" in s[0].detail   # another field's label


def test_label_above_keeps_a_value_also_printed_under_its_own_label():
    # the issue date equals the shipping date: read under "Fecha de envío:", printed under
    # "Fecha expedición:" too (stacked, or beside the label on its line)
    for own in ([(50, 148, "Fecha expedición:"), (50, 160, "14.12.2019")], [(50, 148, "Fecha de factura: 14.12.2019")]):
        doc = make_doc([(50, 124, "Fecha de envío:"), (50, 136, "14.12.2019")] + own)
        c = ctx(dict(GOOD, issue_date="2019-12-14"), doc=doc,
                evidence={"issue_date": at(doc, "issue_date", "14.12.2019", how="position")})
        assert by(C.label_above(c), "issue_date", "label_above") == [], own
    # printed a second time under another rival label: still a fail
    doc = make_doc([(50, 124, "Fecha de envío:"), (50, 136, "14.12.2019"),
                    (50, 148, "Fecha operación:"), (50, 160, "14.12.2019")])
    c = ctx(dict(GOOD, issue_date="2019-12-14"), doc=doc,
            evidence={"issue_date": at(doc, "issue_date", "14.12.2019", how="position")})
    assert by(C.label_above(c), "issue_date", "label_above") == ["fail"]


def test_an_invoice_reference_over_a_number_is_no_fail():
    # an invoice's "Réf. facture" is its own number; a credit note's may be its own or the
    # credited invoice's (other_document judges that)
    rows = [(50, 100, "Réf. facture"), (50, 112, "IN-2022-744")]
    for extra, want in (([], []), ([(50, 40, "AVOIR")], [])):
        doc = make_doc(extra + rows)
        c = ctx(dict(GOOD, invoice_number="IN-2022-744"), doc=doc,
                evidence={"invoice_number": at(doc, "invoice_number", "IN-2022-744", how="position")})
        assert by(C.label_above(c), "invoice_number", "label_above") == want, extra


def test_label_above_reads_a_row_of_labels_over_a_row_of_values():
    # "Nº Factura:  Fecha expedición:  Fecha operación:" over the three values, cells apart
    doc = make_doc([(50, 100, "Nº Factura:"), (200, 100, "Fecha expedición:"), (350, 100, "Fecha operación:"),
                    (50, 112, "F-2018-931640"), (200, 112, "11 de agosto de 2018"), (350, 112, "4 de agosto de 2018")])
    for value, text, want in (("2018-08-11", "11 de agosto de 2018", ["pass"]),
                              ("2018-08-04", "4 de agosto de 2018", ["fail"])):
        c = ctx(dict(GOOD, issue_date=value), doc=doc, evidence={"issue_date": at(doc, "issue_date", text)})
        assert by(C.label_above(c), "issue_date", "label_above") == want, text
    # a date right after other words of its cell is no cell of its own
    doc = make_doc([(350, 100, "Fecha operación:"), (290, 112, "Datum: 4 de agosto de 2018")])
    c = ctx(dict(GOOD, issue_date="2018-08-04"), doc=doc,
            evidence={"issue_date": at(doc, "issue_date", "4 de agosto de 2018")})
    assert by(C.label_above(c), "issue_date", "label_above") == []


def test_label_above_says_nothing_without_a_stacked_label():
    # a value with its label left of it on its line is label_meaning's, not this check's
    assert by(C.label_above(_ctx("issue_date", "2018-03-05", "05.03.2018")), "issue_date", "label_above") == []
    # a value under another value (not a label) is not judged
    doc = make_doc([(50, 100, "14.12.2019"), (50, 112, "24.12.2019")])
    c = ctx(dict(GOOD, issue_date="2019-12-24"), doc=doc, evidence={"issue_date": at(doc, "issue_date", "24.12.2019")})
    assert C.label_above(c) == []
    # a label far above (not tightly spaced) is no stacked label
    doc = make_doc([(50, 100, "Fecha operación:"), (50, 160, "24.12.2019")])
    c = ctx(dict(GOOD, issue_date="2019-12-24"), doc=doc, evidence={"issue_date": at(doc, "issue_date", "24.12.2019")})
    assert C.label_above(c) == []


def test_label_across_fails_a_word_of_another_column():
    s = C.label_across(_ctx("invoice_number", "10139", "10139", label="=Nº de factura:"))
    assert by(s, "invoice_number", "label_across") == ["fail"]
    assert "FAC2020373234" in s[0].detail


def test_label_across_says_nothing_for_a_label_beside_its_value():
    # right next to its label (no column gap)
    assert C.label_across(_ctx("issue_date", "2018-03-05", "05.03.2018")) == []
    # across a gap, and the same date printed under the label (the record holds it normalised)
    doc = make_doc([(50, 100, "Rechnungsdatum:"), (300, 100, "05.03.2018"), (50, 112, "05.03.2018")])
    c = ctx(dict(GOOD, issue_date="2018-03-05"), doc=doc, evidence={"issue_date": at(doc, "issue_date", "05.03.2018")})
    assert C.label_across(c) == []
    # across a gap, but nothing of the field's kind under the label
    doc = make_doc([(50, 100, "Invoice number:"), (300, 100, "4711"), (50, 112, "Thank you")])
    c = ctx(dict(GOOD, invoice_number="4711"), doc=doc, evidence={"invoice_number": at(doc, "invoice_number", "4711")})
    assert C.label_across(c) == []


def test_columns_checks_are_registered_and_conformant():
    names = [n for n, _ in CHECKS]
    assert "label_above" in names and "label_across" in names
    assert_conformant(C.label_above, _ctx("issue_date", "2019-12-14", "14.12.2019", how="position"))
    assert_conformant(C.label_across, _ctx("invoice_number", "10139", "10139"))
    # a receipt schema, a document without pages, no evidence: nothing, no error
    assert C.label_above(ctx({"date": "2019-12-14"}, schema=RECEIPT)) == []
    assert C.label_across(ctx(dict(GOOD), doc=make_doc([]))) == []


def test_a_column_fail_makes_the_field_doubtful_whatever_its_confidence():
    from docassay.verifiers.confidence import Calibrator
    from docassay.verifiers.confidence.calibrator import POOLED, FamilyModel
    from docassay.verifiers.confidence.decision import DOUBT_CAP, ConfidencePolicy, assess
    from docassay.verifiers.confidence.features import FieldBasis
    cal = Calibrator({POOLED: FamilyModel(["bias"], [6.0])})            # confident of everything
    for field, value, text, check in (("invoice_number", "10139", "10139", C.label_across),
                                      ("issue_date", "2019-12-14", "14.12.2019", C.label_above)):
        signals = check(_ctx(field, value, text, how="position"))
        assert by(signals, field, check.__name__) == ["fail"]
        out = assess({field: FieldBasis(field, "text", True, value, signals, {"bias": 1.0})}, cal,
                     ConfidencePolicy(default=0.3), required=(field,))
        assert out[field].status == "doubtful" and out[field].confidence == DOUBT_CAP, check.__name__
