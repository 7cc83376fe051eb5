"""Placing one invoice's values on pages, in the layout its format fixes.

`compose_invoice` returns the drawing list (`Layout`) and the canonical truth for exactly what it
printed. Words are tagged as they are placed (see `canvas`): the value of field f carries tag f,
its label `@f`; item k's words carry `i<k>` and its cells `i<k>.<column>`; column headers `#<column>`;
the printed currency code/sign `currency`.
"""
from __future__ import annotations

from datetime import date
from decimal import Decimal

from docassay.extractors.synth import vocab
from docassay.extractors.synth.canvas import FAMILIES, Color, Layout, PageLayout, Tagged, measure, wrap
from docassay.extractors.synth.invoice_style import InvoiceStyle
from docassay.extractors.synth.invoice_table import Column, table_columns
from docassay.extractors.synth.invoice_values import InvoiceValues, Item
from docassay.extractors.synth.locale import Locale, format_amount, format_date, format_number, format_percent
from docassay.extractors.synth.words import amount_in_words

__all__ = ["compose_invoice"]

ASC = 0.75                         # share of the font size above the baseline used to place tops
_ON = {"en": "on", "de": "auf", "fr": "sur", "es": "s/", "nl": "over"}
_LIGHT_GRAY: Color = (0.9, 0.9, 0.9)
_GRAY: Color = (0.55, 0.55, 0.55)
TRUTH_ITEM_COLUMNS = ("description", "quantity", "unit_price", "line_total")


def _light(c: Color) -> Color:
    return (0.82 + 0.18 * c[0], 0.82 + 0.18 * c[1], 0.82 + 0.18 * c[2])


