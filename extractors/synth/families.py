"""Layout families: named kinds of template a format belongs to, beyond the classic layout.

A format's *family* is drawn from its own random stream (`"<kind>-family/<seed>"`), apart from the
stream that draws the classic style, so a format whose family is `classic` is exactly the format
the generator made before families existed. A non-classic family starts from the classic style of
the same seed and overrides what the family is about (block placement, header grid, credit notes,
long tables, bank footers, receipt headers and totals).

    pick_family(seed, "invoice", families=None)   -> "sidebar"
    apply_invoice_family(style, "letterhead", seed, lang, loc) -> InvoiceStyle with `rich` set

`families=None` draws from `default_families(kind, split)`: every family on the train and unseen
splits, `classic` alone on the dev split (the project's tests and benches pin dev formats; pass
`families=ALL_INVOICE_FAMILIES` to draw the new ones there too).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any, Sequence

from docassay.extractors.synth import vocab
from docassay.extractors.synth.invoice_style import TAX_RATES, InvoiceStyle
from docassay.extractors.synth.invoice_table import fit_columns
from docassay.extractors.synth.locale import Locale
from docassay.extractors.synth.receipt import ReceiptStyle

__all__ = ["INVOICE_FAMILIES", "RECEIPT_FAMILIES", "ALL_INVOICE_FAMILIES", "ALL_RECEIPT_FAMILIES", "RichInvoice",
           "RichReceipt", "pick_family", "default_families", "resolve_families", "apply_invoice_family",
           "apply_receipt_family", "RICH_LABELS", "RICH_RECEIPT_LABELS"]

# What each family is about (README "Synthetic documents" lists the same).
INVOICE_FAMILIES: dict[str, str] = {
    "classic": "the original templates (seller/buyer/fields blocks, item table, totals, footer)",
    "sidebar": "a narrow column left or right with seller, header fields (label above value), delivery address "
               "and bank data; title and buyer in the main column",
    "letterhead": "seller centred as a letterhead, buyer and delivery address boxes side by side, fields below",
    "grid_header": "title first, a ruled key/value grid (labels above values) of several dates and references, "
                   "seller at the opposite corner",
    "credit_note": "a credit note: credit title, a reference to the original invoice, negative amounts "
                   "(leading minus, trailing minus or in parentheses)",
    "long_table": "many items over several pages with repeated headers and carried-over totals",
    "tax_summary": "several VAT rates per document, a rate/base/tax summary table, full bank/registry footer",
}
RECEIPT_FAMILIES: dict[str, str] = {
    "classic": "the original receipt templates",
    "slogan": "brand and slogan lines around the company line, member/cashier names as distractors",
    "branch": "company line, then a branch name and an address over 1-4 lines (with or without postcode)",
    "rich_totals": "a long totals block: subtotal, service charge, tax, rounding, total, tendered, change",
}
ALL_INVOICE_FAMILIES = tuple(INVOICE_FAMILIES)
ALL_RECEIPT_FAMILIES = tuple(RECEIPT_FAMILIES)
_WEIGHTS = {"classic": 2.0}                # new families share the rest equally
BILINGUAL_KEYS = ("title", "invoice_number", "issue_date", "due_date", "delivery_date", "order_number",
                  "customer_number", "bill_to", "ship_to", "net_total", "tax_total", "gross_total", "quantity",
                  "unit_price", "line_total")              # (column widths fit these headers; not the description's)

# Labels the classic vocabulary has no key for (per language; WinAnsi only).
RICH_LABELS: dict[str, dict[str, list[str]]] = {
    "en": {"slip": ["Payment slip", "Remittance advice", "Payment section"], "payable_to": ["Account / Payable to", "Pay to", "Beneficiary"], "slip_ref": ["Reference", "Payment reference"], "slip_amount": ["Amount", "Amount payable"], "payable_by": ["Payable by", "Payer"], "sections": ["Materials", "Labour", "Services", "Shipping", "Hardware", "Software", "Consumables"], "period": ["Service period", "Period", "Billing period"], "order_date": ["Order Date", "Date of Order", "Ordered"], "from": ["From", "Supplier", "Issued by"],
           "ref_invoice": ["Relates to invoice", "Original invoice", "Reference invoice"],
           "of": ["of", "dated"], "tax_number": ["Tax No.", "Tax Reference"],
           "holder": ["Account holder", "Beneficiary"]},
    "de": {"slip": ["Zahlteil", "Zahlschein", "Überweisungsträger"], "payable_to": ["Konto / Zahlbar an", "Zahlungsempfänger"], "slip_ref": ["Referenz", "Verwendungszweck"], "slip_amount": ["Betrag"], "payable_by": ["Zahlbar durch", "Auftraggeber"], "sections": ["Material", "Arbeitsleistung", "Dienstleistungen", "Versand", "Hardware", "Verbrauchsmaterial"], "period": ["Leistungszeitraum", "Abrechnungszeitraum", "Zeitraum"], "order_date": ["Bestelldatum", "Auftragsdatum", "Bestellung vom"], "from": ["Absender", "Von", "Lieferant"],
           "ref_invoice": ["zu Rechnung", "Bezug: Rechnung", "Ursprungsrechnung"], "of": ["vom"],
           "tax_number": ["Steuernummer", "St.-Nr."], "holder": ["Kontoinhaber", "Empfänger"]},
    "fr": {"slip": ["Section paiement", "Bulletin de versement"], "payable_to": ["Compte / Payable à", "Bénéficiaire"], "slip_ref": ["Référence", "Communication"], "slip_amount": ["Montant"], "payable_by": ["Payable par", "Donneur d'ordre"], "sections": ["Fournitures", "Main-d'œuvre", "Prestations", "Transport", "Matériel", "Logiciels"], "period": ["Période", "Période de prestation"], "order_date": ["Date de commande", "Commande du"], "from": ["Émetteur", "Fournisseur", "De"],
           "ref_invoice": ["Facture d'origine", "Se rapporte à la facture", "Réf. facture"], "of": ["du"],
           "tax_number": ["SIRET", "N° fiscal"], "holder": ["Titulaire", "Bénéficiaire"]},
    "es": {"slip": ["Resguardo de pago", "Datos de pago"], "payable_to": ["Cuenta / Pagadero a", "Beneficiario"], "slip_ref": ["Referencia", "Concepto"], "slip_amount": ["Importe"], "payable_by": ["Pagadero por", "Ordenante"], "sections": ["Materiales", "Mano de obra", "Servicios", "Envío", "Hardware", "Consumibles"], "period": ["Periodo", "Periodo de facturación"], "order_date": ["Fecha de pedido", "Fecha del pedido"], "from": ["Emisor", "Proveedor", "De"],
           "ref_invoice": ["Factura rectificada", "Factura original", "Ref. factura"], "of": ["del", "de fecha"],
           "tax_number": ["NIF", "CIF"], "holder": ["Titular", "Beneficiario"]},
    "nl": {"slip": ["Acceptgiro", "Betaalgedeelte"], "payable_to": ["Rekening / Te betalen aan", "Begunstigde"], "slip_ref": ["Kenmerk", "Betalingskenmerk"], "slip_amount": ["Bedrag"], "payable_by": ["Te betalen door", "Betaler"], "sections": ["Materiaal", "Arbeid", "Diensten", "Verzending", "Hardware", "Verbruiksartikelen"], "period": ["Periode", "Factuurperiode"], "order_date": ["Besteldatum", "Orderdatum"], "from": ["Van", "Leverancier", "Afzender"],
           "ref_invoice": ["Betreft factuur", "Oorspronkelijke factuur", "Ref. factuur"], "of": ["van", "d.d."],
           "tax_number": ["KvK", "KvK-nummer"], "holder": ["Rekeninghouder", "Begunstigde"]},
}
RICH_RECEIPT_LABELS: dict[str, dict[str, list[str]]] = {
    "en": {"saved": ["You saved", "Total savings", "Your savings"], "service": ["Service Charge", "Svc Chg", "Service 10%"], "tendered": ["Tendered", "Amount Paid", "Paid"],
           "branch": ["Branch", "Outlet", "Store"], "member": ["Member", "Loyalty No.", "Member Name"],
           "served": ["Served by", "Cashier", "Operator"], "slogan": ["Quality you can trust", "Since 1998",
                                                                     "Your friendly neighbourhood store",
                                                                     "Fresh every day"]},
    "ms": {"saved": ["Jimat", "JUMLAH JIMAT"], "service": ["Caj Perkhidmatan", "SERVICE CHARGE"], "tendered": ["Dibayar", "TUNAI DIBAYAR"],
           "branch": ["Cawangan", "Outlet"], "member": ["Ahli", "No. Ahli"], "served": ["Juruwang", "Kasyer"],
           "slogan": ["Harga Berpatutan", "Kualiti Terjamin", "Sejak 2001"]},
    "de": {"saved": ["Sie sparen", "Ersparnis"], "service": ["Bedienung", "Servicezuschlag"], "tendered": ["Gegeben", "Bezahlt"],
           "branch": ["Filiale", "Markt"], "member": ["Kundenkarte", "Mitglied"], "served": ["Es bediente Sie",
                                                                                           "Kassierer", "Bediener"],
           "slogan": ["Frisch vom Bäcker", "Seit 1987 für Sie da", "Qualität zum fairen Preis"]},
    "fr": {"saved": ["Vous économisez", "Économies"], "service": ["Service", "Service compris"], "tendered": ["Reçu", "Montant remis"],
           "branch": ["Magasin", "Succursale"], "member": ["Carte fidélité", "Client"],
           "served": ["Vous avez été servi par", "Caissier", "Hôte"],
           "slogan": ["Artisan depuis 1975", "La qualité au quotidien", "Merci de votre fidélité"]},
    "es": {"saved": ["Usted ahorra", "Ahorro total"], "service": ["Servicio", "Cargo por servicio"], "tendered": ["Entregado", "Recibido"],
           "branch": ["Tienda", "Sucursal"], "member": ["Socio", "Tarjeta cliente"], "served": ["Le atendió", "Cajero"],
           "slogan": ["Calidad y confianza", "Desde 1992", "Su tienda de barrio"]},
    "nl": {"saved": ["U bespaart", "Voordeel"], "service": ["Bediening", "Servicekosten"], "tendered": ["Betaald", "Ontvangen"],
           "branch": ["Filiaal", "Vestiging"], "member": ["Klantenkaart", "Lid"], "served": ["U werd geholpen door",
                                                                                          "Kassa", "Medewerker"],
           "slogan": ["Vers van de markt", "Sinds 1964", "Kwaliteit voor een eerlijke prijs"]},
}


@dataclass(frozen=True)
class RichInvoice:
    """The choices of a non-classic invoice family (what `_RichComposer` reads)."""
    family: str
    header: str                                  # sidebar | letterhead | grid | classic
    sidebar_side: str                            # left | right (header == sidebar)
    fields_layout: str                           # grid | style (the classic `fields_style`)
    grid_cols: int
    delivery: str                                # sidebar | below_buyer | beside_buyer
    delivery_first: bool                         # letterhead: delivery box left of the buyer box
    boxes: bool                                  # address blocks framed
    seller_caption: bool
    dates: tuple[str, ...]                       # extra dated / reference fields: order_date, delivery_date ...
    credit_mode: str                             # none | negative | trailing_minus ("120,00-") | parentheses
    credit_ref: bool                             # "relates to invoice X of D" (a distractor number and date)
    footer_full: bool                            # tax number, account holder in the footer
    sidebar_bank: bool
    labels: dict[str, str] = field(default_factory=dict)
    sections: tuple[str, ...] = ()               # group headings inside the item table ("" for none)
    section_totals: bool = False                 # a subtotal row under each group (not a line item)
    bilingual: bool = False                      # labels in the format's language / English
    payment_slip: bool = False                   # a payment slip reprinting IBAN, seller, invoice number, amount

    def describe(self) -> dict[str, object]:
        return {"family": self.family, "sections": list(self.sections), "section_totals": self.section_totals,
                "bilingual": self.bilingual, "payment_slip": self.payment_slip, "header": self.header, "sidebar_side": self.sidebar_side,
                "fields_layout": self.fields_layout, "grid_cols": self.grid_cols, "delivery": self.delivery,
                "delivery_first": self.delivery_first, "boxes": self.boxes, "seller_caption": self.seller_caption,
                "dates": list(self.dates), "credit_mode": self.credit_mode, "credit_ref": self.credit_ref,
                "footer_full": self.footer_full, "sidebar_bank": self.sidebar_bank, "labels": dict(self.labels)}


@dataclass(frozen=True)
class RichReceipt:
    """The choices of a non-classic receipt family (what the receipt composer reads)."""
    family: str
    slogan: str                                  # "" for none
    slogan_above: bool                           # slogan over the company line (else under it)
    branch: str                                  # "" for none (e.g. "Branch: Kepong")
    address_lines: int                           # 1..4 lines the address is printed over (0: as drawn)
    postcode: bool                               # False: the postcode is left out of the address
    served_by: bool                              # "Served by: <name>" (a person name as distractor)
    member_name: bool                            # "Member: <name>"
    service_pct: Decimal                         # 0: no service charge
    tendered: bool                               # "Tendered" line before the change
    savings: bool = False                        # "You saved 3.20" after the total (an amount distractor)
    labels: dict[str, str] = field(default_factory=dict)

    def describe(self) -> dict[str, object]:
        return {"family": self.family, "slogan": self.slogan, "slogan_above": self.slogan_above,
                "branch": self.branch, "address_lines": self.address_lines, "postcode": self.postcode,
                "served_by": self.served_by, "member_name": self.member_name, "service_pct": str(self.service_pct),
                "tendered": self.tendered, "savings": self.savings, "labels": dict(self.labels)}


def default_families(kind: str, split: str | None) -> tuple[str, ...]:
    """The families drawn when none are named: all of them, except on the dev split (classic only)."""
    if split == "dev":
        return ("classic",)
    return ALL_INVOICE_FAMILIES if kind == "invoice" else ALL_RECEIPT_FAMILIES


def resolve_families(kind: str, families: str | Sequence[str] | None, split: str | None) -> tuple[str, ...]:
    """Named families checked against the registry; "all" for every family, "new" for every family
    but classic (layouts a model trained on classic formats has never seen); None for the default."""
    known = ALL_INVOICE_FAMILIES if kind == "invoice" else ALL_RECEIPT_FAMILIES
    if families is None:
        return default_families(kind, split)
    if isinstance(families, str):
        families = known if families == "all" else known[1:] if families == "new" else \
            tuple(f.strip() for f in families.split(",") if f.strip())
    out = tuple(families)
    bad = [f for f in out if f not in known]
    if bad or not out:
        raise ValueError(f"{kind} families must be a non-empty subset of {known} (or 'all'), got {list(out)!r}")
    return out


def pick_family(seed: int, kind: str, families: Sequence[str]) -> str:
    """The family of format `seed` among `families` (its own random stream; a pure function of both)."""
    if len(families) == 1:
        return families[0]
    rng = random.Random(f"{kind}-family/{seed}")
    return rng.choices(list(families), weights=[_WEIGHTS.get(f, 1.0) for f in families])[0]


def _labels(rng: random.Random, table: dict[str, list[str]], upper: bool) -> dict[str, str]:
    out = {k: rng.choice(v) for k, v in table.items() if k != "sections"}
    return {k: v.upper() for k, v in out.items()} if upper else out


def apply_invoice_family(style: InvoiceStyle, family: str, seed: int, lang: str, loc: Locale) -> InvoiceStyle:
    """`style` (the classic style of `seed`) turned into `family`; classic comes back unchanged."""
    if family == "classic":
        return style
    rng = random.Random(f"invoice-family-style/{family}/{seed}")
    labels = _labels(rng, RICH_LABELS[lang], style.label_upper)
    header = {"sidebar": "sidebar", "letterhead": "letterhead", "grid_header": "grid"}.get(
        family, rng.choice(["sidebar", "letterhead", "grid", "classic"]))
    changes: dict[str, Any] = {"layout_family": family, "ship_to": True}
    fields = list(style.fields)
    dates: list[str] = []
    for key, p in (("order_date", 0.6), ("delivery_date", 0.6), ("due_date", 0.55), ("order_number", 0.4),
                   ("customer_number", 0.4), ("period", 0.25), ("buyer_vat", 0.3)):
        if key not in fields and rng.random() < (p + (0.3 if header == "grid" else 0.0)):
            dates.append(key)
    if "due_date" in dates:
        if style.due_place == "none":
            changes["due_place"] = "fields"
        else:
            dates.remove("due_date")
    # seller in the page header (the rich headers draw it); vat in the seller block moves nowhere
    if style.seller_pos == "footer":
        changes["seller_pos"] = "top_left"
    changes["bank_place"] = "footer"
    changes["footer_cols"] = 4
    if rng.random() < 0.7 and style.terms == "none":
        changes["terms"] = rng.choice(["days", "until"])
        if changes["terms"] == "until" and style.due_place == "none" and "due_date" not in dates:
            changes["due_place"] = "terms"
    credit_mode = "none"
    if family == "credit_note":
        changes["credit_p"] = 1.0
        changes["doc_discount_p"] = 0.0
        changes["deposit_p"] = 0.0
        credit_mode = rng.choice(["negative", "trailing_minus", "parentheses"])
    if family == "long_table":
        lo = rng.randint(20, 30)                         # at most 40 items, like the classic formats
        changes.update(items_range=(lo, min(40, lo + rng.randint(6, 15))), carry_forward=True, cont_header=True,
                       long_desc_p=min(style.long_desc_p, 0.15))
        if style.page_num == "none":
            changes["page_num"] = rng.choice(["footer_center", "footer_right", "header_right"])
    if family == "tax_summary":
        all_rates = [Decimal(r) for r in TAX_RATES.get(loc.country, ["0"])]
        if len(all_rates) > 1:
            changes.update(rates=tuple(all_rates), mixed_rates=True, zero_rated=False)
            cols = list(style.columns)
            if "tax_rate" not in cols:
                cols.insert(cols.index("line_total"), "tax_rate")
            changes["columns"] = tuple(cols)
        changes.update(tax_style="summary", tax_total_line=True)
    # "Rechnungsnummer / Invoice No." (multinational senders); the long labels need a full-width header
    bilingual = lang != "en" and rng.random() < 0.2 and header in ("letterhead", "grid")
    if bilingual:
        changes["fields_cols"] = 1
        en = vocab.INVOICE_LABELS["en"]
        labels_2 = dict(style.labels)
        for key in BILINGUAL_KEYS:
            second = rng.choice(en[key])
            labels_2[key] = f"{labels_2[key]} / {second.upper() if style.label_upper else second}"
        changes["labels"] = labels_2
        changes["title"] = labels_2["title"] if style.title == style.labels["title"] else style.title
    rich = RichInvoice(
        family=family, header=header, sidebar_side=rng.choice(["left", "right"]),
        fields_layout="grid" if header == "grid" or rng.random() < 0.3 else "style",
        grid_cols=rng.choice([3, 4, 4, 5]),
        delivery={"sidebar": rng.choice(["sidebar", "below_buyer"]),
                  "letterhead": "beside_buyer",
                  "grid": rng.choice(["beside_buyer", "below_buyer", "below_buyer"])}.get(
            header, rng.choice(["beside_buyer", "below_buyer"])),
        delivery_first=rng.random() < 0.3, boxes=rng.random() < 0.5, seller_caption=rng.random() < 0.4,
        dates=tuple(dates), credit_mode=credit_mode, credit_ref=family == "credit_note" and rng.random() < 0.85,
        footer_full=rng.random() < 0.7, sidebar_bank=header == "sidebar" and rng.random() < 0.6, labels=labels,
        sections=tuple(rng.sample(RICH_LABELS[lang]["sections"], 3)) if rng.random() < 0.3 else (),
        section_totals=rng.random() < 0.5, bilingual=bilingual, payment_slip=rng.random() < 0.2)
    changes["rich"] = rich
    new = replace(style, **changes)
    return fit_columns(new, loc) if "columns" in changes or bilingual else new


def apply_receipt_family(style: ReceiptStyle, family: str, seed: int, lang: str) -> ReceiptStyle:
    """The receipt style of `seed` turned into `family`; classic comes back unchanged."""
    if family == "classic":
        return style
    rng = random.Random(f"receipt-family-style/{family}/{seed}")
    upper = style.upper
    labels = _labels(rng, RICH_RECEIPT_LABELS[lang], upper)
    slogan = labels["slogan"] if family == "slogan" or rng.random() < 0.2 else ""
    rich = RichReceipt(
        family=family, slogan=slogan, slogan_above=rng.random() < 0.4,
        branch="" if family == "slogan" and rng.random() < 0.5 else labels["branch"],
        address_lines=rng.choice([1, 2, 3, 4, 0]) if family != "rich_totals" else rng.choice([0, 2, 3]),
        postcode=rng.random() < 0.75, served_by=rng.random() < 0.6, member_name=rng.random() < 0.4,
        service_pct=Decimal(rng.choice(["5", "6", "10"])) if family == "rich_totals" or rng.random() < 0.15
        else Decimal(0),
        tendered=family == "rich_totals" or rng.random() < 0.3, labels=labels,
        savings=rng.random() < (0.5 if family == "rich_totals" else 0.15))
    changes: dict[str, Any] = {"layout_family": family, "rich": rich}
    if family == "rich_totals":                  # cash rounding to 0.05 is printed outside Malaysia too (CH, NL, BE)
        changes.update(payment=rng.choice(["cash", "mixed"]), items_count=rng.random() < 0.5,
                       rounding=style.rounding or rng.random() < 0.4)
    return replace(style, **changes)
