"""Receipts: narrow till slips with a centred shop header, items, totals and payment lines.

A receipt format fixes the paper width, font, label wording (TOTAL / JUMLAH / SUMME / TOTAL À PAYER
...), item layout, tax mode (added, included, none), rounding to 0.05 and the payment block. Truth is
`{"company", "date", "address", "total"}` where `total` is the amount printed on the total line
(after rounding); the cash tendered, the change, the subtotal and the pre-rounding amount are
distractors printed beside it.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, replace
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Sequence

from docassay.extractors.synth import names, vocab
from docassay.extractors.synth.canvas import FAMILIES, Layout, PageLayout, Tagged, measure, wrap
from docassay.extractors.synth.locale import Locale, format_amount, format_date, format_number, money

__all__ = ["ReceiptStyle", "ReceiptValues", "sample_receipt_style", "sample_receipt_values", "compose_receipt"]

ASC = 0.75
_COUNTRY = {"en": ["MY", "MY", "MY", "GB", "US"], "ms": ["MY"], "de": ["DE", "DE", "AT", "CH"], "fr": ["FR", "FR", "BE"],
            "es": ["ES"], "nl": ["NL", "NL", "BE"]}
_RATES = {"MY": ["6", "10", "6"], "GB": ["20"], "US": ["6.25", "8", "7"], "DE": ["19", "7"], "AT": ["20", "10"],
          "CH": ["8.1", "2.6"], "FR": ["20", "10", "5.5"], "BE": ["21", "6"], "ES": ["21", "10"], "NL": ["21", "9"]}
_CUR = {"MY": ("MYR", ["RM"]), "GB": ("GBP", ["£"]), "US": ("USD", ["$"]), "CH": ("CHF", ["CHF", "Fr."])}


@dataclass(frozen=True)
class ReceiptShop:
    brand: str
    company: str
    reg_no: str
    address: tuple[str, ...]
    phone: str
    tax_id: str


@dataclass(frozen=True)
class ReceiptStyle:
    width: float
    margin: float
    family: str
    size: float
    leading: float
    upper: bool
    colon: str
    labels: dict[str, str]
    brand_line: bool
    name_size: float
    name_bold: bool
    reg_no: bool
    tel: bool
    tax_id_line: bool
    title: bool
    meta_keys: tuple[str, ...]                  # receipt_no, date, cashier, table, member (in order)
    date_style: str                             # labelled | with_time | bare | split
    time_fmt: str                               # 24 | 24s | 12
    separator: str                              # dash | equals | rule | none
    item_style: str                             # one_line | two_line | columns | code_desc
    tax_mode: str                               # exclusive | inclusive | none
    tax_rate: Decimal
    rounding: bool
    tax_summary: bool
    total_big: bool
    items_count: bool
    payment: str                                # cash | card | mixed
    cur_style: str                              # all | total | none
    thanks: tuple[str, ...]
    items_range: tuple[int, int]
    price_range: tuple[float, float]
    shop_varies: bool
    shop: ReceiptShop
    layout_family: str = "classic"              # see families.RECEIPT_FAMILIES
    rich: object | None = None                  # families.RichReceipt for non-classic families

    def describe(self) -> dict[str, object]:
        keys = ("width", "family", "size", "upper", "colon", "brand_line", "name_bold", "reg_no", "tel",
                "tax_id_line", "title", "date_style", "time_fmt", "separator", "item_style", "tax_mode", "rounding",
                "tax_summary", "total_big", "items_count", "payment", "cur_style", "shop_varies")
        out: dict[str, object] = {k: getattr(self, k) for k in keys}
        out["meta_keys"] = list(self.meta_keys)
        out["tax_rate"] = str(self.tax_rate)
        out["labels"] = dict(self.labels)
        out["layout_family"] = self.layout_family
        if self.rich is not None:
            out["rich"] = self.rich.describe()  # type: ignore[attr-defined]
        return out


@dataclass(frozen=True)
class ReceiptValues:
    shop: ReceiptShop
    when: date
    hour: int
    minute: int
    second: int
    receipt_no: str
    cashier: str
    table: str
    member: str
    items: list[tuple[str, str, Decimal, Decimal, Decimal]]     # code, description, qty, unit price, amount
    subtotal: Decimal
    tax: Decimal
    rounding: Decimal
    total: Decimal
    cash: Decimal
    change: Decimal
    card_digits: str


def _brand(company: str) -> str:
    """A brand line from a company's name: the first two words of its name without the legal form
    (a trading name: "Yorisstein BV" gives "Yorisstein"), never ending on a joining "&" ("Harris &
    Taylor Inc." gives "Harris", not "Harris &", which reads as a name cut in two)."""
    words = names.without_legal_form(company).split(" ")[:2]
    while len(words) > 1 and words[-1] == "&":
        words.pop()
    return " ".join(words)


def _shop(rng: random.Random, lang: str, country: str, upper: bool) -> ReceiptShop:
    clang = "ms" if country == "MY" else lang
    company = names.company_name(rng, clang, country)
    brand = _brand(names.company_name(rng, clang, country))
    addr = names.address_lines(rng, country, clang)
    if country == "MY":
        reg = f"({rng.randint(10000, 1299999)}-{rng.choice('AHKPTUVWXD')})"
        tax_id = f"{rng.randint(10 ** 11, 10 ** 12 - 1)}"
    else:
        reg = names.vat_id(rng, country)
        tax_id = names.vat_id(rng, country)
    up = (lambda s: s.upper()) if upper else (lambda s: s)  # noqa: E731
    return ReceiptShop(up(brand), up(company), reg, tuple(up(a) for a in addr), names.phone(rng, country), tax_id)


def sample_receipt_style(seed: int) -> tuple[str, Locale, ReceiptStyle]:
    """(language, locale, style) of receipt format `seed`."""
    rng = random.Random(f"receipt-format/{seed}")
    lang = vocab.RECEIPT_LANGUAGES[rng.randrange(len(vocab.RECEIPT_LANGUAGES))]
    country = rng.choice(_COUNTRY[lang])
    cur, marks = _CUR.get(country, ("EUR", ["€", "EUR"]))
    mark = rng.choice(marks)
    dec, grp = (".", rng.choice([",", ""])) if country in ("MY", "GB", "US") else rng.choice(
        [(",", ""), (",", "."), (".", ""), (",", "")]) if country != "CH" else (".", "'")
    dlang = lang
    pattern = rng.choice(vocab.DATE_PATTERNS[(dlang, "MDY" if country == "US" else "DMY")])
    upper = rng.random() < (0.75 if country == "MY" else 0.35)
    pos = "before" if mark in ("RM", "£", "$", "CHF", "Fr.") or rng.random() < 0.3 else "after"
    loc = Locale(lang, country, dec, grp, pattern, cur, mark, pos, mark.isalpha() and rng.random() < 0.7 or
                 (pos == "after" and rng.random() < 0.8), upper)
    lab = vocab.RECEIPT_LABELS[lang]
    labels = {k: rng.choice(v) for k, v in lab.items()}
    if upper:
        labels = {k: v.upper() for k, v in labels.items()}
    family = rng.choices(["Courier", "Helvetica", "Times"], weights=[6, 3, 1])[0]
    size = round(rng.uniform(6.5, 8.5), 1)
    width = rng.choice([164.0, 204.0, 227.0])
    rate = Decimal(rng.choice(_RATES[country]))
    tax_mode = rng.choices(["exclusive", "inclusive", "none"],
                           weights=[5, 1, 2] if country == "MY" else [1, 5, 1] if country != "US" else [5, 0, 1])[0]
    meta = [k for k, p in (("receipt_no", 0.8), ("cashier", 0.5), ("table", 0.15), ("member", 0.1))
            if rng.random() < p]
    meta.insert(rng.randrange(len(meta) + 1), "date")
    item_style = rng.choice(["one_line", "two_line", "columns", "code_desc"])
    shop_rng = random.Random(f"receipt-shop/{seed}")
    lo = rng.choice([0.5, 1.0, 2.0, 5.0])
    style = ReceiptStyle(
        width=width, margin=round(rng.uniform(6, 14), 1), family=family, size=size,
        leading=round(size * rng.uniform(1.15, 1.4), 2), upper=upper, colon=rng.choice([":", " :", "", ":"]),
        labels=labels, brand_line=rng.random() < 0.3, name_size=round(size * rng.uniform(1.0, 1.6), 1),
        name_bold=rng.random() < 0.6, reg_no=rng.random() < (0.8 if country == "MY" else 0.2),
        tel=rng.random() < 0.7, tax_id_line=rng.random() < 0.6, title=rng.random() < 0.6, meta_keys=tuple(meta),
        date_style=rng.choice(["labelled", "with_time", "bare", "split"]), time_fmt=rng.choice(["24", "24s", "12"]),
        separator=rng.choice(["dash", "equals", "rule", "none"]), item_style=item_style, tax_mode=tax_mode,
        tax_rate=rate, rounding=country == "MY" and rng.random() < 0.7,
        tax_summary=tax_mode == "exclusive" and rng.random() < 0.3, total_big=rng.random() < 0.4,
        items_count=rng.random() < 0.35, payment=rng.choices(["cash", "card", "mixed"], weights=[5, 3, 1])[0],
        cur_style=rng.choice(["all", "total", "none", "total"]),
        thanks=tuple(rng.sample(lab["thanks"], rng.randint(1, 2))), items_range=rng.choice([(1, 4), (2, 8), (4, 20)]),
        price_range=(lo, lo * rng.choice([4, 8, 15])), shop_varies=rng.random() < 0.25,
        shop=_shop(shop_rng, lang, country, upper),
    )
    if upper:
        style = replace(style, thanks=tuple(t.upper() for t in style.thanks))
    return lang, loc, style


def sample_receipt_values(style: ReceiptStyle, loc: Locale, lang: str, rng: random.Random) -> ReceiptValues:
    shop = _shop(rng, lang, loc.country, style.upper) if style.shop_varies else style.shop
    items = []
    lo, hi = style.price_range
    for _ in range(rng.randint(*style.items_range)):
        desc = names.receipt_item(rng, lang)
        desc = desc.upper() if style.upper else desc
        qty = Decimal(rng.choice([1, 1, 1, 1, 2, 2, 3, 4, 6]))
        price = Decimal(f"{rng.uniform(lo, hi):.2f}")
        if loc.country == "MY" and rng.random() < 0.5:
            price = (price * 20).quantize(Decimal(1)) / 20
        price = money(price).max(Decimal("0.05"))
        items.append((f"{rng.randint(10 ** 12, 10 ** 13 - 1)}", desc, qty, price, money(qty * price)))
    subtotal = sum((a for *_, a in items), Decimal("0.00"))
    rate = style.tax_rate
    if style.tax_mode == "exclusive":
        tax = money(subtotal * rate / 100)
        pre = subtotal + tax
    elif style.tax_mode == "inclusive":
        tax = money(subtotal - subtotal / (1 + rate / 100))
        pre = subtotal
    else:
        tax, pre = Decimal("0.00"), subtotal
    total = pre
    if style.rounding:
        total = money((pre * 20).quantize(Decimal(1), rounding=ROUND_HALF_UP) / 20)
    notes = [Decimal(n) for n in (1, 5, 10, 20, 50, 100, 200, 500)]
    cash = next((n for n in notes if n >= total and rng.random() < 0.7), None) or money(total)
    if cash < total:
        cash = total
    when = date(2015, 1, 1) + timedelta(days=rng.randint(0, 365 * 11))
    return ReceiptValues(shop=shop, when=when, hour=rng.randint(7, 22), minute=rng.randint(0, 59),
                         second=rng.randint(0, 59), receipt_no=f"{rng.choice(['', 'CS', 'T', 'R', 'OR'])}"
                         f"{rng.randint(10 ** 4, 10 ** 8)}", cashier=names.person_name(rng, lang).split(" ")[0],
                         table=str(rng.randint(1, 40)), member=str(rng.randint(10 ** 7, 10 ** 9)), items=items,
                         subtotal=subtotal, tax=tax, rounding=total - pre, total=total, cash=money(cash),
                         change=money(cash) - total, card_digits=f"{rng.randint(0, 9999):04d}")


class _ReceiptComposer:
    def __init__(self, style: ReceiptStyle, loc: Locale, lang: str, v: ReceiptValues) -> None:
        self.s, self.loc, self.lang, self.v = style, loc, lang, v
        self.reg, self.bold = FAMILIES[style.family]
        self.fs, self.ld = style.size, style.leading
        self.x0 = style.margin
        self.x1 = style.width - style.margin
        self.cw = self.x1 - self.x0
        self.p = PageLayout(style.width, 10_000.0)
        self.y = style.margin + 4
        self.relations: dict[str, str] = {}

    def lab(self, key: str) -> str:
        return f"{self.s.labels[key]}{self.s.colon}"

    def amt(self, value: Decimal, marked: bool, tags: tuple[str, ...] = ()) -> list[Tagged]:
        num = format_amount(value, self.loc)
        if not marked:
            return [(num, tags)]
        mark, sep = self.loc.currency_mark, " " if self.loc.currency_space else ""
        text = f"{mark}{sep}{num}" if self.loc.currency_pos == "before" else f"{num}{sep}{mark}"
        if sep:
            parts = text.split(" ")
            return [(w, tags if w == num else ()) for w in parts]
        return [(text, tags)]

    def center(self, pieces: list[Tagged] | str, font: str | None = None, size: float | None = None,
               tags: tuple[str, ...] = ()) -> None:
        size = size or self.fs
        font = font or self.reg
        if isinstance(pieces, str):
            pieces = [(pieces, tags)]
        text = " ".join(t for t, _ in pieces)
        words = [(w, t) for tx, t in pieces for w in tx.split()]
        i = 0
        for line in wrap(text, font, size, self.cw):
            n = len(line.split())
            self.p.text(self.x0 + self.cw / 2, self.y + size * ASC, words[i:i + n], font, size, align="center")
            i += n
            self.y += self.ld * size / self.fs

    def pair(self, left: list[Tagged], right: list[Tagged], font: str | None = None, size: float | None = None) -> bool:
        """Label left, value right on one line; when both do not fit, the value goes on the next line
        (returns True then)."""
        size = size or self.fs
        font = font or self.reg
        pitch = self.ld * size / self.fs
        wl = measure(" ".join(t for t, _ in left), font, size)
        wr = measure(" ".join(t for t, _ in right), font, size)
        split = wl + wr + 6 > self.cw
        self.p.text(self.x0, self.y + size * ASC, left, font, size)
        if split:
            self.y += pitch
        self.p.text(self.x1, self.y + size * ASC, right, font, size, align="right")
        self.y += pitch
        return split

    def sep(self) -> None:
        s = self.s
        if s.separator in ("dash", "equals"):
            ch = "-" if s.separator == "dash" else "="
            n = int(self.cw / measure(ch, self.reg, self.fs))
            self.p.text(self.x0, self.y + self.fs * ASC, ch * n, self.reg, self.fs)
            self.y += self.ld
        elif s.separator == "rule":
            self.p.line(self.x0, self.y + self.ld * 0.5, self.x1, self.y + self.ld * 0.5, line_width=0.4)
            self.y += self.ld
        else:
            self.y += self.ld * 0.4

    def time(self) -> str:
        v, f = self.v, self.s.time_fmt
        if f == "12":
            h = v.hour % 12 or 12
            return f"{h}:{v.minute:02d} {'PM' if v.hour >= 12 else 'AM'}"
        return f"{v.hour:02d}:{v.minute:02d}" + (f":{v.second:02d}" if f == "24s" else "")

    def header(self) -> None:
        s, v = self.s, self.v
        if s.brand_line:
            self.center(v.shop.brand, self.bold, round(s.name_size * 1.1, 1))
        self.center(v.shop.company, self.bold if s.name_bold else self.reg, s.name_size, ("company",))
        if s.reg_no:
            self.center(v.shop.reg_no)
        self.header_tail(v.shop.address)

    def header_tail(self, address: Sequence[str]) -> None:
        """The header from the address down: address lines, phone, tax id, title, separator."""
        s, v = self.s, self.v
        for line in address:
            self.center(line, tags=("address",))
        if s.tel:
            self.center(f"{self.lab('tel')} {v.shop.phone}")
        if s.tax_id_line:
            self.center(f"{self.lab('taxid')} {v.shop.tax_id}")
        if s.title:
            self.y += self.ld * 0.3
            self.center(s.labels["title"], self.bold)
        self.sep()

    def meta_lines(self) -> None:
        s, v = self.s, self.v
        d = format_date(v.when, self.loc)
        for key in s.meta_keys:
            if key == "date":
                date_p: list[Tagged] = [(d, ("date",))]
                if s.date_style == "labelled":
                    self.p.text(self.x0, self.y + self.fs * ASC, [(self.lab("date"), ("@date",))] + date_p, self.reg,
                                self.fs)
                    self.y += self.ld
                    self.p.text(self.x0, self.y + self.fs * ASC, f"{self.lab('time')} {self.time()}", self.reg,
                                self.fs)
                    self.relations["date"] = "left"
                elif s.date_style == "with_time":
                    self.p.text(self.x0, self.y + self.fs * ASC, [(self.lab("date"), ("@date",))] + date_p +
                                [(self.time(), ())], self.reg, self.fs)
                    self.relations["date"] = "left"
                elif s.date_style == "bare":
                    self.p.text(self.x0, self.y + self.fs * ASC, date_p + [(self.time(), ())], self.reg, self.fs)
                    self.relations["date"] = "none"
                else:
                    self.pair([(self.lab("date"), ("@date",))] + date_p, [(self.lab("time"), ()), (self.time(), ())])
                    self.relations["date"] = "left"
                    continue
                self.y += self.ld
                continue
            value = {"receipt_no": v.receipt_no, "cashier": v.cashier, "table": v.table, "member": v.member}[key]
            self.p.text(self.x0, self.y + self.fs * ASC, f"{self.lab(key)} {value}", self.reg, self.fs)
            self.y += self.ld
        self.sep()

    def items(self) -> None:
        s, loc = self.s, self.loc
        marked = s.cur_style == "all"
        qty_w = max(measure("999", self.reg, self.fs), measure(s.labels["qty"], self.bold, self.fs)) + 6
        amt_w = max(measure(format_amount(Decimal("9999.99"), loc, marked), self.reg, self.fs),
                    measure(s.labels["price"], self.bold, self.fs),
                    measure(s.labels["amount"], self.bold, self.fs)) + 6
        desc_w = self.cw - qty_w - 2 * amt_w
        # a table needs room for its description column; narrow paper prints items on two lines instead
        style = s.item_style if s.item_style != "columns" or desc_w >= 80 else "two_line"
        if style == "columns":
            price_x = self.x1 - amt_w
            base = self.y + self.fs * ASC
            self.p.text(self.x0, base, s.labels["qty"], self.bold, self.fs)
            self.p.text(self.x0 + qty_w, base, s.labels["desc"], self.bold, self.fs)
            self.p.text(price_x, base, s.labels["price"], self.bold, self.fs, align="right")
            self.p.text(self.x1, base, s.labels["amount"], self.bold, self.fs, align="right")
            self.y += self.ld
            for _code, desc, qty, price, amount in self.v.items:
                lines = wrap(desc, self.reg, self.fs, desc_w - 4)
                base = self.y + self.fs * ASC
                self.p.text(self.x0, base, format_number(qty, loc, 0), self.reg, self.fs)
                for j, line in enumerate(lines):
                    self.p.text(self.x0 + qty_w, base + j * self.ld, line, self.reg, self.fs)
                self.p.text(price_x, base, self.amt(price, marked), self.reg, self.fs, align="right")
                self.p.text(self.x1, base, self.amt(amount, marked), self.reg, self.fs, align="right")
                self.y += len(lines) * self.ld
        else:
            for code, desc, qty, price, amount in self.v.items:
                if style == "code_desc":
                    self.p.text(self.x0, self.y + self.fs * ASC, code, self.reg, self.fs)
                    self.y += self.ld
                if style == "one_line":
                    left = desc if qty == 1 else f"{format_number(qty, loc, 0)} x {desc}"
                    amt_text = self.amt(amount, marked)
                    room = self.cw - measure(" ".join(t for t, _ in amt_text), self.reg, self.fs) - 8
                    lines = wrap(left, self.reg, self.fs, room)
                    for line in lines[:-1]:
                        self.p.text(self.x0, self.y + self.fs * ASC, line, self.reg, self.fs)
                        self.y += self.ld
                    self.pair([(lines[-1], ())], amt_text)
                    continue
                for line in wrap(desc, self.reg, self.fs, self.cw):
                    self.p.text(self.x0, self.y + self.fs * ASC, line, self.reg, self.fs)
                    self.y += self.ld
                qty_text = f"{format_number(qty, loc, 0)} x {format_amount(price, loc)}"
                self.pair([("   " + qty_text, ())], self.amt(amount, marked))
        self.sep()

    def totals(self) -> None:
        s, v, loc = self.s, self.v, self.loc
        marked = s.cur_style == "all"
        if s.items_count:
            n = sum(int(q) for _, _, q, _, _ in v.items)
            self.pair([(self.lab("items"), ())], [(str(n), ())])
        if s.tax_mode == "exclusive" or s.rounding:
            self.pair([(self.lab("subtotal"), ())], self.amt(v.subtotal, marked))
        pct = format_number(s.tax_rate, loc, 0 if s.tax_rate == s.tax_rate.to_integral_value() else 1, group=False)
        if s.tax_mode == "exclusive":
            self.pair([(f"{s.labels['tax']} {pct}%{s.colon}", ())], self.amt(v.tax, marked))
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
        self.y += self.ld * 0.3
        if s.payment in ("cash", "mixed"):
            self.pair([(self.lab("cash"), ())], self.amt(v.cash, marked))
            self.pair([(self.lab("change"), ())], self.amt(v.change, marked))
        if s.payment in ("card", "mixed"):
            self.pair([(f"{s.labels['card']} ****{v.card_digits}", ())], self.amt(v.total, marked))
        if s.tax_summary:
            self.sep()
            self.p.text(self.x0, self.y + self.fs * ASC, s.labels["tax"], self.bold, self.fs)
            self.y += self.ld
            base = self.y + self.fs * ASC
            self.p.text(self.x0, base, f"{pct}%", self.reg, self.fs)
            self.p.text(self.x0 + self.cw * 0.68, base, format_amount(v.subtotal, loc), self.reg, self.fs,
                        align="right")
            self.p.text(self.x1, base, format_amount(v.tax, loc), self.reg, self.fs, align="right")
            self.y += self.ld
        self.sep()

    def footer(self) -> None:
        for t in self.s.thanks:
            self.center(t)
        self.y += self.s.margin

    def compose(self) -> tuple[Layout, dict[str, object]]:
        self.header()
        self.meta_lines()
        self.items()
        self.totals()
        self.footer()
        self.p.height = round(self.y + 4, 2)
        v = self.v
        truth: dict[str, object] = {"company": v.shop.company, "date": v.when.isoformat(),
                                    "address": " ".join(v.shop.address), "total": float(v.total)}
        return Layout([self.p], self.relations), truth


def compose_receipt(style: ReceiptStyle, loc: Locale, lang: str, values: ReceiptValues
                    ) -> tuple[Layout, dict[str, object]]:
    """The single long page of one receipt and its canonical truth."""
    return _ReceiptComposer(style, loc, lang, values).compose()
