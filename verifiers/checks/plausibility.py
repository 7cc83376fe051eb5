"""Plausibility: values that are possible but not likely.

    date_range        a date lies between `EARLIEST_YEAR` and `LATEST_AHEAD_DAYS` after today
    due_after_issue   the due date is on or after the issue date, within `MAX_TERM_DAYS`
    tax_share         tax is between 0 and `MAX_TAX_SHARE` of the net total, and the gross total
                      is at least the net total (in size; credit notes are negative)
    name_shape        a party's name reads as a name: a legal form ("GmbH", "Ltd", "Sdn Bhd")
                      passes; a postcode and town, a street and number, a country, a phone number,
                      an e-mail or web address, mostly digits, "label : value", a company
                      registration statement ("Inscrita en el R.M. de ..."), a fragment (only
                      a legal form; an unbalanced bracket) or a name carrying a registration
                      number ("(519537-X)") fails; a seller's name that is a person addressed by
                      title and carries no legal form ("MS JOAN WONG"; not "MR. D.I.Y. SDN BHD") fails
    address_shape     an address holds a postcode or a street word, and a figure (a house number
                      or a postcode: "AVENIDA DE CASTILLA" alone was cut short), and no date,
                      time, phone number, price or "label : value" pair (a till line read with it)
    address_mixed     an address that holds another printed field (contact details, a time, a
                      date, a phone number, a price, "label : value", a document's title, a tax
                      number's label) was read with a line that is not the address: fail. Only
                      fails: `address_shape`'s failures of these kinds as a check of their own
    amount_format     an amount was read from a figure printed with cents where the document
                      prints its amounts with cents (a bare "6" beside "15.90" is a quantity)
    number_shape      a document number holds a digit and is one short token run (no sentence),
                      and is no page counter, no house number (after its street, or printed
                      elsewhere before a comma and its street: "105, chemin de l'Église") and no
                      postcode before its town
    date_in_period    an issue or due date printed as one end of a period ("01-02-2017 -
                      28-02-2017", "du 01/02/2017 au 28/02/2017", "01.02.2017 bis 28.02.2017") is
                      the period's bound, not the document's date: fail. Only fails

Fields by role (verifiers.checks.fields).
"""
from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Callable

from docassay.verifiers.checks.fields import roles_of
from docassay.verifiers.checks.page import doc_lines, line_cells, place
from docassay.verifiers.checks.signal import Outcome, Signal
from docassay.verifiers.checks.values import iso_date, num, text
from docassay.verifiers.checks.vocabulary import fold, meanings_in
from docassay.verifiers.context import VerifyContext

__all__ = ["date_range", "due_after_issue", "tax_share", "name_shape", "address_shape", "address_verdict",
           "is_attention_line", "FIELD_SEPARATOR",
           "amount_format", "name_verdict", "is_fragment", "FORM_OR_TRADE",
           "number_shape", "date_in_period", "address_mixed", "CHECKS",
           "EARLIEST_YEAR", "LATEST_AHEAD_DAYS", "MAX_TERM_DAYS", "MAX_TAX_SHARE", "today"]

EARLIEST_YEAR = 1990            # no business document of interest is older
LATEST_AHEAD_DAYS = 400         # a due or delivery date may lie a year ahead; later is a misreading
MAX_TERM_DAYS = 366             # payment terms beyond a year are misreadings (a delivery or contract date)
MAX_TAX_SHARE = 0.30            # the highest standard VAT rate is 27 %
MAX_NUMBER_WORDS = 3            # an invoice number is at most this many tokens ("RE 2024 001")
today: Callable[[], date] = date.today      # replaceable in tests

_LEGAL = re.compile(r"\b(gmbh|ag|kg|ohg|gbr|ug|e\s?k|e\s?v|ltd|limited|llc|llp|inc|corp|corporation|co|"
                    r"company|plc|pty|sa|sas|sarl|sprl|srl|spa|bv|nv|vof|aps|sdn\s?bhd|bhd|"
                    r"enterprise|enterprises|trading|berhad|restaurant|restoran|store|mart|shop)\b")
