"""What an invoice's layout says about which proposal is the value, whatever scored them.

The scorers (the baseline's label similarity, the ranker's correction of it, the layout reader)
judge one proposal at a time. Some mistakes are only visible from the document's structure, and
hold for business documents in any language:

* a date on a version or stylesheet line ("ZUGFeRD-Version: 2.1 vom 24.03.2020"), or in a running
  header/footer that counts pages, is not a date of this invoice;
* a due date is the net one, not the date up to which a cash discount applies ("3% Skonto bis
  ..."); when the scorer took the discount date, the net date of the same terms replaces it;
* a party's name is the first line of its block under the caption ("Käufer:", "Bill to"), past
  key-value and code lines ("Nummer: 009420", "GLN 4304171000002"); a postcode/city line, a street
  line, a code, or a line under a label that has its own value beside it is no name, and a street
  line is no label;
* the totals agree: net + tax = gross, net and gross of one sign; among several agreeing triples (a
  tax summary prints one per rate) the document total is the largest; the tax the arithmetic
  vouches for is kept, and a credit note's tax printed without its minus takes the gross's sign
  (`normalize.sign_of`);
* the seller's VAT ID is neither the start of an IBAN nor the one printed in the buyer's block.

`refine(ix, specs, ranked)` re-orders each field's ranked proposals in place (only proposals the
generator already made: every value still comes with its locator, replayed without any model).
It runs after the scorer in `generator.generate`; fields it does not know are left alone.
"""
from __future__ import annotations

import re

from docassay.extractors.instructions.proposals import Proposal
from docassay.extractors.labels import FieldSpec, fold_label, label_score
from docassay.extractors.spans import DocIndex, Span

__all__ = ["refine", "version_line", "running_lines", "discount_clause", "address_line", "key_value_line",
           "key_value_segment", "code_like", "block_first_line", "promote", "demote", "DEMOTE", "AGREE_TOLERANCE"]

DEMOTE = 0.5                 # what a structural contradiction takes off a proposal's score
DEMOTE_BELOW = 0.01          # ... and at least this far below the best uncontradicted proposal
CAPTION_MIN = 0.8            # label_score at which a line above reads as the field's block caption
CONSIDER_MARGIN = 0.25       # totals: proposals within this of the field's best take part in the triples
AGREE_TOLERANCE = 0.011      # net + tax = gross, in currency units (one cent and rounding)
MAX_TOTAL_CANDIDATES = 8     # per total field, the best few (the triples are a cube of them)
TABLE_HEADER_CELLS = 3       # a line of this many digit-free cells is a table's header row
BLOCK_LINES = 6              # lines below a caption searched for the block's first name line

_PARTY = ("seller_name", "buyer_name")
_TOTALS = ("net_total", "tax_total", "gross_total")

# Version / revision / stylesheet lines: the software's or the form's date, not the document's.
_VERSION = re.compile(r"(?i)(?:\bversion\b|version\s*:|-version\b|\brevision\b|\brev\.\s*\d|\bstylesheet\b|"
                      r"\bcodelisten\b|©|\(c\))")
_PAGE_MARK = re.compile(r"(?i)\b(?:seite|page|blatt|pagina|p\.)\s*\d+\b")
# A cash-discount clause: the date up to which a discount applies is not the due date.
_DISCOUNT = re.compile(r"(?i)\b(?:skonto|discount|escompte|remise|rabatt|descuento|korting)\b")
_CLAUSE_BREAK = re.compile(r"[,;]|\d{1,4}[./-]\d{1,2}[./-]\d{1,4}")
# "DE 69876 Frankfurt", "69876 Frankfurt", "F-75001 Paris", "London SW1A 1AA"
_POSTCODE_CITY = re.compile(r"^(?:[A-Z]{1,3}[- ]?)?\d{4,5}\s+\D{2,}$|^\D{2,}\s+[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}$")
_STREET = re.compile(
    r"(?i)(?:stra(?:ss|ß)e|str\.|strasse\b|\bweg\b|weg\s+\d|gasse\b|allee\b|platz\b|\bstreet\b|\bst\.\s|\broad\b|"
    r"\brd\.?\b|\bavenue\b|\bave\b|\blane\b|\brue\b|\bboulevard\b|\bchemin\b|\bimpasse\b|"
    r"straat\b|plein\b|laan\b|kade\b|gracht\b|\bcalle\b|\bavenida\b|\bplaza\b|\bpaseo\b|\bvia\b|\bviale\b)")
