"""What the words beside a value mean (verifiers.checks.vocabulary, in the data's languages).

    label_meaning   the label closest before the value (the words left of it on its line, else the
                    label the value was found by) means this field ("Fälligkeitsdatum" for a due
                    date: pass) or a rival of it ("Lieferdatum" for a due date, "Kundennummer" for
                    an invoice number, "Cash" for a total: fail). A date or amount whose line
                    prints a version, stylesheet or discount cue anywhere fails too ("Version 2.1
                    vom 24.03.2020" is no issue date; "bis 15.03. mit 2 % Skonto" is no due date);
                    a seller's VAT ID labelled for the reader ("Uw BTW-nummer:", "Your VAT ID")
                    is the buyer's: fail
    final_total     the gross total is the last total the document prints: a later line that
                    prints one amount and labels it a gross total ("Rounded total", "Grand total";
                    not a payable amount, which prepayments reduce) with another figure means the
                    value is an intermediate total (fail); none: pass
    final_net       the net total is the last net total the document prints: a later line whose
                    last amount the words right before it label a net total ("SUMME NETTO:
                    221.03" under "ZWISCHENSUMME: 227.87" and a discount; not a per-rate line such
                    as "Netto 19 %") with another figure: fail; also on the tax total when it
                    adds up to the gross only with the contradicted net. Only fails
    total_last        a total read from a line that prints several amounts is the line's last
                    one ("TOTAL: 96.00 5.76" is a summary row; 96.00 is no gross total): fail when
                    it is not, pass when it is the line's only amount
    total_rival_label  a gross total labelled as something else (a subtotal, a tax, the cash
                    tendered, the change, a rounding, a discount: "CASH 50.20", "CHANGE 50.00")
                    while another line prints one amount labelled as the total ("TOTAL INCL.
                    GST@6% RM 48.10") that differs by more than a cash rounding (0.05): fail.
                    Only fails (a receipt that prints only a subtotal has it as its total; a
                    rival label alone is `label_meaning`'s)
    item_descriptions  no item's description holds a column header or an article-number cue
                    ("Abrechnungskreis 1 Beschreibung", "GTIN Art-Nr Lieferant ...") or starts
                    with an article code ("R33954 Large coffee beans"), or is no words at all
    value_not_label the value is not itself a label or heading ("Payment Terms", "Delivery
                    address", "Rechnungsempfänger:" as a buyer's name fail; the evidence's own
                    `value_is_label` finding counts too)
    name_label_prefix  a party's name does not begin with a label: a cue phrase of two words or
                    more ("ACCOUNT HOLDER Smith & Lewis Ltd.", "Bill to Acme") or a possessive
                    and a cue word ("Ihre Bestellung", "Your reference"), or one word that names
                    an account's or payment's holder ("Beneficiario Zeno S.A.", "Titulaire
                    Dupont SARL"; `HOLDER_WORDS`), or the block's heading line joined to it
                    (its first words are the whole line right above the name, in its column: a
                    heading, or one short word such as "Van" / "De" over "Xanraberg Advies
                    N.V."): fail. Only fails (a
                    name without a label in front is no evidence that it is the right name)
    other_document  an invoice number, issue date or due date is this document's, not another
                    one's: the label that governs the value (the words left of it back to the
                    previous value, over a connective such as "vom", "du", "del", "dated" and the
                    number it dates: "Ursprungsrechnung R-51740 vom 29.09.2018"; else the label
                    the value was found by; else the column heading right above it) naming
                    another document or role fails: on a credit note or correction (it calls
                    itself one, or its gross total is negative) a referenced or original invoice
                    ("Ref. factura", "zu Rechnung", "avoir sur facture", "Originalrechnung"; on
                    an invoice "Réf. facture" is its own number); on any document an order,
                    delivery note, contract, customer number (numbers), a version header. Only
                    fails (no other document named is no evidence of the right one)

Fields by role (verifiers.checks.fields); a field whose role has no label meaning is not judged.
"""
from __future__ import annotations

import re
from typing import Callable, Iterator

