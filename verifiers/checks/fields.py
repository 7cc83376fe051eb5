"""What each schema field IS, for the checks: its role (the seller's VAT ID, the due date, the
gross total, ...), found from the user's schema, never from a fixed list of field names.

    roles_of(schema) -> Roles        (cached per schema content)
        .role(field)       the role of a top-level field, or None
        .fields(role)      the top-level fields that play a role (sorted by name)
        .items             array field -> {column: item role} (description, quantity, unit_price, line_total)

A field's role comes from, in order:

1. the schema keyword `x-docassay: {"role": ROLE}` on the property (`"role": "none"` opts a field
   out of every role-based check); ROLE is one of `ROLES`, or for an item column one of
   `ITEM_ROLES`;
2. its name, split into words (`seller_vat_id`, `sellerVatId` -> seller, vat, id), and then its
   `description`, read with the kind the verifier already gives it (verifiers.settings: date,
   amount, identifier, code, text). A receipt's `company` described as "the business that issued
   the receipt" is the seller's name; `total` is the gross total; a lone `date` the issue date.

A field no rule recognises has no role and role-based checks emit nothing for it.
"""
from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Mapping

from docassay.verifiers.checks.cache import IdentityCache
from docassay.verifiers.errors import VerifyError
from docassay.verifiers.settings import VerifySettings

__all__ = ["ROLES", "ITEM_ROLES", "Roles", "roles_of", "words_of", "PARTY_OF"]

ROLES = (
    "seller_name", "buyer_name", "seller_vat_id", "buyer_vat_id", "seller_address", "buyer_address",
    "iban", "bic", "document_number", "currency",
    "issue_date", "due_date", "delivery_date",
    "net_total", "tax_total", "gross_total", "tax_rate",
)
ITEM_ROLES = ("description", "quantity", "unit_price", "line_total")
# The party a role belongs to (the block it should be printed in).
PARTY_OF = {"seller_name": "seller", "seller_vat_id": "seller", "seller_address": "seller", "iban": "seller",
            "bic": "seller", "buyer_name": "buyer", "buyer_vat_id": "buyer", "buyer_address": "buyer"}

_log = logging.getLogger(__name__)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[^a-z0-9]+")

_SELLER = {"seller", "vendor", "supplier", "issuer", "merchant", "company", "store", "shop", "biller", "payee",
           "lieferant", "verkaeufer", "verkaufer", "fournisseur", "leverancier", "restaurant", "business"}
_BUYER = {"buyer", "customer", "client", "recipient", "purchaser", "billto", "bill", "kunde", "payer",
          "acheteur", "klant", "consignee"}
_VAT = {"vat", "vatin", "ust", "ustid", "btw", "tva", "iva", "gst", "sst", "mwst", "uid"}
_ID = {"id", "no", "nr", "number", "num", "reg", "registration", "ident"}
_DOC = {"invoice", "receipt", "document", "bill", "credit", "note", "rechnung", "facture", "factuur"}
_DUE = {"due", "payable", "deadline", "faellig", "fallig", "expiry", "payment"}
_DELIVERY = {"delivery", "delivered", "ship", "shipping", "shipped", "service", "supply", "leistung", "lieferung"}
_ISSUE = {"issue", "issued", "invoice", "document", "receipt", "bill", "date", "purchase", "transaction"}
_TAX = {"tax", "vat", "gst", "sst", "mwst", "ust", "btw", "tva", "iva"}
_RATE = {"rate", "percent", "percentage", "pct"}
# Amounts that are none of the totals: a discount total, the cash tendered, a deposit.
_OTHER_AMOUNT = {"discount", "rebate", "allowance", "shipping", "freight", "deposit", "prepaid", "prepayment", "paid",
                 "tendered", "change", "tip", "rounding", "savings", "fee", "charge", "charges", "quantity", "qty"}
_NET = {"net", "subtotal", "untaxed", "excl", "excluding", "taxable", "base", "before"}
_GROSS = {"gross", "total", "grand", "amount", "payable", "due", "balance", "sum"}


def words_of(name: str) -> list[str]:
    """A field name as lower-case words: `sellerVatId`, `seller_vat_id`, `seller-vat-id` -> seller vat id."""
    return [w for w in _SPLIT.split(_CAMEL.sub("_", name).lower()) if w]


@dataclass(frozen=True)
class Roles:
    by_field: Mapping[str, str] = field(default_factory=dict)
    items: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def role(self, name: str) -> str | None:
        return self.by_field.get(name)

    def fields(self, role: str) -> list[str]:
        return [f for f, r in self.by_field.items() if r == role]

    def first(self, role: str) -> str | None:
        fs = self.fields(role)
        return fs[0] if fs else None


_BY_SCHEMA = IdentityCache(32)


def roles_of(schema: Mapping[str, Any]) -> Roles:
    """The roles of a schema's fields (cached per schema object and content; a bad schema has none)."""
    return _BY_SCHEMA.get_or_make(schema, "roles", lambda: _roles(schema))


