"""bench.invoice2data_runner: invoice2data's output in canonical keys (no invoice2data needed)."""
from __future__ import annotations

from bench.invoice2data_runner import to_canonical, to_number
from bench.scoring import score_document


def test_numbers_from_strings():
    assert to_number("0.01") == 0.01
    assert to_number("1,234.50") == 1234.5
    assert to_number("1.234,50") == 1234.5
    assert to_number("12,5") == 12.5
    assert to_number("1,234") == 1234.0
    assert to_number(4) == 4.0
    assert to_number("n/a") is None and to_number(True) is None


def test_mapping_follows_the_compare_convention():
    out = {"issuer": "Amazon Web Services", "template_name": "com.amazon.aws.yml", "amount": 4.11,
           "amount_untaxed": 4.11, "date": "2014-08-03", "date_due": "2014-09-03T00:00:00",
           "invoice_number": "42183017", "currency": "USD", "vat": "DE123", "amount_tax": "0.00",
           "partner_name": "Amazon Web Services, Inc.",
           "lines": [{"name": "AWS Data Transfer", "price_unit": "0.01"},
                     {"desc": "Glacier", "qty": 2, "price_unit": 1.11, "price_subtotal": "2.22"}]}
    rec = to_canonical(out)
    assert rec == {"seller_name": "Amazon Web Services", "gross_total": 4.11, "net_total": 4.11,
                   "issue_date": "2014-08-03", "due_date": "2014-09-03", "invoice_number": "42183017",
                   "currency": "USD", "seller_vat_id": "DE123", "tax_total": 0.0,
                   "line_items": [{"description": "AWS Data Transfer", "line_total": 0.01},
                                  {"description": "Glacier", "quantity": 2.0, "line_total": 2.22, "unit_price": 1.11}]}


def test_mapped_output_scores_against_truth():
    truth = {"invoice_number": "42183017", "issue_date": "2014-08-03", "gross_total": 4.11,
             "line_items": [{"description": "AWS Data Transfer", "line_total": 0.01}]}
    rec = to_canonical({"invoice_number": "42183017", "date": "2014-08-03", "amount": "4.11",
                        "lines": [{"name": "AWS Data Transfer", "price_unit": "0.01"}]})
    assert score_document("aws", "passed", rec, truth).exact
    assert to_canonical({}) == {}
