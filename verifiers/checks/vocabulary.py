"""What printed words MEAN, for the checks: cue phrases per meaning in the languages of the data
(English, German, French, Dutch, Spanish, Malay), folded (`fold`: case and accents folded,
punctuation to spaces).

The extractors have their own label vocabulary (extractors.labels) for FINDING a field; this one
is for JUDGING a reading, so it also names what a value must NOT be next to: a delivery date, an
order or customer number, a discount date, a document's version line, cash tendered, a delivery
address, a bank block. Verifiers never import the extractors, hence a vocabulary of their own.

    MEANINGS        meaning -> cue phrases
    meanings_in(text)        -> [(meaning, phrase, start, end)], longest phrases first, no overlaps
    heading_meaning(text)    -> the meaning of a short heading line ("Rechnungsempfänger:"), or None
    tax_inclusion(text)      -> gross_total / net_total for "total incl. GST" / "amount before tax"
    ROLE_MEANING    field role (verifiers.checks.fields) -> the meaning its label should have
    RIVALS          field role -> meanings that contradict it
    VETO            meanings that contradict a date or an amount anywhere on its line
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["MEANINGS", "READER_WORDS", "BUYER_WORDS", "ROLE_MEANING", "SUPPORTS", "RIVALS", "VETO", "fold", "meanings_in", "heading_meaning",
           "is_label_text", "tax_inclusion", "LEGAL_WORDS", "is_legal_line"]

MEANINGS: dict[str, tuple[str, ...]] = {
    # parties and blocks
    "seller": ("seller", "vendor", "supplier", "sold by", "issued by", "from", "verkaufer", "lieferant",
               "rechnungssteller", "rechnungsaussteller", "absender", "fournisseur", "vendeur", "emetteur",
               "leverancier", "verkoper", "afzender", "proveedor", "vendedor", "emisor", "penjual"),
    "buyer": ("bill to", "billed to", "buyer", "customer", "sold to", "invoice to", "invoice address",
              "billing address", "client", "kaufer", "kunde", "rechnungsempfanger", "leistungsempfanger",
              "empfanger", "rechnungsadresse", "rechnungsanschrift", "acheteur", "facture a", "facturer a",
              "destinataire", "adresse de facturation", "klant", "afnemer", "koper", "factuur aan",
              "factuuradres", "cliente", "comprador", "facturar a", "pembeli", "pelanggan"),
    "delivery": ("ship to", "shipped to", "deliver to", "delivery address", "shipping address", "consignee",
                 "lieferadresse", "lieferanschrift", "lieferung an", "warenempfanger", "versandadresse",
                 "adresse de livraison", "livrer a", "livraison", "afleveradres", "leveringsadres",
                 "direccion de entrega", "enviar a", "alamat penghantaran", "livre a", "delivered to", "geliefert an",
                 "geleverd aan", "verzendadres", "leveradres", "entregar en", "direccion de envio"),
    "bank": ("iban", "bic", "swift", "bank", "bankverbindung", "kontoinhaber", "konto", "kontonummer",
             "account number", "account no", "sort code", "routing", "banque", "rib", "rekening",
             "rekeningnummer", "payment details", "zahlungsinformationen", "bankleitzahl", "blz",
             "cuenta", "akaun", "account holder", "account name", "titulaire du compte", "rekeninghouder",
             "titular de la cuenta"),
    "payment_terms": ("payment terms", "terms", "terms of payment", "zahlungsbedingungen", "zahlungsbedingung",
                      "conditions de paiement", "conditions de reglement", "betalingsvoorwaarden",
                      "betalingscondities", "condiciones de pago", "terma"),
    "contact": ("tel", "telephone", "phone", "fax", "email", "e mail", "mail", "web", "www", "mobile",
                "telefon", "telefax", "contact", "ansprechpartner", "kontakt", "handy"),
    # dates
    "issue_date": ("invoice date", "date", "issue date", "date of issue", "billing date", "dated",
                   "date issued", "document date", "receipt date", "bill date", "rechnungsdatum", "datum",
                   "belegdatum", "ausstellungsdatum", "vom", "date de facture", "date de facturation",
                   "date d emission", "du", "factuurdatum", "fecha", "fecha de factura", "tarikh",
                   "tarikh invois", "gutschriftsdatum", "fecha de expedicion", "fecha expedicion", "fecha de emision"),
    "due_date": ("due date", "payment due", "due", "pay by", "payable by", "due on", "payment date",
                 "falligkeitsdatum", "falligkeit", "fallig", "fallig am", "faellig", "zahlbar bis", "zahlungsziel",
                 "zahlbar am", "date d echeance", "echeance", "a payer avant le", "date limite de paiement",
                 "vervaldatum", "uiterste betaaldatum", "te betalen voor", "fecha de vencimiento",
                 "vencimiento", "tarikh akhir", "zahlbar", "payable on or before", "payable before", "pay before",
                 "due by", "a regler avant", "te voldoen voor", "betrag bis zum", "bis spatestens",
                 # a due date printed in a payment sentence or under a short label
                 "remit payment by", "vervaldag", "te voldoen op", "uiterlijk te voldoen op", "betalen voor",
                 "betaling voor", "payable le", "au plus tard le", "date limite de reglement", "vence",
                 "vence el", "fecha limite de pago", "fecha de pago", "pagar antes del", "pago antes del",
                 "date limite", "fecha limite"),
    "delivery_date": ("delivery date", "date of delivery", "delivered", "ship date", "shipping date",
                      "service date", "date of supply", "supply date", "service period", "lieferdatum",
                      "leistungsdatum", "liefer und leistungsdatum", "leistungszeitraum", "lieferzeitraum",
                      "abrechnungszeitraum", "date de livraison", "date de prestation", "leverdatum",
                      "leveringsdatum", "fecha de entrega", "tarikh penghantaran", "fecha de operacion", "fecha operacion",
                      "fecha de envio", "fecha de prestacion", "date d expedition", "datum levering",
                      "datum van levering", "date livraison", "livre le"),
    "order": ("order", "order date", "order no", "order number", "purchase order", "po number", "po",
              "bestellung", "bestelldatum", "bestellnummer", "bestell nr", "auftrag", "auftragsnummer",
              "auftragsdatum", "commande", "bon de commande", "bestelling", "bestelnummer", "pedido",
              "date de commande", "orderdatum", "ordernummer", "besteldatum", "orden de compra", "ordine",
              "numero ordine", "data ordine", "ordine di acquisto", "auftragsnr", "auftrags nr", "bestellnr",
              "order nr", "ordernr", "bestelnr", "so number", "so no", "so nr", "sales order", "sales order no",
              "sales order number"),
    "discount": ("skonto", "discount", "escompte", "remise", "korting", "kredietbeperking", "betalingskorting",
                 "sconto", "pronto pago", "rabatt", "nachlass", "diskaun",
                 "descuento", "early payment", "savings", "saving", "total savings", "you saved", "you save", "jimat",
                 "ahorro", "ahorro total", "total ahorro", "ersparnis", "gesamtersparnis", "sie sparen",
                 "economie", "economies", "vous economisez", "total economies"),
    "document_meta": ("version", "stand", "stylesheet", "druckdatum", "erstellt am", "card expiry", "expiry",
                      "expiry date", "exp date", "valid thru", "valid through", "ablaufdatum",
                      "created", "generated", "valid until", "gultig bis", "gultig ab", "seite", "page",
                      "page de", "pagina", "as of"),
    # amounts
    "net_total": ("net", "subtotal", "sub total", "net amount", "total excl vat",
                  "total excluding vat", "total before tax", "amount excl tax", "taxable amount", "netto",
                  "nettobetrag", "summe netto", "zwischensumme", "warenwert", "positionssumme",
                  "summe positionen", "nettosumme", "gesamtsumme netto", "rechnungssumme ohne ust",
                  "ohne ust", "ohne mwst", "montant ht", "total ht", "hors taxes", "sous total", "subtotaal",
                  "excl btw", "totaal excl btw", "base imponible", "jumlah kecil", "total excluding gst",
                  "steuerbasis", "basisbetrag", "bemessungsgrundlage", "grundbetrag", "grondslag"),
    "tax_total": ("vat", "tax", "sales tax", "gst", "sst", "vat amount", "total tax", "tax amount",
                  "total vat", "mwst", "umsatzsteuer", "ust", "steuerbetrag", "mwst betrag",
                  "umsatzsteuerbetrag", "mehrwertsteuer", "steuer", "tva", "montant tva", "total tva",
                  "btw", "btw bedrag", "totaal btw", "iva", "cuota iva", "cukai", "gst amount", "tax total",
                  "total gst", "gst total", "vat total", "mwst summe", "summe mwst", "summe ust"),
    "gross_total": ("total", "grand total", "total amount",
                    "invoice total", "total incl vat",
                    "total including vat", "gesamtbetrag", "bruttobetrag", "brutto", "endbetrag",
                    "rechnungsbetrag", "gesamt", "gesamtsumme", "bruttosumme",
                    "rechnungssumme", "total ttc", "montant ttc", "montant total",
                    "totaal", "totaalbedrag", "factuurbedrag", "importe total",
                    "jumlah", "jumlah besar", "rounded total", "total rm", "summe",
                    "total factura", "total after rounding", "after rounding", "total rounded"),
    # Column headers of an items table (a header cell read into an item's description).
    "column_header": ("description", "bezeichnung", "beschreibung", "artikelbezeichnung", "menge", "quantity", "qty",
                      "einzelpreis", "unit price", "gesamtpreis", "positionsbetrag", "pos", "position", "designation",
                      "quantite", "prix unitaire", "omschrijving", "aantal", "stukprijs", "warenwert",
                      "art nr", "artikelnummer", "artikel nr", "article no", "item no", "sku", "gtin", "ean",
                      "getlinetradeagreementbruttopreis", "producto", "no producto", "cod producto", "articulo",
                      "cod articulo", "cantidad", "precio unitario", "concepto", "denominacion", "libelle",
                      "prix unitaire ht", "eenheidsprijs", "prijs per stuk"),
    # What is left to pay: the gross total, unless something was paid before (a prepayment, a deposit).
    "amount_due": ("amount due", "balance due", "total due", "amount payable", "total payable", "total to pay",
                   "zahlbetrag", "zu zahlen", "net a payer", "a payer", "te betalen", "total a pagar", "a pagar",
                   "restbetrag", "offener betrag", "solde", "balance"),
    # "Net total" is the final amount on many receipts and the pre-tax total on invoices: no meaning
    # either way, so it neither supports nor contradicts.
    "ambiguous_total": ("net total", "nett total", "total net", "total sales"),
    "payment": ("cash", "change", "tendered", "paid", "amount paid", "payment", "bar", "gegeben", "ruckgeld",
                "wechselgeld", "rendu", "rendu monnaie", "contant", "wisselgeld", "tunai", "baki",
                "prepaid", "prepayment", "deposit", "anzahlung", "already paid", "bereits gezahlt",
                "bereits bezahlt", "voraus", "acompte", "card", "visa", "mastercard", "credit card",
                "rounding", "rounding adj", "round", "verse", "montant verse", "especes", "paye", "monnaie rendue",
                "efectivo", "entregado", "cambio", "pagado", "betaald", "terug", "bezahlt", "zuruck",
                "contanti", "resto"),
    # identifiers
    "vat_id": ("vat id", "vat no", "vat number", "vat reg no", "vat registration number", "vat reg",
               "vat registration no", "vat registration nr", "vat reg nr", "ust id", "ust idnr", "ust id nr", "ustidnr", "umsatzsteuer id", "ust ident nr",
               "ust identifikationsnummer", "umsatzsteuer identifikationsnummer", "tva intracommunautaire",
               "n tva", "numero de tva", "no tva", "btw nummer", "btw nr", "btw id", "nif", "cif",
               "numero de iva", "uid", "uid nr", "mwst nr", "gst reg no", "gst id", "gst no", "sst no",
               "sst reg no", "tax id", "vat", "identifiant tva", "id tva", "tva intra", "tva intracom", "numero tva",
               "btw identificatienummer", "mwst nummer", "nif iva"),
    "tax_number": ("steuernummer", "steuer nr", "st nr", "stnr", "steuer id", "finanzamt", "tax office",
                   "tax number", "tax no", "tax nr", "tax reference", "tax ref", "siren", "siret", "kvk", "kvk nummer", "handelsregister",
                   "handelsregisternummer", "registergericht", "amtsgericht", "hrb", "hra", "co reg no",
                   "company no", "company reg", "registration no", "reg no", "reg nr", "weee", "weee reg nr",
                   "eori", "gln", "gtin", "ean", "globale nummer", "numero fiscal", "no fiscal", "n fiscal",
                   "fiscaal nummer"),
    "document_number": ("invoice number", "invoice no", "invoice nr", "invoice", "inv no", "bill no",
                        "bill number", "document no", "document number", "receipt no", "receipt number",
                        "credit note no", "credit note", "rechnungsnummer", "rechnungs nr", "rechnung nr",
                        "rechnungsnr", "re nr", "rechnung", "belegnummer", "beleg nr", "gutschrift",
                        "gutschriftsnummer", "numero de facture", "facture n", "no facture", "facture", "avoir",
                        "factuurnummer", "factuur nr", "factuurnr", "factuur", "creditnota", "no resit",
                        "no invois", "invois no", "numero de factura", "factura"),
    "other_number": ("customer no", "customer number", "customer id", "account", "kundennummer", "kunden nr",
                     "kundennr", "kd nr", "kdnr", "debitor", "debitor nr", "debitorennummer", "debitorennr",
                     "code client", "no cliente", "numero de cliente", "cliente no", "bl", "delivery note", "lieferschein", "lieferscheinnummer", "reference",
                     "your reference", "ihr zeichen", "unser zeichen", "referenz", "projekt", "project",
                     "contract", "vertrag", "vertragsnummer", "mandat", "mandatsreferenz", "glaubiger id",
                     "creditor id", "article", "artikel", "art nr", "sku", "no client", "numero client",
                     "klantnummer", "table", "cashier", "kasse", "terminal", "member",
                     # the invoice a credit note refers to is not its own number
                     "ref facture", "reference facture", "facture d origine", "facture initiale",
                     "original invoice", "invoice reference", "referenced invoice", "related invoice",
                     "bezugsrechnung", "ursprungsrechnung", "originalrechnung", "zu rechnung",
                     "bezug rechnung", "oorspronkelijke factuur", "factura original", "factura rectificada",
                     "fattura originale", "originele factuur", "avoir sur facture",
                     # delivery notes and contracts, which carry numbers and dates of their own
                     "bon de livraison", "albaran", "pakbon", "leverbon", "documento di trasporto",
                     "contrat", "contrato", "contratto"),
}

_TAX_WORDS = ("tax", "taxes", "vat", "gst", "sst", "mwst", "ust", "steuer", "umsatzsteuer", "tva", "taxe", "taxes",
              "btw", "iva", "cukai")
for _neg in ("excl", "excluding", "exclusive", "without", "before", "ex", "ohne", "exkl", "sans", "hors",
             "sin", "zonder", "exclusief", "tanpa"):
    MEANINGS["net_total"] += tuple(f"{_neg} {t}" for t in _TAX_WORDS) + tuple(f"total {_neg} {t}" for t in _TAX_WORDS) \
        + tuple(f"amount {_neg} {t}" for t in _TAX_WORDS) + tuple(f"total sales {_neg} {t}" for t in _TAX_WORDS)
for _inc in ("incl", "including", "inclusive", "inkl", "inklusive", "with", "avec", "con", "incluido", "inclusief",
             "met", "termasuk"):
    MEANINGS["gross_total"] += tuple(f"{_inc} {t}" for t in _TAX_WORDS) + tuple(f"total {_inc} {t}" for t in _TAX_WORDS)

_INCL = frozenset({"incl", "including", "inclusive", "includes", "included", "inkl", "inklusive", "ttc",
                   "inclusief", "termasuk", "incluido", "incluida", "incluye", "avec"})
_EXCL = frozenset({"excl", "excluding", "exclusive", "exkl", "ohne", "without", "before", "sans", "hors", "ht",
                   "sin", "zonder", "exclusief", "tanpa"})
_TOTAL_WORDS = frozenset({"total", "totaal", "amount", "summe", "gesamt", "gesamtbetrag", "betrag", "montant",
                          "importe", "bedrag", "jumlah", "sales", "sum", "grand"})


def tax_inclusion(text: str) -> str | None:
    """"gross_total" for a total said to include tax ("TOTAL INCL. OF GST", "Gesamtbetrag inkl.
    MwSt."), "net_total" for an amount said to exclude it ("Total sin IVA", "Amount before tax",
    "montant HT"), "tax_total" for the tax a total is said to include ("GST @6% included in total"),
    None otherwise. An inclusion without a total word ("incl. GST 6 %") says nothing here."""
    seq = fold(text).split()
    words = set(seq)
    taxed = bool(words & set(_TAX_WORDS)) or bool(words & {"ttc", "ht"})
    if not taxed:
        return None
    if words & _EXCL:
        return "net_total"
    if words & _INCL and words & (_TOTAL_WORDS | {"ttc"}):
        first_tax = min(i for i, w in enumerate(seq) if w in _TAX_WORDS or w in ("ttc", "ht"))
        first_total = min((i for i, w in enumerate(seq) if w in _TOTAL_WORDS), default=len(seq))
        if first_tax < first_total and "ttc" not in words:
            return "tax_total"              # "GST @6% included in total": the tax the total includes
        return "gross_total"
    return None


# The meaning a field of each role should be labelled with.
# Words that address the reader ("Uw BTW-nummer", "Your VAT ID", "Ihre USt-IdNr.", "Su NIF"): a label
# with them names the buyer's value on the seller's document.
READER_WORDS = frozenset({"your", "uw", "ihre", "ihr", "votre", "su", "vuestro"})
# Words that make the label right after them the buyer's ("Kunden-USt-IdNr.", "Customer VAT no."), folded.
BUYER_WORDS = frozenset({"kunden", "kunde", "customer", "customers", "client", "klant", "cliente", "buyer",
                         "kaufer", "acheteur", "afnemer", "comprador"})
ROLE_MEANING = {
    "seller_name": "seller", "buyer_name": "buyer", "seller_address": "seller", "buyer_address": "buyer",
    "seller_vat_id": "vat_id", "buyer_vat_id": "vat_id", "iban": "bank", "bic": "bank",
    "document_number": "document_number", "issue_date": "issue_date", "due_date": "due_date",
    "delivery_date": "delivery_date", "net_total": "net_total", "tax_total": "tax_total",
    "gross_total": "gross_total",
}
# Meanings that support a role besides its own (a total payable is the gross total unless something
# was paid in advance: evidence for it, but no proof).
SUPPORTS = {"gross_total": ("amount_due",)}
_DATES = ("issue_date", "due_date", "delivery_date", "order", "discount", "document_meta")
_AMOUNTS = ("net_total", "tax_total", "gross_total", "payment", "discount")
_IDS = ("vat_id", "tax_number", "document_number", "other_number", "bank", "order", "contact")
_NAMES = ("payment_terms", "bank", "contact", "delivery")
RIVALS: dict[str, tuple[str, ...]] = {
    "issue_date": tuple(m for m in _DATES if m != "issue_date"),
    "due_date": tuple(m for m in _DATES if m != "due_date"),
    "delivery_date": tuple(m for m in _DATES if m not in ("delivery_date",)),
    "net_total": tuple(m for m in _AMOUNTS if m != "net_total"),
    "tax_total": ("payment", "discount"),          # "MwSt" also labels net and gross lines ("inkl. MwSt")
    "gross_total": ("net_total", "tax_total", "payment", "discount"),
    "seller_vat_id": tuple(m for m in _IDS if m != "vat_id") + ("buyer",),     # "USt-IdNr. Kunde", "N° TVA client"
    "buyer_vat_id": tuple(m for m in _IDS if m != "vat_id") + ("seller",),
    "document_number": tuple(m for m in _IDS if m != "document_number"),
    "seller_name": _NAMES + ("buyer",),
    "buyer_name": _NAMES + ("seller",),
}
# Meanings that contradict a date or an amount wherever they stand on its line ("... 2% Skonto",
# "Stylesheet ... Version 2.1 vom 24.03.2020").
VETO = {"issue_date": ("document_meta", "discount"), "due_date": ("document_meta", "discount"),
        "delivery_date": ("document_meta",)}

# Legal forms and trade words of company names (folded), in the data's countries.
LEGAL_WORDS = frozenset({
    "haftungsbeschrankt",
    "gmbh", "ag", "kg", "ohg", "gbr", "ug", "ek", "ev", "ltd", "limited", "llc", "llp", "inc", "corp", "corporation",
    "co", "company", "plc", "pty", "sa", "sas", "sarl", "sprl", "srl", "spa", "bv", "nv", "vof", "aps", "sdn", "bhd",
    "berhad", "sb", "s", "b", "enterprise", "enterprises", "trading", "restaurant", "restoran", "store", "mart", "shop",
    "m", "und", "and"})


def is_legal_line(text: str) -> bool:
    """True when a line is made only of legal-form and trade words ("SDN BHD", "ENTERPRISE", "GmbH & Co. KG")."""
    words = fold(text).split()
    return bool(words) and all(w in LEGAL_WORDS for w in words) and any(len(w) >= 2 for w in words)


_PUNCT = re.compile(r"[^\w%#]+", re.UNICODE)
_ABBREV = re.compile(r"(?<![\w.])(?:[^\W\d_]\.){2,}(?:[^\W\d_](?!\w))?")


_NUMERO = re.compile(r"(?<![^\W\d_])[Nn]\s?°")


@lru_cache(maxsize=65536)
def fold(text: str) -> str:
    """Casefold, strip accents, join dotted abbreviations ("U.S.t." -> "ust"), "N°" as "no",
    punctuation to spaces."""
    t = _ABBREV.sub(lambda m: m.group(0).replace(".", "") + " ", text[:400])
    t = _NUMERO.sub("no ", t)                          # "N°" as "Nº": the number sign, not an n
    t = unicodedata.normalize("NFKD", t).casefold()
    t = "".join(ch for ch in t if not unicodedata.combining(ch)).replace("ß", "ss")
    return " ".join(_PUNCT.sub(" ", t.replace("_", " ")).split())


_PHRASES: list[tuple[str, str]] = sorted({(fold(p), m) for m, ps in MEANINGS.items() for p in ps},
                                         key=lambda t: (-len(t[0]), t[0], t[1]))
_FIRST: dict[str, list[tuple[str, str]]] = {}
for _p, _m in _PHRASES:
    _FIRST.setdefault(_p.split()[0], []).append((_p, _m))
_WORDS = frozenset(w for p, _ in _PHRASES for w in p.split())


@lru_cache(maxsize=65536)
def meanings_in(text: str) -> tuple[tuple[str, str, int, int], ...]:
    """The cue phrases in `text` (folded), as (meaning, phrase, first word, last word + 1): the
    longest phrase wins where phrases overlap ("due date" is due_date, not issue_date's "date");
    a phrase may carry several meanings ("vat": tax_total and vat_id), listed one per tuple."""
    words = fold(text).split()
    out: list[tuple[str, str, int, int]] = []
    i = 0
    while i < len(words):
        best: list[tuple[str, str]] = []
        best_len = 0
        for p, m in _FIRST.get(words[i], ()):
            pw = p.split()
            if len(pw) < best_len:
                break
            if words[i:i + len(pw)] == pw:
                if len(pw) > best_len:
                    best, best_len = [], len(pw)
                best.append((p, m))
        if best:
            prev = out[-1] if out else None
            if (prev is not None and prev[3] == i and best_len == 1 and words[i] in _BARE_DATE
                    and all(m == "issue_date" for _, m in best) and prev[0] in _DATE_MEANINGS):
                # "Payment due date", "Lieferdatum"-like: a bare "date" after a date's cue completes
                # it ("payment due" + "date" is a due date, not an issue date)
                keep = [t for t in out if t[3] == i]
                del out[len(out) - len(keep):]
                out.extend((m, f"{ph} {words[i]}", b, i + 1) for m, ph, b, _ in keep)
            else:
                out.extend((m, p, i, i + best_len) for p, m in best)
            i += best_len
        else:
            i += 1
    return tuple(out)


_BARE_DATE = frozenset({"date", "datum", "fecha", "data", "tarikh"})
_DATE_MEANINGS = frozenset({"due_date", "delivery_date", "order", "discount"})


def heading_meaning(text: str) -> str | None:
    """The meaning of a line that reads as a block heading: short (at most 4 words), and either
    ending with a colon or made only of cue words ("Rechnungsempfänger:", "Bill To", "Lieferadresse").
    Of a heading with several meanings the first wins ("Käufer/Leistungsempfänger" is buyer)."""
    t = text.strip()
    f = fold(t)
    words = f.split()
    if not 0 < len(words) <= 4:
        return None
    found = meanings_in(t)
    if not found:
        return None
    covered = {i for _, _, s, e in found for i in range(s, e)}
    if not (t.endswith(":") or len(covered) == len(words)):
        return None
    return found[0][0]


def is_label_text(text: str) -> bool:
    """True when `text` reads as a label or heading rather than a value: it ends with a colon, or
    every word of it is a cue word ("Payment Terms", "Delivery address", "Rechnungsempfänger")."""
    t = text.strip()
    if not t or len(t) > 60:
        return False
    if t.endswith(":") and any(ch.isalpha() for ch in t):
        return True
    words = fold(t).split()
    return 0 < len(words) <= 4 and all(w in _WORDS and not w.isdigit() for w in words) and \
        any(len(w) >= 3 for w in words)
