"""Replay instructions on a document: values with provenance, and the alternatives the page offers.

`execute(instructions, doc_or_index)` returns an `Extraction`: the record (keys as in the
instructions), provenance per field path (`"invoice_number"`, `"line_items/0/description"`), and per
scalar field the other readings a repair stage may try (other spans near the anchor, other date
orders, other decimal conventions). No model is involved: this is the known-format path.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from docassay.extractors import normalize as norm
from docassay.extractors.document import BBox, Document
from docassay.extractors.instructions import values as V
from docassay.extractors.instructions.language import FieldRule, Instructions, Locale, Locator, TableRule
from docassay.extractors.labels import fold_label
from docassay.extractors.spans import DocIndex, LabelMatch, Segment, Span

__all__ = ["Provenance", "FieldValue", "Extraction", "execute", "locate", "execute_table"]

MAX_REGEX_INPUT = 400
# Lines a below/above text anchor reads, counting only lines with a letter: every segment of them
# is a candidate, so a key-value line ("Nummer || : 009420") uses one line, not two places, and a
# party's name three lines under its caption is reached. (It was three segments, letters or not:
# the first candidates are the same, so instructions written before replay unchanged.)
TEXT_BELOW_LINES = 3


@dataclass(frozen=True)
class Provenance:
    page: int
    bbox: BBox
    text: str
    anchor: str

    def to_json(self) -> dict:
        return {"page": self.page, "bbox": self.bbox.as_list(), "text": self.text, "anchor": self.anchor}


@dataclass(frozen=True)
class FieldValue:
    value: object
    provenance: Provenance
    how: str = ""                     # what produced this reading (for repair diagnostics)


@dataclass
class Extraction:
    record: dict[str, object] = field(default_factory=dict)
    provenance: dict[str, Provenance] = field(default_factory=dict)
    alternatives: dict[str, list[FieldValue]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)

    def provenance_json(self) -> dict[str, dict]:
        return {k: v.to_json() for k, v in self.provenance.items()}


def execute(ins: Instructions, doc: Document | DocIndex, *, with_alternatives: bool = True) -> Extraction:
    ix = doc if isinstance(doc, DocIndex) else DocIndex(doc)
    out = Extraction()
    for name, rule in ins.fields.items():
        found = locate_field(ix, rule, ins.locale)
        if found is None:
            out.missing.append(name)
        else:
            out.record[name] = found.value
            out.provenance[name] = found.provenance
        if with_alternatives:
            out.alternatives[name] = alternatives(ix, rule, ins.locale, found)
    _apply_sign_of(ins, out)
    for name, table in ins.tables.items():
        rows, provs = execute_table(ix, table, ins.locale)
        if rows:
            out.record[name] = rows
            for i, row_prov in enumerate(provs):
                for col, p in row_prov.items():
                    out.provenance[f"{name}/{i}/{col}"] = p
        else:
            out.missing.append(name)
    return out


# -- scalar fields ----------------------------------------------------------------------------------

def _apply_sign_of(ins: Instructions, out: Extraction) -> None:
    """`normalize: {"sign_of": F}`: an amount printed without its sign takes the sign of field F
    (a credit note's tax under negative totals). Nothing changes when F was not read or is 0."""
    for name, rule in ins.fields.items():
        other = rule.normalize.get("sign_of") if rule.normalize else None
        v, ref = out.record.get(name), out.record.get(str(other)) if other else None
        if isinstance(v, float) and isinstance(ref, (int, float)) and ref != 0:
            out.record[name] = abs(v) if ref > 0 else -abs(v)


def locate_field(ix: DocIndex, rule: FieldRule, locale: Locale) -> FieldValue | None:
    for loc in (rule.locator, *rule.fallbacks):
        found = locate(ix, loc, rule, locale)
        if found is not None:
            return found
    return None


def locate(ix: DocIndex, loc: Locator, rule: FieldRule, locale: Locale) -> FieldValue | None:
    """The value one locator points at, normalised; None when the document does not have it."""
    hits = candidates_for(ix, loc, rule)
    for span in hits[loc.skip:] if loc.by == "anchor" else hits:
        fv = _to_value(ix, span, rule, locale, loc.describe())
        if fv is not None:
            return fv
    return None


def candidates_for(ix: DocIndex, loc: Locator, rule: FieldRule) -> list[Span]:
    """Spans the locator would consider, best first (before normalisation)."""
    if loc.by == "anchor":
        return _anchor_candidates(ix, loc, rule.type)
    if loc.by == "region":
        return _region_candidates(ix, loc, rule.type)
    if loc.by == "pattern":
        return _pattern_candidates(ix, loc)
    if loc.by == "detect":
        return _detect_currency(ix)
    return []


def _span_type(vtype: str) -> str:
    return {"number": "amount", "integer": "amount", "boolean": "text"}.get(vtype, vtype)


def _label_occurrence(ix: DocIndex, loc: Locator) -> LabelMatch | None:
    matches = ix.find_label(loc.label or "", page=loc.page)
    if loc.exact:
        matches = [m for m in matches if m.whole]
    if not matches:
        return None
    i = loc.occurrence
    if -len(matches) <= i < len(matches):
        return matches[i]
    return None


def _anchor_candidates(ix: DocIndex, loc: Locator, vtype: str) -> list[Span]:
    m = _label_occurrence(ix, loc)
    if m is None:
        return []
    page = ix.page(m.page)
    em = page.em
    pw, ph = page.page.width, page.page.height
    lb = m.bbox
    rel = loc.relation
    if vtype == "text":
        return _text_near(ix, m, rel or "right", loc.max_distance)
    spans = [s for s in ix.spans(_span_type(vtype)) if s.page == m.page]
    scored: list[tuple[float, Span]] = []
    for s in spans:
        b = s.bbox
        if s.line == m.line and s.segment == m.segment and s.seg_start < m.seg_end and s.seg_end > m.seg_start:
            continue                                     # the label itself
        if rel == "right":
            if b.y_overlap(lb) < 0.4 or b.x1 <= lb.x1 - 0.5:
                continue
            if s.line == m.line and s.segment == m.segment and s.seg_start < m.seg_end:
                continue
            d = max(0.0, b.x0 - lb.x1)
            limit = (loc.max_distance or 0.75) * pw
        elif rel == "left":
            if b.y_overlap(lb) < 0.4 or b.x0 >= lb.x0:
                continue
            d = max(0.0, lb.x0 - b.x1)
            limit = (loc.max_distance or 0.5) * pw
        elif rel == "below":
            if b.y0 < lb.y1 - 0.3 * em or not _column_overlap(b, lb, em):
                continue
            d = (b.y0 - lb.y1) + 0.25 * abs(b.x0 - lb.x0)
            limit = (loc.max_distance or 0.12) * ph
        elif rel == "above":
            if b.y1 > lb.y0 + 0.3 * em or not _column_overlap(b, lb, em):
                continue
            d = (lb.y0 - b.y1) + 0.25 * abs(b.x0 - lb.x0)
            limit = (loc.max_distance or 0.12) * ph
        else:
            continue
        if d <= limit:
            scored.append((d, s))
    scored.sort(key=lambda t: (t[0], t[1].key))
    return [s for _, s in scored]


def _column_overlap(b: BBox, lb: BBox, em: float) -> bool:
    return (min(b.x1, lb.x1 + em) - max(b.x0, lb.x0 - em)) > 0 or abs(b.x0 - lb.x0) < 2 * em


def _text_near(ix: DocIndex, m: LabelMatch, rel: str, max_distance: float | None) -> list[Span]:
    """Text value beside a label: the rest of the label's segment, else the nearest segment."""
    pi = ix.page(m.page)
    seg = ix.segment(m.page, m.line, m.segment)
    out: list[Span] = []
    if rel == "right":
        rest = seg.text[m.seg_end:]
        lead = len(rest) - len(rest.lstrip(" :.-"))
        if sum(ch.isalnum() for ch in rest) >= 1:
            s0, e0 = m.seg_end + lead, len(seg.text.rstrip())
            out.append(Span("text", seg.text[s0:e0], seg.text[s0:e0], seg.page, seg.line, seg.index, s0, e0,
                            ix.sub_bbox(seg, s0, e0)))
        limit = (max_distance or 0.75) * pi.page.width
        for other in pi.segments_by_line[m.line][m.segment + 1:]:
            if other.bbox.x0 - m.bbox.x1 <= limit:
                out.append(_whole(other))
        # A value on the same visual line but grouped into a neighbouring line by the parser.
        for li in (m.line - 1, m.line + 1):
            if 0 <= li < len(pi.segments_by_line):
                for other in pi.segments_by_line[li]:
                    if other.bbox.y_overlap(m.bbox) >= 0.5 and other.bbox.x0 >= m.bbox.x1 and \
                            other.bbox.x0 - m.bbox.x1 <= limit:
                        out.append(_whole(other))
    elif rel in ("below", "above"):
        limit = (max_distance or 0.12) * pi.page.height
        step = 1 if rel == "below" else -1
        li = m.line + step
        lettered_lines = 0
        while 0 <= li < len(pi.segments_by_line):
            segs = [s for s in pi.segments_by_line[li] if _column_overlap(s.bbox, m.bbox, pi.em)]
            dist = (segs[0].bbox.y0 - m.bbox.y1) if (segs and rel == "below") else ((m.bbox.y0 - segs[0].bbox.y1) if segs else 0)
            if segs and dist > limit:
                break
            segs.sort(key=lambda s: abs(s.bbox.x0 - m.bbox.x0))
            out.extend(_whole(s) for s in segs)
            if any(any(ch.isalpha() for ch in s.text) for s in segs):
                lettered_lines += 1
            if lettered_lines >= TEXT_BELOW_LINES:
                break
            li += step
    elif rel == "left":
        for other in reversed(pi.segments_by_line[m.line][:m.segment]):
            out.append(_whole(other))
    return [s for s in out if sum(ch.isalpha() for ch in s.text) >= 1]


def _whole(seg: Segment) -> Span:
    return Span("text", seg.text, seg.text, seg.page, seg.line, seg.index, 0, len(seg.text), seg.bbox)


def _region_candidates(ix: DocIndex, loc: Locator, vtype: str) -> list[Span]:
    page_no = loc.page or 1
    n = len(ix.pages)
    page_no = page_no if page_no > 0 else n + 1 + page_no
    if not 1 <= page_no <= n:
        return []
    pi = ix.page(page_no)
    x0, y0, x1, y1 = loc.bbox or (0.0, 0.0, 1.0, 1.0)
    W, H = pi.page.width, pi.page.height
    if vtype == "text":
        pool = [_whole(s) for s in pi.segments]
    else:
        pool = [s for s in ix.spans(_span_type(vtype)) if s.page == page_no]
    inside = [s for s in pool if x0 <= s.bbox.cx / W <= x1 and y0 <= s.bbox.cy / H <= y1]
    pick = loc.pick or "nearest"
    if pick == "last":
        inside.reverse()
    elif pick == "largest" and vtype in ("amount", "number", "integer"):
        inside.sort(key=lambda s: -abs(float(s.value)) if isinstance(s.value, (int, float)) else 0.0)
    elif pick == "nearest":
        cx, cy = (x0 + x1) / 2 * W, (y0 + y1) / 2 * H
        inside.sort(key=lambda s: (s.bbox.cx - cx) ** 2 + (s.bbox.cy - cy) ** 2)
    return inside


def _pattern_candidates(ix: DocIndex, loc: Locator) -> list[Span]:
    try:
        rx = re.compile(loc.regex or "")
    except re.error:
        return []
    hits: list[Span] = []
    for pi in ix.pages:
        if loc.page is not None and pi.page.number != (loc.page if loc.page > 0 else len(ix.pages) + 1 + loc.page):
            continue
        for seg in pi.segments:
            text = seg.text[:MAX_REGEX_INPUT]
            for m in rx.finditer(text):
                g = 1 if rx.groups >= 1 and m.group(1) is not None else 0
                s, e = m.span(g)
                if e > s:
                    hits.append(Span("text", text[s:e], text[s:e], seg.page, seg.line, seg.index, s, e,
                                     ix.sub_bbox(seg, s, e)))
    occ = loc.occurrence
    if hits and -len(hits) <= occ < len(hits):
        first = hits[occ]
        return [first] + [h for h in hits if h is not first]
    return []


def _detect_currency(ix: DocIndex) -> list[Span]:
    """The currency the document's amounts are in (by vote), located where it is first printed.
    Voted once per document (`ix.memo`): every replay, fix and proposal of a currency field asks."""
    found = ix.memo.get(("detect_currency",))
    if found is None:
        code = norm.detect_currency(seg.text for pi in ix.pages for seg in pi.segments)
        found = ix.memo[("detect_currency",)] = () if code is None else tuple(
            s for s in ix.spans("currency") if s.value == code)
    assert isinstance(found, tuple)
    return list(found)


def _to_value(ix: DocIndex, span: Span, rule: FieldRule, locale: Locale, anchor: str) -> FieldValue | None:
    text = span.text
    bbox = span.bbox
    if rule.type == "text" and rule.lines and rule.lines > 1:
        text, bbox = _gather_lines(ix, span, rule.lines)
    if rule.type == "currency" and span.type == "currency":
        value = span.value                      # judged with its context when the span was found
    else:
        value = V.normalize(text, rule.type, locale, rule.normalize)
    if value is None:
        return None
    return FieldValue(value, Provenance(span.page, bbox, text, anchor))


LINE_GAP = 1.5     # the most space between two lines of one value, in text heights
BIG_TEXT = 1.3     # lines at least this many times the page's text height are printed large


def line_gap_limit(em: float, a: BBox, b: BBox) -> float:
    """The most vertical space between two lines of one value: `LINE_GAP` times the page's text
    height, or times the two lines' own (smaller) height where both are printed large (a shop's
    name in a big font over two lines)."""
    h = min(a.height, b.height)
    return LINE_GAP * (h if h >= BIG_TEXT * em else em)


def _gather_lines(ix: DocIndex, span: Span, n: int) -> tuple[str, BBox]:
    """A value printed over several lines (an address): following lines aligned with the first."""
    pi = ix.page(span.page)
    texts, box = [span.text], span.bbox
    li = span.line
    last = span.bbox
    while len(texts) < n:
        li += 1
        if li >= len(pi.segments_by_line):
            break
        segs = [s for s in pi.segments_by_line[li] if _column_overlap(s.bbox, last, pi.em)]
        if not segs or segs[0].bbox.y0 - last.y1 > line_gap_limit(pi.em, last, segs[0].bbox):
            break
        seg = min(segs, key=lambda s: abs(s.bbox.x0 - span.bbox.x0))
        texts.append(seg.text)
        box = box.union(seg.bbox)
        last = seg.bbox
    return " ".join(t.strip() for t in texts), box


def alternatives(ix: DocIndex, rule: FieldRule, locale: Locale, found: FieldValue | None, limit: int = 6) -> list[FieldValue]:
    """Other readings of a field: further spans near its anchor, other normalisations of its text."""
    out: list[FieldValue] = []
    seen: set[object] = {found.value} if found else set()
    if found is not None:
        for alt in V.readings(found.provenance.text, rule.type, locale):
            if alt not in seen:
                seen.add(alt)
                out.append(FieldValue(alt, found.provenance, "other reading"))
    for loc in (rule.locator, *rule.fallbacks):
        for span in candidates_for(ix, loc, rule)[:limit]:
            fv = _to_value(ix, span, rule, locale, loc.describe())
            if fv is not None and fv.value not in seen:
                seen.add(fv.value)
                out.append(FieldValue(fv.value, fv.provenance, "nearby span"))
    return out[:limit]


# -- tables -----------------------------------------------------------------------------------------

@dataclass
class _Header:
    page: int
    y1: float
    line: int
    zones: list[tuple[float, float, str | None]]   # every header cell: x-extent, mapped column or None
    bounds: list[tuple[str | None, float, float]]  # assignment intervals (midpoints between cells)


def _find_headers(ix: DocIndex, table: TableRule) -> list[_Header]:
    """Header rows of the table: lines (or two-three stacked lines) printing enough column labels.

    Every cell of the header row becomes a zone, mapped or not ("Pos", "USt." are zones of no
    column), so a value under an unmapped header is not pulled into a neighbouring column.
    """
    need = table.min_header_matches or min(2, len(table.columns))
    out: list[_Header] = []
    for pi in ix.pages:
        per_line: dict[int, dict[str, LabelMatch]] = {}
        for col, spec in table.columns.items():
            for m in ix.find_label(spec.header, page=pi.page.number):
                per_line.setdefault(m.line, {}).setdefault(col, m)
        for li in sorted(per_line):
            cols = dict(per_line[li])
            band = [li]
            for lj in (li + 1, li + 2):
                if lj < len(pi.page.lines) and abs(pi.page.lines[lj].bbox.y0 - pi.page.lines[band[-1]].bbox.y1) < 1.0 * pi.em:
                    band.append(lj)
                    for c, m in per_line.get(lj, {}).items():
                        cols.setdefault(c, m)
                else:
                    break
            if len(cols) < need or any(h.page == pi.page.number and abs(h.line - li) <= 2 for h in out):
                continue
            last_line = max(m.line for m in cols.values())
            band = [b for b in band if b <= last_line]
            band, last_line = _grow_band(ix, pi, band, last_line)
            zones = _header_zones(pi, band, cols)
            y1 = max(pi.page.lines[b].bbox.y1 for b in band)
            out.append(_Header(pi.page.number, y1, last_line, zones, _bounds(zones, pi.page.width)))
    return out


def _grow_band(ix: DocIndex, pi, band: list[int], last_line: int) -> tuple[list[int], int]:
    """Stacked header lines around the matched ones ("Art-Nr-Kunde" over "Pos", "ohne USt." under
    "Positionsbetrag"): tightly spaced lines that print no value belong to the header."""
    def value_free(li: int) -> bool:
        return not any(s.line == li and s.page == pi.page.number for s in ix.spans("amount")) and \
            bool(pi.segments_by_line[li])
    lines = pi.page.lines
    top, bottom = min(band), max(band)
    while top > 0 and lines[top].bbox.y0 - lines[top - 1].bbox.y1 < 0.6 * pi.em and value_free(top - 1):
        top -= 1
    while bottom + 1 < len(lines) and lines[bottom + 1].bbox.y0 - lines[bottom].bbox.y1 < 0.6 * pi.em \
            and value_free(bottom + 1) and bottom - top < 5:
        bottom += 1
    return list(range(top, bottom + 1)), max(last_line, bottom)


def _header_zones(pi, band: list[int], cols: dict[str, LabelMatch]) -> list[tuple[float, float, str | None]]:
    cells: list[list[float]] = []                   # [x0, x1] merged over stacked header lines
    for li in band:
        for seg in pi.segments_by_line[li]:
            for cell in cells:
                if min(cell[1], seg.bbox.x1) - max(cell[0], seg.bbox.x0) > 0:
                    cell[0], cell[1] = min(cell[0], seg.bbox.x0), max(cell[1], seg.bbox.x1)
                    break
            else:
                cells.append([seg.bbox.x0, seg.bbox.x1])
    # Column labels split a cell that holds several of them ("Menge VKE/Geb" in one segment).
    zones: list[tuple[float, float, str | None]] = []
    for x0, x1 in sorted(cells):
        inside = sorted(((m.bbox.x0, m.bbox.x1, c) for c, m in cols.items()
                         if m.bbox.x0 >= x0 - 1 and m.bbox.x1 <= x1 + 1), key=lambda t: t[0])
        if not inside:
            zones.append((x0, x1, None))
            continue
        cursor = x0
        for i, (mx0, mx1, c) in enumerate(inside):
            if mx0 - cursor > 2:
                zones.append((cursor, mx0, None))
            # Words after a label in the same cell finish that label ("Total línea", "Prix unit. HT")
            # until one names a column of its own ("IVA %", "Unit", "Rabatt").
            limit = inside[i + 1][0] if i + 1 < len(inside) else x1
            end = mx1
            for w in sorted((w for li in band for w in pi.page.line_words(pi.page.lines[li])
                             if w.bbox.x0 >= mx1 - 0.5 and w.bbox.x1 <= limit + 0.5), key=lambda w: w.bbox.x0):
                if _OTHER_COLUMN.match(fold_label(w.text)) or not fold_label(w.text):
                    break
                end = w.bbox.x1
            zones.append((mx0, end, c))
            cursor = end
        if x1 - cursor > 2:
            zones.append((cursor, x1, None))
    return zones


# Header words that head a column of their own (tax rate, unit, discount, codes), not the end of
# a neighbour's multi-word header.
_OTHER_COLUMN = re.compile(
    r"^(?:tax|vat|gst|sst|iva|igic|tva|btw|mwst|ust|steuer\w*|%|rate|satz|taux|tarif|tipo|"
    r"unit|units|uom|einheit|eenheid|eenh|unite|ud|uds|u|me|"
    r"code|ref|reference|referencia|nr|no|pos|art|sku|ean|gtin|"
    r"disc|discount|rabatt|rab|remise|descuento|dto|korting|"
    r"qty|quantity|menge|anz|anzahl|qte|quantite|cant|cantidad|aantal|"
    r"price|preis|prix|precio|prijs|total|totaal|betrag|montant|importe|bedrag|amount)$")


def _bounds(zones: list[tuple[float, float, str | None]], width: float) -> list[tuple[str | None, float, float]]:
    order = sorted(zones, key=lambda z: z[0])
    out: list[tuple[str | None, float, float]] = []
    for i, (x0, x1, c) in enumerate(order):
        left = 0.0 if i == 0 else (order[i - 1][1] + x0) / 2
        right = width if i == len(order) - 1 else (x1 + order[i + 1][0]) / 2
        out.append((c, left, right))
    return out


def _assign(bounds: list[tuple[str | None, float, float]], zones: list[tuple[float, float, str | None]], b: BBox) -> str | None:
    best, best_ov = None, 0.0
    for x0, x1, c in zones:
        ov = min(b.x1, x1) - max(b.x0, x0)
        if ov > best_ov:
            best, best_ov = (c,), ov
    if best is not None:
        return best[0]
    for c, left, right in bounds:
        if left <= b.cx < right:
            return c
    return None


# A line under an item that carries a reference (an order or article number, a GTIN, a date) is a
# note about the item, not more of its description.
_REFERENCE_LINE = re.compile(r"\d{4,}|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|:\s*\S")


# Item descriptions that wrap sit close under each other: a larger gap (x em) starts a note.
WRAP_GAP = 1.0
# A line of this many cells without a digit, below rows, is another table's header.
HEADER_CELLS = 3


def _has_letter(text: str) -> bool:
    return any(ch.isalpha() for ch in text)


def _article_code(text: str) -> bool:
    """One token of letters and digits, a third or more digits ("ZS997", "GZ250"): an article
    number, not an item's name."""
    t = text.strip()
    return " " not in t and any(ch.isalpha() for ch in t) and sum(ch.isdigit() for ch in t) * 3 >= len(t)


def _header_like(segs: list[Segment]) -> bool:
    return len(segs) >= HEADER_CELLS and not any(ch.isdigit() for s in segs for ch in s.text)


def _wraps(text: str, cells: dict[str, tuple[str, BBox]], multiline: str | None, desc_y: float | None,
           y0: float, em: float, table: TableRule) -> bool:
    """A line continues the open description (a wrapped item name): right under its last line,
    no reference or heading ("Verpackung: Karton", "Weitere Eigenschaften:"), and no words of
    it in another column (a note printed across the table)."""
    if desc_y is None or y0 - desc_y > WRAP_GAP * em:
        return False
    if _REFERENCE_LINE.search(text) or text.rstrip().endswith(":"):
        return False
    return not any(c != multiline and _has_letter(t) for c, (t, _b) in cells.items())


def execute_table(ix: DocIndex, table: TableRule, locale: Locale) -> tuple[list[dict], list[dict[str, Provenance]]]:
    headers = _find_headers(ix, table)
    if not headers:
        return [], []
    row_key = table.row_key or next(iter(table.columns))
    multiline = table.multiline
    rows: list[dict] = []
    provs: list[dict[str, Provenance]] = []
    stops = [s for s in table.stop]
    pages = {h.page: h for h in headers}
    current: _Header | None = None
    stopped = False
    for pi in ix.pages:
        pno = pi.page.number
        if pno in pages:
            current, stopped = pages[pno], False
            start_line = current.line + 1
        elif current is not None and not stopped:
            start_line = 0                        # the table runs on over the page break
        else:
            continue
        # A stop label opens its line ("Summe netto 473,00"), it is not a word inside a row.
        stop_lines = sorted(m.line for s in stops for m in ix.find_label(s, page=pno)
                            if m.line >= start_line and m.segment == 0 and m.seg_start == 0)
        end_line = stop_lines[0] if stop_lines else len(pi.page.lines)
        if stop_lines:
            stopped = True
        last_y = None
        desc_y: float | None = None               # bottom of the open description's last line
        for li in range(start_line, end_line):
            line = pi.page.lines[li]
            if last_y is not None and line.bbox.y0 - last_y > 6 * pi.em and rows:
                stopped = True                    # a wide vertical gap ends the table
                break
            if rows and _header_like(pi.segments_by_line[li]):
                stopped = True                    # another table's header (a tax summary) ends this one
                break
            cells: dict[str, tuple[str, BBox]] = {}
            for wid in line.word_ids:
                w = pi.page.words[wid]
                col = _assign(current.bounds, current.zones, w.bbox)
                if col is None:
                    continue
                t, b = cells.get(col, ("", None))
                cells[col] = ((t + " " + w.text).strip(), w.bbox if b is None else b.union(w.bbox))
            if not cells:
                continue
            values: dict[str, object] = {}
            for col, (t, _box) in cells.items():
                v = V.normalize(t, table.columns[col].type, locale, {})
                if v is not None:
                    values[col] = v
            starts = row_key in values and not (multiline in cells and not _has_letter(cells[multiline][0]))
            if starts:
                rows.append({})
                provs.append({})
                desc_y = line.bbox.y1 if multiline in values else None
            if not rows:
                continue
            row, prov = rows[-1], provs[-1]
            numeric_elsewhere = any(c != multiline and c in values and table.columns[c].type != "text" for c in values)
            appended = False
            for col, v in values.items():
                t, b = cells[col]
                if col not in row:
                    row[col] = v
                    prov[col] = Provenance(pno, b, t, f"table column {table.columns[col].header!r}")
                    if col == multiline and not starts:
                        desc_y = line.bbox.y1
                elif col == multiline and not starts and not numeric_elsewhere and isinstance(row[col], str) \
                        and _wraps(t, cells, multiline, desc_y, line.bbox.y0, pi.em, table):
                    old = prov[col]
                    if _article_code(str(row[col])):
                        # The row's line printed only the article code; the name is the line below.
                        row[col] = v
                        prov[col] = Provenance(pno, b, t, old.anchor)
                    else:
                        row[col] = f"{row[col]} {v}"
                        prov[col] = Provenance(pno, old.bbox.union(b) if old.page == pno else old.bbox, row[col], old.anchor)
                    appended = True
            if not starts and not appended:
                desc_y = None                     # a note or reference line: the description is closed
            elif appended:
                desc_y = line.bbox.y1
            last_y = line.bbox.y1
    keep = [i for i, r in enumerate(rows) if len(r) >= 2 or (len(r) == 1 and len(table.columns) == 1)]
    return [rows[i] for i in keep], [provs[i] for i in keep]
