"""Proposal -> model token: hashed feature ids and a fixed vector of numbers. No download, no vocabulary.

Two feature versions; a checkpoint records the one it was trained with and the scorer computes that
one (`featurize(..., version=)`), refusing any other.

**Version 2 (current): features that transfer to real documents.** Only what does not depend on a
document's exact wording: the text of a label or a section heading enters through the *lexicon
concepts* it reads as (`labels.LEXICON` and `labels.COLUMN_LEXICON`, several languages), never
through its characters or words, so a German "Rechnungsnr." and an English "Invoice No" give the
same ids, and the synthetic generator's favourite phrasings cannot be memorised.

    F    field: name words, concept, type, description words (the schema: what is being asked)
    R    relation and locator kind;  FxR field x relation
    VC   coarse value class (letters/digits/separators, words, capitals, legal form); FxVC field x class
    FxLC field x each concept the label reads as, with a strength bucket (>= 0.95, 0.75, 0.5; weaker
         token overlaps, "TOTAL ITEM(S)" as a total, are left to the numeric label scores),
         or "none" / "no label"; FxLCxR field x the label's best concept x relation
    FxSC field x each concept the section heading reads as (same buckets), or "none" / "no section"

Numbers: those of version 1 (below), except that `same_value` is 1 when the value is printed in two
or more places (version 1: log of the number of proposals with the value, which grows with how many
labels a layout prints around a value, a habit of the format), and the context the baseline's priors
use: amounts on the same line, address evidence, font size rank on the page, the label reading as a
table column header, the value reading as a label, a legal form in the label, and the proposal's
place among its field's proposals by the baseline's score (gap to the best, rank).

**Version 1 (the first shipped model).** Text becomes ids by hashing words and character 3-grams:

    L  label: character 3-grams of the folded label (with word boundaries) and its words
    S  section heading: words and 3-grams                V  value: its shape ("Aa 9-9") and, for text, words
    F  field: name words, concept, description words     R  relation and locator kind
    crosses: field x label word, field x section word, field x relation, field x value shape,
             value type x label word

It learned the synthetic generator's wording and did not transfer to real documents.

Numbers of version 1 (`NUMERIC_V1`, in this order): the relation and locator, where the span sits
(position, page, font size relative to the page's), the field's value type, what the value looks like
(magnitude and rank among the document's amounts, letters and digits, legal forms), the label and
section similarity scores of the baseline (`labels.label_score`, own field against its rivals), and
the baseline's own score. Ids are crc32 hashes (stable across processes) into `N_BUCKETS` buckets.
"""
from __future__ import annotations

import math
import re
import zlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from docassay.extractors.instructions.baseline import _COMPAT, _LEGAL, _address_evidence, _font_rank
from docassay.extractors.instructions.proposals import Proposal
from docassay.extractors.labels import COLUMN_LEXICON, LEXICON, FieldSpec, fold_label, label_score
from docassay.extractors.spans import DocIndex

__all__ = ["FEATURE_VERSION", "FEATURE_VERSIONS", "N_BUCKETS", "NUMERIC", "N_NUMERIC", "DocFeatures", "featurize",
           "numeric_names", "value_shape", "value_class"]

FEATURE_VERSION = 2
FEATURE_VERSIONS = (1, 2)
N_BUCKETS = 1 << 15
_RELATIONS = ("right", "below", "region", "detect", "pattern")
_TYPES = ("date", "amount", "number", "integer", "identifier", "currency", "text")
NUMERIC_V1 = (
    *(f"rel_{r}" for r in _RELATIONS), "occ_zero", "occ_negative", "occ_abs", "skip",
    "x0", "y0", "x1", "y1", "page_first", "page_last", "page_pos", "font_rel",
    *(f"type_{t}" for t in _TYPES),
    "has_label", "label_words", "label_colon", "has_section",
    "amount_log", "amount_negative", "amount_zero", "amount_rank", "amount_is_max",
    "text_len", "text_words", "digit_ratio", "upper_ratio", "legal_form", "value_colon",
    "own_label", "rival_label", "label_gap", "own_section", "rival_section", "baseline",
    "same_value", "required", "multiline",
)
NUMERIC_V2 = (
    *NUMERIC_V1,
    "same_line_values", "address_evidence", "font_rank", "column_label", "value_is_label", "label_legal",
    "baseline_gap", "baseline_rank",
)


def numeric_names(version: int = FEATURE_VERSION) -> tuple[str, ...]:
    """The numeric features of `version`, in column order."""
    if version not in FEATURE_VERSIONS:
        raise ValueError(f"feature version must be one of {FEATURE_VERSIONS}, got {version!r}")
    return NUMERIC_V1 if version == 1 else NUMERIC_V2