# A caption that names a number ("Nº Cliente:", "Kunden-Nr.") labels a code, not a party's block.
_NUMBER_WORD = re.compile(r"\b(?:n|no|nr|num|number|nummer|numero|id|ref)\b")
_IBAN = re.compile(r"^[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}(?: ?[A-Z0-9]{1,3})?\b")
_HOUSE_NUMBER = re.compile(r"(?i)\b\d{1,4}[a-z]?\b")


# -- what a line is ---------------------------------------------------------------------------------

def line_text(ix: DocIndex, page: int, line: int) -> str:
    return " ".join(s.text for s in ix.page(page).segments_by_line[line])


def version_line(text: str) -> bool:
    """The line names a version, revision or stylesheet (a form's or software's date)."""
    return bool(_VERSION.search(text))


def running_lines(ix: DocIndex) -> set[tuple[int, int]]:
    """(page, line) of lines repeated on two or more pages (digits masked): running headers and
    footers such as "Seite 1 von 3 · Stand 01.02.2020"."""
    if len(ix.pages) < 2:
        return set()
    seen: dict[str, set[int]] = {}
    where: dict[str, list[tuple[int, int]]] = {}
    for pi in ix.pages:
        for li in range(len(pi.segments_by_line)):
            key = re.sub(r"\d", "0", fold_label(line_text(ix, pi.page.number, li)))
            if len(key) < 4:
                continue
            seen.setdefault(key, set()).add(pi.page.number)
            where.setdefault(key, []).append((pi.page.number, li))
    return {pl for key, pages in seen.items() if len(pages) >= 2 for pl in where[key]}


def _page_footer(ix: DocIndex, span: Span, running: set[tuple[int, int]]) -> bool:
    """A running header or footer that counts pages ("Seite 1 von 3 · Stand 01.02.2020"). A
    repeated line without a page count may be the invoice's own title line, date and all."""
    return (span.page, span.line) in running and bool(_PAGE_MARK.search(line_text(ix, span.page, span.line)))


def discount_clause(ix: DocIndex, span: Span) -> bool:
    """The words before a date, back to the previous date or comma, speak of a cash discount."""
    seg = ix.segment(span.page, span.line, span.segment)
    before = seg.text[:span.seg_start]
    cuts = [m.end() for m in _CLAUSE_BREAK.finditer(before)]
    clause = before[cuts[-1]:] if cuts else before
    if not cuts and span.segment:
        clause = " ".join(s.text for s in ix.page(span.page).segments_by_line[span.line][:span.segment]) + " " + clause
    return bool(_DISCOUNT.search(clause))


def address_line(text: str) -> bool:
    """A postcode-and-city line, or a street with its house number: the address, not a name."""
    t = text.strip()
    if _POSTCODE_CITY.match(t):
        return True
    return bool(_STREET.search(t)) and bool(_HOUSE_NUMBER.search(t))


def code_like(text: str) -> bool:
    """A number or code rather than a name ("GE2020211", "GLN 4304171000002"): a third digits."""
    t = text.replace(" ", "")
    return bool(t) and sum(ch.isdigit() for ch in t) * 3 >= len(t)


def street_label(label: str) -> bool:
    """A "label" that is a street name ("Lieferantenstraße" of "Lieferantenstraße 20", the number
    dropped as a rate would be): a line of the address, not a caption."""
    return bool(label) and bool(_STREET.search(label + " "))


