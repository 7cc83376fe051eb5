"""What an amount printed on a receipt is: the total paid, or a subtotal, tax, change, cash tendered,
rounding, discount or item count; and which amount the others add up to.

A receipt prints many amounts and "TOTAL" in many labels ("SUB-TOTAL", "TOTAL QTY", "GST INCLUDED
IN TOTAL", "TAX TOTAL"). `amount_role` reads the label printed left of an amount as one role, in the
languages of the lexicon; `total_priors` then moves the generator's scores for a receipt total
(concept `total`): up for the final / rounded / due amount and for the amount the others add up to
(cash tendered minus change; subtotal plus tax and rounding), down for the amounts of the other
roles and for an amount smaller than a tax the receipt prints (a total includes its tax: "TOTAL EV
2.10", a loyalty figure, under "GST AMT 4.43" is no total). Applied after any scorer (baseline, ranker, layout reader), before the best proposal per
field is chosen; the instructions stay the chosen locators.
"""
from __future__ import annotations

import re
from functools import partial

from docassay.extractors.instructions.proposals import Proposal, reorder_keeping_level
from docassay.extractors.labels import FieldSpec, fold_label
from docassay.extractors.spans import DocIndex, Span

__all__ = ["amount_role", "line_label", "total_priors", "below_tax", "ROLE_PRIOR", "NOT_TOTAL", "BELOW_TAX"]

TOTAL_CONCEPTS = ("total",)          # the receipt total (invoices' gross_total has rival fields instead)
NOT_TOTAL = ("subtotal", "tax", "change", "rounding", "discount", "count")
ROLE_PRIOR = {"final": 0.15, "total": 0.0, "tendered": -0.3,
              **{r: -0.9 for r in NOT_TOTAL}}    # the ranker is often sure of a "... TOTAL" tax line (0.94)
ARITH_TENDER = 0.25      # the amount = cash tendered - change
ARITH_SUM = 0.20         # the amount = subtotal + tax (+ rounding), or subtotal + rounding
REPEATED_AS_PAID = 0.05  # the amount printed again as the payment (card, cash without change)
AMOUNT_TOL = 0.005
BELOW_TAX = -0.9         # smaller than a printed tax amount: no total (a total includes its tax)
MAX_TAX_SHARE = 0.3      # a tax is at most this share of the largest amount (VAT/GST rates are <= 27 %)
CASH_STEP = 0.05         # cash totals rounded to the nearest 5 cents (MY, AU, NZ, CH, NL, ...)
NO_CENTS = -0.5          # printed without decimals where the receipt's money amounts have them ("7 DAYS")
IN_TEXT = -0.3           # words follow the number in its segment: part of a sentence, not an amount cell
_WORD_AFTER = re.compile(r"^\s*[^\W\d_]{3,}")     # "7 DAY WITH RECEIPT"; not "57.00 S" or "7.42 RM"
_CENTS = re.compile(r"\d[.,]\d{2}(?!\d)")

_CHANGE = {"change", "kembalian", "kembali", "baki", "ruckgeld", "wechselgeld", "rendu", "monnaie", "cambio",
           "vuelto", "wisselgeld", "resto"}
_TENDERED = {"cash", "tendered", "tender", "paid", "payment", "tunai", "bar", "bargeld", "gegeben", "especes",
             "efectivo", "contant", "card", "visa", "mastercard", "master", "debit", "credit", "amex", "received",
             "kad", "wang", "pin", "ec", "carte", "tarjeta", "pinpas"}
_COUNT = {"qty", "quantity", "items", "item", "pcs", "count", "units", "bil", "anzahl", "articles", "artikel",
          "articulos", "artikelen", "kuantiti", "unit", "no of items"}
_DISCOUNT = {"discount", "disc", "diskaun", "rabatt", "remise", "descuento", "korting", "savings", "saved", "save",
             "voucher", "coupon", "promo", "potongan", "jimat", "ahorro", "ahorrado", "ersparnis", "gespart",
             "economie", "economies", "economise", "besparing", "bespaard"}
_ROUNDING = {"rounding", "round", "rounded", "adj", "adjustment", "pembundaran", "rundung", "rundungsdifferenz",
             "arrondi", "redondeo", "afronding", "pelarasan"}
_SUBTOTAL = {"sub", "subtotal", "sous", "zwischensumme", "kecil", "subtotaal", "zwischen"}
_EXCLUDING = {"excl", "exclusive", "excluding", "before", "ex", "ohne", "hors", "sin", "exkl", "exclusief", "tanpa",
              "sebelum", "avant", "vor"}