NUMERIC = numeric_names(FEATURE_VERSION)
N_NUMERIC = len(NUMERIC)


@dataclass
class DocFeatures:
    """Token features of one document, in the order of `fields` then of each field's proposals."""
    ids: np.ndarray            # [T] int64
    id_start: np.ndarray       # [N+1] int64
    num: np.ndarray            # [N, len(NUMERIC)] float32
    group: np.ndarray          # [N] int64, index into `fields`
    fields: list[str]
    proposals: list[Proposal]  # [N]


def _h(ns: str, s: str) -> int:
    return zlib.crc32(f"{ns}\x1f{s}".encode("utf-8")) % N_BUCKETS


@lru_cache(maxsize=65536)
def _text_ids(ns: str, text: str) -> tuple[int, ...]:
    """Words and character 3-grams of folded `text` in namespace `ns`."""
    t = fold_label(text)
    if not t:
        return ()
    out = [_h(ns + "w", w) for w in t.split()[:8]]
    padded = f"^{t[:40]}$"
    out += [_h(ns + "3", padded[i:i + 3]) for i in range(len(padded) - 2)]
    return tuple(out)


@lru_cache(maxsize=65536)
def _words(text: str) -> tuple[str, ...]:
    return tuple(fold_label(text).split()[:8])


_SHAPE_SUBS = ((re.compile(r"[^\W\d_]+", re.UNICODE), "a"), (re.compile(r"\d+"), "9"))


@lru_cache(maxsize=65536)
def value_shape(text: str) -> str:
    """Letters -> a, digits -> 9, runs collapsed, case kept as A for an uppercase run: 'R-2019/07' -> 'A-9/9'."""
    out = []
    for tok in re.findall(r"[^\W\d_]+|\d+|\s+|.", text[:40], re.UNICODE):
        if tok[0].isdigit():
            out.append("9")
        elif tok[0].isalpha():
            out.append("A" if tok.isupper() and len(tok) > 1 else "a")
        elif tok.isspace():
            out.append(" ")
        else:
            out.append(tok)
    return "".join(out)


@lru_cache(maxsize=4096)
def _field_ids(name: str, concept: str, description: str, vtype: str) -> tuple[int, ...]:
    out = [_h("Fn", w) for w in fold_label(name).split()] + [_h("Fc", concept), _h("Ft", vtype), _h("Fname", name)]
    out += [_h("Fd", w) for w in fold_label(description).split()[:30]]
    return tuple(out)


def featurize(ix: DocIndex, specs: list[FieldSpec], proposals: dict[str, list[Proposal]],
              version: int = FEATURE_VERSION) -> DocFeatures:
    """Features (of feature `version`) of every proposal of every field of one document. Reads each
    proposal's `score` as the baseline's (call `baseline.score_proposals` first; the scorer does)."""
    names = numeric_names(version)
    amounts = sorted({abs(float(s.value)) for s in ix.spans("amount") if isinstance(s.value, float)})
    amount_rank = {v: i / max(len(amounts) - 1, 1) for i, v in enumerate(amounts)}
    max_amount = amounts[-1] if amounts else None
    n_pages = len(ix.pages)
    ids: list[int] = []
    id_start = [0]
    rows: list[list[float]] = []
    group: list[int] = []
    props: list[Proposal] = []
    fields = [s.name for s in specs if proposals.get(s.name)]
    ctx = _DocContext(ix) if version >= 2 else None
    for gi, name in enumerate(fields):
        spec = next(s for s in specs if s.name == name)
        rival_specs = [r for r in specs if r.name != name and r.type in _COMPAT.get(spec.type, {spec.type})]
        rivals = tuple(r.labels for r in rival_specs)
        fids = _field_ids(spec.name, spec.concept or "", spec.description, spec.type)
        counts: dict[str, int] = {}
        places: dict[str, set] = {}
        for p in proposals[name]:
            counts[repr(p.value)] = counts.get(repr(p.value), 0) + 1
            places.setdefault(repr(p.value), set()).add(p.span.key)
        best = max(float(p.score) for p in proposals[name])
        by_score = sorted(range(len(proposals[name])), key=lambda i: -float(proposals[name][i].score))
        rank = {i: r for r, i in enumerate(by_score)}
        all_labels = frozenset(spec.labels + tuple(l for r in rival_specs for l in r.labels))
        for pi_, p in enumerate(proposals[name]):
            tok = list(fids)
            tok += _ids_v1(spec, p) if version == 1 else _ids_v2(spec, p)
            ids.extend(tok)
            id_start.append(len(ids))
            same = math.log(counts[repr(p.value)]) if version == 1 else float(len(places[repr(p.value)]) > 1)
            row = _numeric(ix, spec, rivals, p, amount_rank, max_amount, n_pages, same)
            if ctx is not None:
                row += ctx.extra(spec, p, all_labels, float(p.score) - best, rank[pi_])
            rows.append(row)
            group.append(gi)
            props.append(p)
    num = np.asarray(rows, dtype=np.float32).reshape(len(rows), len(names))
    return DocFeatures(np.asarray(ids, dtype=np.int64), np.asarray(id_start, dtype=np.int64), num,
                       np.asarray(group, dtype=np.int64), fields, props)


