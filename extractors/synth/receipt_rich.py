"""Receipts of a non-classic family (see `families.RECEIPT_FAMILIES`): slogan and branch lines,
addresses reflowed over 1-4 lines (with or without the postcode), served-by and member names as
distractors, and a longer totals block (service charge, tax, rounding, savings, tendered, change).

The truth follows what is printed: `address` is the printed address lines joined by spaces; `total`
includes the service charge. Values the classic receipt has no room for come from their own random
stream, so classic receipts keep their values.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal

from docassay.extractors.synth import names
from docassay.extractors.synth.canvas import Layout, Tagged
from docassay.extractors.synth.families import RichReceipt
from docassay.extractors.synth.locale import Locale, format_number, money
from docassay.extractors.synth.receipt import ReceiptStyle, ReceiptValues, _ReceiptComposer

__all__ = ["RichReceiptValues", "sample_rich_receipt_values", "compose_rich_receipt"]

_POSTCODE = re.compile(r"^(?:[A-Z]{1,2}-)?\d{4,6}$")       # numeric postcodes ("47000", "D-10115")
_NOTES = (1, 5, 10, 20, 50, 100, 200, 500)


@dataclass(frozen=True)
class RichReceiptValues:
    values: ReceiptValues          # the classic values with the service charge folded into the totals
    service: Decimal
    pre_rounding: Decimal
    address: tuple[str, ...]       # the address lines as printed
    member_name: str
    branch_name: str
    savings: Decimal               # printed after the total when the format has a savings line


def _reflow(address: tuple[str, ...], n_lines: int, postcode: bool) -> tuple[str, ...]:
    words = " ".join(address).split()
    if not postcode:
        kept = [w for w in words if not _POSTCODE.match(w.rstrip(",."))]
        words = kept if len(kept) >= 2 else words
    if n_lines <= 0:
        if postcode:
            return address
        n_lines = len(address)
    n_lines = max(1, min(n_lines, len(words)))
    per = -(-len(words) // n_lines)
    return tuple(" ".join(words[i:i + per]) for i in range(0, len(words), per))


def sample_rich_receipt_values(style: ReceiptStyle, loc: Locale, lang: str, v: ReceiptValues,
                               rng: random.Random) -> RichReceiptValues:
    r = style.rich
    assert isinstance(r, RichReceipt)
    service = money(v.subtotal * r.service_pct / 100) if r.service_pct else Decimal("0.00")
    base = v.subtotal + service
    rate = style.tax_rate
    if style.tax_mode == "exclusive":
        tax = money(base * rate / 100)
        pre = base + tax
    elif style.tax_mode == "inclusive":
        tax = money(base - base / (1 + rate / 100))
        pre = base
    else:
        tax, pre = Decimal("0.00"), base
    total = money((pre * 20).quantize(Decimal(1), rounding=ROUND_HALF_UP) / 20) if style.rounding else pre
    cash = next((Decimal(n) for n in _NOTES if n >= total and rng.random() < 0.7), None) or total
    cash = money(max(cash, total))
    values = replace(v, tax=tax, rounding=total - pre, total=total, cash=cash, change=cash - total)
    address = _reflow(v.shop.address, r.address_lines, r.postcode)
    words = [w.strip(",.") for w in " ".join(v.shop.address).split() if w.strip(",.").isalpha() and len(w) > 3]
    branch = rng.choice(words) if words else names.person_name(rng, lang if lang != "ms" else "en").split()[-1]
    member = names.person_name(rng, lang)
    if style.upper:
        member, branch = member.upper(), branch.upper()
    savings = money(v.subtotal * Decimal(rng.randint(2, 15)) / 100).max(Decimal("0.10"))
    return RichReceiptValues(values, service, pre, address, member, branch, savings)


class _RichReceiptComposer(_ReceiptComposer):
    def __init__(self, style: ReceiptStyle, loc: Locale, lang: str, rv: RichReceiptValues) -> None:
        assert isinstance(style.rich, RichReceipt)
        self.r: RichReceipt = style.rich
        self.rv = rv
        super().__init__(style, loc, lang, rv.values)

    def header(self) -> None:
        s, v, r = self.s, self.v, self.r
        slogan_font = self.reg
        if s.brand_line:
            self.center(v.shop.brand, self.bold, round(s.name_size * 1.1, 1))
        if r.slogan and r.slogan_above:
            self.center(r.slogan, slogan_font)
        self.center(v.shop.company, self.bold if s.name_bold else self.reg, s.name_size, ("company",))
        if r.slogan and not r.slogan_above:
            self.center(r.slogan, slogan_font)
        if s.reg_no:
            self.center(v.shop.reg_no)
        if r.branch:
            self.center(f"{r.labels['branch']}{s.colon} {self.rv.branch_name}")
        self.header_tail(self.rv.address)

    def meta_lines(self) -> None:
        s, r = self.s, self.r
        # the separator of the classic meta block closes it; print the distractor names before it
        self.s = replace(self.s, separator="none")
        try:
            super().meta_lines()
        finally:
            self.s = s
        if r.served_by:
            self.p.text(self.x0, self.y + self.fs * 0.75, f"{r.labels['served']}{s.colon} {self.v.cashier}",
                        self.reg, self.fs)
            self.y += self.ld
        if r.member_name:
            self.p.text(self.x0, self.y + self.fs * 0.75, f"{r.labels['member']}{s.colon} {self.rv.member_name}",
                        self.reg, self.fs)
            self.y += self.ld
        self.sep()

    def totals(self) -> None:
        s, v, r, loc = self.s, self.v, self.r, self.loc
        marked = s.cur_style == "all"
        if s.items_count:
            n = sum(int(q) for _, _, q, _, _ in v.items)
            self.pair([(self.lab("items"), ())], [(str(n), ())])
        self.pair([(self.lab("subtotal"), ())], self.amt(v.subtotal, marked))
        pct = format_number(s.tax_rate, loc, 0 if s.tax_rate == s.tax_rate.to_integral_value() else 1, group=False)
        service: list[tuple[list[Tagged], list[Tagged]]] = []
        if self.rv.service:
            spct = format_number(r.service_pct, loc, 0, group=False)
            service.append(([(f"{r.labels['service']} {spct}%{s.colon}", ())], self.amt(self.rv.service, marked)))
        tax: list[tuple[list[Tagged], list[Tagged]]] = []
        if s.tax_mode == "exclusive":
            tax.append(([(f"{s.labels['tax']} {pct}%{s.colon}", ())], self.amt(v.tax, marked)))
        for left, right in service + tax:                  # tax is charged on the service too
            self.pair(left, right)
        if s.rounding:
            self.pair([(self.lab("rounding"), ())], self.amt(v.rounding, marked))
        size = round(self.fs * 1.3, 1) if s.total_big else self.fs
        self.y += self.ld * 0.2
        split = self.pair([(self.lab("total"), ("@total",))], self.amt(v.total, s.cur_style != "none", ("total",)),
                          self.bold, size)
        self.relations["total"] = "above" if split else "left"
        if s.tax_mode == "inclusive":
            incl = s.labels["incl_tax"]
            if s.labels["tax"].lower().rstrip(".") not in incl.lower():
                incl = f"{incl} {s.labels['tax']}"
            self.pair([(f"{incl} {pct}%{s.colon}", ())], self.amt(v.tax, marked))
        if r.savings:
            self.pair([(f"{r.labels['saved']}{s.colon}", ())], self.amt(self.rv.savings, marked))
        self.y += self.ld * 0.3
        if s.payment in ("cash", "mixed"):
            label = f"{r.labels['tendered']}{s.colon}" if r.tendered else self.lab("cash")
            self.pair([(label, ())], self.amt(v.cash, marked))
            self.pair([(self.lab("change"), ())], self.amt(v.change, marked))
        if s.payment in ("card", "mixed"):
            self.pair([(f"{s.labels['card']} ****{v.card_digits}", ())], self.amt(v.total, marked))
        self.sep()

    def compose(self) -> tuple[Layout, dict[str, object]]:
        layout, truth = super().compose()
        truth["address"] = " ".join(self.rv.address)
        return layout, truth


def compose_rich_receipt(style: ReceiptStyle, loc: Locale, lang: str, rv: RichReceiptValues
                         ) -> tuple[Layout, dict[str, object]]:
    """The single long page of one receipt of a non-classic family and its canonical truth."""
    return _RichReceiptComposer(style, loc, lang, rv).compose()
