"""Where a chosen name or address starts and ends: the field rule around the generator's choice.

The scorer picks one printed span per field; a business name or an address is often printed over
several lines, with other things beside it. After the choice, `refine_rule` widens or moves the
rule, in the instruction language the executor already replays (a region or the chosen locator,
`lines`, `normalize.clean`), so every value still points at where it was printed:

* a name (`company`, `seller_name`, `buyer_name`) is the name line(s) of its block: a line that
  starts as a continuation ("CO. (M) SDN BHD", "ALAM) SDN BHD" under "... (SETIA") takes the line
  above with it; a line that goes on ("HARDWARE &", "PINTAR" over "SDN BHD") takes the next one;
  a registration number in brackets after the name is left out (`clean: name`);
* an address is the block of address lines around the chosen one: it starts at the first address
  line below the name (not on a registration or tax-id line), and ends before the first line that
  is not part of it (a telephone, tax id or registration line, a key: value line, a document title
  such as "TAX INVOICE", a date, a line of amounts); a telephone number after it and a registration
  number before it are left out (`clean: address`).

Nothing here knows a shop or a layout: the tests are legal forms, brackets, connectors, address
words, telephone and registration number shapes, as any business prints them.
"""
from __future__ import annotations

import re
from dataclasses import replace

from docassay.extractors import normalize as norm
from docassay.extractors.instructions.baseline import _LEGAL, _address_evidence
from docassay.extractors.instructions.executor import _column_overlap, line_gap_limit, locate_field
from docassay.extractors.instructions.language import FieldRule, Locale, Locator
from docassay.extractors.instructions.proposals import Proposal
from docassay.extractors.labels import LEXICON, FieldSpec, fold_label
from docassay.extractors.normalize._names import is_phone, is_registration
from docassay.extractors.spans import DocIndex, Segment, Span

__all__ = ["refine_rule", "name_continues_above", "name_continues_below", "legal_name_below", "has_phone",
           "has_registration", "is_title", "name_like", "address_evidence",
           "not_address", "NAME_CONCEPTS"]

NAME_CONCEPTS = ("company", "seller_name", "buyer_name")
MAX_NAME_LINES = 3          # a name printed over at most this many lines
MAX_ADDRESS_LINES = 8       # an address over at most this many (the instruction schema allows 12)
MAX_ADDRESS_UP = 3          # lines an address start may move up to take in its first lines
MAX_ADDRESS_DOWN = 3       # lines it may move down, off registration / label lines
MIN_ADDRESS_EVIDENCE = 0.25  # address words, a house number with a comma, a postcode
_ADDRESS_KEYS = frozenset(LEXICON["address"] + ("no", "hq", "lot", "unit", "shop", "outlet", "branch", "add", "addr"))
_SKIPPABLE = ("registration", "key-value", "empty")   # lines between a name and its address

_CONTINUATION_START = re.compile(
    r"(?i)^\s*(?:&|\+|and\b|und\b|et\b|y\b|en\b|of\b|co\b\.?|company\b|sdn\b|bhd\b|s/b\b|ltd\b|limited\b|gmbh\b|ag\b|"
    r"kg\b|inc\b|llc\b|llp\b|plc\b|pte\b|pvt\b|corp\b|enterprises?\b|trading\b|industries\b|holdings?\b|s\.?a\.?\b|s\.?r\.?l\b|b\.?v\.?\b|n\.?v\.?\b|\(m\)|\(s\))")
_CONTINUATION_END = re.compile(r"(?i)(?:&|\+|-|\band|\bund|\bet|\bof|\bthe|\bde|\bvan|\bder)\s*$")
_LEGAL_END = re.compile(
    r"(?i)(?:\bsdn\.?\s*bhd\.?|\bs/b|\bbhd\.?|\bltd\.?|\blimited|\bgmbh|\bag|\bkg|\binc\.?|\bllc|\bplc|\bpte\.?\s*ltd\.?|"
    r"\bpvt\.?\s*ltd\.?|\bcorp\.?|\bs\.?a\.?|\bs\.?r\.?l\.?|\bb\.?v\.?|\bn\.?v\.?|\bco\.)\s*$")