class _Composer:
    def __init__(self, style: InvoiceStyle, loc: Locale, lang: str, v: InvoiceValues) -> None:
        self.s, self.loc, self.lang, self.v = style, loc, lang, v
        self.lab_words = vocab.INVOICE_LABELS[lang]
        self.reg, self.bold = FAMILIES[style.family]
        self.fs = style.size
        self.ld = style.leading
        self.small = max(6.0, round(self.fs - 1.5, 1))
        self.lds = round(self.small * self.ld / self.fs, 2)
        self.lab_font = self.bold if style.label_bold else self.reg
        self.W, self.H = style.page_w, style.page_h
        self.ml, self.mr, self.mt, self.mb = style.margins
        self.x0, self.x1 = self.ml, self.W - self.mr
        self.cw = self.x1 - self.x0
        self.pages: list[PageLayout] = []
        self.relations: dict[str, str] = {}
        self.cols: list[Column] = table_columns(style, loc)
        self.footer = self._footer_columns()
        self.footer_h = self._footer_height()
        self.bottom = self.H - self.mb - self.footer_h - 6
        self.tax_total_printed = False
        self.y = 0.0

    # ---- small helpers -------------------------------------------------------------------------
    def lab(self, key: str) -> str:
        return f"{self.s.labels[key]}{self.s.colon}"

    def date(self, d: date) -> str:
        return format_date(d, self.loc)

    def amt(self, value: Decimal, marked: bool, tags: tuple[str, ...] = (), cur_tags: tuple[str, ...] = (),
            decimals: int = 2) -> list[Tagged]:
        num = format_amount(value, self.loc, decimals=decimals)
        if not marked:
            return [(num, tags)]
        mark = self.loc.currency_mark
        if not self.loc.currency_space:
            return [(f"{mark}{num}" if self.loc.currency_pos == "before" else f"{num}{mark}", tags + cur_tags)]
        if self.loc.currency_pos == "before":
            return [(mark, cur_tags), (num, tags)]
        return [(num, tags), (mark, cur_tags)]

    def page(self) -> PageLayout:
        return self.pages[-1]

    def new_page(self) -> None:
        self.pages.append(PageLayout(self.W, self.H))
        self.y = self.mt
        if len(self.pages) > 1 and self.s.cont_header:
            p = self.page()
            p.text(self.x0, self.y + self.small * ASC,
                   f"{self.v.seller.name} - {self.s.labels['invoice_number']} {self.v.number}", self.reg, self.small,
                   color=_GRAY)
            self.y += self.lds * 2

    def draw_lines(self, x: float, top: float, lines: list[tuple[list[Tagged], str]], align: str = "left",
                   size: float | None = None, leading: float | None = None) -> float:
        """Lines of tagged pieces, first baseline under `top`; returns the bottom."""
        size = size or self.fs
        leading = leading or self.ld
        for i, (pieces, font) in enumerate(lines):
            self.page().text(x, top + size * ASC + i * leading, pieces, font, size, align=align)
        return top + len(lines) * leading

    def wrap_pieces(self, width: float, pieces: list[Tagged], font: str, size: float) -> list[list[Tagged]]:
        """Greedy wrap of tagged pieces into lines no wider than `width` (tags stay with their words)."""
        words = [(w, t) for text, t in pieces for w in text.split()]
        space = measure(" ", font, size)
        lines: list[list[Tagged]] = []
        cur: list[Tagged] = []
        width_now = 0.0
        for w, t in words:
            ww = measure(w, font, size)
            if cur and width_now + space + ww > width:
                lines.append(cur)
                cur, width_now = [], 0.0
            width_now = width_now + space + ww if cur else ww
            cur.append((w, t))
        if cur:
            lines.append(cur)
        return lines

    def paragraph(self, x: float, top: float, width: float, pieces: list[Tagged], font: str | None = None,
                  size: float | None = None) -> float:
        """Wrap tagged pieces within `width`; returns the bottom."""
        font = font or self.reg
        size = size or self.fs
        leading = self.ld * size / self.fs
        lines = self.wrap_pieces(width, pieces, font, size)
        for i, line in enumerate(lines):
            self.page().text(x, top + size * ASC + i * leading, line, font, size)
        return top + len(lines) * leading

    def ensure(self, height: float) -> None:
        if self.y + height > self.bottom:
            self.new_page()

    # ---- the blocks of page 1 ------------------------------------------------------------------
    def seller_lines(self) -> list[tuple[list[Tagged], str]]:
        s, v = self.s, self.v
        tags = ("seller_name",) if s.seller_pos != "footer" else ()
        out: list[tuple[list[Tagged], str]] = [([(v.seller.name, tags)], self.bold)]
        out += [([(a, ())], self.reg) for a in v.seller.address]
        for k in s.seller_lines:
            if k == "phone" and v.seller.phone:
                out.append(([(self.lab("phone"), ()), (v.seller.phone, ())], self.reg))
            elif k == "email" and v.seller.email:
                out.append(([(self.lab("email"), ()), (v.seller.email, ())], self.reg))
            elif k == "web" and v.seller.web:
                out.append(([(v.seller.web, ())], self.reg))
            elif k == "vat" and v.seller.vat_id:
                out.append(([(self.lab("seller_vat"), ("@seller_vat_id",)), (v.seller.vat_id, ("seller_vat_id",))],
                            self.reg))
                self.relations["seller_vat_id"] = "left"
        return out

    def buyer_lines(self) -> list[tuple[list[Tagged], str]]:
        s, v = self.s, self.v
        out: list[tuple[list[Tagged], str]] = []
        if s.bill_to_label:
            out.append(([(self.lab("bill_to"), ("@buyer_name",))], self.lab_font))
        out.append(([(v.buyer.name, ("buyer_name",))], self.reg))
        if s.attn_line:
            out.append(([(self.s.labels["attn"], ()), (v.attn, ())], self.reg))
        out += [([(a, ())], self.reg) for a in v.buyer.address]
        self.relations["buyer_name"] = "above" if s.bill_to_label else "none"
        return out

    def ship_lines(self) -> list[tuple[list[Tagged], str]]:
        st = self.v.ship_to
        assert st is not None
        out: list[tuple[list[Tagged], str]] = [([(self.lab("ship_to"), ())], self.lab_font), ([(st.name, ())], self.reg)]
        return out + [([(a, ())], self.reg) for a in st.address]

    def field_rows(self) -> list[tuple[str, str, list[Tagged]]]:
        v, loc = self.v, self.loc
        rows = []
        for key in self.s.fields:
            label_key = "seller_vat" if key == "seller_vat_id" else key
            by_key: dict[str, list[Tagged]] = {
                "invoice_number": [(v.number, ("invoice_number",))],
                "issue_date": [(self.date(v.issue), ("issue_date",))],
                "due_date": [(self.date(v.due), ("due_date",))],
                "delivery_date": [(self.date(v.delivery), ())],
                "order_number": [(v.order_number, ())],
                "customer_number": [(v.customer_number, ())],
                "po_number": [(v.po_number, ())],
                "currency": [(loc.currency, ("currency",))],
                "buyer_vat": [(v.buyer_vat, ())],
                "seller_vat_id": [(v.seller.vat_id or "", ("seller_vat_id",))],
                "contact": [(v.seller.contact or "", ())],
            }
            value = by_key[key]
            if not value[0][0]:
                continue
            rows.append((key, self.lab(label_key), value))
        return rows

    def fields_block(self, x: float, top: float, width: float) -> float:
        """Header fields in the format's style; returns the height used."""
        s, p = self.s, self.page()
        rows = self.field_rows()
        if not rows:
            return 0.0
        fs, ld = self.fs, self.ld
        style = s.fields_style
        if style in ("left", "inline"):
            n = s.fields_cols
            per = -(-len(rows) // n)
            gap = 14.0
            col_w = (width - gap * (n - 1)) / n
            pitch = ld * 1.1
            for ci in range(n):
                part = rows[ci * per:(ci + 1) * per]
                cx = x + ci * (col_w + gap)
                lab_w = max(measure(lbl, self.lab_font, fs) for _, lbl, _ in part) + 8 if part else 0
                val_w = max((measure(" ".join(t for t, _ in val), self.reg, fs) for _, _, val in part), default=0)
                right = s.value_align == "right" and lab_w + val_w <= col_w
                for r, (key, lbl, val) in enumerate(part):
                    base = top + fs * ASC + r * pitch
                    if style == "inline":
                        p.text(cx, base, [(lbl, ("@" + key,))] + val, self.reg, fs)
                    else:
                        p.text(cx, base, [(lbl, ("@" + key,))], self.lab_font, fs)
                        if right:
                            p.text(cx + col_w, base, val, self.reg, fs, align="right")
                        else:
                            p.text(cx + lab_w, base, val, self.reg, fs)
                    self.relations[key] = "left"
            return per * pitch
        if style in ("above", "boxed"):
            per_row = max(1, min(len(rows), int(width // 105)))
            cell_w = width / per_row
            pad = 3.0
            cell_h = 2 * pad + self.lds + ld
            for i, (key, lbl, val) in enumerate(rows):
                r, c = divmod(i, per_row)
                cx, ct = x + c * cell_w, top + r * (cell_h + (3 if style == "boxed" else 0))
                if style == "boxed":
                    p.rect(cx, ct, cx + cell_w - 4, ct + cell_h, stroke=_GRAY)
                p.text(cx + pad, ct + pad + self.small * ASC, [(lbl, ("@" + key,))], self.lab_font, self.small)
                p.text(cx + pad, ct + pad + self.lds + fs * ASC, val, self.reg, fs)
                self.relations[key] = "above"
            n_rows = -(-len(rows) // per_row)
            return n_rows * (cell_h + (3 if style == "boxed" else 0))
        # kv_table
        n = s.fields_cols
        per = -(-len(rows) // n)
        col_w = width / n
        row_h = ld + 4
        for ci in range(n):
            part = rows[ci * per:(ci + 1) * per]
            if not part:
                continue
            cx = x + ci * col_w
            lab_w = max(measure(lbl, self.lab_font, fs) for _, lbl, _ in part) + 8
            for r, (key, lbl, val) in enumerate(part):
                rt = top + r * row_h
                p.rect(cx, rt, cx + lab_w, rt + row_h, stroke=_GRAY, fill=_light(s.accent))
                p.rect(cx + lab_w, rt, cx + col_w - 4, rt + row_h, stroke=_GRAY)
                base = rt + 2 + fs * ASC
                p.text(cx + 4, base, [(lbl, ("@" + key,))], self.lab_font, fs)
                p.text(cx + lab_w + 4, base, val, self.reg, fs)
                self.relations[key] = "left"
        return per * row_h

    def title_pieces(self) -> list[Tagged]:
        s, v = self.s, self.v
        title = s.credit_title if v.credit else s.title
        if not s.title_line:
            return [(title, ())]
        self.relations["invoice_number"] = "title"
        self.relations["issue_date"] = "title"
        conn = s.extra.get("connector") or self.lab_words["title_connector"][0]
        return [(title, ("@invoice_number",)), (self.lab_words["number_short"], ("@invoice_number",)),
                (v.number, ("invoice_number",)), (str(conn), ("@issue_date",)), (self.date(v.issue), ("issue_date",))]

    def top_of_page_one(self) -> None:
        s, v = self.s, self.v
        p = self.page()
        y = self.mt
        right_x = self.x0 + self.cw * 0.56
        if s.logo != "none":
            text = v.seller.name if s.logo == "name" else v.seller.name.split(" ")[0]
            ax = {"left": self.x0, "right": self.x1, "center": (self.x0 + self.x1) / 2}[s.logo_align]
            p.text(ax, y + s.logo_size * ASC, text, self.bold, s.logo_size, align=s.logo_align, color=s.accent)
            y += s.logo_size * 1.35
        title_size = min(s.title_size, 14.0) if s.title_line else s.title_size
        title_font = self.bold
        row_a = 0.0
        if s.seller_pos != "footer":
            lines = self.seller_lines()
            if s.seller_pos == "top_left":
                self.draw_lines(self.x0, y, lines)
            elif s.right_block_align == "right":
                self.draw_lines(self.x1, y, lines, align="right")
            else:
                self.draw_lines(right_x, y, lines)
            row_a = (6 + len(s.seller_lines)) * self.ld
        title_band = s.title_place != "top_opposite" or s.title_line
        if not title_band:
            if s.seller_pos == "top_left" or (s.seller_pos == "footer" and s.logo_align == "left"):
                p.text(self.x1, y + title_size * ASC, self.title_pieces(), title_font, title_size, align="right",
                       color=s.accent)
            else:
                p.text(self.x0, y + title_size * ASC, self.title_pieces(), title_font, title_size, color=s.accent)
            row_a = max(row_a, title_size * 1.4)
        if row_a:
            y += row_a + self.ld
        if title_band and (s.title_place == "centered" or s.title_line):
            align = "left" if s.title_line and s.title_place != "centered" else "center"
            ax = self.x0 if align == "left" else (self.x0 + self.x1) / 2
            p.text(ax, y + title_size * ASC, self.title_pieces(), title_font, title_size, align=align, color=s.accent)
            y += title_size * 1.6
        # Row B: buyer (+ ship-to) and, beside them, the header fields.
        buyer_x, other_x = (self.x0, right_x) if s.buyer_side == "left" else (right_x, self.x0)
        col_w_left = self.cw * 0.5 - 6
        other_w = self.x1 - right_x if s.buyer_side == "left" else col_w_left
        by = y
        if s.sender_line:
            text = " · ".join((v.seller.name,) + v.seller.address[:1] + v.seller.address[-1:])
            run = p.text(buyer_x, by + self.small * ASC, text, self.reg, self.small)
            if run is not None:
                p.line(buyer_x, by + self.small + 1.5, run.x1, by + self.small + 1.5, line_width=0.3)
            by += self.lds * 1.6
        self.draw_lines(buyer_x, by, self.buyer_lines())
        by += (int(s.bill_to_label) + 1 + int(s.attn_line) + 5) * self.ld
        oy = y
        beside = s.fields_place == "beside"
        if s.ship_to:
            if beside:
                self.draw_lines(buyer_x, by + self.ld * 0.5, self.ship_lines())
                by += self.ld * 0.5 + 7 * self.ld
            else:
                self.draw_lines(other_x, oy, self.ship_lines())
                oy += 7 * self.ld
        if beside:
            if s.title_place == "above_fields" and not s.title_line:
                p.text(other_x, oy + s.title_size * ASC, self.title_pieces(), title_font, s.title_size, color=s.accent)
                oy += s.title_size * 1.5
            oy += self.fields_block(other_x, oy, other_w)
        y = max(by, oy) + self.ld
        if not beside:
            if s.title_place == "above_fields" and not s.title_line:
                p.text(self.x0, y + s.title_size * ASC, self.title_pieces(), title_font, s.title_size, color=s.accent)
                y += s.title_size * 1.5
            y += self.fields_block(self.x0, y, self.cw) + self.ld
        if s.intro:
            y = self.paragraph(self.x0, y, self.cw, [(s.intro, ())]) + self.ld * 0.6
        self.y = y

    # ---- the item table ------------------------------------------------------------------------
    def table_header(self) -> None:
        s, p = self.s, self.page()
        hp = 3.0
        h = self.ld + 2 * hp
        top = self.y
        if s.header_style == "fill":
            p.rect(self.x0, top, self.x1, top + h, stroke=None, fill=_light(s.accent))
        elif s.header_style == "rules":
            p.line(self.x0, top, self.x1, top)
            p.line(self.x0, top + h, self.x1, top + h)
        elif s.header_style == "underline":
            p.line(self.x0, top + h, self.x1, top + h, line_width=0.8)
        elif s.header_style == "grid":
            p.rect(self.x0, top, self.x1, top + h)
            for c in self.cols[1:]:
                p.line(c.x0, top, c.x0, top + h)
        base = top + hp + self.fs * ASC
        for c in self.cols:
            tag = ("#" + c.key,) if c.key in TRUTH_ITEM_COLUMNS else ()
            pieces: list[Tagged] = [(s.labels[c.key], tag)]
            if c.header != s.labels[c.key]:
                pieces.append((c.header[len(s.labels[c.key]):].strip(), ("currency",) if self.cur_in_header else ()))
            x = c.x1 - 3 if c.align == "right" else c.x0 + 3
            p.text(x, base, pieces, self.bold, self.fs, align=c.align)
        self.y = top + h

    @property
    def cur_in_header(self) -> bool:
        return self.s.cur_anchor == "column_header"

    def row_height(self, item: Item, desc_lines: list[str]) -> float:
        sub = self.s.sub_line != "none"
        return 2 * 2.5 + len(desc_lines) * self.ld + (self.lds if sub else 0)

    def item_row(self, k: int, item: Item, desc_lines: list[str]) -> None:
        s, p, loc = self.s, self.page(), self.loc
        rp = 2.5
        h = self.row_height(item, desc_lines)
        top = self.y
        if s.zebra and k % 2 == 1:
            p.rect(self.x0, top, self.x1, top + h, stroke=None, fill=(0.95, 0.95, 0.95))
        base = top + rp + self.fs * ASC
        row = (f"i{k}",)
        marked = s.cur_style == "all"
        for c in self.cols:
            rx, lx = c.x1 - 3, c.x0 + 3
            key = c.key
            if key == "pos":
                p.text(rx, base, [(str(k + 1), row)], self.reg, self.fs, align="right")
            elif key == "sku":
                p.text(lx, base, [(item.sku, row)], self.reg, self.fs)
            elif key == "description":
                for j, line in enumerate(desc_lines):
                    p.text(lx, base + j * self.ld, [(line, row + (f"i{k}.description",))], self.reg, self.fs)
                sub = ""
                if s.sub_line == "sku":
                    sub = f"{s.labels['sku']} {item.sku}"
                elif s.sub_line == "note":
                    sub = item.note.format(date=self.date(self.v.delivery))
                if sub:
                    p.text(lx, base + (len(desc_lines) - 1) * self.ld + self.lds, [(sub, row)], self.reg, self.small,
                           color=(0.3, 0.3, 0.3))
            elif key == "quantity":
                pieces: list[Tagged] = [(format_number(item.quantity, loc, s.qty_decimals), row + (f"i{k}.quantity",))]
                if s.unit_mode == "with_qty":
                    pieces.append((item.unit, row))
                p.text(rx, base, pieces, self.reg, self.fs, align="right")
            elif key == "unit":
                p.text(lx, base, [(item.unit, row)], self.reg, self.fs)
            elif key == "unit_price":
                p.text(rx, base, self.amt(item.unit_price, marked, row + (f"i{k}.unit_price",), row,
                                          decimals=s.price_decimals), self.reg, self.fs, align="right")
            elif key == "line_discount":
                if item.discount:
                    text = (format_percent(item.discount_pct, loc, s.percent_spaced) if item.discount_pct is not None
                            else format_amount(-item.discount, loc))
                    p.text(rx, base, [(text, row)], self.reg, self.fs, align="right")
            elif key == "tax_rate":
                p.text(rx, base, [(format_percent(item.tax_rate, loc, s.percent_spaced), row)], self.reg, self.fs,
                       align="right")
            elif key == "line_total":
                p.text(rx, base, self.amt(item.line_total, marked, row + (f"i{k}.line_total",), row), self.reg,
                       self.fs, align="right")
        if s.row_rules:
            p.line(self.x0, top + h, self.x1, top + h, stroke=_GRAY, line_width=0.3)
        if s.header_style == "grid":
            p.line(self.x0, top, self.x0, top + h)
            p.line(self.x1, top, self.x1, top + h)
            for c in self.cols[1:]:
                p.line(c.x0, top, c.x0, top + h)
            p.line(self.x0, top + h, self.x1, top + h)
        self.y = top + h

    def carry_line(self, label_key: str, running: Decimal) -> None:
        total_col = next((c for c in self.cols if c.key == "line_total"), self.cols[-1])
        base = self.y + 3 + self.fs * ASC
        self.page().text(total_col.x0 - 6, base, [(self.lab(label_key), ())], self.bold, self.fs, align="right")
        self.page().text(total_col.x1 - 3, base, self.amt(running, self.s.cur_style == "all"), self.bold, self.fs,
                         align="right")
        self.y += self.ld * 1.5

    def items(self) -> None:
        s = self.s
        desc_col = next(c for c in self.cols if c.key == "description")
        carry_h = self.ld * 1.5 if s.carry_forward else 0.0
        self.ensure(self.ld * 4)
        self.table_header()
        running = Decimal("0.00")
        for k, item in enumerate(self.v.items):
            lines = wrap(item.description, self.reg, self.fs, desc_col.x1 - desc_col.x0 - 6)
            h = self.row_height(item, lines)
            if self.y + h > self.bottom - carry_h:
                if s.carry_forward:
                    self.carry_line("carried_forward", running)
                self.new_page()
                if s.carry_forward:
                    self.carry_line("brought_forward", running)
                self.table_header()
            self.item_row(k, item, lines)
            running += item.line_total

    # ---- totals and the text after them ------------------------------------------------------
    def totals_lines(self) -> list[tuple[list[Tagged], list[Tagged], bool, str]]:
        """(label pieces, value pieces, bold, truth key or '') for each totals line."""
        s, v, loc = self.s, self.v, self.loc
        mark_all = s.cur_style in ("all", "totals")
        out: list[tuple[list[Tagged], list[Tagged], bool, str]] = []
        if v.doc_discount:
            out.append(([(self.lab("subtotal"), ())], self.amt(v.subtotal, mark_all), False, ""))
            pct = format_percent(v.doc_discount_pct, loc, s.percent_spaced)
            out.append(([(f"{s.labels['discount']} {pct}{s.colon}", ())], self.amt(-v.doc_discount, mark_all), False,
                        ""))
        out.append(([(self.lab("net_total"), ("@net_total",))], self.amt(v.net, mark_all, ("net_total",)), False,
                    "net_total"))
        single = len(v.taxes) == 1 and not s.tax_total_line
        if s.tax_style != "summary":
            for t in v.taxes:
                label = f"{s.labels['tax']} {format_percent(t.rate, loc, s.percent_spaced)}"
                if s.tax_style == "rate_base":
                    label += f" {_ON[self.lang]} {format_amount(t.base, loc)}"
                tag = ("tax_total",) if single else ()
                out.append(([(label + s.colon, ("@tax_total",) if single else ())], self.amt(t.tax, mark_all, tag),
                            False, "tax_total" if single else ""))
                self.tax_total_printed |= single
        if s.tax_total_line:
            out.append(([(self.lab("tax_total"), ("@tax_total",))], self.amt(v.tax_total, mark_all, ("tax_total",)),
                        False, "tax_total"))
            self.tax_total_printed = True
        gross_label: list[Tagged] = [(s.labels["gross_total"], ("@gross_total",))]
        if s.cur_anchor == "gross_label":
            gross_label.append((f"({loc.currency}){s.colon}", ("currency",)))
        else:
            gross_label = [(self.lab("gross_total"), ("@gross_total",))]
        cur_tag = ("currency",) if s.cur_anchor == "gross" else ()
        out.append((gross_label, self.amt(v.gross, s.cur_style != "none", ("gross_total",), cur_tag), True,
                    "gross_total"))
        if v.deposit:
            out.append(([(self.lab("deposit"), ())], self.amt(-v.deposit, mark_all), False, ""))
            out.append(([(self.lab("amount_due"), ())], self.amt(v.amount_due, mark_all), True, ""))
        return out

    def tax_summary(self, top: float) -> float:
        """A small rate/base/tax table at the left; returns its height."""
        s, v, loc, p = self.s, self.v, self.loc, self.page()
        heads = self.lab_words["tax_summary"][hash_choice(s.labels["tax"], 3)]
        widths = [70.0, 80.0, 80.0]
        x = self.x0
        base = top + self.small * ASC
        single = len(v.taxes) == 1 and not s.tax_total_line
        for i, h in enumerate(heads):
            tags = ("@tax_total",) if single and i == 2 else ()
            p.text(x + sum(widths[:i + 1]) - 4, base, h, self.bold, self.small, tags, align="right")
        p.line(x, top + self.lds + 1, x + sum(widths), top + self.lds + 1, line_width=0.3)
        for r, t in enumerate(v.taxes):
            b = base + (r + 1) * self.lds + 2
            cells: list[list[Tagged]] = [[(format_percent(t.rate, loc, s.percent_spaced), ())],
                                         [(format_amount(t.base, loc), ())],
                                         [(format_amount(t.tax, loc), ("tax_total",) if single else ())]]
            for i, cell in enumerate(cells):
                p.text(x + sum(widths[:i + 1]) - 4, b, cell, self.reg, self.small, align="right")
        if single:
            self.tax_total_printed = True
            self.relations["tax_total"] = "column"
        return (len(v.taxes) + 1) * self.lds + 6

    def totals(self) -> None:
        """The totals block at the right; a tax summary table at its left, or under it when both do
        not fit side by side."""
        s = self.s
        lines = self.totals_lines()
        fs, ld = self.fs, self.ld
        text_w = lambda pieces, font: measure(" ".join(t for t, _ in pieces), font, fs)  # noqa: E731
        row_widths = [max(text_w(lab, self.lab_font), text_w(val, self.bold)) + 14 for lab, val, _, _ in lines]
        as_row = s.totals_style == "row" and sum(row_widths) < self.cw * 0.75
        if as_row:
            block_w, block_h = sum(row_widths), 2 * ld
        else:
            lab_w = max(text_w(lab, self.lab_font) for lab, _, _, _ in lines)
            val_w = max(text_w(val, self.bold) for _, val, _, _ in lines)
            block_w, block_h = max(170.0, lab_w + val_w + 24), len(lines) * ld * 1.2
        summary = s.tax_style == "summary"
        summary_h = (len(self.v.taxes) + 1) * self.lds + 6 if summary else 0.0
        summary_below = summary and self.x0 + 240 > self.x1 - block_w
        self.y += ld * 0.8
        self.ensure((block_h + summary_h if summary_below else max(block_h, summary_h)) + ld * 2)
        top = self.y
        if summary and not summary_below:
            self.tax_summary(top)
        p = self.page()
        if as_row:
            x = self.x1
            for (lab, val, bold, key), w in reversed(list(zip(lines, row_widths))):
                p.text(x, top + fs * ASC, lab, self.lab_font, fs, align="right")
                p.text(x, top + ld + fs * ASC, val, self.bold if bold else self.reg, fs, align="right")
                if key and key not in self.relations:
                    self.relations[key] = "above"
                x -= w
            p.line(x + 8, top + ld + 1, self.x1, top + ld + 1, line_width=0.3)
            bottom = top + 2 * ld
        else:
            xl = self.x1 - block_w
            y = top
            for lab, val, bold, key in lines:
                if bold and s.gross_rule and key == "gross_total":
                    p.line(xl, y + 0.5, self.x1, y + 0.5, line_width=0.6)
                base = y + 1.5 + fs * ASC
                p.text(xl + 4, base, lab, self.bold if bold else self.lab_font, fs)
                p.text(self.x1 - 4, base, val, self.bold if bold else self.reg, fs, align="right")
                if key and key not in self.relations:
                    self.relations[key] = "left"
                y += ld * 1.2
            if s.totals_style == "boxed":
                p.rect(xl, top - 2, self.x1, y + 2, stroke=s.accent, line_width=0.8)
            bottom = y
        if summary_below:
            self.tax_summary(bottom + ld * 0.5)
            bottom += ld * 0.5 + summary_h
        elif summary:
            bottom = max(bottom, top + summary_h)
        self.y = bottom + ld

    def after_totals(self) -> None:
        s, v, loc = self.s, self.v, self.loc
        blocks: list[list[Tagged]] = []
        if s.amount_words:
            blocks.append([(self.lab("amount_words"), ()), (amount_in_words(v.gross, self.lang, loc.currency), ())])
        if s.zero_rated:
            blocks.append([(s.labels["reverse"], ())])
        if s.terms == "days":
            blocks.append([(s.labels["terms_days"].format(d=s.terms_days), ())])
        elif s.terms == "until":
            pre, _, post = s.labels["terms_until"].partition("{date}")
            tagged = s.due_place == "terms"
            blocks.append([(pre, ("@due_date",) if tagged else ()), (self.date(v.due), ("due_date",) if tagged else ()),
                           (post, ())])
            if tagged:
                self.relations["due_date"] = "left"
        if s.early_pay:
            text = s.labels["early_pay"].format(p=format_number(v.early_pct, loc, 0), date=self.date(v.early_date))
            blocks.append([(text, ())])
        if s.vat_place == "below_totals" and v.seller.vat_id:
            blocks.append([(self.lab("seller_vat"), ("@seller_vat_id",)), (v.seller.vat_id, ("seller_vat_id",))])
            self.relations["seller_vat_id"] = "left"
        if s.bank_place == "body":
            bank, ib, bc = v.bank
            blocks.append([(self.lab("bank"), ()), (bank, ()), (f"{self.lab('iban')}", ()), (ib, ()),
                           (self.lab("bic"), ()), (bc, ())])
        if s.closing:
            blocks.append([(s.closing, ())])
        for pieces in blocks:
            self.ensure(self.ld * (len(self.wrap_pieces(self.cw, pieces, self.reg, self.fs)) + 0.5))
            self.y = self.paragraph(self.x0, self.y, self.cw, pieces) + self.ld * 0.5

    # ---- footer ----------------------------------------------------------------------------------
    def _footer_columns(self) -> list[list[list[Tagged]]]:
        s, v = self.s, self.v
        addr: list[list[Tagged]] = [[(v.seller.name, ("seller_name",) if s.seller_pos == "footer" else ())]]
        addr += [[(a, ())] for a in v.seller.address]
        contact: list[list[Tagged]] = []
        if v.seller.phone:
            contact.append([(self.lab("phone"), ()), (v.seller.phone, ())])
        if v.seller.email:
            contact.append([(self.lab("email"), ()), (v.seller.email, ())])
        if v.seller.web:
            contact.append([(v.seller.web, ())])
        bank, ib, bc = v.bank
        bank_col: list[list[Tagged]] = [[(bank, ())], [(self.lab("iban"), ()), (ib, ())], [(self.lab("bic"), ()),
                                                                                           (bc, ())]]
        reg: list[list[Tagged]] = [[(s.registry, ())]]
        if s.vat_place == "footer" and v.seller.vat_id:
            reg.append([(self.lab("seller_vat"), ("@seller_vat_id",)), (v.seller.vat_id, ("seller_vat_id",))])
            self.relations["seller_vat_id"] = "left"
        required: list[str] = []
        optional: list[str] = []
        (required if s.seller_pos == "footer" else optional).append("addr")
        (required if s.vat_place == "footer" else optional).append("reg")
        optional.append("contact")
        if s.bank_place == "footer":
            required.append("bank")
        n = max(len(required), s.footer_cols)
        chosen = set(required + optional[:max(0, n - len(required))])
        blocks = {"addr": addr, "contact": contact, "bank": bank_col, "reg": reg}
        return [blocks[k] for k in ("addr", "contact", "bank", "reg") if k in chosen and blocks[k]]

    def _footer_widths(self) -> list[float]:
        """Column widths in proportion to each column's widest word, filling the content width."""
        if not self.footer:
            return []
        need = [max(measure(w, self.reg, self.small) for line in col for t, _ in line for w in t.split()) + 8
                for col in self.footer]
        natural = [max(measure(" ".join(t for t, _ in line), self.reg, self.small) for line in col) + 8
                   for col in self.footer]
        if sum(natural) <= self.cw:
            slack = (self.cw - sum(natural)) / len(natural)
            return [n + slack for n in natural]
        widths = [max(nd, self.cw * n / sum(natural)) for nd, n in zip(need, natural)]
        scale = self.cw / sum(widths)
        return [w * scale for w in widths]

    def _footer_height(self) -> float:
        self.footer_w = self._footer_widths()
        if not self.footer:
            return self.lds * 2 if self.s.page_num.startswith("footer") else 0.0
        rows = 0
        for col, col_w in zip(self.footer, self.footer_w):
            rows = max(rows, sum(len(wrap(" ".join(t for t, _ in line), self.reg, self.small, col_w - 6))
                                 for line in col))
        extra = self.lds * 1.5 if self.s.page_num.startswith("footer") else 0.0
        return rows * self.lds + 6 + extra

    def draw_footer(self, page_no: int, n_pages: int) -> None:
        s = self.s
        p = self.pages[page_no - 1]
        top = self.H - self.mb - self.footer_h
        if self.footer:
            p.line(self.x0, top, self.x1, top, stroke=_GRAY, line_width=0.4)
            x = self.x0
            for col, col_w in zip(self.footer, self.footer_w):
                y = top + 4
                for line in col:
                    pieces: list[Tagged] = line if page_no == 1 else [(t, ()) for t, _ in line]
                    y = self._footer_line(p, x, y, col_w - 6, pieces)
                x += col_w
        text = s.labels["page"].format(n=page_no, N=n_pages)
        if s.page_num == "footer_center":
            p.text(self.W / 2, self.H - self.mb - self.lds * 0.4, text, self.reg, self.small, align="center")
        elif s.page_num == "footer_right":
            p.text(self.x1, self.H - self.mb - self.lds * 0.4, text, self.reg, self.small, align="right")
        elif s.page_num == "header_right":
            p.text(self.x1, self.mt * 0.55, text, self.reg, self.small, align="right")

    def _footer_line(self, p: PageLayout, x: float, y: float, width: float, pieces: list[Tagged]) -> float:
        words = [(w, t) for text, t in pieces for w in text.split()]
        lines = wrap(" ".join(w for w, _ in words), self.reg, self.small, width)
        i = 0
        for line in lines:
            n = len(line.split())
            p.text(x, y + self.small * ASC, words[i:i + n], self.reg, self.small, color=(0.25, 0.25, 0.25))
            i += n
            y += self.lds
        return y

    # ---- all of it -------------------------------------------------------------------------------
    def compose(self) -> tuple[Layout, dict[str, object]]:
        self.new_page()
        self.top_of_page_one()
        self.items()
        self.totals()
        self.after_totals()
        n = len(self.pages)
        for i in range(1, n + 1):
            self.draw_footer(i, n)
        return Layout(self.pages, self.relations), self.truth()

    def truth(self) -> dict[str, object]:
        s, v = self.s, self.v
        t: dict[str, object] = {"invoice_number": v.number, "issue_date": v.issue.isoformat()}
        if s.due_place != "none":
            t["due_date"] = v.due.isoformat()
        t["seller_name"] = v.seller.name
        if s.vat_place != "none" and v.seller.vat_id:
            t["seller_vat_id"] = v.seller.vat_id
        t["buyer_name"] = v.buyer.name
        t["currency"] = self.loc.currency
        t["net_total"] = float(v.net)
        if self.tax_total_printed:
            t["tax_total"] = float(v.tax_total)
        t["gross_total"] = float(v.gross)
        t["line_items"] = [{"description": it.description, "quantity": float(it.quantity),
                            "unit_price": float(it.unit_price), "line_total": float(it.line_total)}
                           for it in v.items]
        return t


def hash_choice(text: str, n: int) -> int:
    """A stable index in range(n) derived from `text` (no Python hash randomisation)."""
    return sum(map(ord, text)) % n


def compose_invoice(style: InvoiceStyle, loc: Locale, lang: str, values: InvoiceValues
                    ) -> tuple[Layout, dict[str, object]]:
    """The pages of one invoice and its canonical truth (only keys that are printed)."""
    return _Composer(style, loc, lang, values).compose()