from docassay.verifiers.checks.fields import PARTY_OF, roles_of
from docassay.verifiers.checks.page import BLOCK_MEANINGS, Place, doc_lines, number_readings, place
from docassay.verifiers.checks.roles import also_under
from docassay.verifiers.checks.signal import Signal
from docassay.verifiers.checks.values import num
from docassay.verifiers.checks.vocabulary import (
    BUYER_WORDS,
    READER_WORDS,
    RIVALS,
    ROLE_MEANING,
    SUPPORTS,
    VETO,
    fold,
    heading_meaning,
    is_label_text,
    meanings_in,
    tax_inclusion,
)
from docassay.verifiers.context import VerifyContext
from docassay.verifiers.evidence import FieldEvidence

__all__ = ["label_meaning", "other_document", "final_total", "total_last", "total_rival_label", "value_not_label", "item_descriptions", "name_label_prefix",
           "nearest_meanings", "credit_note", "INVOICE_REFERENCES", "CHECKS"]

_ANCHOR_NOISE = re.compile(r"^[=<>^v]+|#-?\d+$")


def nearest_meanings(text: str) -> tuple[set[str], str] | None:
    """The meanings of the last cue phrase in `text` (labels sit right before their values); a
    total said to include or exclude tax means the gross or the net total whatever its words."""
    incl = tax_inclusion(text)
    if incl is not None:
        return {incl}, text.strip()[-40:]
    found = meanings_in(text)
    if not found:
        return None
    last_end = max(e for _, _, _, e in found)
    last = [(m, p) for m, p, _, e in found if e == last_end]
    return {m for m, _ in last}, last[0][1]


def _unambiguous_half(label: str) -> tuple[set[str], str] | None:
    """The meaning of a label's other phrase where its nearest one is ambiguous: a bilingual label
    "Netto / Net Total" means the net total, as its German half says."""
    found = [(m, ph) for m, ph, _, _ in meanings_in(label) if m != "ambiguous_total"]
    kinds = {m for m, _ in found}
    return (kinds, found[-1][1]) if len(kinds) == 1 else None


def _addressed_to_reader(label: str, phrase: str, words_before: frozenset[str] = READER_WORDS) -> bool:
    """The word right before the last `phrase` of `label` addresses the reader ("Uw BTW-nummer",
    "Your VAT ID"; not "Thank you for your order. VAT no."), or is one of `words_before`."""
    words, pw = fold(label).split(), fold(phrase).split()
    starts = [i for i in range(len(words) - len(pw) + 1) if words[i:i + len(pw)] == pw]
    return bool(starts) and starts[-1] > 0 and words[starts[-1] - 1] in words_before


