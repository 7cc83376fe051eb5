"""Build the evidence behind each value of a record (verifiers.evidence.FieldEvidence) from an
extraction: how it was found (label, table, position, ...), the label it was found by, and the
generic signs of a wrong reading that the `evidence` gate judges.

This bridges extractors and verifiers (verifiers never import extractors): it reads provenance
anchors written by the executor and uses the extractors' label vocabulary and value readers.

    value_is_label  a text value that is itself a label: its folded text is a label phrase of
                    the built-in vocabulary (any field, any column), it ends with a colon, or the
                    page prints a colon right after it ("Nummer   : 549910")
    reads_as        a text value that reads entirely as a date ("14 MAR 2018 18:40"), as an
                    amount ("1.234,50"), as an identifier (one token holding five digits or more:
                    "ESA57144817"), or is "label: value" ("TEL : 03-3271 9872")
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Mapping

from docassay.extractors import normalize as norm
from docassay.extractors.labels import COLUMN_LEXICON, LEXICON, fold_label
from docassay.verifiers.evidence import FieldEvidence

__all__ = ["build_evidence", "value_is_label", "reads_as"]

_LABEL_VALUE = re.compile(r"^\s*([^\W\d_][^\d:]{0,30}?)\s*[:#]\s*(\S.*)$", re.UNICODE)
_TIME = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\s*(?:am|pm)?\b", re.IGNORECASE)
_MAX_LABEL_WORDS = 4


@lru_cache(maxsize=1)
def _label_phrases() -> frozenset[str]:
    phrases = {fold_label(p) for lex in (LEXICON, COLUMN_LEXICON) for ps in lex.values() for p in ps}
    return frozenset(p for p in phrases if len(p) >= 3)


def value_is_label(text: str) -> bool:
    """True when the printed text is a label, not a value: a vocabulary label phrase, or words
    ending with a colon."""
    t = text.strip()
    if not t or len(t) > 60:
        return False
    if t.endswith(":") and any(ch.isalpha() for ch in t):
        return True
    folded = fold_label(t)
    words = folded.split()
    if not 0 < len(words) <= _MAX_LABEL_WORDS:
        return False
    phrases = _label_phrases()
    return folded in phrases or (len(words) > 1 and all(w in phrases for w in words))


def reads_as(text: str) -> str | None:
    """What a name or text value reads as instead, when it reads entirely as something else."""
    t = text.strip()
    if not t:
        return None
    bare = _TIME.sub(" ", t).strip(" ,.-")
    if bare and norm.parse_date(bare) is not None and _covers(bare):
        return "date"
    a = norm.parse_amount(t)
    if a is not None and sum(ch.isalpha() for ch in t) <= 3 and sum(ch.isdigit() for ch in t) >= 1:
        return "amount"
    if " " not in t and sum(ch.isdigit() for ch in t) >= 5:
        return "identifier"
    m = _LABEL_VALUE.match(t)
    if m and sum(ch.isdigit() for ch in m.group(2)) >= max(3, len(m.group(2).replace(" ", "")) // 2):
        lab = fold_label(m.group(1))
        if lab and len(lab.split()) <= 3:
            return "label: value"
    return None


def _covers(text: str) -> bool:
    """The date found is most of the text (not a date inside a longer name)."""
    letters = re.sub(r"[\d\s.,/\-:]", "", text)
    return len(letters) <= 9                                    # a month name at most


def _how(anchor: str) -> tuple[str, str | None]:
    if anchor.startswith("region"):
        return "position", None
    if anchor.startswith("pattern"):
        return "pattern", None
    if anchor.startswith("detect"):
        return "detected", None
    if anchor.startswith("table"):
        return "table", None
    if " -> " in anchor:
        label = anchor.rsplit(" -> ", 1)[0]
        return "label", re.sub(r"#-?\d+$", "", label)
    return "unknown", None


def colon_follows(document: Any, page: int | None, bbox: tuple[float, float, float, float] | None) -> bool:
    """True when, on the printed line, the word right after the value's last word is (or starts
    with) a colon: the value is the caption of a "label : value" pair."""
    pages = getattr(document, "pages", None)
    if not pages or page is None or bbox is None or not 1 <= page <= len(pages):
        return False
    pg = pages[page - 1]
    x0, y0, x1, y1 = bbox
    inside = [i for i, w in enumerate(pg.words)
              if min(w.bbox.x1, x1) - max(w.bbox.x0, x0) > 0.5 * max(w.bbox.x1 - w.bbox.x0, 1e-6)
              and min(w.bbox.y1, y1) - max(w.bbox.y0, y0) > 0.5 * max(w.bbox.y1 - w.bbox.y0, 1e-6)]
    if not inside:
        return False
    last = max(inside, key=lambda i: pg.words[i].bbox.x1)
    li = pg.words[last].line
    if not 0 <= li < len(pg.lines):
        return False
    ids = list(pg.lines[li].word_ids)
    if last not in ids:
        return False
    pos = ids.index(last)
    return pos + 1 < len(ids) and pg.words[ids[pos + 1]].text.lstrip().startswith(":")


def build_evidence(record: Mapping[str, Any], extraction: Any, kinds: Mapping[str, str],
                   document: Any = None) -> dict[str, FieldEvidence]:
    """One FieldEvidence per top-level scalar field of `record` (arrays: by their first row).

    `extraction` is the executor's Extraction the record came from (or was repaired from: a
    value that differs from the extraction's is looked up among its alternatives, `reading`);
    `kinds` maps field -> verification kind (only text-like fields get `reads_as`); `document`
    (the parsed Document, optional) lets a value followed by a printed colon count as a label.
    """
    out: dict[str, FieldEvidence] = {}
    ext_rec = getattr(extraction, "record", None) or {}
    provs = getattr(extraction, "provenance", None) or {}
    alts = getattr(extraction, "alternatives", None) or {}
    for name, value in record.items():
        if isinstance(value, list):
            if value and any(k.startswith(f"{name}/0/") for k in provs):
                out[name] = FieldEvidence(name, "table")
            continue
        prov, how_extra = None, None
        if name in ext_rec and ext_rec.get(name) == value:
            prov = provs.get(name)
        else:
            for a in alts.get(name) or []:
                if getattr(a, "value", None) == value:
                    prov, how_extra = a.provenance, "reading"
                    break
        if prov is None:
            out[name] = FieldEvidence(name, "unknown")
            continue
        how, label = _how(getattr(prov, "anchor", "") or "")
        text = getattr(prov, "text", "") or ""
        kind = kinds.get(name, "text")
        textual = kind in ("text", "identifier") and isinstance(value, str)
        box = getattr(prov, "bbox", None)
        bbox = (box.x0, box.y0, box.x1, box.y1) if box is not None and hasattr(box, "x0") else None
        out[name] = FieldEvidence(
            name, how_extra or how, text=text, label=label, page=getattr(prov, "page", None), bbox=bbox,
            value_is_label=textual and (value_is_label(text) or colon_follows(document, getattr(prov, "page", None), bbox)),
            reads_as=reads_as(text) if textual and kind == "text" else None)
    return out