FORM_OR_TRADE = _LEGAL         # a legal form or a trade word ("trading", "restaurant"), folded: not what names a company
_POSTCODE_TOWN = re.compile(r"^(?:[A-Z]{1,2}[- ]?)?\d{4,5}\s+[^\W\d_]{2,}", re.UNICODE)
_STREET = re.compile(r"(?:stra(?:ss|ß)e|str\.|street|st\.|road|rd\.?|avenue|ave\.?|weg|gasse|platz|allee|laan|"
                     r"straat|gracht|plein|kade|singel|dijk|steeg|rue|jalan|jln\.?|lorong|boulevard|blvd)\s*\d+\w?\b|^\d+\w?\s+\w+\s+"
                     r"(?:street|st|road|rd|avenue|ave|lane|ln|drive|dr)\b|\bc/\s?[^\W\d_]{2,}.*\d", re.IGNORECASE)
_STREET_WORDS = re.compile(r"\b(jalan|jln|taman|tmn|bandar|lorong|persiaran|kampung|kg|seksyen|lot|medan|darul|"
                           r"selangor|johor|kedah|kelantan|melaka|pahang|perak|perlis|sabah|sarawak|terengganu|"
                           r"street|road|avenue|lane|strasse|weg|gasse|platz|allee|rue|laan|straat|"
                           r"calle|avenida|avda|paseo|plaza|ronda|camino|carretera|ctra|travesia|glorieta|rambla|carrer|"
                           r"chemin|boulevard|impasse|quai|piazza|viale|corso|rua|"
                           r"building|bangunan|floor|flr|level|block|blok)\b")
# The parts of a building an address line may name alone ("GEBÄUDE C", "BÂTIMENT B", "SUITE 4"), folded;
# for addresses only (a name may hold them: "TOWER RECORDS").
_BUILDING_WORDS = re.compile(r"\b(gebaude|etage|stockwerk|aufgang|eingang|batiment|escalier|suite|unit|wisma|menara)\b")
_REG_NO = re.compile(r"\(\s*(?:co\.?\s*(?:no|reg)\.?\s*:?\s*)?\d{3,}[-\s]?[A-Z]?\s*\)|\b\d{4,}-[A-Z]\b",
                     re.IGNORECASE)
_CONNECTOR = re.compile(r"^(?:&|\+|-|,|and\b|und\b|et\b|en\b|dan\b)|(?:&|\+|-|,|\band|\bund|\bet|\ben|\bdan|\bof)$",
                        re.IGNORECASE)


def is_fragment(t: str) -> bool:
    """A piece of a longer name: an unbalanced bracket, or a connector at the start or the end
    ("HOME MASTER HARDWARE &", "& TEA LEAF (M) SDN. BHD.")."""
    s = t.strip()
    return s.count("(") != s.count(")") or bool(_CONNECTOR.search(s))


# Words of sentences, not of names: a greeting or a notice read as a name ("GOODS SOLD ARE NOT RETURNABLE").
_SENTENCE = frozenset(fold(w) for w in (
    "thank", "thanks", "you", "your", "please", "is", "are", "not", "was", "were", "we", "our", "will", "welcome",
    "danke", "vielen", "bitte", "ihr", "ihre", "wir", "merci", "votre", "nous", "bedankt", "uw", "wij",
    "terima", "kasih", "sila", "anda", "selamat"))
# Words of a slogan or an address to the reader that no company's name holds: a possessive ("su tienda de
# barrio", "Unser Zeichen", "your"), a contracted article-preposition ("Frisch vom Bäcker", "la qualité au
# quotidien"), folded.
_PHRASE = frozenset(fold(w) for w in (
    "your", "our", "ihr", "ihre", "unser", "unsere", "uw", "onze", "jouw", "votre", "vos", "notre", "nos", "su", "sus",
    "tu", "vuestro", "nuestro", "nuestra", "vom", "zum", "zur", "au", "aux", "del"))
