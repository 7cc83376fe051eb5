"""From business terms to the user's schema: which schema field is which EN 16931 term.

For each schema property, in this order:

1. `x-docassay: {"einvoice": "BT-…"}` names the term; `{"einvoice": {"xpath": "…"}}` an XPath on
   the invoice XML (namespace prefixes of the document allowed; on a line item, relative to the
   line element); `{"einvoice": false}` leaves the field to the print alone;
2. else the field's *name* in `DEFAULT_NAMES` (folded: camelCase, `-`, `.` and spaces as `_`), e.g. `invoice_number`,
   `invoice_no`, `invoice_id`, `number` -> BT-1;
3. else a phrase of its *description* in `DEFAULT_PHRASES` ("invoice number", "due date", ...),
   the first phrase that occurs wins (so "the total before tax" is BT-109, not BT-112).

An array of objects named like line items (`line_items`, `lines`, `items`, `positions`, ...) or
described as "line items"/"invoice lines" is BG-25, each of its properties mapped the same way
against the line terms (`description` -> BT-153, `quantity` -> BT-129, `unit_price` -> BT-146,
`line_total` -> BT-131, ...).

Values get the schema's type: numbers as numbers (the XML's sign kept: a CII correction with
negative amounts stays negative, a UBL credit note's positive amounts stay positive; schema root
`x-docassay: {"einvoice": {"credit_note_amounts": "negative"}}` gives a credit note's totals and line
amounts, BT-106..BT-115 and BT-131, as negative numbers), integers
rounded when whole, dates as YYYY-MM-DD, strings as strings. A multi-line name (seller BT-27, buyer BT-44, item
BT-153) keeps the lines that are not identifier lines: a short label and one token of four digits
or more (`GTIN 4012345001235`, `Lief-Nr: 549910`, `Kunden-Nr. : 009420`) is an identifier
(BT-29, BT-46, BT-155/BT-157), not part of the name.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from lxml import etree

from docassay.extractors.einvoice.model import EInvoice
from docassay.extractors.einvoice.values import to_value
from docassay.infra.errors import ConfigError

__all__ = ["Mapped", "FieldMap", "map_record", "field_map", "DEFAULT_NAMES", "DEFAULT_LINE_NAMES",
           "DEFAULT_PHRASES", "DEFAULT_LINE_PHRASES", "LINES_NAMES"]


def _names(*pairs: tuple[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for bt, names in pairs:
        for n in names.split():
            out[n] = bt
    return out


DEFAULT_NAMES: dict[str, str] = _names(
    ("BT-1", "invoice_number invoice_no invoice_num invoice_id invoice_nr number document_number doc_number "
             "bill_number credit_note_number rechnungsnummer numero_facture"),
    ("BT-2", "issue_date invoice_date date document_date issued_on billing_date rechnungsdatum"),
    ("BT-3", "invoice_type_code type_code document_type invoice_type"),
    ("BT-5", "currency currency_code invoice_currency"),
    ("BT-9", "due_date payment_due_date date_due due pay_by"),
    ("BT-10", "buyer_reference leitweg_id"),
    ("BT-13", "order_number purchase_order po_number order_reference"),
    ("BT-27", "seller_name seller supplier supplier_name vendor vendor_name issuer issuer_name company "
              "company_name merchant"),
    ("BT-31", "seller_vat_id seller_vat vat_id vat_number vat tax_id seller_tax_id supplier_vat_id "
              "vendor_vat_id ust_id"),
    ("BT-44", "buyer_name buyer customer customer_name client client_name bill_to"),
    ("BT-48", "buyer_vat_id buyer_vat customer_vat_id"),
    ("BT-72", "delivery_date service_date"),
    ("BT-83", "payment_reference remittance_information"),
    ("BT-84", "iban"),
    ("BT-106", "lines_total line_total_sum subtotal sub_total"),
    ("BT-109", "net_total net_amount total_net net total_excl_tax total_without_tax amount_untaxed tax_basis "
               "taxable_amount"),
    ("BT-110", "tax_total tax_amount total_tax vat_total vat_amount tax amount_tax"),
    ("BT-112", "gross_total total total_amount grand_total gross_amount total_gross amount total_incl_tax "
               "invoice_total"),
    ("BT-113", "prepaid_amount paid_amount"),
    ("BT-115", "amount_due due_amount payable_amount balance_due"),
)
DEFAULT_LINE_NAMES: dict[str, str] = _names(
    ("BT-126", "line_id position pos line_number"),
    ("BT-129", "quantity qty count amount_of_units"),
    ("BT-130", "unit unit_code unit_of_measure uom"),
    ("BT-131", "line_total total amount net_amount line_amount line_net price_subtotal subtotal"),
    ("BT-146", "unit_price price net_price price_unit unit_net_price"),
    ("BT-152", "vat_rate tax_rate tax_percent vat_percent"),
    ("BT-153", "description name item item_name product product_name title"),
    ("BT-155", "sku article_number item_number seller_item_id"),
    ("BT-157", "gtin ean"),
)
LINES_NAMES = {"line_items", "lines", "items", "invoice_lines", "positions", "line_item", "invoice_items",
               "articles", "products"}

# Description phrases, most specific first: the first that occurs in a field's description wins.
DEFAULT_PHRASES: tuple[tuple[str, str], ...] = (
    ("due date", "BT-9"), ("pay by", "BT-9"), ("buyer's vat", "BT-48"), ("customer's vat", "BT-48"),
    ("vat or tax identification", "BT-31"), ("vat id", "BT-31"), ("vat number", "BT-31"),
    ("invoice number", "BT-1"), ("invoice no", "BT-1"), ("issue date", "BT-2"), ("date the invoice was issued", "BT-2"),
    ("invoice date", "BT-2"), ("iso 4217", "BT-5"), ("currency", "BT-5"), ("before tax", "BT-109"),
    ("net total", "BT-109"), ("taxable amount", "BT-109"), ("total tax", "BT-110"), ("tax total", "BT-110"),
    ("including tax", "BT-112"), ("grand total", "BT-112"), ("gross total", "BT-112"),
    ("issued the invoice", "BT-27"), ("seller", "BT-27"), ("supplier", "BT-27"),
    ("addressed to", "BT-44"), ("buyer", "BT-44"), ("customer", "BT-44"),
)
DEFAULT_LINE_PHRASES: tuple[tuple[str, str], ...] = (
    ("price of one unit", "BT-146"), ("unit price", "BT-146"), ("how many", "BT-129"), ("quantity", "BT-129"),
    ("amount of this line", "BT-131"), ("line total", "BT-131"), ("product or service name", "BT-153"),
    ("what was sold", "BT-153"), ("description", "BT-153"),
)
# "GTIN 4012345001235", "Lief-Nr: 549910", "Kunden-Nr. : 009420": a short label, then one token with
# at least four digits, and nothing else on the line.
_ID_LINE = re.compile(r"^\s*[^\W\d_][\w.\- ]{0,24}?[\s.:#-]+(?=[\w./-]*(?:\d[\w./-]*){4})[\w./-]+\s*$", re.UNICODE)
_NAME_TERMS = {"BT-27", "BT-44", "BT-153"}


@dataclass(frozen=True)
class FieldMap:
    """Where one schema field comes from: a business term, or an XPath."""
    field: str
    term: str | None = None
    xpath: str | None = None
    how: str = ""                            # keyword | name | description

    @property
    def label(self) -> str:
        return self.term or f"xpath {self.xpath}"


@dataclass
class Mapped:
    record: dict[str, Any] = field(default_factory=dict)
    fields: dict[str, FieldMap] = field(default_factory=dict)       # field path -> its map (items: "line_items/*/quantity")
    lines_field: str | None = None
    unmapped: list[str] = field(default_factory=list)


def _fold(name: str) -> str:
    """invoiceNumber, InvoiceNo, invoice-number, "Invoice number" -> invoice_number / invoice_no."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name.strip())
    return re.sub(r"[\s\-.]+", "_", snake.lower())