def _roles(schema: Mapping[str, Any]) -> Roles:
    try:
        return _roles_json(json.dumps(schema, sort_keys=True, default=str))
    except (TypeError, ValueError):
        return Roles()


@lru_cache(maxsize=32)
def _roles_json(schema_json: str) -> Roles:
    schema = json.loads(schema_json)
    if not isinstance(schema, Mapping) or not isinstance(schema.get("properties"), Mapping):
        return Roles()
    try:
        kinds = {n: p.kind for n, p in VerifySettings.from_schema(schema).fields.items()}
    except VerifyError:                                  # a schema the verifier rejects: no roles here
        return Roles()
    by_field: dict[str, str] = {}
    items: dict[str, dict[str, str]] = {}
    for name, prop in schema["properties"].items():
        if not isinstance(prop, Mapping):
            continue
        if prop.get("type") == "array" and isinstance(prop.get("items"), Mapping):
            cols = {c: r for c, p in (prop["items"].get("properties") or {}).items()
                    if isinstance(p, Mapping) and (r := _item_role(c, p)) is not None}
            if cols:
                items[name] = cols
            continue
        r = _explicit(prop, ROLES, name)
        if r is None:
            r = _infer(name, prop, kinds.get(name, "text"))
        if r:
            by_field[name] = r
    return Roles(by_field, items)


def _explicit(prop: Mapping[str, Any], allowed: tuple[str, ...], name: str = "") -> str | None:
    """The `x-docassay.role` keyword: a role, "" for "none", None when absent or unknown (an
    unknown role is logged and the role inferred as if none were given)."""
    x = prop.get("x-docassay")
    if isinstance(x, Mapping) and "role" in x:
        r = x["role"]
        if r == "none":
            return ""
        if isinstance(r, str) and r in allowed:
            return r
        _log.warning("%s: unknown x-docassay role %r (one of %s, or none); inferring it", name, r, ", ".join(allowed))
    return None


def _desc_words(prop: Mapping[str, Any]) -> set[str]:
    d = prop.get("description")
    return set(_SPLIT.split(d.lower())) if isinstance(d, str) else set()


def _party(words: set[str], desc: set[str]) -> str | None:
    if words & _BUYER:
        return "buyer"
    if words & _SELLER:
        return "seller"
    # The description decides when the name does not: "who issued the invoice" vs "the customer".
    s = len(desc & (_SELLER | {"issued", "issuer", "paid"}))
    b = len(desc & (_BUYER | {"addressed", "billed"}))
    if s > b:
        return "seller"
    if b > s:
        return "buyer"
    return None


def _infer(name: str, prop: Mapping[str, Any], kind: str) -> str | None:
    words = set(words_of(name))
    desc = _desc_words(prop)
    if kind == "date":
        if words & _DUE:
            return "due_date"
        if words & _DELIVERY:
            return "delivery_date"
        if words & _ISSUE:
            return "issue_date"
        return None
    if kind in ("amount", "number"):
        if words & _OTHER_AMOUNT:
            return None
        if words & _RATE:
            return "tax_rate" if words & _TAX else None
        if words & _TAX:
            if words & {"gross", "grand", "incl", "including", "inclusive"}:
                return "gross_total"
            if words & {"excl", "excluding", "before", "without", "ex"}:
                return "net_total"
            return "tax_total"
        if words & _NET:
            return "net_total"
        if words & _GROSS:
            return "gross_total"
        return None
    if "iban" in words:
        return "iban"
    if words & {"bic", "swift"}:
        return "bic"
    if "currency" in words:
        return "currency"
    if words & _VAT or (words & {"tax"} and words & _ID):
        return "buyer_vat_id" if _party(words, set()) == "buyer" else "seller_vat_id"
    if kind in ("identifier", "code") and (words & _DOC or words == {"number"}):
        return "document_number"
    if kind == "text":
        party = _party(words, desc if words & {"name", "company", "merchant", "store", "vendor", "issuer",
                                               "supplier", "seller", "buyer", "customer", "client"} else set())
        if "address" in words:
            p = _party(words, desc)
            return f"{p or 'seller'}_address" if p or "issued" in desc or "business" in desc else None
        if party:
            return f"{party}_name"
    return None


def _item_role(name: str, prop: Mapping[str, Any]) -> str | None:
    r = _explicit(prop, ITEM_ROLES, name)
    if r is not None:
        return r or None
    words = set(words_of(name))
    t = prop.get("type")
    if t == "string" and words & {"description", "name", "item", "product", "article", "text", "service"}:
        return "description"
    if t in ("number", "integer"):
        if words & {"quantity", "qty", "count", "units", "menge"}:
            return "quantity"
        if words & {"unit", "price", "rate"} and not words & {"total", "line", "amount"}:
            return "unit_price"
        if words & {"total", "amount", "line", "subtotal", "net", "sum"}:
            return "line_total"
    return None