def key_value_line(ix: DocIndex, page: int, line: int) -> bool:
    """A "Label: value" line ("Nummer : 009420", "Globale Nummer: 4000001123452 (GTIN)")."""
    segs = ix.page(page).segments_by_line[line]
    return any(key_value_segment(ix, page, line, i) for i in range(len(segs)))


def key_value_segment(ix: DocIndex, page: int, line: int, index: int) -> bool:
    """The segment is a label with its value ("USt-IdNr.: DE123"), or a label whose value follows
    in the next segment (": 009420")."""
    segs = ix.page(page).segments_by_line[line]
    t = segs[index].text.strip()
    if ":" in t.rstrip(":")[1:]:
        return True
    if index + 1 >= len(segs):
        return False
    nxt = segs[index + 1].text.strip()
    if nxt.startswith(":"):
        return True
    # "Name: || Lieferant GmbH"; not "Bill To: || Ship To:" nor "Bill to: || Invoice #: 123" (two columns)
    return t.endswith(":") and ":" not in nxt


# -- moving proposals -------------------------------------------------------------------------------

def demote(props: list[Proposal], bad: list[Proposal]) -> None:
    """Take `DEMOTE` off each of `bad`, and put them below the best of the rest: the structure
    contradicts them, whatever the scorer thought."""
    ids = {id(p) for p in bad}
    good = max((p.score for p in props if id(p) not in ids), default=None)
    for p in bad:
        p.score -= DEMOTE
        if good is not None:
            p.score = min(p.score, good - DEMOTE_BELOW)
    props.sort(key=lambda p: (-p.score, p.span.key))


def promote(props: list[Proposal], good: Proposal) -> None:
    """`good` first, at the best score the field had (the order is what the generator uses)."""
    if not props or props[0] is good:
        return
    good.score = max(good.score, props[0].score)
    props.remove(good)
    props.insert(0, good)


# -- the passes -------------------------------------------------------------------------------------

def _dates(ix: DocIndex, specs: list[FieldSpec], ranked: dict[str, list[Proposal]]) -> None:
    running = running_lines(ix)
    for spec in specs:
        if spec.type != "date" or not ranked.get(spec.name):
            continue
        props = ranked[spec.name]
        bad = [p for p in props if p.relation != "detect" and (
            version_line(line_text(ix, p.span.page, p.span.line)) or _page_footer(ix, p.span, running)
            or (spec.concept == "due_date" and discount_clause(ix, p.span)))]
        if not bad:
            continue
        top, top_score = props[0], props[0].score
        demote(props, bad)
        if spec.concept == "due_date" and top in bad and discount_clause(ix, top.span):
            _net_date_of_the_terms(props, top, top_score, bad)


def _net_date_of_the_terms(props: list[Proposal], discount: Proposal, score: float, bad: list[Proposal]) -> None:
    """The payment terms the scorer read a due date from print a discount date and the net one
    ("netto bis 04.04., 3% Skonto bis 15.03."): the net date in the same sentence is the due date,
    as sure as the scorer was of the terms."""
    same = [p for p in props if p not in bad and p.span.page == discount.span.page and p.span.line == discount.span.line
            and p.span.segment == discount.span.segment]
    if same:
        best = same[0]
        best.score = max(best.score, score)                        # the discount date's score before `demote`
        promote(props, best)


def _party_names(ix: DocIndex, specs: list[FieldSpec], ranked: dict[str, list[Proposal]]) -> None:
    for spec in specs:
        if spec.concept not in _PARTY or not ranked.get(spec.name):
            continue
        props = ranked[spec.name]
        bad = [p for p in props if address_line(p.span.text) or street_label(p.label) or code_like(p.span.text)
               or (p.span.seg_start == 0 and key_value_segment(ix, p.span.page, p.span.line, p.span.segment))
               or (p.relation == "below" and _label_line_is_not_caption(ix, p))]
        if bad:
            demote(props, bad)
        first = block_first_line(ix, spec, props)
        if first is not None and first not in bad:
            promote(props, first)