_TAX = {"gst", "vat", "tax", "sst", "mwst", "ust", "tva", "iva", "btw", "cukai", "servis", "service", "steuer"}
_INCLUDING = {"incl", "inclusive", "including", "inc", "inkl", "with", "ttc", "inclusief", "termasuk"}
_TOTAL = {"total", "jumlah", "amount", "summe", "gesamt", "totaal", "montant", "importe", "sum", "amt", "nett", "net",
          "grand", "due", "payable", "bayar"}
_FINAL = ("rounded total", "total rounded", "grand total", "amount due", "total due", "balance due", "nett total",
          "net total", "total payable", "amount payable", "net payable", "to pay", "total to pay", "jumlah besar",
          "zu zahlen", "zahlbetrag", "net a payer", "total a payer", "total a pagar", "te betalen",
          "total after rounding", "total incl", "total inclusive", "total amount payable", "rounded")


def _including(word: str) -> bool:
    """An inclusion qualifier, also as OCR misreads its end ("INCLUSLVE")."""
    return word in _INCLUDING or word.startswith(("inclu", "inkl"))


def amount_role(label: str) -> str:
    """The role of an amount printed after `label`: final | total | tendered | change | count |
    discount | rounding | subtotal | tax, or "" when the label says nothing."""
    t = fold_label(label)
    toks = t.split()
    if not toks:
        return ""
    padded = f" {t} "
    has = set(toks)
    if has & _CHANGE:
        return "change"
    if has & _COUNT:
        return "count"
    if has & _DISCOUNT:
        return "discount"
    if has & _ROUNDING and not (has & _TOTAL):
        return "rounding"
    if has & _SUBTOTAL or " sub total " in padded:
        return "subtotal"
    first_tax = next((i for i, w in enumerate(toks) if w in _TAX), None)
    if first_tax is not None:
        if any(w in _EXCLUDING for w in toks[:first_tax]):
            return "subtotal"                        # "TOTAL EXCL. GST"
        total_first = any(w in _TOTAL for w in toks[:first_tax])
        if not any(_including(w) for w in (toks if total_first else toks[:first_tax])):
            return "tax"                             # "GST 6%", "TAX TOTAL", "GST INCLUDED IN TOTAL"
    incl_tax = first_tax is not None                 # past the tests above: "... INCL. GST", "TOTAL IVA INCLUIDO"
    if has & _TENDERED and not incl_tax and not any(f" {f} " in padded for f in _FINAL):
        return "tendered"
    if any(f" {f} " in padded for f in _FINAL):
        return "final"
    if has & _TOTAL or incl_tax:
        return "total"                               # "AMT PAID INCL. GST": said to include tax, a total
    return ""


def line_label(ix: DocIndex, span: Span) -> str:
    """The text printed left of a span on its line: its own segment's start and the segments before."""
    pi = ix.page(span.page)
    seg = ix.segment(span.page, span.line, span.segment)
    left = [s.text for s in pi.segments_by_line[span.line][:span.segment]]
    return " ".join(left + [seg.text[:span.seg_start]]).strip()


def _amounts_by_role(ix: DocIndex) -> dict[str, list[float]]:
    """role -> the amounts printed with it; and "printed_tax": the tax amounts printed with cents
    as their line's last amount ("GST AMT : RM4.43"; not a summary row's base, "SR = GST @0% 7.72
    0.00", nor a number without cents after "GST REG NO"), each at most `MAX_TAX_SHARE` of the
    largest such amount (a tax is a share of what it is levied on: a "tax" line as large as the
    total is a total the lexicon misread, "JUMLAH SEBELUM CUKAI 60.01")."""
    out: dict[str, list[float]] = {}
    last: dict[tuple[int, int], Span] = {}
    for s in ix.spans("amount"):
        if isinstance(s.value, float):
            out.setdefault(amount_role(line_label(ix, s)), []).append(float(s.value))
            k = (s.page, s.line)
            if k not in last or (s.segment, s.seg_start) > (last[k].segment, last[k].seg_start):
                last[k] = s
    money = [float(s.value) for s in last.values() if _CENTS.search(s.text)]  # type: ignore[arg-type]
    top = max(money, default=0.0)
    out["printed_tax"] = [float(s.value) for s in last.values()  # type: ignore[arg-type]
                          if _CENTS.search(s.text) and amount_role(line_label(ix, s)) == "tax"
                          and 0 < float(s.value) <= MAX_TAX_SHARE * top]  # type: ignore[arg-type]
    return out


