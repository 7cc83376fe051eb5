"""Project-generated e-invoice fixtures (no dev data): a truth record, its CII and UBL renderings."""
from __future__ import annotations

TRUTH = {
    "invoice_number": "RE-2024-0815", "issue_date": "2024-03-05", "due_date": "2024-04-04",
    "seller_name": "Lieferant GmbH", "seller_vat_id": "DE123456789", "buyer_name": "Kunden AG Mitte",
    "currency": "EUR", "net_total": 473.0, "tax_total": 56.87, "gross_total": 529.87,
    "line_items": [
        {"description": "Trennblätter A4", "quantity": 20.0, "unit_price": 9.9, "line_total": 198.0},
        {"description": "Joghurt Banane", "quantity": 50.0, "unit_price": 5.5, "line_total": 275.0},
    ],
}

SCHEMA = {
    "type": "object",
    "properties": {
        "invoice_number": {"type": "string"}, "issue_date": {"type": "string", "format": "date"},
        "due_date": {"type": "string", "format": "date"}, "seller_name": {"type": "string"},
        "seller_vat_id": {"type": "string"}, "buyer_name": {"type": "string"}, "currency": {"type": "string"},
        "net_total": {"type": "number"}, "tax_total": {"type": "number"}, "gross_total": {"type": "number"},
        "line_items": {"type": "array", "items": {"type": "object", "properties": {
            "description": {"type": "string"}, "quantity": {"type": "number"},
            "unit_price": {"type": "number"}, "line_total": {"type": "number"}}}},
    },
}