_TRADE_END = re.compile(r"(?i)\b(?:trading|enterprises?|industries|holdings?)\s*$")   # a trade word ends a name
_TITLE_WORDS = frozenset({
    "invoice", "receipt", "tax", "bill", "cash", "order", "simplified", "official", "copy", "sales", "sale",
    "resit", "invois", "cukai", "rechnung", "quittung", "beleg", "kassenbon", "bon", "facture", "recu", "ticket",
    "factura", "recibo", "boleta", "factuur", "kwitantie", "welcome", "thank", "you", "member",
})
_KEY_VALUE = re.compile(r"^[^\d:]{1,25}:|\b(?:tel|telephone|fax|phone|mobile|hp|email|e-mail|www|http)\b", re.I)
_TAX_ID = re.compile(
    r"(?i)\b(?:reg(?:istration)?|co\.?\s*no|company\s*no|gst|sst|vat|tax\s*id|roc|br\s*no|brn|tin|abn|ust|btw|"
    r"siret|siren|nif|cif|uid|hrb|hra|kvk)\b")
_MORE_ADDRESS_WORDS = re.compile(
    r"(?i)\b(?:level|lvl|block|blok|bangunan|wisma|menara|tower|mall|plaza|centre|center|complex|kompleks|"
    r"seksyen|section|kawasan|bandar|kampung|kg|persiaran|lebuh|unit|flr|fl|floor|jln|jalan|tmn|taman|"
    r"square|park|court|drive|close|way|place|industrial|estate|postfach|cedex|piso|planta|"
    r"geb(?:ä|a)ude|etage|stockwerk|aufgang|eingang|b(?:â|a)timent|escalier|suite)\b")


# A street name compounded with its street word and followed by the house number, as German and Dutch
# print them ("MARKTPLATZ 184", "SCHILLERSTR. 10", "Gartenallee 24", "ORANJESINGEL 119").
_COMPOUND_STREET = re.compile(
    r"(?i)[^\W\d_]{2,}(?:stra(?:ss|ß)e|str\.|platz|weg|gasse|allee|damm|singel|laan|straat|steenweg)\s*\d+[a-z]?\b")


def address_evidence(text: str) -> float:
    """0..1: the baseline's street words, house numbers and postcodes, building / area words, and a
    compound street name with its number."""
    return min(1.0, _address_evidence(text) + 0.35 * len(_MORE_ADDRESS_WORDS.findall(text))
               + 0.35 * bool(_COMPOUND_STREET.search(text)))


_REG_SHAPE = re.compile(r"(?<![\w-])\d{5,}-?[A-Z](?![\w-])")   # "519537-X", "12345678Z": digits and a check letter


def has_registration(text: str) -> bool:
    """A registration or tax number, or its label: "(519537-X)", "GST NO: 0012...", "(GST ID"."""
    groups = re.findall(r"[(\[]([^()\[\]]{1,40})[)\]]", text)
    if any(is_registration(g) for g in groups) or _REG_SHAPE.search(text):
        return True
    tax = _TAX_ID.search(text)
    return bool(tax and (sum(ch.isdigit() for ch in text) >= 5 or address_evidence(text) < MIN_ADDRESS_EVIDENCE))


def has_phone(text: str) -> bool:
    toks = text.replace(":", " ").split()
    for k in (1, 2, 3, 4):
        for i in range(0, len(toks) - k + 1):
            chunk = " ".join(toks[i:i + k])
            if all(re.match(r"^\+?\(?\d[\d().-]*$", t) for t in toks[i:i + k]) and is_phone(chunk):
                return True
    return False


def is_title(text: str) -> bool:
    words = re.findall(r"[^\W\d_]+", text.casefold())
    return bool(words) and all(w in _TITLE_WORDS for w in words)


