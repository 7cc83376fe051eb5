from dataclasses import dataclass

from bench.sightings import booked, invoices


@dataclass
class Doc:
    doc_id: str
    truth: dict
    status: str = "needs_review"


def test_one_invoice_printed_twice_is_one_invoice():
    docs = [Doc("a", {"invoice_number": "471102", "seller_name": "Lieferant GmbH"}),
            Doc("b", {"invoice_number": " 471102", "seller_name": "LIEFERANT  GmbH"}, "passed"),  # the same pair, printed otherwise
            Doc("c", {"invoice_number": "471102", "seller_name": "Another AG"}),                   # another seller: its own invoice
            Doc("d", {"invoice_number": "RE-1", "seller_name": "Lieferant GmbH"}, "repaired")]
    assert [[d.doc_id for d in g] for g in invoices(docs)] == [["a", "b"], ["c"], ["d"]]
    assert booked(docs) == (2, 3)


def test_documents_without_both_fields_are_each_their_own():
    docs = [Doc("r1", {"company": "SHOP", "total": 1.0}, "passed"), Doc("r2", {"company": "SHOP", "total": 1.0}),
            Doc("i1", {"invoice_number": "7"}), Doc("i2", {"invoice_number": "7"})]
    assert len(invoices(docs)) == 4
    assert booked(docs) == (1, 4)