def block_first_line(ix: DocIndex, spec: FieldSpec, props: list[Proposal]) -> Proposal | None:
    """The proposal printed on the first name line under the field's block caption: a line above
    it reads as the field's label (own score >= CAPTION_MIN), and every line between is a key-value
    line. Of several, the one under the best caption (then the highest on the page)."""
    best: tuple[float, int, int, Proposal] | None = None
    for p in props:
        if p.relation != "below" or not p.label or p.span.seg_start != 0:
            continue
        own = label_score(p.label, spec.labels)[0]
        if own < CAPTION_MIN or _NUMBER_WORD.search(fold_label(p.label)) or p.span.text.rstrip().endswith(":") or \
                address_line(p.span.text) or code_like(p.span.text) or \
                key_value_segment(ix, p.span.page, p.span.line, p.span.segment):
            continue
        cap = _caption_line(ix, p)
        if cap is None or any(not _skippable(ix, p, li) for li in range(cap + 1, p.span.line)):
            continue
        key = (-own, p.span.page, p.span.line, p)
        if best is None or key[:3] < best[:3]:
            best = key
    return best[3] if best else None


def _label_line_is_not_caption(ix: DocIndex, p: Proposal) -> bool:
    """The label above a value has its own value beside it ("Name: || Factoring GmbH"), or heads a
    column of a table ("Name || Dateiname || Art"): the line below is not what it labels."""
    cap = _caption_line(ix, p)
    if cap is None:
        return False
    segs = ix.page(p.span.page).segments_by_line[cap]
    label = fold_label(p.label)
    own = next((i for i, s in enumerate(segs) if label in fold_label(s.text)), None)
    if own is not None and key_value_segment(ix, p.span.page, cap, own):
        return True
    return len(segs) >= TABLE_HEADER_CELLS and not any(ch.isdigit() for s in segs for ch in s.text)


def _skippable(ix: DocIndex, p: Proposal, line: int) -> bool:
    """A line between a block's caption and its name: in the name's column, only key-value
    segments and numbers or codes (another column's "Invoice date: ..." does not count)."""
    pi = ix.page(p.span.page)
    box = p.span.bbox
    segs = [i for i, s in enumerate(pi.segments_by_line[line])
            if min(s.bbox.x1, box.x1 + pi.em) - max(s.bbox.x0, box.x0 - pi.em) > 0]
    return all(key_value_segment(ix, p.span.page, line, i) or code_like(pi.segments_by_line[line][i].text)
               for i in segs)


def _caption_line(ix: DocIndex, p: Proposal) -> int | None:
    label = fold_label(p.label)
    for li in range(p.span.line - 1, max(-1, p.span.line - 1 - BLOCK_LINES), -1):
        if label and label in fold_label(line_text(ix, p.span.page, li)):
            return li
    return None


def _totals(specs: list[FieldSpec], ranked: dict[str, list[Proposal]]) -> None:
    """Pick net, tax and gross so that net + tax = gross, net and gross of one sign (a credit note
    is negative throughout); of several agreeing triples the one with the largest gross (a per-rate
    line of the tax summary agrees with itself too), then the best scored. Net and gross come from
    the proposals within `CONSIDER_MARGIN` of their field's best; the tax may be any of its
    proposals, since the arithmetic vouches for it. Nothing moves when no triple agrees."""
    names = {s.concept: s.name for s in specs if s.concept in _TOTALS and s.type in ("amount", "number")}
    if len(names) < 3 or any(not ranked.get(n) for n in names.values()):
        return
    gross, net = _pool(ranked[names["gross_total"]]), _pool(ranked[names["net_total"]])
    taxes: dict[float, Proposal] = {}
    for p in ranked[names["tax_total"]]:
        if isinstance(p.value, (int, float)):
            taxes.setdefault(round(float(p.value), 2), p)
    best: tuple[float, float, tuple[Proposal, Proposal, Proposal]] | None = None
    for g in gross:
        for n in net:
            gv, nv = float(g.value), float(n.value)                              # type: ignore[arg-type]
            if gv == 0 or nv * gv < 0 or abs(nv) > abs(gv) + AGREE_TOLERANCE:
                continue
            t = _near(taxes, gv - nv)
            if t is None and gv < 0:
                t = _near(taxes, abs(gv - nv))         # a credit note's tax printed without its minus
            if t is None or abs(float(t.value)) > abs(nv) + AGREE_TOLERANCE:     # type: ignore[arg-type]
                continue                               # no tax rate is over 100 %: net and tax swapped
            key = (abs(gv), g.score + n.score + t.score)
            if best is None or key > best[:2]:
                best = (key[0], key[1], (n, t, g))
    if best is None:
        return
    n, t, g = best[2]
    # The arithmetic vouches for the tax as much as the scorer does for net and gross.
    t.score = max(t.score, min(n.score, g.score))
    if float(g.value) < 0 < float(t.value):                                     # type: ignore[arg-type]
        t.normalize = {**t.normalize, "sign_of": names["gross_total"]}
        t.value = -float(t.value)                                               # type: ignore[arg-type]
    for concept, p in zip(_TOTALS, best[2]):
        if ranked[names[concept]][0] is not p:
            promote(ranked[names[concept]], p)