def not_address(text: str) -> str:
    """Why a line is not part of an address ("" when it may be): the next block has begun."""
    t = text.strip()
    if not t or sum(ch.isalnum() for ch in t) < 2:
        return "empty"
    if has_registration(t):
        return "registration"
    if has_phone(t) and address_evidence(norm.clean_address(t)) < MIN_ADDRESS_EVIDENCE:
        return "phone"
    kv = _KEY_VALUE.search(t)
    if kv and not (t[:kv.end()].rstrip().endswith(":") and fold_label(t[:kv.end()]) in _ADDRESS_KEYS
                   and address_evidence(t[kv.end():]) >= MIN_ADDRESS_EVIDENCE):
        return "key-value"                       # "NO: 28, JALAN ASTANA 1C," is an address line
    if is_title(t):
        return "title"
    if norm.find_dates(t):
        return "date"
    if len(norm.find_amounts(t)) >= 2 and address_evidence(t) < MIN_ADDRESS_EVIDENCE:
        return "amounts"
    if _LEGAL.search(t) and address_evidence(t) < 0.7:
        return "name"
    return ""


def name_continues_above(text: str) -> bool:
    """The line starts as the continuation of a name printed on the line above, or is a legal form
    with no name word before it ("CP. (M) SDN BHD", an OCR-damaged "CO. (M) SDN BHD")."""
    t = text.strip()
    if t.count(")") > t.count("(") and t.find(")") < (t.find("(") if "(" in t else len(t)):
        return True
    return bool(_CONTINUATION_START.match(t)) or _legal_without_name(t)


_BRACKET_GROUP = re.compile(r"[(\[][^()\[\]]*[)\]]")
MIN_NAME_WORD_LETTERS = 3   # a word of a name: "CP." or "(M)" before "SDN BHD" names nothing


def _legal_without_name(text: str) -> bool:
    """A legal form whose words before it, bracket groups left out, hold no word of
    `MIN_NAME_WORD_LETTERS` letters: the name itself is printed elsewhere (the line above)."""
    t = norm.clean_name(text)
    m = _LEGAL_END.search(t)
    if not m or m.start() == 0:
        return False
    before = _BRACKET_GROUP.sub(" ", t[:m.start()])
    return not any(sum(ch.isalpha() for ch in w) >= MIN_NAME_WORD_LETTERS for w in before.split())


def _ends_open(text: str) -> bool:
    """A name line that cannot end there: a connector or an open bracket at its end."""
    t = text.strip()
    return t.count("(") > t.count(")") or bool(_CONTINUATION_END.search(t))


def name_continues_below(text: str, below: str) -> bool:
    """The name on this line goes on on the next one: it ends with a connector or an open bracket,
    or the next line is the name's legal form ("SDN BHD", "GmbH & Co. KG")."""
    if _ends_open(text):
        return name_like(below)
    b = norm.clean_name(below.strip())
    if not name_like(b) or any(ch.isdigit() for ch in b) or len(b.split()) > 5:
        return False
    # "SDN BHD" under the name, or "RESTAURANT SDN BHD" under a name without its legal form, or
    # "PARTS TRADING" (one word and a trade word) under a name that ends in neither.
    if _LEGAL_END.search(text) or _TRADE_END.search(text):
        return bool(_CONTINUATION_START.match(b))
    return bool(_CONTINUATION_START.match(b)) or (bool(_LEGAL_END.search(b)) and _words_before_legal(b) <= 1) \
        or (bool(_TRADE_END.search(b)) and len(b.split()) == 2)


def _words_before_legal(text: str) -> int:
    m = _LEGAL_END.search(text)
    return len(text[:m.start()].split()) if m else 0


def legal_name_below(text: str, below: str) -> bool:
    """The next line is a whole registered name ("TK DIVISION KITCHEN SDN BHD" under a brand line
    "KIKU JAPANESE RESTAURANT"): the company is that line, not the brand above it."""
    b = norm.clean_name(below.strip())
    return not _LEGAL_END.search(norm.clean_name(text.strip())) and name_like(b) and \
        bool(_LEGAL_END.search(b)) and _words_before_legal(b) >= 2 and not any(ch.isdigit() for ch in b)


def name_like(text: str) -> bool:
    t = norm.clean_name(text.strip())
    letters = sum(ch.isalpha() for ch in t)
    digits = sum(ch.isdigit() for ch in t)
    return letters >= 2 and digits <= letters // 3 and ":" not in t and not has_registration(t) \
        and not has_phone(t) and not is_title(t)


