"""The payee: the account holder a payment block names is the seller.

    seller_is_payee   a company named as the payee of the payment details ("Kontoinhaber:",
                      "Account holder", "Beneficiary", "Bénéficiaire", "Titulaire", "Zahlbar an",
                      "Beneficiario", "Rekeninghouder", "t.n.v.": on its line, or the line right
                      under a caption that stands alone) equal to the seller's name: pass; only
                      other companies named so: fail (the buyer's block read as the seller's).
                      Nothing where no payee is printed with a legal form.

Companies only (a legal form: verifiers.checks.names), so a person holding the account says
nothing. A factoring company collecting for the seller fails a right seller: a review, the safe
side of a veto (verifiers.confidence.decision.DOUBT_CHECKS: over 37 captures it failed 11 wrong
sellers and no right one).
"""
from __future__ import annotations

from typing import Any, Iterator

from docassay.verifiers.checks.cache import IdentityCache
from docassay.verifiers.checks.fields import roles_of
from docassay.verifiers.checks.names import has_legal_form
from docassay.verifiers.checks.page import line_cells
from docassay.verifiers.checks.signal import Signal
from docassay.verifiers.checks.values import text
from docassay.verifiers.checks.vocabulary import fold
from docassay.verifiers.context import VerifyContext
from docassay.verifiers.tolerance import fold_text

__all__ = ["seller_is_payee", "payees", "PAYEE_CAPTIONS", "CHECKS"]

# Captions of the payee in payment details, folded, longest first.
PAYEE_CAPTIONS = tuple(sorted((
    "kontoinhaber", "account holder", "account name", "beneficiary", "beneficiaire", "titulaire du compte",
    "titulaire", "zahlbar an", "zahlungsempfanger", "beneficiario", "titular", "rekeninghouder", "ten name van",
    "tnv", "payable to", "payee", "intestatario"), key=len, reverse=True))
CELL_GAP_EMS = 1.5
_PAYEES = IdentityCache(8)           # per document: a document is verified again after each repair


def _caption(cell: str) -> tuple[str, str] | None:
    """(caption, the rest of the cell's words) where a cell starts with a payee caption."""
    f = fold(cell)
    for c in PAYEE_CAPTIONS:
        if f == c or f.startswith(c + " "):
            words = cell.split()
            n = len(c.split())
            return c, " ".join(words[n:]).lstrip(":").strip() if len(words) > n else ""
    return None


def payees(document: Any) -> Iterator[str]:
    """Each company name a page prints as a payee."""
    for page in getattr(document, "pages", None) or []:
        lines = getattr(page, "lines", None) or []
        for li in range(len(lines)):
            for x0, x1, t in line_cells(page, li, CELL_GAP_EMS):
                hit = _caption(t)
                if hit is None:
                    continue
                name = hit[1]
                if not name and li + 1 < len(lines):
                    below = [c for c in line_cells(page, li + 1, CELL_GAP_EMS) if min(c[1], x1) - max(c[0], x0) > 0]
                    name = below[0][2] if below else ""
                if name and has_legal_form(name):
                    yield name


def seller_is_payee(ctx: VerifyContext) -> list[Signal]:
    fields = roles_of(ctx.schema).fields("seller_name")
    if not fields or ctx.document is None:
        return []
    named = _PAYEES.get_or_make(ctx.document, "payees", lambda: tuple(dict.fromkeys(payees(ctx.document))))
    if not named:
        return []
    out = []
    for f in fields:
        v = text(ctx.record.get(f))
        if v is None:
            continue
        mine = fold_text(v)
        if any(mine in fold_text(n) or fold_text(n) in mine for n in named):
            out.append(Signal(f, "seller_is_payee", "pass", "the payment details name it as the payee"))
        else:
            out.append(Signal(f, "seller_is_payee", "fail", f"the payment details name {named[0][:40]!r} as the payee"))
    return out


CHECKS = (("seller_is_payee", seller_is_payee),)