def _keyword(prop: Mapping[str, Any]) -> object:
    x = prop.get("x-docassay")
    return x.get("einvoice", None) if isinstance(x, Mapping) else None


def field_map(name: str, prop: Mapping[str, Any], *, line: bool = False) -> FieldMap | None:
    """The term (or XPath) of one schema property; None when it has none (or `einvoice: false`)."""
    kw = _keyword(prop)
    if kw is False:
        return None
    if isinstance(kw, str) and kw.strip():
        if re.fullmatch(r"B[TG]-\d+", kw.strip().upper()):
            return FieldMap(name, term=kw.strip().upper(), how="keyword")
        return FieldMap(name, xpath=kw.strip(), how="keyword")
    if isinstance(kw, Mapping) and kw.get("xpath"):
        return FieldMap(name, xpath=str(kw["xpath"]), how="keyword")
    names = DEFAULT_LINE_NAMES if line else DEFAULT_NAMES
    bt = names.get(_fold(name))
    if bt is not None:
        return FieldMap(name, term=bt, how="name")
    desc = str(prop.get("description") or "").lower()
    for phrase, bt in (DEFAULT_LINE_PHRASES if line else DEFAULT_PHRASES):
        if phrase in desc:
            return FieldMap(name, term=bt, how="description")
    return None


def _is_lines(name: str, prop: Mapping[str, Any]) -> bool:
    if prop.get("type") != "array" or not isinstance(prop.get("items"), Mapping) or \
            prop["items"].get("type") != "object":
        return False
    kw = _keyword(prop)
    if kw is False:
        return False
    if isinstance(kw, str) and kw.strip().upper() == "BG-25":
        return True
    desc = str(prop.get("description") or "").lower()
    return _fold(name) in LINES_NAMES or "line item" in desc or "invoice line" in desc