# -- lines of one value, as the executor walks them ----------------------------------------------------

def _seg_span(seg: Segment) -> Span:
    return Span("text", seg.text, seg.text, seg.page, seg.line, seg.index, 0, len(seg.text), seg.bbox)


def _neighbour(ix: DocIndex, page: int, line: int, box, x0: float, step: int) -> Segment | None:
    pi = ix.page(page)
    li = line + step
    if not 0 <= li < len(pi.segments_by_line):
        return None
    segs = [s for s in pi.segments_by_line[li] if _column_overlap(s.bbox, box, pi.em)]
    if not segs:
        return None
    gap = (segs[0].bbox.y0 - box.y1) if step > 0 else (box.y0 - segs[0].bbox.y1)
    if gap > line_gap_limit(pi.em, box, segs[0].bbox):
        return None
    return min(segs, key=lambda s: abs(s.bbox.x0 - x0))


def _lines_from(ix: DocIndex, start: Span, n_max: int) -> list[str]:
    """The texts of up to `n_max` lines the executor would join from `start`."""
    out, last, li = [start.text], start.bbox, start.line
    while len(out) < n_max:
        seg = _neighbour(ix, start.page, li, last, start.bbox.x0, 1)
        if seg is None:
            break
        out.append(seg.text)
        last, li = seg.bbox, seg.line
    return out


def region_locator(ix: DocIndex, span: Span) -> Locator:
    """The span by its place on the page (as `proposals.propose` writes region locators)."""
    pi = ix.page(span.page)
    W, H = pi.page.width, pi.page.height
    b = span.bbox
    pad_x, pad_y = 0.02, 0.01
    return Locator(by="region", page=span.page if span.page == 1 else span.page - len(ix.pages) - 1,
                   bbox=(max(0.0, b.x0 / W - pad_x), max(0.0, b.y0 / H - pad_y),
                         min(1.0, b.x1 / W + pad_x), min(1.0, b.y1 / H + pad_y)), pick="nearest")


# -- the rules ----------------------------------------------------------------------------------------

def refine_rule(ix: DocIndex, spec: FieldSpec, p: Proposal, rule: FieldRule, locale: Locale) -> FieldRule:
    """The rule for a chosen name or address, delimited; any other rule as it is. A moved start is
    kept only where its locator, replayed on this document, reads the intended lines."""
    if spec.type != "text" or p.relation == "detect":
        return rule
    if spec.concept in NAME_CONCEPTS:
        return _name_rule(ix, p, rule, locale)
    if spec.concept == "address":
        return _address_rule(ix, p, rule, locale)
    return rule


def _name_rule(ix: DocIndex, p: Proposal, rule: FieldRule, locale: Locale) -> FieldRule:
    cleaned = replace(rule, normalize={**rule.normalize, "clean": "name"})
    start = p.span
    whole = (start.seg_start, start.seg_end) == (0, len(ix.segment(start.page, start.line, start.segment).text))
    if not whole:
        return cleaned                           # "Company: ACME GmbH": the value beside its label
    moved = False
    if not name_like(start.text):
        # "COMPANY REG. NO. : 725186-V" chosen under "ACME COMPANY": the name is the line above.
        up = _neighbour(ix, start.page, start.line, start.bbox, start.bbox.x0, -1)
        if up is None or not name_like(up.text) or not name_continues_above(start.text):
            return cleaned
        new = FieldRule(rule.type, region_locator(ix, _seg_span(up)), rule.fallbacks, {**rule.normalize, "clean": "name"})
        return new if _reads(ix, new, locale, _seg_span(up), [up.text]) else cleaned
    for _ in range(MAX_NAME_LINES - 1):
        up = _neighbour(ix, start.page, start.line, start.bbox, start.bbox.x0, -1)
        if up is None or not name_like(up.text) or \
                not (name_continues_above(start.text) or _ends_open(up.text)):
            break
        start, moved = _seg_span(up), True
    lines = [start.text]
    for _ in range(MAX_NAME_LINES - 1):
        nxt = _lines_from(ix, start, len(lines) + 1)
        if len(nxt) <= len(lines) or not name_continues_below(lines[-1], nxt[-1]):
            break
        lines = nxt
    if moved and len(lines) < 2:
        lines = _lines_from(ix, start, 2)
    if not moved and len(lines) == 1:
        nxt = _lines_from(ix, start, 2)
        if len(nxt) == 2 and legal_name_below(nxt[0], nxt[1]):
            down = _neighbour(ix, start.page, start.line, start.bbox, start.bbox.x0, 1)
            if down is not None:
                new = FieldRule(rule.type, region_locator(ix, _seg_span(down)), rule.fallbacks,
                                {**rule.normalize, "clean": "name"})
                return new if _reads(ix, new, locale, _seg_span(down), [down.text]) else cleaned
        return cleaned
    loc = region_locator(ix, start) if moved else rule.locator
    new = FieldRule(rule.type, loc, rule.fallbacks, {**rule.normalize, "clean": "name"}, len(lines) if len(lines) > 1 else None)
    return new if _reads(ix, new, locale, start, lines) else cleaned


