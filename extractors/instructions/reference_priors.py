"""An invoice's number and dates are its own, not those of a document it refers to.

Invoices print the numbers and dates of other documents beside their own: the order ("Order nr.
SO532", "Orderdatum: 04.05.2021", "Auftrag 88655 vom 30.11.2018"), the delivery ("Lieferdatum",
"Date de prestation"), the customer's account ("Account: KD-6440984"), and on a credit note or a
correction the invoice it corrects ("Ursprungsrechnung R-51740 vom 29.09.2018", "Ref. factura
RG8805"). The scorers judge a proposal by how much its label looks like the field's, and
"Orderdatum" looks like a date label, "Ref. factura" like an invoice number's.

`reference_priors(ix, specs, ranked)` demotes (`invoice_reading.demote`: below the best proposal
that is not contradicted, which keeps its own score) the proposals of the invoice number, the issue
date and the due date whose governing words name another document: the words left of the value on
its line back to the previous value (over a connective and the number it dates: "Ursprungsrechnung
R-51740 vom"); when no word is printed there (nothing, or a dash between the two dates of a period),
the label it was found by and the heading cell right above it ("Leistungszeitraum" over "1. AUGUST
2015 - 31. AUGUST 2015"). The same reading as the `other_document` check (verifiers/checks/labels.py), which
fails such a value after the fact; this moves the reading to the document's own value, when the
document prints one. A referenced invoice ("Ref. factura") is another document only on a credit note
(it calls itself one, or its best gross total is negative): on an invoice "Réf. facture" labels its
own number.
"""
from __future__ import annotations

import re

from docassay.extractors.instructions.amount_roles import line_label
from docassay.extractors.instructions.invoice_reading import demote
from docassay.extractors.instructions.proposals import Proposal
from docassay.extractors.labels import FieldSpec, fold_label
from docassay.extractors.spans import DocIndex

__all__ = ["reference_priors", "names_other_document", "governing_words", "credit_document"]

NUMBER_CONCEPTS = ("invoice_number",)
DATE_CONCEPTS = ("issue_date", "due_date")

# Folded phrases naming another document, for numbers and dates alike.
_ORDER = ("order", "orderdatum", "ordernummer", "order nr", "order no", "order number", "order date",
          "purchase order", "po number", "bestellung", "bestelldatum", "bestellnummer", "bestell nr", "auftrag",
          "auftragsnummer", "auftragsdatum", "auftrags nr", "commande", "bon de commande", "date de commande",
          "bestelling", "bestelnummer", "besteldatum", "pedido", "numero de pedido", "fecha de pedido", "ordine",
          "auftragsnr", "bestellnr", "ordernr", "bestelnr", "so number", "so no", "sales order")
_DELIVERY = ("delivery date", "date of delivery", "ship date", "shipping date", "service date", "date of supply",
             "supply date", "service period", "lieferdatum", "leistungsdatum", "liefer und leistungsdatum",
             "leistungszeitraum", "lieferzeitraum", "abrechnungszeitraum", "date de livraison", "date de prestation",
             "leverdatum", "leveringsdatum", "afleverdatum", "fecha de entrega", "delivery note", "lieferschein", "lieferscheinnummer", "bon de livraison",
             "albaran", "pakbon", "leverbon")
_ORIGINAL = ("ursprungsrechnung", "ursprungliche rechnung", "originalrechnung", "bezugsrechnung", "original invoice",
             "referenced invoice", "related invoice", "facture d origine", "facture initiale", "factura original",
             "factura rectificada", "oorspronkelijke factuur", "originele factuur", "fattura originale",
             "avoir sur facture", "zu rechnung")
# ... for numbers only: a customer's account or a contract has a number, not this document's date.
_NUMBER_ONLY = ("account", "account no", "account number", "customer no", "customer number", "customer id",
                "kundennummer", "kunden nr", "kundennr", "no client", "numero client", "klantnummer", "contract",
                "vertrag", "vertragsnummer", "mandat", "mandatsreferenz", "contrat", "contrato",
                "debitor", "debitor nr", "debitorennummer", "debitorennr", "code client", "no cliente",
                "numero de cliente", "cliente no")
# On a credit note: a reference word before an invoice word names the invoice it corrects.
_REFERENCE = frozenset({"ref", "reference", "referencia", "referenz", "bezug", "rif"})
_INVOICE = frozenset({"invoice", "rechnung", "facture", "factura", "factuur", "fattura"})
_CREDIT = ("credit note", "credit memo", "creditnote", "creditnota", "gutschrift", "rechnungskorrektur",
           "stornorechnung", "storno", "avoir", "facture d avoir", "facture rectificative", "factura rectificativa",
           "nota de credito", "abono", "nota di credito", "correction invoice")
