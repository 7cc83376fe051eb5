"""What one invoice format fixes: page, fonts, block positions, label wording, locale, tax regime.

`sample_invoice_format(seed)` draws every choice from `random.Random(f"invoice-format/{seed}")`, so
a format is a pure function of its seed. The documents of a format differ only in values.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from decimal import Decimal

from docassay.extractors.synth import names, vocab
from docassay.extractors.synth.canvas import Color
from docassay.extractors.synth.invoice_table import fit_columns
from docassay.extractors.synth.locale import Locale
from docassay.extractors.synth.names import IdPattern, Party

__all__ = ["InvoiceStyle", "sample_invoice_style", "sample_locale", "TAX_RATES", "CURRENCY_OF"]

TAX_RATES: dict[str, list[str]] = {
    "DE": ["19", "7"], "AT": ["20", "10", "13"], "CH": ["8.1", "2.6", "3.8"], "FR": ["20", "10", "5.5"],
    "BE": ["21", "6", "12"], "ES": ["21", "10", "4"], "NL": ["21", "9"], "GB": ["20", "5"],
    "IE": ["23", "13.5", "9"], "US": ["7", "5", "8.25", "6.5"], "AU": ["10"], "CA": ["5", "13", "15"],
}
CURRENCY_OF = {"DE": "EUR", "AT": "EUR", "FR": "EUR", "BE": "EUR", "ES": "EUR", "NL": "EUR", "IE": "EUR",
               "CH": "CHF", "GB": "GBP", "US": "USD", "AU": "AUD", "CA": "CAD", "MY": "MYR"}
_NUMBER_STYLES = {
    "US": [(".", ","), (".", ",")], "GB": [(".", ","), (".", "")], "IE": [(".", ","), (".", "")],
    "AU": [(".", ","), (".", "")], "CA": [(".", ","), (".", " ")], "MY": [(".", ","), (".", "")],
    "DE": [(",", "."), (",", "."), (",", ""), (",", " ")], "AT": [(",", "."), (",", " ")],
    "CH": [(".", "'"), (".", "'"), (",", " ")], "FR": [(",", " "), (",", " "), (",", "."), (",", "")],
    "BE": [(",", "."), (",", " ")], "ES": [(",", "."), (",", "."), (",", "")], "NL": [(",", "."), (",", "")],
}
_ACCENTS: list[Color] = [(0, 0, 0), (0.1, 0.2, 0.5), (0.05, 0.35, 0.2), (0.5, 0.1, 0.1), (0.3, 0.3, 0.3),
                         (0.0, 0.3, 0.45), (0.35, 0.2, 0.45)]
_FIELD_KEYS = ("invoice_number", "issue_date", "due_date", "delivery_date", "order_number", "customer_number",
               "po_number", "currency", "buyer_vat", "seller_vat_id", "contact")
_LABEL_KEY = {"seller_vat_id": "seller_vat"}


@dataclass(frozen=True)
class InvoiceStyle:
    page_name: str
    page_w: float
    page_h: float
    margins: tuple[float, float, float, float]          # left, right, top, bottom
    family: str
    size: float
    leading: float                                      # line pitch in points
    label_bold: bool
    label_upper: bool
    colon: str                                          # ":" or ""
    accent: Color
    title: str
    title_size: float
    title_place: str                                    # top_opposite | above_fields | centered
    title_line: bool                                    # "Invoice No. X dated D" as the heading
    logo: str                                           # none | name | brand
    logo_size: float
    logo_align: str                                     # left | right | center
    seller_pos: str                                     # top_left | top_right | footer
    right_block_align: str                              # left | right (blocks in the right column)
    seller_lines: tuple[str, ...]                       # phone, email, web, vat (besides name, address)
    sender_line: bool
    vat_place: str                                      # seller_block | footer | fields | below_totals | none
    bill_to_label: bool
    attn_line: bool
    buyer_side: str                                     # left | right
    ship_to: bool
    fields_style: str                                   # left | inline | above | boxed | kv_table
    fields_place: str                                   # beside | below
    fields_cols: int
    value_align: str                                    # left | right
    fields: tuple[str, ...]
    labels: dict[str, str]
    id_pattern: IdPattern
    order_pattern: IdPattern
    customer_pattern: IdPattern
    due_place: str                                      # fields | terms | none
    terms: str                                          # none | days | until
    terms_days: int
    columns: tuple[str, ...]
    header_style: str                                   # fill | rules | grid | plain | underline
    row_rules: bool
    zebra: bool
    sub_line: str                                       # none | sku | note
    qty_decimals: int
    price_decimals: int
    unit_mode: str                                      # column | with_qty | none
    line_discount_p: float
    discount_kind: str                                  # percent | amount
    doc_discount_p: float
    rates: tuple[Decimal, ...]                          # the rates this format uses
    mixed_rates: bool
    tax_style: str                                      # rate | rate_base | summary
    tax_total_line: bool
    percent_spaced: bool
    totals_style: str                                   # stack | boxed | row
    gross_rule: bool
    deposit_p: float
    cur_style: str                                      # all | totals | gross | none
    cur_anchor: str                                     # field | gross | gross_label | column_header
    amount_words: bool
    early_pay: bool
    bank_place: str                                     # footer | body | none
    footer_cols: int
    page_num: str                                       # footer_center | footer_right | header_right | none
    carry_forward: bool
    cont_header: bool
    intro: str
    closing: str
    items_range: tuple[int, int]
    service_p: float
    long_desc_p: float
    price_range: tuple[float, float]
    qty_max: int
    seller_varies: bool
    seller: Party                                       # the issuer when it does not vary
    bank: tuple[str, str, str]                          # bank name, IBAN, BIC (fixed with the seller)
    registry: str
    zero_rated: bool
    delivery_note: str
    credit_title: str
    credit_p: float                                     # share of documents that are credit notes
    extra: dict[str, object] = field(default_factory=dict)
    layout_family: str = "classic"                      # see families.INVOICE_FAMILIES
    rich: object | None = None                          # families.RichInvoice for non-classic families

    def describe(self) -> dict[str, object]:
        """The layout choices as a JSON-ready dict (what `meta["layout"]` holds)."""
        keys = ("page_name", "family", "size", "label_bold", "label_upper", "colon", "title_place", "title_line",
                "logo", "logo_align", "seller_pos", "sender_line", "vat_place", "buyer_side", "ship_to",
                "fields_style", "fields_place", "fields_cols", "value_align", "fields", "due_place", "terms",
                "columns", "header_style", "row_rules", "zebra", "sub_line", "qty_decimals", "price_decimals",
                "unit_mode", "discount_kind", "mixed_rates", "tax_style", "tax_total_line", "totals_style",
                "cur_style", "cur_anchor", "amount_words", "early_pay", "bank_place", "footer_cols", "page_num",
                "carry_forward", "cont_header", "seller_varies", "zero_rated", "credit_p")
        out: dict[str, object] = {k: getattr(self, k) for k in keys}
        out["fields"] = list(self.fields)
        out["columns"] = list(self.columns)
        out["rates"] = [str(r) for r in self.rates]
        out["labels"] = dict(self.labels)
        out["layout_family"] = self.layout_family
        if self.rich is not None:
            out["rich"] = self.rich.describe()  # type: ignore[attr-defined]
        return out


def sample_locale(rng: random.Random, lang: str, country: str) -> Locale:
    dec, grp = rng.choice(_NUMBER_STYLES[country])
    if lang != "en" and rng.random() < 0.07:
        dec, grp = ".", ","
    order = "MDY" if (country == "US" and rng.random() < 0.85) or (country == "CA" and rng.random() < 0.4) else "DMY"
    key = (lang, order) if (lang, order) in vocab.DATE_PATTERNS else (lang, "DMY")
    pattern = "yyyy-mm-dd" if rng.random() < 0.08 else rng.choice(vocab.DATE_PATTERNS[key])
    cur = CURRENCY_OF[country]
    if rng.random() < 0.1:
        cur = rng.choice(["EUR", "USD", "GBP", "CHF"])
    marks = vocab.CURRENCY_MARKS[cur]
    mark = rng.choice(marks[:2]) if rng.random() < 0.85 else marks[-1]
    if cur == "EUR" and lang in ("de", "fr", "es"):
        pos = "after" if rng.random() < 0.8 else "before"
    elif mark.isalpha() and len(mark) == 3:
        pos = rng.choice(["before", "after"])
    else:
        pos = "before"
    space = True if mark.isalpha() else (rng.random() < 0.5 if pos == "before" else rng.random() < 0.85)
    return Locale(lang, country, dec, grp, pattern, cur, mark, pos, space, rng.random() < 0.1)


def _pick_labels(rng: random.Random, lang: str, upper: bool) -> dict[str, str]:
    lab = vocab.INVOICE_LABELS[lang]
    groups = [
        ["invoice_number", "issue_date", "due_date", "delivery_date", "order_number", "customer_number", "po_number",
         "currency", "contact", "seller_vat", "buyer_vat", "tax_number"],
        ["subtotal", "discount", "net_total", "tax_total", "gross_total", "deposit", "amount_due"],
        ["pos", "sku", "description", "quantity", "unit", "unit_price", "line_discount", "tax_rate", "line_total"],
        ["title", "bill_to", "ship_to", "tax", "carried_forward", "brought_forward", "phone", "fax", "email", "web",
         "iban", "bic", "bank", "account", "amount_words", "page", "terms_days", "terms_until", "early_pay", "intro",
         "closing", "reverse", "registry", "delivery_note", "attn"],
    ]
    out: dict[str, str] = {}
    for group in groups:
        seen: set[str] = set()
        for key in group:
            options = lab[key]
            choice = rng.choice(options)
            for _ in range(8):
                if choice.lower() not in seen:
                    break
                choice = rng.choice(options)
            seen.add(choice.lower())
            out[key] = choice
    if out["net_total"].lower() == out["subtotal"].lower():
        out["subtotal"] = next(o for o in lab["subtotal"] if o.lower() != out["net_total"].lower())
    if upper:
        for key in groups[0] + groups[1] + groups[2] + ["bill_to", "ship_to", "tax"]:
            out[key] = out[key].upper()
    return out


def _credit_title(rng: random.Random, lang: str, title: str) -> str:
    t = rng.choice(vocab.INVOICE_LABELS[lang]["credit_title"])
    return t.upper() if title.isupper() else t


def sample_invoice_style(seed: int) -> tuple[str, Locale, InvoiceStyle]:
    """(language, locale, style) of invoice format `seed`."""
    rng = random.Random(f"invoice-format/{seed}")
    lang = vocab.LANGUAGES[rng.randrange(len(vocab.LANGUAGES))]
    country = rng.choice(names.COUNTRIES[lang])
    loc = sample_locale(rng, lang, country)
    letter = country in ("US", "CA") and rng.random() < 0.8
    page_name, pw, ph = ("Letter", 612.0, 792.0) if letter else ("A4", 595.28, 841.89)
    ml = rng.uniform(36, 72)
    margins = (ml, rng.choice([ml, rng.uniform(36, 72)]), rng.uniform(30, 60), rng.uniform(30, 50))
    family = rng.choices(["Helvetica", "Times", "Courier"], weights=[6, 3, 1])[0]
    size = round(rng.uniform(7.5, 10.0) if family != "Courier" else rng.uniform(7.0, 8.5), 1)
    leading = round(size * rng.uniform(1.18, 1.45), 2)
    upper = rng.random() < 0.12
    labels = _pick_labels(rng, lang, upper)
    seller_pos = rng.choices(["top_left", "top_right", "footer"], weights=[4, 4, 2])[0]
    fields_place = rng.choice(["beside", "beside", "below"])
    fields_style = rng.choices(["left", "inline", "above", "boxed", "kv_table"], weights=[5, 3, 2, 2, 2])[0]
    if fields_place == "beside" and fields_style in ("above", "boxed") and rng.random() < 0.5:
        fields_place = "below"
    title_line = rng.random() < 0.12
    optional = [("due_date", 0.45), ("delivery_date", 0.35), ("order_number", 0.35), ("customer_number", 0.45),
                ("po_number", 0.3), ("currency", 0.12), ("buyer_vat", 0.12), ("contact", 0.2)]
    fields = [] if title_line else ["invoice_number", "issue_date"]
    due_place = "none"
    for key, p in optional:
        if rng.random() < p:
            fields.append(key)
            if key == "due_date":
                due_place = "fields"
    has_vat = country not in ("US",) or rng.random() < 0.3
    vat_place = "none" if not has_vat or rng.random() < 0.06 else rng.choices(
        ["seller_block", "footer", "fields", "below_totals"], weights=[4, 4, 1, 1])[0]
    if vat_place == "seller_block" and seller_pos == "footer":
        vat_place = "footer"
    if vat_place == "fields":
        fields.append("seller_vat_id")
    if rng.random() < 0.4:
        head, tail = fields[:2], fields[2:]
        rng.shuffle(tail)
        fields = head + tail
    elif rng.random() < 0.5:
        rng.shuffle(fields)
    terms = rng.choices(["none", "days", "until"], weights=[3, 4, 3])[0]
    if due_place == "none" and terms == "until":
        due_place = "terms"
    columns = ["description", "quantity", "unit_price", "line_total"]
    if rng.random() < 0.55:
        columns.insert(0, "pos")
    if rng.random() < 0.25:
        columns.insert(columns.index("description"), "sku")
    unit_mode = rng.choices(["column", "with_qty", "none"], weights=[3, 2, 5])[0]
    if unit_mode == "column":
        columns.insert(columns.index("quantity") + 1, "unit")
    line_discount_p = 0.0
    if rng.random() < 0.2:
        columns.insert(columns.index("line_total"), "line_discount")
        line_discount_p = rng.uniform(0.2, 0.8)
    rates_all = [Decimal(r) for r in TAX_RATES[country]] if country in TAX_RATES else [Decimal("0")]
    mixed = len(rates_all) > 1 and rng.random() < 0.3
    zero_rated = (not mixed) and rng.random() < 0.07
    rates = tuple(rates_all[:rng.randint(2, len(rates_all))]) if mixed else (
        (Decimal("0"),) if zero_rated else (rates_all[0] if rng.random() < 0.8 else rng.choice(rates_all),))
    if mixed or rng.random() < 0.2:
        columns.insert(columns.index("line_total"), "tax_rate")
    if rng.random() < 0.2:                               # "Price | Qty | Amount" instead of "Qty | Price"
        columns.remove("unit_price")
        columns.insert(columns.index("quantity"), "unit_price")
    tax_style = rng.choices(["rate", "rate_base", "summary"], weights=[5, 2, 2 if mixed else 0.5])[0]
    cur_style = rng.choices(["all", "totals", "gross", "none"], weights=[3, 3, 2, 2])[0]
    if "currency" in fields:
        cur_anchor = "field"
    elif cur_style == "none":
        cur_anchor = rng.choice(["gross_label", "column_header"])
    else:
        cur_anchor = "gross"
    seller_rng = random.Random(f"invoice-seller/{seed}")
    seller = names.make_party(seller_rng, lang, country, vat=has_vat)
    bank_country = country if country in ("DE", "AT", "CH", "FR", "BE", "ES", "NL", "GB", "IE") else "GB"
    bank = (names.bank_name(seller_rng, lang, seller.address[-1].split(" ")[-1]), names.iban(seller_rng, bank_country),
            names.bic(seller_rng, bank_country))
    registry = labels["registry"].format(city=seller.address[-1].split(" ")[-1], n=seller_rng.randint(10000, 999999),
                                         m=seller_rng.randint(1, 200), k=seller_rng.randint(1, 99999),
                                         person=names.person_name(seller_rng, lang), cap=seller_rng.choice(
                                             ["1 000", "10 000", "50 000"]), ape=f"{seller_rng.randint(1000, 9999)}Z")
    big = rng.random()
    items_range = (1, 5) if big < 0.5 else (3, 15) if big < 0.8 else (10, 40)
    lo = rng.choice([0.5, 2.0, 10.0, 50.0])
    style = InvoiceStyle(
        page_name=page_name, page_w=pw, page_h=ph, margins=margins, family=family, size=size, leading=leading,
        label_bold=rng.random() < 0.5, label_upper=upper, colon=rng.choice([":", ":", ""]),
        accent=rng.choice(_ACCENTS), title=labels["title"], title_size=round(rng.uniform(13, 24), 1),
        title_place=rng.choice(["top_opposite", "above_fields", "centered"]), title_line=title_line,
        logo=rng.choice(["none", "none", "name", "brand"]), logo_size=round(rng.uniform(16, 28), 1),
        logo_align=rng.choice(["left", "right", "center"]), seller_pos=seller_pos,
        right_block_align=rng.choice(["left", "right"]),
        seller_lines=tuple(k for k, p in (("phone", 0.6), ("email", 0.5), ("web", 0.3)) if rng.random() < p)
        + (("vat",) if vat_place == "seller_block" else ()),
        sender_line=rng.random() < (0.5 if lang == "de" else 0.15), vat_place=vat_place,
        bill_to_label=rng.random() < 0.5, attn_line=rng.random() < 0.3,
        buyer_side=rng.choices(["left", "right"], weights=[4, 1])[0], ship_to=rng.random() < 0.3,
        fields_style=fields_style, fields_place=fields_place,
        fields_cols=2 if fields_place == "below" and len(fields) >= 4 and rng.random() < 0.6 else 1,
        value_align=rng.choice(["left", "left", "right"]), fields=tuple(fields), labels=labels,
        id_pattern=names.make_id_pattern(rng, ["INV", "RE", "F", "FA", "R", "FV", "FAC", "RG", "IN"]),
        order_pattern=names.make_id_pattern(rng, ["SO", "AB", "BE", "CMD", "PED", "ORD"]),
        customer_pattern=names.make_id_pattern(rng, ["C", "K", "KD", "CL", "D"]),
        due_place=due_place, terms=terms, terms_days=rng.choice([7, 10, 14, 14, 30, 30, 45, 60]),
        columns=tuple(columns), header_style=rng.choice(["fill", "rules", "grid", "plain", "underline"]),
        row_rules=rng.random() < 0.35, zebra=rng.random() < 0.15,
        sub_line=rng.choices(["none", "sku", "note"], weights=[6, 2, 2])[0],
        qty_decimals=rng.choices([0, 1, 2, 3], weights=[6, 1, 3, 1])[0],
        price_decimals=rng.choices([2, 3, 4], weights=[10, 1, 1])[0],
        unit_mode=unit_mode, line_discount_p=line_discount_p, discount_kind=rng.choice(["percent", "amount"]),
        doc_discount_p=rng.choice([0.0, 0.0, 0.0, 0.3, 0.7]), rates=rates, mixed_rates=mixed, tax_style=tax_style,
        tax_total_line=(rng.random() < 0.75) if mixed or tax_style == "summary" else rng.random() < 0.15,
        percent_spaced=rng.random() < 0.5, totals_style=rng.choices(["stack", "boxed", "row"], weights=[6, 2, 1])[0],
        gross_rule=rng.random() < 0.5, deposit_p=rng.choice([0.0, 0.0, 0.0, 0.3]), cur_style=cur_style,
        cur_anchor=cur_anchor, amount_words=rng.random() < 0.15, early_pay=rng.random() < 0.15,
        bank_place=rng.choices(["footer", "body", "none"], weights=[5, 3, 2])[0],
        footer_cols=rng.choice([0, 1, 2, 3, 4]) if seller_pos != "footer" else rng.choice([1, 2, 3, 4]),
        page_num=rng.choice(["footer_center", "footer_right", "header_right", "none"]),
        carry_forward=rng.random() < 0.35, cont_header=rng.random() < 0.6,
        intro=labels["intro"] if rng.random() < 0.3 else "", closing=labels["closing"] if rng.random() < 0.5 else "",
        items_range=items_range, service_p=rng.choice([0.0, 0.2, 0.5, 0.9]),
        long_desc_p=rng.choice([0.0, 0.15, 0.4]), price_range=(lo, lo * rng.choice([10, 50, 200])),
        qty_max=rng.choice([3, 10, 25, 200]), seller_varies=rng.random() < 0.3, seller=seller, bank=bank,
        registry=registry, zero_rated=zero_rated,
        delivery_note=labels["delivery_note"],
        credit_title=_credit_title(rng, lang, labels["title"]), credit_p=rng.choice([0.0, 0.0, 0.0, 0.1]),
    )
    return lang, loc, fit_columns(style, loc)
