"""The values of one invoice: parties, numbers, dates, line items and exact totals.

Arithmetic (all `Decimal`, half-up to cents):
    line_total = round(quantity * unit_price - line_discount, 2)
    (credit notes: negative quantities, so every line and total is negative; no discounts)
    per tax rate r: base_r = sum of its line totals; doc discount d_r = round(base_r * pct, 2);
                    net_r = base_r - d_r; tax_r = round(net_r * r / 100, 2)
    net = sum net_r; tax = sum tax_r; gross = net + tax
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal

from docassay.extractors.synth import names, vocab
from docassay.extractors.synth.invoice_style import InvoiceStyle
from docassay.extractors.synth.locale import Locale, money
from docassay.extractors.synth.names import Party

__all__ = ["Item", "TaxLine", "InvoiceValues", "sample_invoice_values"]


@dataclass(frozen=True, slots=True)
class Item:
    description: str
    sku: str
    note: str                      # sub-line under the description ("" for none)
    quantity: Decimal
    unit: str
    unit_price: Decimal
    discount_pct: Decimal | None   # printed as a percentage when set
    discount: Decimal              # amount taken off this line
    tax_rate: Decimal
    line_total: Decimal


@dataclass(frozen=True, slots=True)
class TaxLine:
    rate: Decimal
    base: Decimal                  # net amount taxed at `rate` (after the document discount)
    tax: Decimal


@dataclass(frozen=True)
class InvoiceValues:
    seller: Party
    buyer: Party
    ship_to: Party | None
    attn: str
    number: str
    order_number: str
    customer_number: str
    po_number: str
    buyer_vat: str
    issue: date
    due: date
    delivery: date
    early_date: date
    early_pct: Decimal
    items: list[Item]
    subtotal: Decimal
    doc_discount_pct: Decimal
    doc_discount: Decimal
    net: Decimal
    taxes: list[TaxLine]
    tax_total: Decimal
    gross: Decimal
    deposit: Decimal
    amount_due: Decimal
    bank: tuple[str, str, str]
    credit: bool                   # a credit note: quantities and every amount negative


def _quant(d: int) -> Decimal:
    return Decimal(1).scaleb(-d) if d else Decimal(1)


def _price(rng: random.Random, style: InvoiceStyle) -> Decimal:
    lo, hi = style.price_range
    v = math.exp(rng.uniform(math.log(lo), math.log(hi)))
    if rng.random() < 0.3:
        v = round(v) - 0.01 if v > 2 else v          # "19.99"-style prices
    return Decimal(repr(v)).quantize(_quant(style.price_decimals), rounding=ROUND_HALF_UP).max(_quant(style.price_decimals))


def _quantity(rng: random.Random, style: InvoiceStyle, service: bool) -> Decimal:
    top = style.qty_max
    if style.qty_decimals == 0:
        return Decimal(max(1, int(math.exp(rng.uniform(0, math.log(top + 1))))))
    if service:
        v = Decimal(rng.randint(1, 2 * min(top, 40))) / 2
    elif rng.random() < 0.7:                             # whole units printed with decimals ("3,00")
        v = Decimal(max(1, int(math.exp(rng.uniform(0, math.log(top + 1))))))
    else:
        v = Decimal(repr(math.exp(rng.uniform(math.log(0.25), math.log(top + 1)))))
    q = v.quantize(_quant(style.qty_decimals), rounding=ROUND_HALF_UP)
    return q if q > 0 else _quant(style.qty_decimals)


def sample_invoice_values(style: InvoiceStyle, loc: Locale, lang: str, rng: random.Random) -> InvoiceValues:
    """Values for one document of a format."""
    units = vocab.INVOICE_LABELS[lang]["units"]
    service_units = vocab.INVOICE_LABELS[lang]["service_units"]
    country = loc.country
    seller = names.make_party(rng, lang, country, vat=style.seller.vat_id is not None) if style.seller_varies \
        else style.seller
    buyer_country = country if rng.random() < 0.85 else rng.choice(names.COUNTRIES[lang])
    buyer = names.make_party(rng, lang, buyer_country, with_country=rng.random() < 0.3, home=country)
    if rng.random() < 0.1:
        buyer = Party(names.person_name(rng, lang), buyer.address, buyer.country, None)
    ship_to = None
    if style.ship_to:
        other = names.make_party(rng, lang, buyer_country)
        ship_to = Party(other.name if rng.random() < 0.5 else buyer.name, other.address, other.country)
    issue = date(2015, 1, 1) + timedelta(days=rng.randint(0, 365 * 11))
    credit = bool(style.credit_p) and rng.random() < style.credit_p
    lo, hi = style.items_range
    n_items = rng.randint(lo, hi)
    items: list[Item] = []
    for _ in range(n_items):
        service = rng.random() < style.service_p
        desc = names.item_description(rng, lang, long=rng.random() < style.long_desc_p, service=service)
        qty = _quantity(rng, style, service) * (-1 if credit else 1)
        price = _price(rng, style)
        gross_line = qty * price
        pct: Decimal | None = None
        disc = Decimal("0.00")
        if style.line_discount_p and not credit and rng.random() < style.line_discount_p:
            if style.discount_kind == "percent":
                pct = Decimal(rng.choice([2, 3, 5, 10, 15, 20]))
                disc = money(gross_line * pct / 100)
            else:
                disc = money(gross_line * Decimal(rng.choice([3, 5, 8, 12])) / 100)
        total = money(gross_line - disc)
        if total <= 0 and not credit:
            disc, pct, total = Decimal("0.00"), None, money(gross_line).max(Decimal("0.01"))
        rate = rng.choice(style.rates)
        note = ""
        if style.sub_line == "note":
            note = style.delivery_note.format(n=rng.randint(10000, 99999), date="{date}")
        items.append(Item(description=desc, sku=f"{rng.choice('ABCDEFGHKMPRST')}{rng.randint(1000, 99999)}",
                          note=note, quantity=qty, unit=rng.choice(service_units if service else units), unit_price=price, discount_pct=pct,
                          discount=disc, tax_rate=rate, line_total=total))
    pct = Decimal(rng.choice([2, 3, 5, 10])) if style.doc_discount_p and not credit and \
        rng.random() < style.doc_discount_p else Decimal(0)
    taxes: list[TaxLine] = []
    doc_disc = Decimal("0.00")
    subtotal = Decimal("0.00")
    for r in style.rates:
        base = sum((it.line_total for it in items if it.tax_rate == r), Decimal("0.00"))
        if not any(it.tax_rate == r for it in items):
            continue
        d = money(base * pct / 100)
        net_r = base - d
        taxes.append(TaxLine(r, net_r, money(net_r * r / 100)))
        doc_disc += d
        subtotal += base
    net = sum((t.base for t in taxes), Decimal("0.00"))
    tax_total = sum((t.tax for t in taxes), Decimal("0.00"))
    gross = net + tax_total
    deposit = Decimal("0.00")
    if style.deposit_p and not credit and rng.random() < style.deposit_p and gross > 10:
        deposit = money(gross * Decimal(rng.choice([20, 25, 30, 50])) / 100)
    bank = style.bank if not style.seller_varies else (
        style.bank[0], names.iban(rng, country if country in ("DE", "FR", "ES", "NL", "GB") else "DE"), style.bank[2])
    yr = issue.year
    return InvoiceValues(
        seller=seller, buyer=buyer, ship_to=ship_to, attn=names.person_name(rng, lang),
        number=style.id_pattern.render(rng, yr), order_number=style.order_pattern.render(rng, yr),
        customer_number=style.customer_pattern.render(rng, yr),
        po_number=f"{rng.choice(['PO', 'P', 'B', ''])}{rng.randint(1000, 9999999)}",
        buyer_vat=names.vat_id(rng, buyer_country), issue=issue, due=issue + timedelta(days=style.terms_days),
        delivery=issue - timedelta(days=rng.randint(0, 12)), early_date=issue + timedelta(days=rng.randint(5, 10)),
        early_pct=Decimal(rng.choice([2, 3])), items=items, subtotal=subtotal, doc_discount_pct=pct,
        doc_discount=doc_disc, net=net, taxes=taxes, tax_total=tax_total, gross=gross, deposit=deposit,
        amount_due=gross - deposit, bank=bank, credit=credit)