def _typed(value: object, prop: Mapping[str, Any]) -> object:
    t = prop.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    if value is None:
        return None
    if t in ("number", "integer"):
        if isinstance(value, str):
            try:
                value = float(value.replace(",", "."))
            except ValueError:
                return None
        if not isinstance(value, (int, float)):
            return None
        if t == "integer":
            return int(round(value)) if float(value).is_integer() else None
        return round(float(value), 6)
    if t == "boolean":
        return str(value).strip().lower() in ("true", "1", "yes")
    return str(value) if not isinstance(value, str) else value


def _name_lines(text: str) -> str:
    """A name without its identifier lines (GLN, GTIN, article or customer numbers are terms of their own)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    kept = [ln for ln in lines if not _ID_LINE.match(ln)]
    return "\n".join(kept or lines)


def _read(inv: EInvoice, fm: FieldMap, prop: Mapping[str, Any], line_idx: int | None) -> object:
    if fm.xpath is not None:
        node = inv.line_elements[line_idx] if line_idx is not None else None
        try:
            found: Any = inv.xpath(fm.xpath, node)      # lxml: a node list, a string, a number or a bool
        except etree.XPathError as exc:
            raise ConfigError(f"x-docassay einvoice XPath of {fm.field!r} is not valid: {fm.xpath!r} ({exc})",
                              field=fm.field) from exc
        if isinstance(found, list):
            found = found[0] if found else None
        vtype = "date" if prop.get("format") == "date" else \
            ("amount" if prop.get("type") in ("number", "integer") else "text")
        return to_value(found, vtype) if not isinstance(found, (float, bool)) else found
    terms = inv.lines[line_idx] if line_idx is not None else inv.terms
    value = terms.get(fm.term or "")
    if fm.term in _NAME_TERMS and isinstance(value, str):
        value = _name_lines(value)
    return value


CREDIT_NOTE_SIGNS = ("as_written", "negative")
NEGATED_ON_CREDIT_NOTES = {"BT-106", "BT-107", "BT-108", "BT-109", "BT-110", "BT-112", "BT-113", "BT-115", "BT-131"}


def _credit_note_sign(schema: Mapping[str, Any]) -> str:
    x = schema.get("x-docassay")
    cfg = x.get("einvoice") if isinstance(x, Mapping) else None
    sign = cfg.get("credit_note_amounts", "as_written") if isinstance(cfg, Mapping) else "as_written"
    if sign not in CREDIT_NOTE_SIGNS:
        raise ConfigError(f"x-docassay.einvoice.credit_note_amounts must be one of {', '.join(CREDIT_NOTE_SIGNS)}, "
                          f"not {sign!r}", setting="x-docassay.einvoice.credit_note_amounts")
    return str(sign)


def _signed(value: object, fm: FieldMap, negate: bool) -> object:
    """A credit note's totals and line amounts as negative numbers, when the schema asks for that
    (`x-docassay: {"einvoice": {"credit_note_amounts": "negative"}}`); an amount the XML already
    states as negative stays negative."""
    if negate and fm.term in NEGATED_ON_CREDIT_NOTES and isinstance(value, (int, float)) and not isinstance(value, bool):
        return -abs(float(value))
    return value


def map_record(inv: EInvoice, schema: Mapping[str, Any]) -> Mapped:
    """The record in `schema`'s shape from the e-invoice, with where each field came from."""
    out = Mapped()
    props = schema.get("properties") or {}
    negate = inv.is_credit_note and _credit_note_sign(schema) == "negative"
    for name, prop in props.items():
        if not isinstance(prop, Mapping):
            continue
        if _is_lines(name, prop):
            out.lines_field = name
            item_props = prop["items"].get("properties") or {}
            maps = {k: field_map(k, p, line=True) for k, p in item_props.items() if isinstance(p, Mapping)}
            items = []
            for i in range(len(inv.lines)):
                item = {}
                for k, fm in maps.items():
                    if fm is None:
                        continue
                    v = _typed(_signed(_read(inv, fm, item_props[k], i), fm, negate), item_props[k])
                    if v is not None and v != "":
                        item[k] = v
                if item:
                    items.append(item)
            for k, fm in maps.items():
                if fm is not None:
                    out.fields[f"{name}/*/{k}"] = fm
                else:
                    out.unmapped.append(f"{name}/*/{k}")
            if items:
                out.record[name] = items
            continue
        fm = field_map(name, prop)
        if fm is None:
            out.unmapped.append(name)
            continue
        out.fields[name] = fm
        v = _typed(_signed(_read(inv, fm, prop, None), fm, negate), prop)
        if v is not None and v != "":
            out.record[name] = v
    return out