def _near(a: float, b: float) -> bool:
    return abs(a - b) <= AMOUNT_TOL


def arithmetic_bonus(value: float, roles: dict[str, list[float]]) -> float:
    """How much the other amounts say this one is the total: tendered - change, subtotal + tax."""
    bonus = 0.0
    changes = [c for c in roles.get("change", []) if c > 0]
    tendered = roles.get("tendered", [])
    if any(_near(t - c, value) for t in tendered for c in changes):
        bonus += ARITH_TENDER
    elif not changes and any(_near(t, value) for t in tendered):
        bonus += REPEATED_AS_PAID
    subs, taxes, rounds = roles.get("subtotal", []), roles.get("tax", []), roles.get("rounding", []) + [0.0]
    if value > 0 and any(_near(s + x + r, value) for s in subs for x in taxes + [0.0] for r in rounds
                         if (x, r) != (0.0, 0.0) and not _near(s, value)):
        bonus += ARITH_SUM
    elif value > 0 and _taxes_added(value, subs + [t for t in roles.get("total", []) if t < value], taxes):
        bonus += ARITH_SUM
    return bonus


def _cash_rounded(x: float) -> float:
    return round(round(x / CASH_STEP) * CASH_STEP, 2)


def _taxes_added(value: float, bases: list[float], taxes: list[float]) -> bool:
    """The amount is a smaller printed amount plus all the tax lines together ("GROSS AMT 47.80",
    "SVR TAX 2.87", "GST 2.86", "NET AMT 53.55"), exactly or rounded to the cash step."""
    if len(taxes) < 2 or any(x <= 0 for x in taxes):
        return False
    tax = sum(taxes)
    return any(_near(b + tax, value) or _near(_cash_rounded(b + tax), value) for b in bases)


def shape_prior(ix: DocIndex, span: Span, with_cents: bool) -> float:
    """An amount's print: without cents among amounts with cents, or inside a sentence."""
    s = 0.0
    if with_cents and not _CENTS.search(span.text):
        s += NO_CENTS
    seg = ix.segment(span.page, span.line, span.segment)
    if _WORD_AFTER.match(seg.text[span.seg_end:]):
        s += IN_TEXT
    return s


def _total_prior(ix: DocIndex, p: Proposal, roles: dict[str, list[float]], with_cents: bool) -> float:
    if p.relation == "detect" or not isinstance(p.value, float):
        return 0.0
    role = amount_role(line_label(ix, p.span))
    if role == "subtotal" and not (roles.get("final") or roles.get("total")):
        role = "total"                   # no total printed after it: the subtotal is what is paid
    return ROLE_PRIOR.get(role, 0.0) + arithmetic_bonus(float(p.value), roles) + shape_prior(ix, p.span, with_cents) \
        + below_tax(float(p.value), roles)


def below_tax(value: float, roles: dict[str, list[float]]) -> float:
    """`BELOW_TAX` for a positive amount smaller than a tax amount printed on the receipt: the total
    paid includes its tax, so a smaller figure is a points balance, a saving or a tax itself."""
    taxes = [x for x in roles.get("printed_tax", []) if x > 0]
    return BELOW_TAX if value > 0 and taxes and value + AMOUNT_TOL < max(taxes) else 0.0


def total_priors(ix: DocIndex, specs: list[FieldSpec], ranked: dict[str, list[Proposal]]) -> dict[str, list[Proposal]]:
    """Move the scores of receipt-total proposals by the role of their amount and the arithmetic
    of the others; re-sort, the best keeping the score the scorer gave its field's best (the
    field's level: what the calibrator reads as the generator's confidence). Other fields are
    returned as they are."""
    roles: dict[str, list[float]] | None = None
    for spec in specs:
        if spec.concept not in TOTAL_CONCEPTS or spec.type not in ("amount", "number"):
            continue
        props = ranked.get(spec.name) or []
        if not props:
            continue
        roles = roles if roles is not None else _amounts_by_role(ix)
        with_cents = sum(1 for s in ix.spans("amount") if _CENTS.search(s.text)) >= 2
        reorder_keeping_level(props, partial(_total_prior, ix, roles=roles, with_cents=with_cents))
    return ranked