_PHRASE_KEEP = frozenset({"vos", "del"})   # surnames too ("Vos & Meijer", "Del Monte"): only with another phrase word
# "À l'attention de Luc Blanc", "z. Hd. Frau Meier", "Attn: ...", "T.a.v. ...", "c/o ...", folded
_ATTENTION = re.compile(r"^(?:a l attention|a la atencion|attention|attn|att|z\s?hd|zhd|z h|zh|tav|t a v|c o)\b")
FIELD_SEPARATOR = re.compile(r"\s[·•|]\s")     # "Muster GmbH · Hauptstr. 1 · 12345 Berlin"
# "Inscrita en el R.M. de Zaragoza", "Registered in England No. 1234", "Sitz der Gesellschaft: Bremen",
# "Eingetragen beim Amtsgericht", "Immatriculée au RCS de Lyon", "Ingeschreven bij de KvK", folded
_REGISTERED = re.compile(r"^(?:inscrit[ao]?s?\s+(?:en|au|a|al|dans)|registered\s+(?:in|at|with|under)|"
                         r"registrad[ao]\s+en|eingetragen\s+(?:im|beim|am|in|unter)|sitz der gesellschaft|"
                         r"immatricule[e]?\s+(?:au|a)|ingeschreven\s+(?:bij|in|onder)|iscritt[ao]\s+(?:al|presso|nel))\b")
_LABEL_VALUE = re.compile(r"^[^\W\d_][^:]{0,24}?\s*:\s*\S")
_SHORT_LABEL_VALUE = re.compile(r"^[^\W\d_][^:]{0,24}?\s*:\s*\S.{0,12}$")
_TIME = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b")
_DATE = re.compile(r"\b\d{1,2}[./-]\d{1,2}[./-]\d{2,4}\b")
_PHONE = re.compile(r"(?<!\d)0\d{1,2}[- ]\d{3,4}[ -]?\d{3,4}(?!\d)")
_INTL_PHONE = re.compile(r"\+\d{1,3}[\s\d()-]{7,}")
_PRICE = re.compile(r"(?<![\d.,])\d+\.\d{2}(?![\d.,])")
_POSTCODE = re.compile(r"(?:(?<![\w-])|(?<=\b[A-Z]-))\d{4,6}(?![\w-])")
_CENTS = re.compile(r"\d[.,]\d{2}(?!\d)")
MIN_CENT_AMOUNTS = 3           # amount_format: the document prints at least this many amounts with cents
_CONTACT = re.compile(r"@|\bwww\.|https?://|\b(?:tel|tlf|telf|tfno|fax|phone|telefon)\b[.:]?", re.IGNORECASE)
# A document's title after an address ("... 50679 Bilbao FACTURA SIMPLIFICADA", "... Leuven KASSABON"): the
# heading under the shop's block read with it; and a tax number's label ("St.-Nr. DE977407879").
_TITLE_AT_END = re.compile(r"\b(?:factura simplificada|fra simplificada|factura|ticket de compra|ticket de venta|ticket de caisse|ticket|kassabon|kassenbon|kassenbeleg|bon|recu|receipt|"
                           r"tax invoice|invoice|quittung|beleg|rechnung|fattura|scontrino|ricevuta)\s*$")
_TAX_LABEL = re.compile(r"\b(?:st\.?\s?-?\s?nr|steuer\s?-?\s?nr|steuernummer|ust\s?-?\s?id\w*|vat|gst|btw|nif|cif|"
                        r"tva|mwst|uid)\b")
_COUNTRIES = frozenset(fold(c) for c in (
    "Deutschland", "Germany", "France", "Frankreich", "Österreich", "Austria", "Schweiz", "Switzerland",
    "Suisse", "Nederland", "Netherlands", "Niederlande", "België", "Belgique", "Belgium", "Luxembourg",
    "Italia", "Italy", "España", "Spain", "Polska", "Poland", "United Kingdom", "UK", "Great Britain",
    "England", "USA", "United States", "Malaysia", "Singapore", "India", "Danmark", "Denmark", "Sverige",
    "Sweden", "Norge", "Norway", "Ireland", "Portugal", "Czech Republic", "Česko"))


def _dates(ctx: VerifyContext) -> list[tuple[str, date]]:
    out = []
    for f, pol in ctx.cfg.fields.items():
        if pol.kind == "date" and ctx.record.get(f) not in (None, ""):
            out.append((f, iso_date(ctx.record.get(f))))
    return out  # type: ignore[return-value]