_CONNECTIVES = frozenset({"vom", "von", "du", "del", "de", "van", "dated", "of", "from", "d", "am", "le", "el",
                          "dal", "dd"})
_DIGIT = re.compile(r"\d")


def governing_words(left: str) -> str:
    """The words that label the value at the end of `left`: back to the previous word with a digit,
    and over one value more when only connectives stand between ("Ursprungsrechnung R-51740 vom");
    "" when no word stands there (punctuation only: the dash of "1. AUGUST 2015 - 31. AUGUST 2015")."""
    words = left.split()
    i = len(words)
    while i > 0 and not _DIGIT.search(words[i - 1]):
        i -= 1
    seg = words[i:]
    if not any(fold_label(w) for w in seg):
        return ""                        # no word: nothing, or a dash between a period's two dates
    if i > 0 and all(fold_label(w) in _CONNECTIVES or not fold_label(w) for w in seg):
        j = i - 1
        while j > 0 and _DIGIT.search(words[j - 1]):
            j -= 1
        k = j
        while k > 0 and not _DIGIT.search(words[k - 1]):
            k -= 1
        return " ".join(words[k:])
    return " ".join(seg)


def _has(folded: str, phrases: tuple[str, ...]) -> bool:
    return any(f" {p} " in folded for p in phrases)


def names_other_document(text: str, concept: str, credit: bool = False) -> bool:
    """`text` (a label) names another document than this one, for a field of `concept`."""
    f = f" {fold_label(text)} "
    if _has(f, _ORDER) or _has(f, _DELIVERY) or _has(f, _ORIGINAL):
        return True
    if concept in NUMBER_CONCEPTS and _has(f, _NUMBER_ONLY):
        return True
    if credit:
        words = f.split()
        return any(w in _INVOICE and any(r in _REFERENCE for r in words[max(0, i - 2):i]) for i, w in enumerate(words))
    return False


def credit_document(ix: DocIndex, ranked: dict[str, list[Proposal]], specs: list[FieldSpec]) -> bool:
    """The document calls itself a credit note or a correction, or its best gross total is negative."""
    for spec in specs:
        if spec.concept == "gross_total" and ranked.get(spec.name):
            v = ranked[spec.name][0].value
            if isinstance(v, (int, float)) and v < 0:
                return True
    for pi in ix.pages:
        for line in pi.segments_by_line:
            if _has(f" {fold_label(' '.join(s.text for s in line))} ", _CREDIT):
                return True
    return False


def _heading_above(ix: DocIndex, p: Proposal) -> str:
    """The text of the line right above the value that stands over it (a column heading); when
    nothing stands over the value itself, what stands over the start of its cell (the heading of a
    period "1. AUGUST 2015 - 31. AUGUST 2015" is over its first date)."""
    if p.span.line <= 0:
        return ""
    above = ix.page(p.span.page).segments_by_line[p.span.line - 1]
    b = p.span.bbox
    over = [s.text for s in above if min(s.bbox.x1, b.x1) - max(s.bbox.x0, b.x0) > 0]
    if over:
        return " ".join(over)
    x = ix.segment(p.span.page, p.span.line, p.span.segment).bbox.x0
    return " ".join(s.text for s in above if s.bbox.x0 - 1 <= x < s.bbox.x1)


def _other(ix: DocIndex, p: Proposal, concept: str, credit: bool) -> bool:
    left = governing_words(line_label(ix, p.span))
    if left:
        return names_other_document(left, concept, credit)
    return any(t and names_other_document(governing_words(t), concept, credit)
               for t in (p.label, _heading_above(ix, p)))


def reference_priors(ix: DocIndex, specs: list[FieldSpec], ranked: dict[str, list[Proposal]]) -> dict[str, list[Proposal]]:
    """Demote the invoice number's and the dates' proposals whose label names another document
    (module docstring). In place; returns `ranked`."""
    credit: bool | None = None
    for spec in specs:
        if spec.concept not in NUMBER_CONCEPTS + DATE_CONCEPTS or not ranked.get(spec.name):
            continue
        if credit is None:
            credit = credit_document(ix, ranked, specs)
        props = ranked[spec.name]
        bad = [p for p in props if p.relation != "detect" and _other(ix, p, spec.concept, credit)]
        if bad and len(bad) < len(props):
            demote(props, bad)
    return ranked