def _ids_v1(spec: FieldSpec, p: Proposal) -> list[int]:
    """Version 1 ids beyond the field's: label and section words and 3-grams, value shape and words,
    relation, and crosses of the field with label words, section words, relation and value shape."""
    fkey = spec.name
    tok = list(_text_ids("L", p.label))
    tok += _text_ids("S", p.section)
    shape = value_shape(p.span.text)
    tok.append(_h("V", shape))
    tok.append(_h("R", f"{p.relation}|{p.locator.by}"))
    tok.append(_h("FxR", f"{fkey}|{p.relation}"))
    tok.append(_h("FxV", f"{fkey}|{shape}"))
    if spec.type == "text":
        tok += [_h("Vw", w) for w in _words(p.span.text)[:6]]
    for w in _words(p.label):
        tok.append(_h("FxL", f"{fkey}|{w}"))
        tok.append(_h("TxL", f"{spec.type}|{w}"))
    for w in _words(p.section)[:4]:
        tok.append(_h("FxS", f"{fkey}|{w}"))
    return tok


# Every lexicon concept a label may read as: the scalar fields' and the table columns' ("Qty", "Amount").
_CONCEPTS: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    [(c, tuple(dict.fromkeys(fold_label(x) for x in words))) for c, words in LEXICON.items()]
    + [(f"col:{c}", tuple(dict.fromkeys(fold_label(x) for x in words))) for c, words in COLUMN_LEXICON.items()])
_COLUMN_CONCEPTS = tuple(labels for c, labels in _CONCEPTS if c.startswith("col:"))


@lru_cache(maxsize=65536)
def concept_matches(text: str) -> tuple[tuple[str, float], ...]:
    """The lexicon concepts `text` reads as (`labels.label_score` >= 0.3), best first, with their scores."""
    if not text:
        return ()
    hits = [(c, label_score(text, labels)[0]) for c, labels in _CONCEPTS]
    return tuple(sorted(((c, s) for c, s in hits if s >= 0.3), key=lambda cs: (-cs[1], cs[0])))


def _bucket(score: float) -> str:
    return "1" if score >= 0.95 else "h" if score >= 0.75 else "m"


@lru_cache(maxsize=65536)
def value_class(text: str) -> str:
    """A coarse class of a printed value that does not name it: letters (L), digits (D), both (LD);
    separators inside; 1, 2 or 3+ words; mostly capitals (C); a legal form (G). 'Müller GmbH' -> 'L|w2|G'."""
    letters = sum(ch.isalpha() for ch in text)
    digits = sum(ch.isdigit() for ch in text)
    kind = ("L" if letters else "") + ("D" if digits else "") or "P"
    seps = "s" if any(ch in "-/._" for ch in text.strip()) else ""
    words = len(text.split())
    caps = "C" if letters >= 2 and sum(ch.isupper() for ch in text) >= 0.8 * letters else ""
    legal = "G" if _LEGAL.search(text) else ""
    return f"{kind}{seps}|w{min(words, 3)}|{caps}{legal}"


def _ids_v2(spec: FieldSpec, p: Proposal) -> list[int]:
    """Version 2 ids beyond the field's: relation, value class, and the lexicon concepts the label and
    the section heading read as, each crossed with the field (see the module docstring)."""
    f = spec.name
    vc = value_class(p.span.text)
    tok = [_h("R", f"{p.relation}|{p.locator.by}"), _h("FxR", f"{f}|{p.relation}"), _h("VC", vc), _h("FxVC", f"{f}|{vc}")]
    if p.label:
        lc = [(c, sc) for c, sc in concept_matches(p.label) if sc >= 0.5]
        tok += [_h("FxLC", f"{f}|{c}|{_bucket(sc)}") for c, sc in lc[:4]] or [_h("FxLC", f"{f}|none")]
        tok.append(_h("FxLCxR", f"{f}|{lc[0][0] if lc else 'none'}|{p.relation}"))
    else:
        tok.append(_h("FxLC", f"{f}|nolabel|{p.relation}"))
    if p.section:
        sc_ = [(c, sc) for c, sc in concept_matches(p.section) if sc >= 0.5]
        tok += [_h("FxSC", f"{f}|{c}|{_bucket(sc)}") for c, sc in sc_[:3]] or [_h("FxSC", f"{f}|none")]
    else:
        tok.append(_h("FxSC", f"{f}|nosection"))
    return tok


