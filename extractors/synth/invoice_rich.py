"""Placing an invoice of a non-classic family (see `families`): other page headers, a key/value
grid, delivery blocks as captioned distractors, extra dates, credit-note references and signs,
group headings and group subtotals inside the item table, fuller bank/registry footers. Everything else (item table, page breaks, totals) is the classic
composer's, so the tagging conventions of `invoice_layout` hold unchanged.

Blocks of variable length (addresses, names that wrap) get a fixed reserved height, so every
document of a format puts its labels at the same place.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from docassay.extractors.synth.canvas import Layout, Tagged, measure, wrap
from docassay.extractors.synth.families import RichInvoice
from docassay.extractors.synth.invoice_layout import _GRAY, ASC, _Composer, _light
from docassay.extractors.synth.invoice_style import InvoiceStyle
from docassay.extractors.synth.invoice_values import InvoiceValues
from docassay.extractors.synth.locale import Locale, format_amount, format_date

__all__ = ["RichValues", "sample_rich_values", "compose_rich_invoice"]

ADDRESS_LINES_MAX = 5              # street, extra line, town, postcode, country (names.address_lines)
NAME_LINES_MAX = 2                 # a party name wraps to at most this many lines in a narrow column
SIDEBAR_SHARE = 0.32               # of the content width
COLUMN_GAP = 16.0
GRID_VALUE_DIGITS = "0000000000000"   # the widest reference a grid cell must hold
WIDE_VAT_ID = "CHE-000.000.000 MWST"  # the widest VAT ID names.vat_id prints
_WIDE_DATE = date(2020, 9, 28)        # a long month name and two-digit day, for cell widths


@dataclass(frozen=True)
class RichValues:
    """Values only the rich families print (drawn from their own stream, so classic values keep)."""
    order_date: date
    ref_number: str                # the invoice a credit note corrects (a distractor number)
    ref_date: date
    tax_number: str
    period: tuple[date, date]      # a service period (first and last day of the month before the issue)


def sample_rich_values(style: InvoiceStyle, loc: Locale, lang: str, v: InvoiceValues,
                       rng: random.Random) -> RichValues:
    ref_date = v.issue - timedelta(days=rng.randint(3, 90))
    last = v.issue.replace(day=1) - timedelta(days=1)
    return RichValues(order_date=v.issue - timedelta(days=rng.randint(1, 30)),
                      ref_number=style.id_pattern.render(rng, ref_date.year), ref_date=ref_date,
                      tax_number=f"{rng.randint(10, 99)}/{rng.randint(100, 999)}/{rng.randint(10000, 99999)}",
                      period=(last.replace(day=1), last))


class _RichComposer(_Composer):
    def __init__(self, style: InvoiceStyle, loc: Locale, lang: str, v: InvoiceValues, rv: RichValues) -> None:
        assert isinstance(style.rich, RichInvoice)
        self.r: RichInvoice = style.rich
        self.rv = rv
        super().__init__(style, loc, lang, v)

    # ---- values ----------------------------------------------------------------------------------
    def amt(self, value: Decimal, marked: bool, tags: tuple[str, ...] = (), cur_tags: tuple[str, ...] = (),
            decimals: int = 2) -> list[Tagged]:
        if self.r.credit_mode not in ("trailing_minus", "parentheses") or value >= 0:
            return super().amt(value, marked, tags, cur_tags, decimals)
        num = format_amount(-value, self.loc, decimals=decimals)
        num = f"{num}-" if self.r.credit_mode == "trailing_minus" else f"({num})"   # SAP "120,00-", "(120.00)"
        if not marked:
            return [(num, tags)]
        mark = self.loc.currency_mark                                          # a trailing sign keeps a gap
        return [(mark, cur_tags), (num, tags)] if self.loc.currency_pos == "before" else [(num, tags), (mark, cur_tags)]

    def field_rows(self) -> list[tuple[str, str, list[Tagged]]]:
        rows = super().field_rows()
        have = {k for k, _, _ in rows}
        for key in self.r.dates:
            if key in have:
                continue
            if key == "order_date":
                rows.append((key, f"{self.r.labels['order_date']}{self.s.colon}",
                             [(format_date(self.rv.order_date, self.loc), ())]))
            elif key == "delivery_date":
                rows.append((key, self.lab(key), [(self.date(self.v.delivery), ())]))
            elif key == "due_date":
                rows.append((key, self.lab(key), [(self.date(self.v.due), ("due_date",))]))
            elif key == "order_number":
                rows.append((key, self.lab(key), [(self.v.order_number, ())]))
            elif key == "customer_number":
                rows.append((key, self.lab(key), [(self.v.customer_number, ())]))
            elif key == "buyer_vat":                # the customer's VAT ID: a distractor for seller_vat_id
                rows.append((key, self.lab(key), [(self.v.buyer_vat, ())]))
            elif key == "period":                   # a date range: two distractor dates in one field
                start, end = self.rv.period
                rows.append((key, f"{self.r.labels['period']}{self.s.colon}",
                             [(f"{format_date(start, self.loc)} - {format_date(end, self.loc)}", ())]))
        return rows

    # ---- blocks ----------------------------------------------------------------------------------
    def block(self, x: float, top: float, width: float, lines: list[tuple[list[Tagged], str]],
              align: str = "left", size: float | None = None) -> float:
        """Lines of tagged pieces, each wrapped within `width`; returns the bottom."""
        size = size or self.fs
        pitch = self.ld * size / self.fs
        y = top
        ax = {"left": x, "right": x + width, "center": x + width / 2}[align]
        for pieces, font in lines:
            for line in self.wrap_pieces(width, pieces, font, size):
                self.page().text(ax, y + size * ASC, line, font, size, align=align)
                y += pitch
        return y

    @property
    def address_lines_max(self) -> int:
        """British addresses print town and postcode on lines of their own; only English formats have them."""
        return ADDRESS_LINES_MAX if self.lang == "en" else ADDRESS_LINES_MAX - 1

    def seller_reserve(self, narrow: bool) -> float:
        contact = len(self.s.seller_lines) * (2 if narrow else 1)
        return (NAME_LINES_MAX + self.address_lines_max + contact) * self.ld

    def buyer_reserve(self) -> float:
        s = self.s
        return (int(s.bill_to_label) + NAME_LINES_MAX + int(s.attn_line) + self.address_lines_max) * self.ld

    def ship_reserve(self) -> float:
        return (1 + NAME_LINES_MAX + self.address_lines_max) * self.ld

    def boxed(self, x: float, top: float, width: float, height: float) -> None:
        if self.r.boxes:
            self.page().rect(x - 4, top - 3, x + width + 4, top + height + 1, stroke=_GRAY, line_width=0.5)

    def address_pair(self, x: float, top: float, width: float) -> float:
        """Buyer and delivery address: side by side, one under the other, or the buyer alone."""
        r = self.r
        half = (width - COLUMN_GAP) / 2
        if r.delivery == "beside_buyer":
            bx, sx = (x + half + COLUMN_GAP, x) if r.delivery_first else (x, x + half + COLUMN_GAP)
            h = max(self.buyer_reserve(), self.ship_reserve())
            self.block(bx, top, half, self.buyer_lines())
            self.block(sx, top, half, self.ship_lines())
            self.boxed(bx, top, half, h)
            self.boxed(sx, top, half, h)
            return top + h
        bw = width if r.delivery != "below_buyer" else min(width, max(half, 200.0))
        self.block(x, top, bw, self.buyer_lines())
        self.boxed(x, top, bw, self.buyer_reserve())
        y = top + self.buyer_reserve()
        if r.delivery == "below_buyer":
            y += self.ld * 0.6
            self.block(x, y, bw, self.ship_lines())
            self.boxed(x, y, bw, self.ship_reserve())
            y += self.ship_reserve()
        return y

    def value_width(self, key: str) -> float:
        if key in ("issue_date", "due_date", "delivery_date", "order_date"):
            return measure(format_date(_WIDE_DATE, self.loc), self.reg, self.fs)
        if key == "period":
            return measure(f"{format_date(_WIDE_DATE, self.loc)} - {format_date(_WIDE_DATE, self.loc)}", self.reg,
                           self.fs)
        if key == "currency":
            return measure("EUR", self.reg, self.fs)
        if key in ("buyer_vat", "seller_vat_id"):
            return measure(WIDE_VAT_ID, self.reg, self.fs)
        return measure(GRID_VALUE_DIGITS, self.reg, self.fs)

    def grid_block(self, x: float, top: float, width: float) -> float:
        """Header fields as a ruled grid: a band of labels over a row of values; returns the height."""
        p, rows = self.page(), self.field_rows()
        if not rows:
            return 0.0
        need = max(max(measure(lbl, self.lab_font, self.small), self.value_width(k)) for k, lbl, _ in rows) + 8
        n = max(1, min(self.r.grid_cols, len(rows), int(width // need)))
        cell_w = width / n
        label_h, val_h = self.lds + 4, self.ld + 4
        t = top
        for start in range(0, len(rows), n):
            part = rows[start:start + n]
            p.rect(x, t, x + width, t + label_h, stroke=_GRAY, fill=_light(self.s.accent), line_width=0.4)
            p.rect(x, t + label_h, x + width, t + label_h + val_h, stroke=_GRAY, line_width=0.4)
            for j in range(1, n):
                p.line(x + j * cell_w, t, x + j * cell_w, t + label_h + val_h, stroke=_GRAY, line_width=0.4)
            for j, (key, lbl, val) in enumerate(part):
                cx = x + j * cell_w + 3
                p.text(cx, t + 2 + self.small * ASC, [(lbl, ("@" + key,))], self.lab_font, self.small)
                p.text(cx, t + label_h + 2 + self.fs * ASC, val, self.reg, self.fs)
                self.relations[key] = "above"
            t += label_h + val_h + 4
        return t - top

    def stacked_fields(self, x: float, top: float, width: float) -> float:
        """Header fields one under the other, label above value (a sidebar); returns the bottom."""
        p, y = self.page(), top
        for key, lbl, val in self.field_rows():
            p.text(x, y + self.small * ASC, [(lbl, ("@" + key,))], self.lab_font, self.small)
            self.block(x, y + self.lds, width, [(val, self.reg)])
            self.relations[key] = "above"
            lines = 1 if self.value_width(key) <= width else 2     # the widest value this format prints
            y += self.lds + lines * self.ld + 3
        return y

    def fields_block(self, x: float, top: float, width: float) -> float:
        # the classic label-above-value cells are 105 pt whatever they hold (the rich families print
        # more and longer fields); the grid sizes its cells for the widest value
        if self.r.fields_layout == "grid" or self.s.fields_style in ("above", "boxed"):
            return self.grid_block(x, top, width)
        return super().fields_block(x, top, width)

    fields_any = fields_block

    def title_size(self, width: float) -> float:
        """The largest title size (up to the format's) at which the widest title this format prints fits
        `width`: a credit or invoice title; in a title line, the longest number and date."""
        s = self.s
        size = min(s.title_size, 14.0) if s.title_line else s.title_size
        text = max((s.title, s.credit_title), key=len)
        if s.title_line:
            conn = s.extra.get("connector") or self.lab_words["title_connector"][0]
            text = f"{text} {self.lab_words['number_short']} {GRID_VALUE_DIGITS} {conn} {format_date(_WIDE_DATE, self.loc)}"
        while size > self.fs and measure(text, self.bold, size) > width:
            size = round(size - 0.5, 1)
        return size

    def title(self, x: float, top: float, width: float, align: str = "left") -> float:
        s = self.s
        size = self.title_size(width)
        ax = x + width / 2 if align == "center" else x
        self.page().text(ax, top + size * ASC, self.title_pieces(), self.bold, size, align=align, color=s.accent)
        return top + size * 1.6

    def bank_lines(self) -> list[tuple[list[Tagged], str]]:
        bank, ib, bc = self.v.bank
        return [([(self.lab("bank"), ()), (bank, ())], self.reg), ([(self.lab("iban"), ()), (ib, ())], self.reg),
                ([(self.lab("bic"), ()), (bc, ())], self.reg)]

    # ---- the item table: group headings and group subtotals between the rows -------------------
    def _room(self, h: float, running: Decimal) -> None:
        """A page break (carried-forward lines, repeated header) unless `h` fits above the footer."""
        carry_h = self.ld * 1.5 if self.s.carry_forward else 0.0
        if self.y + h > self.bottom - carry_h:
            if self.s.carry_forward:
                self.carry_line("carried_forward", running)
            self.new_page()
            if self.s.carry_forward:
                self.carry_line("brought_forward", running)
            self.table_header()

    def carry_line(self, label_key: str, running: Decimal) -> None:
        """The classic carried-forward line, its label kept clear of a running total wider than the
        amount column (a long table's sum, a credit note's sign)."""
        total_col = next((c for c in self.cols if c.key == "line_total"), self.cols[-1])
        pieces = self.amt(running, self.s.cur_style == "all")
        amount_w = measure(" ".join(t for t, _ in pieces), self.bold, self.fs)
        base = self.y + 3 + self.fs * ASC
        label_x = min(total_col.x0 - 6, total_col.x1 - 3 - amount_w - 8)
        self.page().text(label_x, base, [(self.lab(label_key), ())], self.bold, self.fs, align="right")
        self.page().text(total_col.x1 - 3, base, pieces, self.bold, self.fs, align="right")
        self.y += self.ld * 1.5

    def section_row(self, text: str, amount: Decimal | None) -> None:
        """A heading (amount None) or a group subtotal row: table text that is not a line item."""
        h = self.ld + 5
        base = self.y + 2.5 + self.fs * ASC
        desc = next(c for c in self.cols if c.key == "description")
        if amount is None:
            self.page().text(desc.x0 + 3, base, text.upper() if self.s.label_upper else text, self.bold, self.fs)
        else:
            total_col = next((c for c in self.cols if c.key == "line_total"), self.cols[-1])
            pieces = self.amt(amount, self.s.cur_style == "all")
            amount_w = measure(" ".join(t for t, _ in pieces), self.bold, self.fs)
            label_x = min(total_col.x0 - 6, total_col.x1 - 3 - amount_w - 8)
            self.page().text(label_x, base, f"{text}{self.s.colon}", self.bold, self.fs, align="right")
            self.page().text(total_col.x1 - 3, base, pieces, self.bold, self.fs, align="right")
            self.page().line(total_col.x0, self.y + 1, total_col.x1, self.y + 1, line_width=0.3)
        self.y += h

    def items(self) -> None:
        r, items = self.r, self.v.items
        if not r.sections or len(items) < 3:
            super().items()
            return
        n = min(len(r.sections), max(2, len(items) // 3))
        bounds = [round(i * len(items) / n) for i in range(n + 1)]
        desc_col = next(c for c in self.cols if c.key == "description")
        self.ensure(self.ld * 4)
        self.table_header()
        running = Decimal("0.00")
        for g in range(n):
            self._room((self.ld + 5) * 2, running)
            self.section_row(r.sections[g], None)
            group = Decimal("0.00")
            for k in range(bounds[g], bounds[g + 1]):
                item = items[k]
                lines = wrap(item.description, self.reg, self.fs, desc_col.x1 - desc_col.x0 - 6)
                self._room(self.row_height(item, lines), running)
                self.item_row(k, item, lines)
                running += item.line_total
                group += item.line_total
            if r.section_totals:
                self._room(self.ld + 5, running)
                self.section_row(f"{self.s.labels['subtotal']} {r.sections[g]}", group)

    # ---- page headers ------------------------------------------------------------------------------
    def header_sidebar(self) -> float:
        r, s = self.r, self.s
        sw = self.cw * SIDEBAR_SHARE
        mw = self.cw - sw - COLUMN_GAP
        sx, mx = (self.x0, self.x0 + sw + COLUMN_GAP) if r.sidebar_side == "left" else (self.x1 - sw, self.x0)
        ys = self.mt
        if r.seller_caption:
            self.page().text(sx, ys + self.small * ASC, r.labels["from"], self.lab_font, self.small, color=_GRAY)
            ys += self.lds
        self.block(sx, ys, sw, self.seller_lines())
        ys += self.seller_reserve(narrow=True) + self.ld * 0.5
        ys = self.stacked_fields(sx, ys, sw) + self.ld * 0.5
        if r.delivery == "sidebar":
            self.block(sx, ys, sw, self.ship_lines())
            ys += self.ship_reserve() + self.ld * 0.5
        if r.sidebar_bank:
            ys = self.block(sx, ys, sw, self.bank_lines(), size=self.small)
        ym = self.title(mx, self.mt, mw)
        if s.sender_line:
            text = " · ".join((self.v.seller.name,) + self.v.seller.address[:1] + self.v.seller.address[-1:])
            self.block(mx, ym, mw, [([(text, ())], self.reg)], size=self.small)
            ym += self.lds * 2.4
        ym = self.address_pair(mx, ym, mw)
        return max(ys, ym) + self.ld

    def header_letterhead(self) -> float:
        s, v, p = self.s, self.v, self.page()
        y = self.mt
        size = min(max(s.logo_size, 13.0), 18.0)
        while size > 9 and measure(v.seller.name, self.bold, size) > self.cw:
            size -= 1
        mid = (self.x0 + self.x1) / 2
        p.text(mid, y + size * ASC, [(v.seller.name, ("seller_name",))], self.bold, size, align="center",
               color=s.accent)
        y += size * 1.4
        self.block(self.x0, y, self.cw, [([(" · ".join(v.seller.address), ())], self.reg)], align="center",
                   size=self.small)
        y += self.lds * 2
        contact: list[Tagged] = []
        for k in s.seller_lines:
            if k == "phone" and v.seller.phone:
                contact += [(self.lab("phone"), ()), (v.seller.phone, ()), ("·", ())]
            elif k == "email" and v.seller.email:
                contact += [(v.seller.email, ()), ("·", ())]
            elif k == "web" and v.seller.web:
                contact += [(v.seller.web, ()), ("·", ())]
            elif k == "vat" and v.seller.vat_id:
                contact += [(self.lab("seller_vat"), ("@seller_vat_id",)), (v.seller.vat_id, ("seller_vat_id",)),
                            ("·", ())]
                self.relations["seller_vat_id"] = "left"
        if contact:
            self.block(self.x0, y, self.cw, [(contact[:-1], self.reg)], align="center", size=self.small)
        y += self.lds * 2.2
        p.line(self.x0, y, self.x1, y, stroke=s.accent, line_width=0.8)
        y += self.ld * 1.2
        y = self.address_pair(self.x0, y, self.cw) + self.ld
        y = self.title(self.x0, y, self.cw, "left" if s.title_place != "centered" else "center")
        return y + self.fields_any(self.x0, y, self.cw) + self.ld

    def header_grid(self) -> float:
        s = self.s
        y = self.mt
        sw = self.cw * 0.42
        if not s.title_line:                    # seller at the opposite corner of the title
            yt = self.title(self.x0, y, self.cw - sw - COLUMN_GAP)
            self.block(self.x1 - sw, y, sw, self.seller_lines(), align=s.right_block_align)
            y = max(yt + self.ld * 2, y + self.seller_reserve(narrow=False))
        else:                                   # a title line: the seller block under it, at the right
            y = self.title(self.x0, y, self.cw)
            sw = self.cw * 0.42
            self.block(self.x1 - sw, y, sw, self.seller_lines(), align=s.right_block_align)
            y += self.seller_reserve(narrow=False)
        y = self.address_pair(self.x0, y, self.cw * 0.75 if self.r.delivery != "beside_buyer" else self.cw)
        y += self.ld
        return y + self.fields_any(self.x0, y, self.cw) + self.ld

    def top_of_page_one(self) -> None:
        r, s = self.r, self.s
        if r.header == "classic":
            super().top_of_page_one()
        else:
            y = {"sidebar": self.header_sidebar, "letterhead": self.header_letterhead,
                 "grid": self.header_grid}[r.header]()
            if s.intro:
                y = self.paragraph(self.x0, y, self.cw, [(s.intro, ())]) + self.ld * 0.6
            self.y = y
        if r.credit_ref and self.v.credit:
            pieces: list[Tagged] = [(f"{r.labels['ref_invoice']}", ()), (self.rv.ref_number, ()),
                                    (r.labels["of"], ()), (self.date(self.rv.ref_date), ())]
            self.y = self.paragraph(self.x0, self.y, self.cw, pieces, font=self.bold) + self.ld * 0.6

    # ---- after the totals: a payment slip ------------------------------------------------------------
    def after_totals(self) -> None:
        super().after_totals()
        if self.r.payment_slip and not self.v.credit:     # nothing to pay on a credit note
            self.payment_slip()

    def payment_slip(self) -> None:
        """A framed slip that prints the IBAN, the seller, the invoice number as the payment reference,
        the amount due and the buyer again (unlabelled copies: the truth is tagged where first printed)."""
        v, lab = self.v, self.r.labels
        lds, small = self.lds, self.small
        h = lds * 8.5
        self.ensure(h + self.ld)
        p, top = self.page(), self.y + self.ld * 0.5
        p.rect(self.x0, top, self.x1, top + h, stroke=_GRAY, line_width=0.6)
        half = self.cw / 2
        p.line(self.x0 + half, top + lds * 1.6, self.x0 + half, top + h - 3, stroke=_GRAY, line_width=0.3)
        p.text(self.x0 + 5, top + 3 + small * ASC, lab["slip"], self.bold, small)
        left: list[tuple[list[Tagged], str]] = [
            ([(lab["payable_to"], ())], self.bold), ([(v.bank[1], ())], self.reg), ([(v.seller.name, ())], self.reg),
            ([(", ".join(v.seller.address[:1] + v.seller.address[-1:]), ())], self.reg)]
        right: list[tuple[list[Tagged], str]] = [
            ([(lab["slip_ref"], ())], self.bold), ([(v.number, ())], self.reg),
            ([(lab["slip_amount"], ())], self.bold), (self.amt(v.amount_due, True), self.reg),
            ([(lab["payable_by"], ())], self.bold), ([(v.buyer.name, ())], self.reg)]
        self.block(self.x0 + 5, top + lds * 1.8, half - 12, left, size=small)
        self.block(self.x0 + half + 6, top + lds * 1.8, half - 12, right, size=small)
        self.y = top + h + self.ld

    # ---- footer ------------------------------------------------------------------------------------
    def _footer_columns(self) -> list[list[list[Tagged]]]:
        cols = super()._footer_columns()
        if not self.r.footer_full:
            return cols
        bank = self.v.bank[0]
        for col in cols:
            if col and col[0] and col[0][0][0] == bank:
                col.append([(self.r.labels["holder"], ()), (self.v.seller.name, ())])
        if cols:
            cols[-1].append([(self.r.labels["tax_number"], ()), (self.rv.tax_number, ())])
        return cols


def compose_rich_invoice(style: InvoiceStyle, loc: Locale, lang: str, values: InvoiceValues, rich: RichValues
                         ) -> tuple[Layout, dict[str, object]]:
    """The pages of one invoice of a non-classic family and its canonical truth."""
    return _RichComposer(style, loc, lang, values, rich).compose()