def _near(by_value: dict[float, Proposal], want: float) -> Proposal | None:
    hits = [(abs(v - want), p) for v, p in by_value.items() if abs(v - want) <= AGREE_TOLERANCE]
    return min(hits, key=lambda t: t[0])[1] if hits else None


def _pool(props: list[Proposal]) -> list[Proposal]:
    top = props[0].score
    out: list[Proposal] = []
    seen: set[float] = set()
    for p in props:
        if p.score < top - CONSIDER_MARGIN or len(out) >= MAX_TOTAL_CANDIDATES:
            break
        if isinstance(p.value, (int, float)) and float(p.value) not in seen:
            seen.add(float(p.value))
            out.append(p)
    return out


def iban_start(ix: DocIndex, span: Span) -> bool:
    """The span begins an IBAN printed in groups ("NL82" of "NL82 9402 1510 6037 37"), or follows
    the word IBAN: a bank account, not a VAT ID."""
    seg = ix.segment(span.page, span.line, span.segment)
    if _IBAN.match(seg.text[span.seg_start:]):
        return True
    return bool(re.search(r"(?i)\biban\W*$", seg.text[:span.seg_start]))


def _vat_not_iban(ix: DocIndex, specs: list[FieldSpec], ranked: dict[str, list[Proposal]]) -> None:
    for spec in specs:
        if spec.concept == "seller_vat_id" and ranked.get(spec.name):
            bad = [p for p in ranked[spec.name] if p.relation != "detect" and iban_start(ix, p.span)]
            if bad:
                demote(ranked[spec.name], bad)


def _seller_vat_block(specs: list[FieldSpec], ranked: dict[str, list[Proposal]]) -> None:
    """A seller VAT ID whose block is headed by the buyer's name is the buyer's."""
    by = {s.concept: s.name for s in specs}
    vat, buyer, seller = (ranked.get(by.get(c, "")) for c in ("seller_vat_id", "buyer_name", "seller_name"))
    if not vat or not buyer:
        return
    buyer_name = fold_label(str(buyer[0].value))
    seller_name = fold_label(str(seller[0].value)) if seller else ""
    if not buyer_name or buyer_name == seller_name:
        return
    bad = [p for p in vat if p.section and fold_label(p.section) == buyer_name]
    if bad and any(p not in bad for p in vat):
        demote(vat, bad)


def refine(ix: DocIndex, specs: list[FieldSpec], ranked: dict[str, list[Proposal]]) -> dict[str, list[Proposal]]:
    """Re-order the ranked proposals of dates, party names, totals and the seller's VAT ID by what
    the document's structure says (module docstring). In place; returns `ranked`."""
    _dates(ix, specs, ranked)
    _party_names(ix, specs, ranked)
    _totals(specs, ranked)
    _vat_not_iban(ix, specs, ranked)
    _seller_vat_block(specs, ranked)
    return ranked