class _DocContext:
    """Per-document lookups for the version 2 numbers."""

    def __init__(self, ix: DocIndex) -> None:
        self.ix = ix
        self.per_line: dict[tuple[str, int, int], int] = {}
        for kind in ("amount", "date"):
            for x in ix.spans(kind):
                key = (kind, x.page, x.line)
                self.per_line[key] = self.per_line.get(key, 0) + 1

    def extra(self, spec: FieldSpec, p: Proposal, all_labels: frozenset[str], gap: float, rank: int) -> list[float]:
        kind = "date" if spec.type == "date" else "amount"
        same_line = self.per_line.get((kind, p.span.page, p.span.line), 0) if spec.type in (
            "amount", "number", "integer", "date") else 0
        text = p.span.text
        col = max((label_score(p.label, labels)[0] for labels in _COLUMN_CONCEPTS), default=0.0) if p.label else 0.0
        return [
            math.log1p(max(same_line - 1, 0)),
            _address_evidence(text) if spec.type == "text" else 0.0,
            _font_rank(self.ix, p) if spec.type == "text" else 0.0,
            col,
            1.0 if text.rstrip().endswith(":") or fold_label(text) in all_labels else 0.0,
            1.0 if p.label and _LEGAL.search(p.label) and len(p.label.split()) > 1 else 0.0,
            max(gap, -2.0) / 2,
            min(rank, 10) / 10,
        ]


def _numeric(ix: DocIndex, spec: FieldSpec, rivals: tuple[tuple[str, ...], ...], p: Proposal,
             amount_rank: dict[float, float], max_amount: float | None, n_pages: int, same: float) -> list[float]:
    pi = ix.page(p.span.page)
    W, H = max(pi.page.width, 1.0), max(pi.page.height, 1.0)
    b = p.span.bbox
    occ = p.locator.occurrence if p.locator.by == "anchor" else 0
    text = p.span.text
    letters = sum(ch.isalpha() for ch in text)
    digits = sum(ch.isdigit() for ch in text)
    uppers = sum(ch.isupper() for ch in text)
    v = p.value
    is_amount = isinstance(v, float) and spec.type in ("amount", "number", "integer")
    a = v if isinstance(v, float) else 0.0         # the amount (read only where is_amount)
    own = label_score(p.label, spec.labels)[0] if p.label else 0.0
    rival = max((label_score(p.label, r)[0] for r in rivals), default=0.0) if p.label else 0.0
    s_own = label_score(p.section, spec.labels)[0] if p.section else 0.0
    s_rival = max((label_score(p.section, r)[0] for r in rivals), default=0.0) if p.section else 0.0
    label_words = fold_label(p.label).split() if p.label else []
    row = [
        *(1.0 if p.relation == r else 0.0 for r in _RELATIONS),
        1.0 if occ == 0 else 0.0, 1.0 if occ < 0 else 0.0, min(abs(occ), 5) / 5, min(p.locator.skip or p.rank_hint, 5) / 5,
        b.x0 / W, b.y0 / H, b.x1 / W, b.y1 / H,
        1.0 if p.span.page == 1 else 0.0, 1.0 if p.span.page == n_pages else 0.0, (p.span.page - 1) / max(n_pages - 1, 1),
        math.log(max(b.height, 0.1) / max(pi.em, 0.1)),
        *(1.0 if spec.type == t else 0.0 for t in _TYPES),
        1.0 if p.label else 0.0, min(len(label_words), 8) / 8, 1.0 if p.label.rstrip().endswith(":") else 0.0,
        1.0 if p.section else 0.0,
        math.log10(1 + abs(a)) / 6 if is_amount else 0.0, 1.0 if is_amount and a < 0 else 0.0,
        1.0 if is_amount and a == 0 else 0.0, amount_rank.get(abs(a), 0.0) if is_amount else 0.0,
        1.0 if is_amount and max_amount is not None and abs(a) == max_amount else 0.0,
        min(len(text), 60) / 60, min(len(text.split()), 10) / 10, digits / max(len(text), 1),
        uppers / max(letters, 1), 1.0 if _LEGAL.search(text) else 0.0, 1.0 if text.rstrip().endswith(":") else 0.0,
        own, rival, own - rival, s_own, s_rival, float(p.score),
        same, 1.0 if spec.required else 0.0, 1.0 if spec.multiline else 0.0,
    ]
    return row