def _numbered(text: str) -> bool:
    return any(ch.isdigit() or ch == "," for ch in text)


def _address_rule(ix: DocIndex, p: Proposal, rule: FieldRule, locale: Locale) -> FieldRule:
    cleaned = replace(rule, normalize={**rule.normalize, "clean": "address"})
    start = p.span
    seg = ix.segment(start.page, start.line, start.segment)
    if (start.seg_start, start.seg_end) != (0, len(seg.text)):
        return cleaned                           # "Address: 1 Main St": beside its label, as chosen
    moved = False
    if not_address(norm.clean_address(start.text)):
        # Off a registration / tax id / label line, over any more of them, onto the address.
        cur = start
        for _ in range(MAX_ADDRESS_DOWN):
            down = _neighbour(ix, cur.page, cur.line, cur.bbox, start.bbox.x0, 1)
            if down is None:
                break
            why = not_address(norm.clean_address(down.text))
            if not why and address_evidence(down.text) >= MIN_ADDRESS_EVIDENCE:
                start, moved = _seg_span(down), True
                break
            if why not in _SKIPPABLE:
                break
            cur = _seg_span(down)
    if not not_address(norm.clean_address(start.text)):
        for _ in range(MAX_ADDRESS_UP):          # take in the address's first lines
            up = _neighbour(ix, start.page, start.line, start.bbox, start.bbox.x0, -1)
            if up is None or not_address(up.text):
                break
            goes_on = up.text.rstrip().endswith(",")      # "WANGSA LINK, WANGSA MAJU," over "53300 ..."
            if not goes_on and address_evidence(up.text) < MIN_ADDRESS_EVIDENCE:
                break
            if not goes_on and not _numbered(up.text):
                # A middle line without a number ("TAMAN BERKELEY") belongs to the address only
                # when the line above it is a numbered address line ("LOT 2811, JALAN ANGSA,").
                above = _neighbour(ix, up.page, up.line, up.bbox, start.bbox.x0, -1)
                if above is None or not_address(above.text) or not _numbered(above.text) or \
                        address_evidence(above.text) < MIN_ADDRESS_EVIDENCE:
                    break                        # a first line prints a number or a comma ("LEVEL 6, ...")
            start, moved = _seg_span(up), True
    lines = _lines_from(ix, start, MAX_ADDRESS_LINES)
    n = 1
    while n < len(lines) and not not_address(norm.clean_address(lines[n])):
        n += 1
    loc = region_locator(ix, start) if moved else rule.locator
    new = FieldRule(rule.type, loc, rule.fallbacks, {**rule.normalize, "clean": "address"}, n if n > 1 else None)
    return new if _reads(ix, new, locale, start, lines[:n]) else cleaned


def _reads(ix: DocIndex, rule: FieldRule, locale: Locale, start: Span, lines: list[str]) -> bool:
    """The rule, replayed on this document, reads the lines it was written for."""
    found = locate_field(ix, rule, locale)
    return found is not None and found.provenance.page == start.page and \
        " ".join(t.strip() for t in lines) == found.provenance.text