def date_range(ctx: VerifyContext) -> list[Signal]:
    out = []
    latest = today() + timedelta(days=LATEST_AHEAD_DAYS)
    for f, d in _dates(ctx):
        if d is None:
            out.append(Signal(f, "date_range", "fail", f"{ctx.record.get(f)!r} is no YYYY-MM-DD date"))
        elif d.year < EARLIEST_YEAR or d > latest:
            out.append(Signal(f, "date_range", "fail", f"{d} lies outside {EARLIEST_YEAR}..{latest}"))
        else:
            out.append(Signal(f, "date_range", "pass", f"{d} is a plausible date"))
    return out


def due_after_issue(ctx: VerifyContext) -> list[Signal]:
    r = roles_of(ctx.schema)
    fi, fd = r.first("issue_date"), r.first("due_date")
    if fi is None or fd is None:
        return []
    issue, due = iso_date(ctx.record.get(fi)), iso_date(ctx.record.get(fd))
    if issue is None or due is None:
        return []
    days = (due - issue).days
    if 0 <= days <= MAX_TERM_DAYS:
        return [Signal(fd, "due_after_issue", "pass", f"due {days} days after issue")]
    why = f"due {-days} days before the issue date" if days < 0 else f"due {days} days after issue"
    return [Signal(fd, "due_after_issue", "fail", why)]


def tax_share(ctx: VerifyContext) -> list[Signal]:
    r = roles_of(ctx.schema)
    fn, ft, fg = r.first("net_total"), r.first("tax_total"), r.first("gross_total")
    n = num(ctx.record.get(fn)) if fn else None
    t = num(ctx.record.get(ft)) if ft else None
    g = num(ctx.record.get(fg)) if fg else None
    out = []
    if n is not None and t is not None and n != 0 and ft is not None:
        share = t / n
        ok = 0.0 <= share <= MAX_TAX_SHARE
        out.append(Signal(ft, "tax_share", "pass" if ok else "fail", f"tax is {100 * share:.1f} % of the net total"))
    if n is not None and g is not None and fg is not None and fn is not None and n != 0:
        ok = abs(g) >= abs(n) - 0.01 and abs(g) <= abs(n) * (1 + MAX_TAX_SHARE) + 0.01
        for f in (fn, fg):
            out.append(Signal(f, "tax_share", "pass" if ok else "fail",
                              f"gross {g} is {'in' if ok else 'out of'} proportion to net {n}"))
    return out


_TITLE = re.compile(r"^(?:mr|mrs|ms|miss|dr|herr|frau|mme|mlle|dhr|mevr|encik|puan|cik|tuan)\b\.?\s", re.IGNORECASE)


# A document's title ("Factura comercial", "Tax invoice", "Rechnung"), folded, at a name's start.
_TITLE_FIRST = re.compile(r"^(?:tax\s+)?(?:factura|invoice|rechnung|facture|factuur|fattura|receipt|recibo|quittung|"
                          r"kassenbon|kassabon|ticket|avoir|gutschrift|credit\s+note|creditnota|nota\s+de\s+credito)\b")


def is_attention_line(text: str) -> bool:
    """Whether a line names a contact person ("z. Hd. Stefan Krüger", "c/o Carmen Díaz", "Attn: ...")."""
    return bool(_ATTENTION.match(fold(text.strip())))


