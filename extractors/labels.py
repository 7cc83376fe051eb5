"""Label vocabulary: the words documents print next to a field's value, in several languages.

The generator (baseline and model features) asks "how much does the text around this span read like
the label of field F?". The vocabulary for F comes from, in order:

1. the schema's own words: `x-docassay: {"labels": [...]}` on the field, then its name split into
   words (`seller_vat_id` -> "seller vat id") and its `description`;
2. a built-in multilingual lexicon (English, German, French, Spanish, Dutch, Malay) for the field
   *concepts* business documents share. A field maps to a concept when its name (or an alias) is the
   concept's name; custom schemas with other names still get their own words from (1).

Labels are compared after `fold` (casefold, accents stripped, punctuation to spaces).
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping

__all__ = ["fold_label", "FieldSpec", "field_specs", "LEXICON", "COLUMN_LEXICON", "label_score"]

LEXICON: dict[str, tuple[str, ...]] = {
    "invoice_number": (
        "invoice number", "invoice no", "invoice nr", "invoice #", "inv no", "inv number", "invoice",
        "bill no", "bill number", "document no", "receipt no", "receipt number",
        "rechnungsnummer", "rechnungs nr", "rechnung nr", "rechnungsnr", "re nr", "rechnung", "belegnummer", "beleg nr",
        "numero de facture", "n de facture", "facture n", "no facture", "facture",
        "numero de factura", "n factura", "factura n", "num factura", "factura",
        "factuurnummer", "factuur nr", "factuurnr", "factuur",
        "no resit", "no invois", "invois no", "nr",
    ),
    "issue_date": (
        "invoice date", "date", "issue date", "date of issue", "billing date", "dated", "date issued",
        "rechnungsdatum", "datum", "belegdatum", "ausstellungsdatum", "vom", "rechnung vom",
        "date de facture", "date de facturation", "date d emission", "date facture", "du",
        "fecha", "fecha de factura", "fecha de emision", "fecha factura",
        "factuurdatum", "datum factuur", "tarikh", "tarikh invois",
    ),
    "due_date": (
        "due date", "payment due", "due", "pay by", "payable by", "payment due date", "due on",
        "falligkeitsdatum", "fallig", "fallig am", "zahlbar bis", "zahlungsziel", "faellig",
        "date d echeance", "echeance", "a payer avant le", "date limite de paiement",
        "fecha de vencimiento", "vencimiento", "pagar antes de",
        "vervaldatum", "uiterste betaaldatum", "te betalen voor", "tarikh akhir",
        "vervaldag", "uiterlijk te voldoen op", "te voldoen op", "te voldoen voor", "betaling voor",
        "payable le", "au plus tard le", "date limite de reglement", "vence", "fecha limite de pago",
        "pagar antes del", "pago antes del", "remit payment by",
    ),
    "seller_name": (
        "seller", "vendor", "supplier", "from", "sold by", "issued by", "company", "name",
        "verkaufer", "lieferant", "rechnungssteller", "firma", "absender",
        "fournisseur", "vendeur", "emetteur", "societe",
        "proveedor", "vendedor", "emisor", "empresa",
        "leverancier", "verkoper", "afzender", "bedrijf", "syarikat",
    ),
    "seller_vat_id": (
        "vat id", "vat no", "vat number", "vat reg no", "vat registration number", "tax id", "vat",
        "ust id", "ust idnr", "ust id nr", "umsatzsteuer id", "ust identnr", "ustidnr", "ust identifikationsnummer",
        "tva intracommunautaire", "n tva", "numero de tva", "no tva", "tva",
        "nif", "cif", "n iva", "numero de iva",
        "btw nummer", "btw nr", "btw id", "btw", "uid", "uid nr", "mwst nr", "mwst nummer", "che", "gst reg no", "gst id", "gst no", "sst no", "co reg no",
    ),
    "buyer_name": (
        "bill to", "billed to", "buyer", "customer", "sold to", "invoice to", "client", "name", "attn",
        "kaufer", "kunde", "rechnungsempfanger", "leistungsempfanger", "empfanger", "an",
        "client", "facture a", "destinataire", "acheteur",
        "cliente", "facturar a", "comprador", "destinatario",
        "klant", "afnemer", "factuur aan", "koper", "pelanggan",
    ),
    "currency": ("currency", "wahrung", "devise", "monnaie", "moneda", "divisa", "valuta", "mata wang"),
    "net_total": (
        "subtotal", "sub total", "net amount", "net total", "total net", "total excl vat", "total excluding vat",
        "total before tax", "amount excl tax", "net", "total excl tax", "taxable amount",
        "nettobetrag", "summe netto", "netto", "gesamtbetrag netto", "warenwert", "zwischensumme", "nettosumme",
        "summe positionen", "positionssumme", "rechnungssumme ohne ust", "rechnungssumme netto", "summe ohne ust",
        "gesamtsumme netto", "nettorechnungsbetrag", "total without vat", "total ex vat", "total", "montant ht", "sous total", "total hors taxes",
        "base imponible", "subtotal", "importe neto", "total sin iva",
        "totaal excl btw", "netto bedrag", "subtotaal", "totaal exclusief btw", "grondslag",
        "jumlah kecil", "total excluding gst",
    ),
    "tax_total": (
        "vat", "tax", "sales tax", "gst", "vat amount", "total tax", "tax amount", "total vat",
        "mwst", "umsatzsteuer", "ust", "steuerbetrag", "ust betrag", "mwst betrag", "umsatzsteuerbetrag",
        "steuer gesamt", "gesamtsteuerbetrag", "mehrwertsteuer", "summe ust", "steuer",
        "tva", "montant tva", "total tva", "iva", "cuota iva", "importe iva", "total iva",
        "btw", "btw bedrag", "totaal btw", "sst", "cukai", "gst amount",
    ),
    "gross_total": (
        "total", "total due", "amount due", "grand total", "balance due", "total amount", "invoice total",
        "amount payable", "total payable", "total to pay", "total incl vat", "total including vat",
        "gesamtbetrag", "bruttobetrag", "rechnungsbetrag", "zahlbetrag", "endbetrag", "summe", "gesamtsumme",
        "zu zahlen", "brutto", "gesamt", "rechnungssumme brutto", "bruttosumme", "gesamtsumme brutto",
        "rechnungssumme", "bruttorechnungsbetrag", "zahlbetrag", "total due", "total payable", "total ttc", "montant ttc", "net a payer", "montant total",
        "total a payer", "total a pagar", "importe total", "total factura",
        "totaal", "totaalbedrag", "te betalen", "totaal incl btw", "factuurbedrag", "summe brutto", "jumlah", "jumlah besar",
    ),
    "company": ("company", "company name", "store", "shop", "merchant", "seller", "sold by"),
    "date": ("date", "tarikh", "datum", "fecha", "date time", "dated", "bill date", "receipt date", "invoice date"),
    "address": ("address", "alamat", "adresse", "direccion", "adres", "location"),
    "total": (
        "total", "grand total", "total amount", "amount due", "total due", "net total", "total rm",
        "total incl gst", "total inclusive gst", "rounded total", "total payable", "jumlah", "jumlah besar",
        "total sales", "total amt", "nett total", "summe", "gesamt", "total a payer", "totaal", "te betalen",
        "total a pagar",
    ),
}

# Aliases: other field names that mean one of the concepts above.
ALIASES: dict[str, str] = {
    "invoice_no": "invoice_number", "invoice_id": "invoice_number", "number": "invoice_number",
    "date_issued": "issue_date", "invoice_date": "issue_date",
    "date_due": "due_date", "payment_due_date": "due_date",
    "vendor_name": "seller_name", "supplier_name": "seller_name", "issuer": "seller_name",
    "vat_id": "seller_vat_id", "vat": "seller_vat_id",
    "customer_name": "buyer_name", "bill_to": "buyer_name",
    "subtotal": "net_total", "amount_untaxed": "net_total",
    "vat_total": "tax_total", "amount_tax": "tax_total",
    "total_amount": "gross_total", "amount": "gross_total", "grand_total": "gross_total",
    "store_name": "company", "merchant": "company",
}

COLUMN_LEXICON: dict[str, tuple[str, ...]] = {
    "description": (
        "description", "item", "items", "product", "article", "service", "services", "details", "particulars",
        "item description", "bezeichnung", "beschreibung", "artikel", "leistung", "artikelbezeichnung", "produkt",
        "position", "designation", "libelle", "produit", "article", "prestation",
        "descripcion", "concepto", "articulo", "producto", "denominacion", "servicio",
        "omschrijving", "artikel", "product", "omschr", "dienst", "perkara", "keterangan",
    ),
    "quantity": (
        "qty", "quantity", "qnty", "units", "menge", "anzahl", "anz", "stk", "quantite", "qte", "nombre",
        "cantidad", "cant", "uds", "unidades", "aantal", "hoeveelheid", "kuantiti",
    ),
    "unit_price": (
        "unit price", "price", "rate", "unit cost", "price per unit", "einzelpreis", "preis", "e preis", "ep",
        "stuckpreis", "preis je einheit", "nettopreis", "prix unitaire", "pu", "prix", "prix u", "prix unit", "prix unit ht",
        "precio unitario", "precio", "p unit", "importe unitario", "prijs", "stukprijs", "eenheidsprijs",
        "prijs per stuk", "harga", "harga seunit",
    ),
    "line_total": (
        "amount", "total", "line total", "net amount", "subtotal", "ext price", "extended price", "extension",
        "line amount", "gesamtpreis", "gp", "betrag", "gesamt",
        "nettobetrag", "summe", "gesamtbetrag", "entgelt", "positionsbetrag", "nettowert", "betrag netto",
        "montant", "total ht", "montant ht", "importe", "importe neto", "total", "bedrag", "totaal",
        "bedrag excl btw", "jumlah", "amaun",
    ),
}

_PUNCT = re.compile(r"[^\w#%]+", re.UNICODE)


_ABBREV = re.compile(r"(?<![\w.])(?:[^\W\d_]\.){2,}(?:[^\W\d_](?![\w]))?")


@lru_cache(maxsize=65536)
def fold_label(text: str) -> str:
    """Casefold, strip accents, join dotted abbreviations ("B.T.W." -> "btw"), turn punctuation
    into spaces, collapse whitespace."""
    t = _ABBREV.sub(lambda m: m.group(0).replace(".", "") + " ", text[:200])
    t = unicodedata.normalize("NFKD", t).casefold()
    t = "".join(ch for ch in t if not unicodedata.combining(ch))
    t = t.replace("ß", "ss").replace("°", " ").replace("º", " ").replace("_", " ")
    return " ".join(_PUNCT.sub(" ", t).split())


def _token_match(token: str, others: list[str], exact: set[str] | frozenset[str] = frozenset()) -> float:
    """1 for an equal token, 0.8 when one is an abbreviation (prefix of 3+ letters) of the other.
    `exact`: `set(others)` when the caller has it (an equal token is then found without the loop)."""
    if token in exact:
        return 1.0
    best = 0.0
    for o in others:
        if o == token:
            return 1.0
        short, long_ = (o, token) if len(o) < len(token) else (token, o)
        if len(short) >= 3 and long_.startswith(short):
            best = 0.8
    return best


@dataclass(frozen=True)
class FieldSpec:
    """What the generator needs to know about one schema field."""
    name: str
    type: str                  # date | amount | number | integer | identifier | currency | text | boolean
    concept: str | None        # key into LEXICON / COLUMN_LEXICON, or None
    labels: tuple[str, ...]    # folded label phrases, most specific first
    description: str = ""
    required: bool = False
    multiline: bool = False    # addresses and other values printed over several lines


def _field_type(name: str, prop: Mapping[str, object]) -> str:
    t = prop.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "string")
    xd = prop.get("x-docassay") if isinstance(prop.get("x-docassay"), Mapping) else {}
    if isinstance(xd, Mapping) and isinstance(xd.get("value_type"), str):
        return str(xd["value_type"])
    if t == "string":
        if prop.get("format") == "date":
            return "date"
        words = set(name.lower().split("_"))
        if "currency" in words:
            return "currency"
        if words & {"number", "no", "id", "nr", "ref", "reference", "code"}:
            return "identifier"
        return "text"
    if t == "number":
        return "number" if name in {"quantity", "qty"} else "amount"
    if t == "integer":
        return "integer"
    if t == "boolean":
        return "boolean"
    return "text"


def field_specs(properties: Mapping[str, Mapping[str, object]], required: tuple[str, ...] | list[str] = (),
                *, columns: bool = False) -> list[FieldSpec]:
    """FieldSpecs for the scalar properties of a JSON Schema object (arrays are handled as tables)."""
    out: list[FieldSpec] = []
    lex = COLUMN_LEXICON if columns else LEXICON
    for name, prop in properties.items():
        if prop.get("type") in ("array", "object"):
            continue
        concept = name if name in lex else ALIASES.get(name)
        if concept is not None and concept not in lex:
            concept = None
        xd = prop.get("x-docassay") if isinstance(prop.get("x-docassay"), Mapping) else {}
        own = [fold_label(x) for x in (xd.get("labels") or []) if isinstance(x, str)] if isinstance(xd, Mapping) else []
        own.append(fold_label(name))
        labels = list(dict.fromkeys(own + [fold_label(x) for x in lex.get(concept or "", ())]))
        multiline = bool(isinstance(xd, Mapping) and xd.get("multiline")) or concept == "address"
        out.append(FieldSpec(name=name, type=_field_type(name, prop), concept=concept, labels=tuple(l for l in labels if l),
                             description=str(prop.get("description", "")), required=name in required,
                             multiline=multiline))
    return out


@lru_cache(maxsize=4096)
def _label_forms(labels: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...], int, str, str, str, float], ...]:
    """Per non-empty label, what `label_score` compares with: its tokens, length, " label",
    "label ", " label " and its length weight (computed once per label tuple, not per text)."""
    return tuple((lab, tuple(lab.split()), len(lab), " " + lab, lab + " ", f" {lab} ", 0.9 + 0.1 * min(1.0, len(lab) / 12))
                 for lab in labels if lab)


@lru_cache(maxsize=262144)
def label_score(text: str, labels: tuple[str, ...]) -> tuple[float, str]:
    """How well `text` (the words printed next to a value) reads as one of `labels`.

    1.0 when the folded text equals a label; otherwise the best of: the text ends with the label as
    whole words (labels sit right before values), contains it, or shares most tokens with it.
    Longer labels earn slightly more, so "invoice number" beats "number". Returns (score, label).
    """
    t = fold_label(text)
    if not t:
        return 0.0, ""
    best, best_label = 0.0, ""
    tt = t.split()
    exact = set(tt)
    matched: dict[str, float] = {}          # _token_match of a label token against this text, once per token
    padded = f" {t} "
    n_t = max(len(t), 1)
    for lab, lt, n_lab, space_lab, lab_space, padded_lab, weight in _label_forms(labels):
        cover = min(1.0, n_lab / n_t)
        if t == lab:
            s = 1.0
        elif t.endswith(space_lab):
            s = 0.6 + 0.35 * cover            # labels sit right before their values: the end counts most
        elif t.startswith(lab_space):
            s = 0.35 + 0.35 * cover
        elif padded_lab in padded:
            s = 0.3 + 0.3 * cover
        else:
            common = 0.0
            for a in lt:
                m = matched.get(a)
                if m is None:
                    m = matched[a] = _token_match(a, tt, exact)
                common += m
            if common and len(lt) == len(tt):
                s = 0.95 * common / len(lt)          # every token, some abbreviated ("Rechn.-Nr.")
            else:
                s = 0.7 * common / max(len(lt), len(tt)) if common else 0.0
        s *= weight
        if s > best:
            best, best_label = s, lab
    return best, best_label
