"""Turn printed text into a typed JSON value under a format's locale, and list its other readings."""
from __future__ import annotations

from typing import Mapping

from docassay.extractors import normalize as norm
from docassay.extractors.instructions.language import Locale

__all__ = ["normalize", "readings"]

_OTHER_ORDERS = {"DMY": ("MDY", "YMD"), "MDY": ("DMY", "YMD"), "YMD": ("DMY", "MDY")}


def normalize(text: str, vtype: str, locale: Locale, overrides: Mapping[str, object] | None = None) -> object | None:
    """The JSON value of `text` as a `vtype`, or None when it does not read as one."""
    o = overrides or {}
    text = text.strip()
    prefix = o.get("strip_prefix")
    if isinstance(prefix, str) and prefix and text.casefold().startswith(prefix.casefold()):
        text = text[len(prefix):].strip()
    if not text:
        return None
    if vtype == "date":
        day = norm.parse_date(text, order=str(o.get("date_order") or locale.date_order))
        return day.value.isoformat() if day else None
    if vtype in ("amount", "number", "integer"):
        amount = norm.parse_amount(text, decimal=str(o.get("decimal") or locale.decimal))
        if amount is None:
            return None
        v = -abs(amount.value) if o.get("negate") else amount.value
        if vtype == "integer":
            return int(v) if v == int(v) else None
        return float(v)
    if vtype == "currency":
        return norm.parse_currency(text)
    if vtype == "identifier":
        return norm.normalize_identifier(text) or None
    if vtype == "boolean":
        f = text.casefold()
        return True if f in ("yes", "true", "ja", "oui", "si", "x") else False if f in ("no", "false", "nein", "non") else None
    return norm.normalize_name(_clean_text(text, o.get("clean"))) or None


def _clean_text(text: str, how: object) -> str:
    """The `clean` override of a text field: "name" drops a bracketed registration number after a
    name, "address" a registration number before and a telephone number after an address."""
    if how == "name":
        return norm.clean_name(text)
    if how == "address":
        return norm.clean_address(text)
    return text


def readings(text: str, vtype: str, locale: Locale) -> list[object]:
    """Other plausible values of the same printed text (other date orders, decimal conventions)."""
    out: list[object] = []
    if vtype == "date":
        for order in _OTHER_ORDERS.get(locale.date_order, ()):
            day = norm.parse_date(text, order=order)
            if day is not None:
                out.append(day.value.isoformat())
    elif vtype in ("amount", "number"):
        other = "," if locale.decimal == "." else "."
        amount = norm.parse_amount(text, decimal=other)
        if amount is not None:
            out.append(float(amount.value))
        for r in norm.amount_readings(text):
            out.append(float(r.value))
    return list(dict.fromkeys(out))
