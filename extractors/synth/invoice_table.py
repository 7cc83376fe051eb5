"""Geometry of the line-item table of an invoice format: which columns fit, where each one sits.

Column widths come from the widest value a format can print in them (measured with the format's
font), so they are the same for every document of the format.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from docassay.extractors.synth import vocab
from docassay.extractors.synth.canvas import FAMILIES, measure
from docassay.extractors.synth.locale import Locale, format_amount, format_number, format_percent

if TYPE_CHECKING:
    from docassay.extractors.synth.invoice_style import InvoiceStyle

__all__ = ["Column", "table_columns", "fit_columns", "column_header", "MIN_DESC_WIDTH"]

MIN_DESC_WIDTH = 120.0
_PAD = 10.0
_DROP_ORDER = ("sku", "tax_rate", "pos", "unit", "line_discount")
NUMERIC = ("pos", "quantity", "unit_price", "line_discount", "tax_rate", "line_total")


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    header: str
    x0: float
    x1: float
    align: str                     # left | right


def _widths(style: "InvoiceStyle", loc: Locale) -> dict[str, float]:
    reg, bold = FAMILIES[style.family]
    fs = style.size
    mark = style.cur_style == "all"
    hi_price = Decimal(repr(style.price_range[1])) * Decimal("1.2")
    hi_total = hi_price * style.qty_max
    lab = vocab.INVOICE_LABELS[loc.language]
    units = lab["units"] + lab["service_units"]
    unit_w = max(measure(u, reg, fs) for u in units)
    qty_w = measure(format_number(Decimal(style.qty_max * 2), loc, style.qty_decimals), reg, fs)
    if style.unit_mode == "with_qty":
        qty_w += measure(" ", reg, fs) + unit_w
    values = {
        "pos": measure("40", reg, fs),
        "sku": measure("M99999", reg, fs),
        "quantity": qty_w,
        "unit": unit_w,
        "unit_price": measure(format_amount(hi_price, loc, mark, style.price_decimals), reg, fs),
        "line_discount": max(measure(format_percent(Decimal(20), loc, style.percent_spaced), reg, fs),
                             measure(format_amount(-hi_total / 5, loc), reg, fs)),
        "tax_rate": max(measure(format_percent(r, loc, style.percent_spaced), reg, fs) for r in style.rates),
        "line_total": measure(format_amount(hi_total, loc, mark), reg, fs),
    }
    out = {}
    for key in style.columns:
        if key == "description":
            continue
        out[key] = max(values[key], measure(column_header(style, loc, key), bold, fs)) + _PAD
    return out


def column_header(style: "InvoiceStyle", loc: Locale, key: str) -> str:
    """The header printed over column `key` (the amount column may name the currency)."""
    if key == "line_total" and style.cur_anchor == "column_header":
        return f"{style.labels[key]} ({loc.currency})"
    return style.labels[key]


def fit_columns(style: "InvoiceStyle", loc: Locale) -> "InvoiceStyle":
    """The style with optional columns dropped (in a fixed order) until the description column is at
    least MIN_DESC_WIDTH wide; a dropped unit column becomes a unit after the quantity, a dropped
    discount column means no line discounts."""
    ml, mr, _, _ = style.margins
    cw = style.page_w - ml - mr
    for key in _DROP_ORDER:
        widths = _widths(style, loc)
        if cw - sum(widths.values()) >= MIN_DESC_WIDTH:
            break
        if key in style.columns:
            cols = tuple(c for c in style.columns if c != key)
            changes: dict[str, Any] = {"columns": cols}
            if key == "unit":
                changes["unit_mode"] = "with_qty"
            if key == "line_discount":
                changes["line_discount_p"] = 0.0
            style = replace(style, **changes)
    widths = _widths(style, loc)
    if cw - sum(widths.values()) < MIN_DESC_WIDTH:        # still too wide: smaller type for this format
        style = replace(style, size=max(6.5, round(style.size * 0.85, 1)), leading=round(style.leading * 0.85, 2))
    return style


def table_columns(style: "InvoiceStyle", loc: Locale) -> list[Column]:
    """Columns left to right across the content width; the description takes what is left."""
    ml, mr, _, _ = style.margins
    x = ml
    cw = style.page_w - ml - mr
    widths = _widths(style, loc)
    desc_w = max(MIN_DESC_WIDTH * 0.8, cw - sum(widths.values()))
    cols: list[Column] = []
    for key in style.columns:
        w = desc_w if key == "description" else widths[key]
        align = "right" if key in NUMERIC else "left"
        cols.append(Column(key, column_header(style, loc, key), x, x + w, align))
        x += w
    return cols