def label_meaning(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, role in roles_of(ctx.schema).by_field.items():
        own = ROLE_MEANING.get(role)
        if own is None or ctx.record.get(f) in (None, ""):
            continue
        ev = (ctx.evidence or {}).get(f)
        p = place(ctx, f)
        if p is not None:
            veto = [(m, ph) for m, ph, _, _ in meanings_in(p.text) if m in VETO.get(role, ())]
            if veto:
                out.append(Signal(f, "label_meaning", "fail",
                                  f"its line {p.text[:80]!r} prints {veto[0][1]!r} ({veto[0][0]})"))
                continue
        label = p.left if p is not None and p.left else ""
        near = nearest_meanings(label) if label else None
        if near is None and isinstance(ev, FieldEvidence) and ev.label:
            label = _ANCHOR_NOISE.sub("", ev.label)
            near = nearest_meanings(label)
        if near is not None and near[0] == {"ambiguous_total"}:
            near = _unambiguous_half(label) or near
        if near is None:
            continue
        meanings, phrase = near
        if role == "seller_vat_id" and own in meanings and _addressed_to_reader(label, phrase):
            out.append(Signal(f, "label_meaning", "fail",
                              f"labelled {' '.join(label.split()[-4:])!r}, addressed to the reader: the buyer's VAT ID"))
        elif role == "seller_vat_id" and own in meanings and _addressed_to_reader(label, phrase, BUYER_WORDS):
            out.append(Signal(f, "label_meaning", "fail",
                              f"labelled {' '.join(label.split()[-4:])!r}: the buyer's VAT ID"))
        elif own in meanings or meanings & set(SUPPORTS.get(role, ())):
            out.append(Signal(f, "label_meaning", "pass", f"labelled {phrase!r} ({own})"))
        elif meanings & set(RIVALS.get(role, ())):
            rival = sorted(meanings & set(RIVALS[role]))[0]
            if (role == "document_number" and meanings == {"other_number"} and fold(phrase) in INVOICE_REFERENCES
                    and not credit_note(ctx)):
                continue                         # "Réf. facture:" on an invoice labels its own number
            party = PARTY_OF.get(role) if rival in BLOCK_MEANINGS else None
            if party and p is not None and also_under(ctx, p, ctx.record.get(f), party):
                continue                         # the same name is printed in its own party's block too
            out.append(Signal(f, "label_meaning", "fail", f"labelled {phrase!r}, which means {rival}, not {own}"))
    return out


_AMOUNT_TOKEN = re.compile(r"(?<![\d.,])-?\d[\d.,']*[.,]\d{2}-?(?![\d.,])")


def _gross_lines(ctx: VerifyContext) -> list[tuple[int, int, str, str]]:
    """(page, line, left text, amount text) of every line whose last amount is labelled a gross total."""
    out = []
    for page, li, text in doc_lines(ctx.document):
        ms = list(_AMOUNT_TOKEN.finditer(text))
        if len(ms) != 1 or "%" in text:                  # a summary row (net, tax, gross) or a tax line
            continue
        left = text[:ms[-1].start()]
        near = nearest_meanings(left)
        if near is not None and near[0] == {"gross_total"}:
            out.append((page, li, left.strip(), ms[-1].group(0)))
    return out


def total_last(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f in roles_of(ctx.schema).fields("gross_total"):
        v = num(ctx.record.get(f))
        p = place(ctx, f)
        if v is None or p is None:
            continue
        ms = list(_AMOUNT_TOKEN.finditer(p.text))
        mine = [i for i, m in enumerate(ms) if any(abs(abs(x) - abs(v)) < 0.005 for x in number_readings(m.group(0)))]
        if not ms or not mine:
            continue
        if len(ms) == 1:
            out.append(Signal(f, "total_last", "pass", "the only amount on its line"))
        elif mine[-1] != len(ms) - 1:
            out.append(Signal(f, "total_last", "fail", f"one column of {p.text[:60]!r}, not its last amount"))
    return out


def _later_figures(ctx: VerifyContext, role: str, lines: Callable[[VerifyContext], list[tuple[int, int, str, str]]]
                   ) -> Iterator[tuple[str, float, list[tuple[str, str]]]]:
    """(field, value, [(label, amount)]) for each placed field of `role`: the labelled lines of
    `lines(ctx)` below the value's line that print another figure."""
    for f in roles_of(ctx.schema).fields(role):
        v = num(ctx.record.get(f))
        ev = (ctx.evidence or {}).get(f)
        p = place(ctx, f)
        if v is None or p is None or not isinstance(ev, FieldEvidence):
            continue
        here = (int(getattr(p.page, "number", ev.page or 0)), p.line)
        yield f, v, [(lab, amt) for pg, li, lab, amt in lines(ctx) if (pg, li) > here
                     and not any(abs(abs(x) - abs(v)) < 0.005 for x in number_readings(amt))]


def final_total(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, v, other in _later_figures(ctx, "gross_total", _gross_lines):
        if other:
            out.append(Signal(f, "final_total", "fail",
                              f"a later line prints {other[-1][0][:40]!r} {other[-1][1]}: {v} is not the final total"))
        else:
            out.append(Signal(f, "final_total", "pass", "no later total prints another amount"))
    return out


_NUMBER_TOKEN = re.compile(r"\d[\d.,']*%?")


def _net_lines(ctx: VerifyContext) -> list[tuple[int, int, str, str]]:
    """(page, line, label, amount text) of every line whose last amount is labelled a net total
    by the words right before it, after any other figure of the line ("3.8% 88.46 3.36 SUMME
    NETTO: 221.03"); a label with a rate ("Netto 19 %") is a per-rate line, not the net total."""
    out = []
    for page, li, text in doc_lines(ctx.document):
        ms = list(_AMOUNT_TOKEN.finditer(text))
        if not ms:
            continue
        left = text[:ms[-1].start()]
        figures = list(_NUMBER_TOKEN.finditer(left))
        label = left[figures[-1].end():] if figures else left
        near = nearest_meanings(label)
        if "%" not in label and near is not None and near[0] == {"net_total"}:
            out.append((page, li, label.strip(), ms[-1].group(0)))
    return out


def final_net(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, v, other in _later_figures(ctx, "net_total", _net_lines):
        if other:
            out.append(Signal(f, "final_net", "fail",
                              f"a later line prints {other[-1][0][:40]!r} {other[-1][1]}: {v} is not the final net total"))
            out += _tax_of_the_wrong_net(ctx, v, other[-1][1])
    return out


def _tax_of_the_wrong_net(ctx: VerifyContext, net: float, later: str) -> list[Signal]:
    """The tax total, when it adds up to the gross with the contradicted net but not with the
    later net: it was chosen to fit the wrong net."""
    r = roles_of(ctx.schema)
    out = []
    for tf in r.fields("tax_total"):
        tax = num(ctx.record.get(tf))
        gross = next((num(ctx.record.get(g)) for g in r.fields("gross_total")), None)
        if tax is None or gross is None or abs(net + tax - gross) > 0.011:
            continue
        if all(abs(x + tax - gross) > 0.011 for x in number_readings(later)):
            out.append(Signal(tf, "final_net", "fail", f"{tax} adds up to the gross only with the net {net}, which "
                                                       f"a later net total ({later}) contradicts"))
    return out


RIVAL_SLACK = 0.05          # a cash rounding: "ROUNDING 182.00" under "TOTAL SALES 181.98" is the total


def _total_lines(ctx: VerifyContext) -> list[tuple[str, str, set[float]]]:
    """(label, amount text, readings) of every line that prints one amount and labels it the total
    or the amount due, and nothing else ("TOTAL INCL. GST@6% RM 48.10", "GRAND TOTAL : 33.00")."""
    out = []
    for _, _, text in doc_lines(ctx.document):
        ms = list(_AMOUNT_TOKEN.finditer(text))
        if len(ms) != 1:
            continue
        near = nearest_meanings(text[:ms[0].start()])
        if near is not None and near[0] and near[0] <= {"gross_total", "amount_due"}:
            out.append((text[:ms[0].start()].strip(), ms[0].group(0), number_readings(ms[0].group(0))))
    return out


def total_rival_label(ctx: VerifyContext) -> list[Signal]:
    out = []
    rivals = set(RIVALS.get("gross_total", ()))
    for f in roles_of(ctx.schema).fields("gross_total"):
        v = num(ctx.record.get(f))
        if v is None or ctx.document is None:
            continue
        ev = (ctx.evidence or {}).get(f)
        p = place(ctx, f)
        near = nearest_meanings(p.left) if p is not None and p.left else None
        if near is None and isinstance(ev, FieldEvidence) and ev.label:
            near = nearest_meanings(_ANCHOR_NOISE.sub("", ev.label))
        if near is None or "gross_total" in near[0] or not near[0] & rivals:
            continue
        other = [(lab, amt) for lab, amt, xs in _total_lines(ctx)
                 if xs and not any(abs(abs(x) - abs(v)) <= RIVAL_SLACK + 1e-9 for x in xs)]
        if other:
            rival = sorted(near[0] & rivals)[0]
            out.append(Signal(f, "total_rival_label", "fail", f"labelled {near[1]!r} ({rival}) while "
                                                               f"{other[0][0][:40]!r} prints {other[0][1]}"))
    return out


_ARTICLE_CODE = re.compile(r"^(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9-]{4,}\s")


def _description_flaw(d: str) -> str | None:
    if sum(ch.isalpha() for ch in d) < 2:
        return "holds no words"
    cue = next(((m, p) for m, p, _, _ in meanings_in(d) if m == "column_header"), None)
    if cue:
        return f"holds the column header or id cue {cue[1]!r}"
    if _ARTICLE_CODE.match(d):
        return f"starts with an article code ({d.split()[0]!r})"
    return None


def item_descriptions(ctx: VerifyContext) -> list[Signal]:
    out = []
    for name, cols in roles_of(ctx.schema).items.items():
        rows = ctx.record.get(name)
        desc = [c for c, r in cols.items() if r == "description"]
        if not desc or not isinstance(rows, list) or not rows:
            continue
        flaws = []
        for i, x in enumerate(rows):
            d = x.get(desc[0]) if isinstance(x, dict) else None
            if isinstance(d, str) and d.strip():
                why = _description_flaw(d.strip())
                if why:
                    flaws.append(f"[{i}] {d[:40]!r} {why}")
        judged = sum(1 for x in rows if isinstance(x, dict) and isinstance(x.get(desc[0]), str))
        if not judged:
            continue
        if flaws:
            out.append(Signal(name, "item_descriptions", "fail", "; ".join(flaws[:3])))
        else:
            out.append(Signal(name, "item_descriptions", "pass", f"{judged} descriptions read as item names"))
    return out


def value_not_label(ctx: VerifyContext) -> list[Signal]:
    out = []
    kinds = {n: p.kind for n, p in ctx.cfg.fields.items()}
    for f, v in ctx.record.items():
        if kinds.get(f) not in ("text", "identifier") or not isinstance(v, str) or not v.strip():
            continue
        ev = (ctx.evidence or {}).get(f)
        flagged = isinstance(ev, FieldEvidence) and ev.value_is_label
        if flagged or is_label_text(v):
            out.append(Signal(f, "value_not_label", "fail", f"{v!r} reads as a label or heading, not a value"))
        else:
            out.append(Signal(f, "value_not_label", "pass", "not a label word"))
    return out


_POSSESSIVES = frozenset({"your", "our", "ihre", "ihr", "ihren", "unsere", "unser", "votre", "vos", "notre",
                          "uw", "onze", "su", "sus", "nuestro", "nuestra", "anda"})
_NAME_ROLES = ("seller_name", "buyer_name")
PREFIX_MIN_WORDS = 2          # a cue phrase this long at a name's start is a label, not the name
# One word that names whoever an account or a payment belongs to: always followed by a name, so never
# the first word of one ("Beneficiario Zeno-Instalaciones S.A.", "Titulaire Dupont SARL"). Unlike a
# one-word cue in general ("Bank of Scotland plc", "Total Energies SA").
HOLDER_WORDS = frozenset({"beneficiario", "beneficiary", "beneficiaire", "payee", "titulaire", "titular",
                          "kontoinhaber", "inhaber", "begunstigter", "zahlungsempfanger", "rekeninghouder",
                          "begunstigde", "penerima", "empfanger"})
HEADING_WORD_MAX = 4          # a one-word line this short over a name is its block's heading ("Van", "De", "From")


def _heading_line_joined(ctx: VerifyContext, f: str, v: str) -> str | None:
    """The line right above the name's line, in its column, when the name begins with all of it
    and goes on past it (a heading joined to the name under it), else None."""
    p = place(ctx, f)
    if p is None or p.line <= 0:
        return None
    lines = getattr(p.page, "lines", None) or []
    words = getattr(p.page, "words", None) or []
    here, above = lines[p.line].bbox, lines[p.line - 1]
    em = max(here.y1 - here.y0, 1e-6)
    if here.y0 - above.bbox.y1 > 1.0 * em:
        return None
    cell = [words[i] for i in above.word_ids if 0 <= i < len(words)
            and min(words[i].bbox.x1, p.x1) - max(words[i].bbox.x0, p.x0) > 0]
    t = " ".join(w.text for w in cell).strip()
    head, name = fold(t).split(), fold(v).split()
    if not head or len(head) >= len(name) or name[:len(head)] != head:
        return None
    raw = t.rstrip(":").strip()
    short = len(raw.split()) == 1 and len(head[0]) <= HEADING_WORD_MAX and raw.isalpha()
    return t if short or heading_meaning(t) is not None else None


def name_label_prefix(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, role in roles_of(ctx.schema).by_field.items():
        v = ctx.record.get(f)
        if role not in _NAME_ROLES or not isinstance(v, str) or not v.strip():
            continue
        words = fold(v).split()
        found = meanings_in(v)
        first = [(m, ph, a, b) for m, ph, a, b in found if a == 0]
        if first and first[0][3] >= PREFIX_MIN_WORDS:
            out.append(Signal(f, "name_label_prefix", "fail", f"{v[:60]!r} begins with the label {first[0][1]!r}"))
        elif len(words) >= 2 and words[0] in HOLDER_WORDS:
            out.append(Signal(f, "name_label_prefix", "fail", f"{v[:60]!r} begins with {words[0]!r}, the label "
                                                              f"of an account's or a payment's holder"))
        elif len(words) >= 2 and words[0] in _POSSESSIVES and any(a == 1 for _, _, a, _ in found):
            out.append(Signal(f, "name_label_prefix", "fail", f"{v[:60]!r} begins with {' '.join(words[:2])!r}, "
                                                              f"a label"))
        elif len(words) >= 2 and (head := _heading_line_joined(ctx, f, v)) is not None:
            out.append(Signal(f, "name_label_prefix", "fail", f"{v[:60]!r} begins with {head!r}, the line above "
                                                              f"the name (its block's heading)"))
    return out


# The meanings that name another document (or another role's number) than the one the record is.
OTHER_DOCUMENT = ("order", "other_number", "document_meta", "delivery_date")
_OTHER_ROLES = {"document_number": ("order", "other_number", "document_meta"),
                "issue_date": OTHER_DOCUMENT, "due_date": OTHER_DOCUMENT}
# The `other_number` cues that name a document with a date of its own (a date beside a cashier's or
# a terminal's number is still the receipt's).
_DOCUMENT_PHRASES = frozenset(fold(p) for p in (
    "delivery note", "lieferschein", "lieferscheinnummer", "contract", "vertrag", "vertragsnummer", "mandat",
    "mandatsreferenz", "ref facture", "reference facture", "facture d origine", "facture initiale",
    "original invoice", "invoice reference", "referenced invoice", "related invoice", "bezugsrechnung",
    "ursprungsrechnung", "originalrechnung", "zu rechnung", "bezug rechnung", "oorspronkelijke factuur",
    "factura original", "factura rectificada", "fattura originale", "originele factuur", "avoir sur facture",
    "bon de livraison", "bl", "albaran", "pakbon", "leverbon", "documento di trasporto", "contrat", "contrato",
    "contratto"))
# The `other_number` cues that name an invoice this one refers to: another document on a credit note
# or a correction, but the invoice's own reference on an invoice ("Réf. facture: FAC/2021/7038256").
INVOICE_REFERENCES = frozenset(fold(p) for p in (
    "ref facture", "reference facture", "facture d origine", "facture initiale", "original invoice",
    "invoice reference", "referenced invoice", "related invoice", "bezugsrechnung", "ursprungsrechnung",
    "originalrechnung", "zu rechnung", "bezug rechnung", "oorspronkelijke factuur", "factura original",
    "factura rectificada", "fattura originale", "originele factuur", "avoir sur facture"))
# What a credit note or a correction calls itself (folded), in the data's languages.
CREDIT_NOTE_WORDS = tuple(fold(p) for p in (
    "credit note", "credit memo", "creditnote", "gutschrift", "rechnungskorrektur", "stornorechnung", "storno",
    "avoir", "facture d avoir", "facture rectificative", "factura rectificativa", "nota de credito", "abono",
    "creditnota", "creditfactuur", "credit factuur", "nota di credito", "nota credito", "fattura di storno"))


def credit_note(ctx: VerifyContext) -> bool:
    """The document is a credit note or a correction: it calls itself one, or its gross total is negative."""
    g = None
    for f in roles_of(ctx.schema).fields("gross_total"):
        g = num(ctx.record.get(f))
    if g is not None and g < 0:
        return True
    for _, _, text in doc_lines(ctx.document):
        t = f" {fold(text)} "
        if any(f" {w} " in t for w in CREDIT_NOTE_WORDS):
            return True
    return False
# Words that turn a document word into a reference to another document when they stand before it
# ("Ref. factura", "zu Rechnung", "avoir sur facture", "original invoice", "bij factuur"), up to three words before
# it ("se rapporte à la facture").
REFERENCE_WORDS = frozenset({
    "ref", "reference", "referencing", "referring", "regarding", "related", "original", "initial", "previous",
    "prior", "corrected", "credited", "cancelled", "against", "bezug", "bezugnehmend", "betreffend", "zu", "zur",
    "ursprungliche", "ursprunglichen", "urspr", "korrigierte", "stornierte", "storno", "sur", "origine",
    "initiale", "precedente", "referencia", "rectificada", "anterior", "relativa", "alla",
    "rif", "riferimento", "originale", "bij", "betreft", "oorspronkelijke", "originele",
    "vorherige", "vorige", "rapporte", "rapportant", "relatif", "relative", "concerne", "concernant", "referente",
    "relativo", "rectifica", "corrige", "bezuglich", "betreffende", "relating", "relates"})
# A connective that dates or numbers the phrase before it ("Auftrag 88655 vom 30.11.2018",
# "commande n° 12 du 03/05", "pedido 7 del 03/10", "order 12 dated 3 May", "Order 70198 van 2021-05-16").
CONNECTIVES = frozenset({"vom", "von", "du", "del", "de", "van", "dated", "of", "from", "d", "am", "le", "el",
                         "dal", "dd"})
_VALUE_WORD = re.compile(r"\d")


_DATE_WORDS = frozenset({"fecha", "date", "datum", "data", "en"})     # "de fecha", "en date du": a connective's date


def governing_label(left: str) -> str:
    """The words that label the value at the end of `left`: back to the previous value (a word with
    a digit), and over one value more when only connectives stand between ("Ursprungsrechnung
    R-51740 vom" -> "Ursprungsrechnung R-51740 vom"), a bare date word with them ("Factura original
    IN-2019-6914 de fecha")."""
    words = left.split()
    i = len(words)
    while i > 0 and not _VALUE_WORD.search(words[i - 1]):
        i -= 1
    seg = words[i:]
    folded = [fold(w) for w in seg]
    if i > 0 and seg and all(w in CONNECTIVES or w in _DATE_WORDS or not w for w in folded) \
            and any(w in CONNECTIVES for w in folded):
        j = i - 1
        while j > 0 and _VALUE_WORD.search(words[j - 1]):
            j -= 1
        k = j
        while k > 0 and not _VALUE_WORD.search(words[k - 1]):
            k -= 1
        return " ".join(words[k:])
    return " ".join(seg)


def names_other_document(text: str, role: str, credit: bool = False) -> str | None:
    """Why `text` (a label) names another document than the record for a field of `role`, or None.
    `credit`: the record is a credit note or a correction, so a referenced invoice is another one."""
    found = meanings_in(text)
    other = [(m, ph) for m, ph, _, _ in found if m in _OTHER_ROLES.get(role, ())
             and (m != "other_number" or (ph in INVOICE_REFERENCES and credit)
                  or (ph not in INVOICE_REFERENCES and (role == "document_number" or ph in _DOCUMENT_PHRASES)))]
    if other:
        return f"{other[-1][1]!r} ({other[-1][0]})"
    if not credit:
        return None
    words = fold(text).split()
    for m, ph, a, e in found:
        if m == "document_number" and any(w in REFERENCE_WORDS for w in words[max(0, a - 3):a]):
            return f"{' '.join(words[max(0, a - 3):a])} {ph!r} (a referenced invoice)"
        if m == "document_number" and words[e:e + 1] and words[e] in REFERENCE_WORDS:
            return f"{ph!r} {words[e]} (a referenced invoice)"    # "factura original", "facture initiale"
    return None


def _heading_cell_above(p: Place) -> str:
    """The words of the line right above the value that stand over it (a column heading)."""
    if p.line <= 0:
        return ""
    lines = getattr(p.page, "lines", None) or []
    words = getattr(p.page, "words", None) or []
    above = lines[p.line - 1]
    cell = []
    for wi in getattr(above, "word_ids", ()):
        b = getattr(words[wi], "bbox", None)
        if b is not None and min(b.x1, p.x1) - max(b.x0, p.x0) > 0:
            cell.append(words[wi].text)
    return " ".join(cell)


def other_document(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, role in roles_of(ctx.schema).by_field.items():
        if role not in _OTHER_ROLES or ctx.record.get(f) in (None, ""):
            continue
        ev = (ctx.evidence or {}).get(f)
        p = place(ctx, f)
        sources = []
        credit = credit_note(ctx)
        if p is not None and p.left.strip():
            sources.append(("its label", governing_label(p.left)))
        elif isinstance(ev, FieldEvidence) and ev.label:
            sources.append(("its label", governing_label(_ANCHOR_NOISE.sub("", ev.label))))
        if p is not None and not p.left.strip():
            sources.append(("the heading above it", _heading_cell_above(p)))
        for where, text in sources:
            why = names_other_document(text, role, credit) if text else None
            if why:
                out.append(Signal(f, "other_document", "fail", f"{where} {text[:60]!r} names another document: {why}"))
                break
    return out


CHECKS = (("label_meaning", label_meaning), ("other_document", other_document), ("final_total", final_total),
          ("final_net", final_net), ("total_last", total_last),
          ("total_rival_label", total_rival_label),
          ("value_not_label", value_not_label), ("name_label_prefix", name_label_prefix),
          ("item_descriptions", item_descriptions))