def name_verdict(v: str, reads_as: str | None = None) -> tuple[Outcome, str] | None:
    s = v.strip()
    f = fold(s)
    if reads_as:
        return "fail", f"reads as {'a ' if reads_as != 'label: value' else ''}{reads_as}"
    if _LABEL_VALUE.match(s):
        return "fail", "reads as 'label : value'"
    if _ATTENTION.match(f):
        return "fail", "reads as an attention line (a contact person), not a party's name"
    if _REGISTERED.match(f):
        return "fail", "reads as a company registration statement, not a name"
    if FIELD_SEPARATOR.search(s):
        return "fail", "holds several printed fields joined by a separator (a name and an address line)"
    if s.count("(") != s.count(")"):
        return "fail", "is a fragment (an unbalanced bracket)"
    if _CONNECTOR.search(s):
        return "fail", "is a fragment (starts or ends with a connector: the name goes on on another line)"
    if sum(w in _SENTENCE for w in f.split()) >= 2:
        return "fail", "reads as a sentence, not a name"
    phrase = [w for w in f.split() if w in _PHRASE]
    if phrase and (len(phrase) >= 2 or phrase[0] not in _PHRASE_KEEP):
        return "fail", f"reads as a slogan or phrase ({phrase[0]!r}), not a name"
    if _REG_NO.search(s):
        return "fail", "carries a registration number"
    if _CONTACT.search(s):
        return "fail", "reads as contact details"
    if f in _COUNTRIES:
        return "fail", "is a country"
    if _TITLE_FIRST.match(f) and not _LEGAL.search(f):
        return "fail", "reads as a document's title, not a name"
    if _POSTCODE_TOWN.match(s):
        return "fail", "reads as a postcode and town"
    if _STREET.search(s):
        return "fail", "reads as a street address"
    digits = sum(ch.isdigit() for ch in s)
    letters = sum(ch.isalpha() for ch in s)
    if digits > letters:
        return "fail", "is mostly digits"
    if _LEGAL.search(f):
        rest = [w for w in _LEGAL.sub(" ", f).split() if len(w) >= 2]
        if not rest:
            return "fail", "is only a legal form: a fragment of the name"
        return "pass", "carries a legal form or trade word"
    if _STREET_WORDS.search(f):
        return "fail", "reads as an address"
    return None


