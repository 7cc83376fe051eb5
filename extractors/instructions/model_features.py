"""Proposal -> model token: hashed text features and a fixed vector of numbers. No download, no vocabulary.

Text becomes ids by hashing (crc32, stable across processes) into `N_BUCKETS` buckets, each id in
a namespace:

    L  label: character 3-grams of the folded label (with word boundaries) and its words
    S  section heading: words and 3-grams                V  value: its shape ("Aa 9-9") and, for text, words
    F  field: name words, concept, description words     R  relation and locator kind
    crosses: field x label word, field x section word, field x relation, field x value shape,
             value type x label word (what carries over to a field the model has never seen)

Numbers (`NUMERIC`, in this order): the relation and locator, where the span sits (position, page,
font size relative to the page's), the field's value type, what the value looks like (magnitude and
rank among the document's amounts, letters and digits, legal forms), the label and section
similarity scores of the baseline (`labels.label_score`, own field against its rivals), and the
baseline's own score. `FEATURE_VERSION` changes whenever any of this does; a checkpoint records the
version it was trained with and the scorer refuses a mismatch.
"""
from __future__ import annotations

import math
import re
import zlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from extractors.instructions.baseline import _COMPAT, _LEGAL
from extractors.instructions.proposals import Proposal
from extractors.labels import FieldSpec, fold_label, label_score
from extractors.spans import DocIndex

__all__ = ["FEATURE_VERSION", "N_BUCKETS", "NUMERIC", "N_NUMERIC", "DocFeatures", "featurize", "value_shape"]

FEATURE_VERSION = 1
N_BUCKETS = 1 << 15
_RELATIONS = ("right", "below", "region", "detect", "pattern")
_TYPES = ("date", "amount", "number", "integer", "identifier", "currency", "text")
NUMERIC = (
    *(f"rel_{r}" for r in _RELATIONS), "occ_zero", "occ_negative", "occ_abs", "skip",
    "x0", "y0", "x1", "y1", "page_first", "page_last", "page_pos", "font_rel",
    *(f"type_{t}" for t in _TYPES),
    "has_label", "label_words", "label_colon", "has_section",
    "amount_log", "amount_negative", "amount_zero", "amount_rank", "amount_is_max",
    "text_len", "text_words", "digit_ratio", "upper_ratio", "legal_form", "value_colon",
    "own_label", "rival_label", "label_gap", "own_section", "rival_section", "baseline",
    "same_value", "required", "multiline",
)
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


def featurize(ix: DocIndex, specs: list[FieldSpec], proposals: dict[str, list[Proposal]]) -> DocFeatures:
    """Features of every proposal of every field of one document. Reads each proposal's `score` as
    the baseline's (call `baseline.score_proposals` first; the scorer does)."""
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
    for gi, name in enumerate(fields):
        spec = next(s for s in specs if s.name == name)
        rivals = tuple(r.labels for r in specs if r.name != name and r.type in _COMPAT.get(spec.type, {spec.type}))
        fids = _field_ids(spec.name, spec.concept or "", spec.description, spec.type)
        fkey = spec.name
        counts: dict[str, int] = {}
        for p in proposals[name]:
            counts[repr(p.value)] = counts.get(repr(p.value), 0) + 1
        for p in proposals[name]:
            tok = list(fids)
            tok += _text_ids("L", p.label)
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
            ids.extend(tok)
            id_start.append(len(ids))
            rows.append(_numeric(ix, spec, rivals, p, amount_rank, max_amount, n_pages, counts[repr(p.value)]))
            group.append(gi)
            props.append(p)
    num = np.asarray(rows, dtype=np.float32).reshape(len(rows), len(NUMERIC))
    return DocFeatures(np.asarray(ids, dtype=np.int64), np.asarray(id_start, dtype=np.int64), num,
                       np.asarray(group, dtype=np.int64), fields, props)


def _numeric(ix: DocIndex, spec: FieldSpec, rivals: tuple[tuple[str, ...], ...], p: Proposal,
             amount_rank: dict[float, float], max_amount: float | None, n_pages: int, same: int) -> list[float]:
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
        math.log10(1 + abs(v)) / 6 if is_amount else 0.0, 1.0 if is_amount and v < 0 else 0.0,
        1.0 if is_amount and v == 0 else 0.0, amount_rank.get(abs(v), 0.0) if is_amount else 0.0,
        1.0 if is_amount and max_amount is not None and abs(v) == max_amount else 0.0,
        min(len(text), 60) / 60, min(len(text.split()), 10) / 10, digits / max(len(text), 1),
        uppers / max(letters, 1), 1.0 if _LEGAL.search(text) else 0.0, 1.0 if text.rstrip().endswith(":") else 0.0,
        own, rival, own - rival, s_own, s_rival, float(p.score),
        math.log(same), 1.0 if spec.required else 0.0, 1.0 if spec.multiline else 0.0,
    ]
    return row
