"""Field families: the calibrator keeps one small model per family, so that any schema's field gets
a confidence from what kind of value it is, not from its name in the invoice or receipt schema.

    family_of(name, kind) -> "id" | "date" | "amount" | "name" | "code" | "text" | "items"

The kind is the verification kind (verifiers.settings: identifier, date, amount, quantity, number,
integer, code, boolean, text, array); a text field is a `name` when its field name says it names a
party (seller, buyer, company, vendor, ...), else `text` (addresses, descriptions, free text).
"""
from __future__ import annotations

import re

__all__ = ["FAMILIES", "family_of"]

FAMILIES = ("id", "date", "amount", "name", "code", "text", "items")

_KIND_FAMILY = {"identifier": "id", "date": "date", "amount": "amount", "quantity": "amount", "number": "amount",
                "integer": "amount", "code": "code", "boolean": "code", "array": "items"}
_NAME = re.compile(r"(^|_)(name|company|seller|buyer|vendor|supplier|customer|merchant|issuer|payee|store)($|_)")


def family_of(name: str, kind: str) -> str:
    fam = _KIND_FAMILY.get(kind)
    if fam is not None:
        return fam
    return "name" if _NAME.search(name.lower()) else "text"