def name_shape(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, role in roles_of(ctx.schema).by_field.items():
        if role not in ("seller_name", "buyer_name"):
            continue
        v = text(ctx.record.get(f))
        if v is None:
            continue
        ev = (ctx.evidence or {}).get(f)
        verdict = name_verdict(v, getattr(ev, "reads_as", None))
        if role == "seller_name" and _TITLE.match(v) and not _LEGAL.search(fold(v)):
            verdict = ("fail", "is a person addressed by title (a customer or cashier), not the issuer")
        if verdict:
            out.append(Signal(f, "name_shape", verdict[0], f"{v!r} {verdict[1]}"))
    return out


# "Seit 1987", "SINDS 1964", "Since 1990", "Depuis 1925": a year that looks like a postcode
_SINCE_YEAR = re.compile(r"\b(?:seit|sinds|since|depuis|desde|dal|sejak|established|est|gegrundet|opgericht|fondee|fonde)\s+"
                         r"(?:1[89]|20)\d\d\b")


def _other_line(v: str) -> str | None:
    """Why `v` holds a line that is no address (contact details, a time, a date, a phone number, a
    price, "label : value"), else None."""
    if _CONTACT.search(fold(v)) or _INTL_PHONE.search(v):
        return "holds contact details: a line that is not the address was read with it"
    for rx, why in ((_TIME, "a time"), (_DATE, "a date"), (_PHONE, "a phone number"), (_PRICE, "a price")):
        if rx.search(v):
            return f"holds {why}: a line that is not the address was read with it"
    if _SHORT_LABEL_VALUE.match(v.strip()):
        return "reads as 'label : value'"
    return None


def _title_or_tax_label(v: str) -> str | None:
    """Why `v` ends with a document's title or holds a tax number's label, else None."""
    if _TITLE_AT_END.search(fold(v)):
        return "ends with a document's title: the heading under the address was read with it"
    if _TAX_LABEL.search(fold(v)):
        return "holds a tax number's label: a line that is not the address was read with it"
    return None


def _address_mixed(v: str) -> str | None:
    """Why `v` holds another printed field besides an address, else None."""
    return _other_line(v) or _title_or_tax_label(v)


def _address_verdict(v: str) -> tuple[str, str]:
    if (why := _other_line(v)) is not None:
        return "fail", why
    if _SINCE_YEAR.search(fold(v)):
        return "fail", "reads as a 'since <year>' line (a slogan), not an address"
    if (why := _title_or_tax_label(v)) is not None:
        return "fail", why
    if _POSTCODE.search(v) or _STREET_WORDS.search(fold(v)) or _STREET.search(v) or _BUILDING_WORDS.search(fold(v)):
        return "pass", "has a postcode or a street word"
    return "fail", "has neither a postcode nor a street word"


address_verdict = _address_verdict
"""address_verdict(text) -> ("pass" | "fail", why): whether a printed text reads as an address."""


def address_shape(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, role in roles_of(ctx.schema).by_field.items():
        if role not in ("seller_address", "buyer_address"):
            continue
        v = text(ctx.record.get(f))
        if v is None:
            continue
        outcome, why = _address_verdict(v)
        if outcome == "pass" and not re.search(r"\d", v) and not _BUILDING_WORDS.search(fold(v)):
            outcome, why = "fail", "holds no figure: neither a house number nor a postcode (cut short)"
        out.append(Signal(f, "address_shape", outcome, f"{v[:60]!r} {why}"))  # type: ignore[arg-type]
    return out


def address_mixed(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, role in roles_of(ctx.schema).by_field.items():
        v = text(ctx.record.get(f)) if role in ("seller_address", "buyer_address") else None
        if v is not None and (why := _address_mixed(v)) is not None:
            out.append(Signal(f, "address_mixed", "fail", f"{v[:60]!r} {why}"))
    return out


def amount_format(ctx: VerifyContext) -> list[Signal]:
    from docassay.verifiers.checks.page import doc_lines
    out = []
    cents_printed: int | None = None
    for f, pol in ctx.cfg.fields.items():
        if pol.kind != "amount" or num(ctx.record.get(f)) is None:
            continue
        ev = (ctx.evidence or {}).get(f)
        t = getattr(ev, "text", "") or ""
        if not any(ch.isdigit() for ch in t):
            continue
        if _CENTS.search(t):
            out.append(Signal(f, "amount_format", "pass", f"read from {t!r}, printed with cents"))
            continue
        if cents_printed is None:
            cents_printed = sum(len(_CENTS.findall(line)) for _, _, line in doc_lines(ctx.document))
        if cents_printed >= MIN_CENT_AMOUNTS:
            out.append(Signal(f, "amount_format", "fail",
                              f"read from {t!r}, without cents, where the document prints {cents_printed} "
                              f"amounts with cents"))
    return out


_PAGE_COUNTER = re.compile(r"^(\d{1,2})\s*/\s*(\d{1,2})$")
_HOUSE_NO = re.compile(r"^\d{1,4}[a-z]?$", re.IGNORECASE)
# The ends of street names in the data's languages ("Zuidweg", "Kirchstraße", "Lindenlaan", "Hauptstr.")
_STREET_END = re.compile(r"(?:weg|straat|strasse|str|laan|gracht|plein|kade|singel|dijk|allee|gasse|ring|platz|"
                         r"street|road|avenue|lane|drive|close|rue|calle|avenida|via|viale|jalan)$")


_POSTCODE_ONLY = re.compile(r"^\d{4,5}$")
CELL_GAP_EMS = 1.5           # a wider gap between two words of a line separates two cells


def _house_number_elsewhere(ctx: VerifyContext, f: str, s: str) -> str | None:
    """The street of an address printed on another line of the page as `s`, a comma and the street
    ("105, chemin de l'Église", "31, avenue des Roses"), else None."""
    p = place(ctx, f)
    rx = re.compile(r"(?:^|\s)" + re.escape(s) + r",\s+([^\W\d_]{2,}(?:\s+\S+){0,4})")
    for page, li, t in doc_lines(ctx.document):
        if p is not None and page == getattr(p.page, "number", None) and li == p.line:
            continue
        m = rx.search(t)
        if m and _street_like(m.group(1)):
            return f"{s}, {m.group(1)}"[:40]
    return None


# The first word of a street written before its name after a house number ("105, chemin de l'Église")
_STREET_FIRST = re.compile(r"(?:chemin|avenue|rue|place|boulevard|all[ée]e|impasse|quai|route|calle|avenida|paseo|"
                           r"plaza|via|viale|carrer|rua)\b")


def _street_like(words: str) -> bool:
    return bool(_STREET_WORDS.search(fold(words)) or _STREET_FIRST.match(fold(words)))


def _not_a_number(ctx: VerifyContext, f: str, s: str) -> str | None:
    """Why a document number's value is some other number of the page, else None: a page counter
    ("1/1" on a one-page document), a house number after its street ("Zuidweg 235"), or a
    postcode starting its cell before the town's name ("3405 Namur")."""
    m = _PAGE_COUNTER.match(s)
    pages = len(getattr(ctx.document, "pages", None) or [])
    if m and pages and 1 <= int(m.group(1)) <= int(m.group(2)) == pages:
        return f"reads as a page counter ({pages} page{'s' if pages > 1 else ''})"
    if _HOUSE_NO.match(s):
        p = place(ctx, f)
        left = p.left.split() if p is not None else []
        if left and _STREET_END.search(fold(left[-1])) and len(fold(left[-1])) > 4:
            return f"is the house number after the street {left[-1]!r}"
    if _HOUSE_NO.match(s) and (street := _house_number_elsewhere(ctx, f, s)):
        return f"is the house number of {street!r}, printed elsewhere on the page"
    if _POSTCODE_ONLY.match(s):
        p = place(ctx, f)
        cell = next((t for x0, x1, t in line_cells(p.page, p.line, CELL_GAP_EMS) if x0 <= (p.x0 + p.x1) / 2 <= x1),
                    "") if p is not None else ""
        words = cell.split()
        if len(words) >= 2 and words[0] == s and words[1][:1].isupper() and words[1].isalpha() \
                and not meanings_in(words[1]):
            return f"is the postcode before the town {words[1]!r}"
    return None


def number_shape(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f in roles_of(ctx.schema).fields("document_number"):
        v = ctx.record.get(f)
        if v in (None, ""):
            continue
        s = str(v).strip()
        if not any(ch.isdigit() for ch in s):
            out.append(Signal(f, "number_shape", "fail", f"{s!r} holds no digit"))
        elif len(s.split()) > MAX_NUMBER_WORDS:
            out.append(Signal(f, "number_shape", "fail", f"{s!r} is a phrase, not a number"))
        elif (why := _not_a_number(ctx, f, s)) is not None:
            out.append(Signal(f, "number_shape", "fail", f"{s!r} {why}"))
        else:
            out.append(Signal(f, "number_shape", "pass", f"{s!r} has the shape of a document number"))
    return out


# a numeric date, or one with its month's name ("1 juin 2016", "30. Juni 2016", "June 1, 2016")
_A_DATE = (r"(?:\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{4}-\d{2}-\d{2}|\d{1,2}\.?\s+[^\W\d_]{3,}\.?\s+\d{4}|"
           r"\b[^\W\d_]{3,}\.?\s+\d{1,2},?\s+\d{4})")
_RANGE_WORD = r"(?:-|–|—|(?:bis|to|till|until|au|al|a|tot|t/m|hasta|sampai|hingga)\b)"
_PERIOD_AFTER = re.compile(r"^\s*" + _RANGE_WORD + r"\s*" + _A_DATE + r"(?![\d])", re.IGNORECASE)
_PERIOD_BEFORE = re.compile(r"(?<![\d])" + _A_DATE + r"\s*" + _RANGE_WORD + r"\s*$", re.IGNORECASE)


def date_in_period(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, role in roles_of(ctx.schema).by_field.items():
        if role not in ("issue_date", "due_date") or ctx.record.get(f) in (None, ""):
            continue
        p = place(ctx, f)
        if p is None:
            continue
        if _PERIOD_AFTER.match(p.right) or _PERIOD_BEFORE.search(p.left):
            out.append(Signal(f, "date_in_period", "fail",
                              f"printed as one end of a period in {p.text.strip()[:60]!r}, not the document's date"))
    return out


CHECKS = (("date_range", date_range), ("due_after_issue", due_after_issue), ("tax_share", tax_share),
          ("name_shape", name_shape), ("address_shape", address_shape), ("amount_format", amount_format),
          ("number_shape", number_shape), ("date_in_period", date_in_period), ("address_mixed", address_mixed))
