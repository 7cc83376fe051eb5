"""Formats, documents, and streams of them, with disjoint format-seed ranges per split.

    make_format(seed, kind)            -> Format     (a pure function of seed and kind)
    make_document(fmt, seed)           -> SynthDoc   (a pure function of format and seed)
    generate(n_formats, docs_per_format, kind, seed, split) -> Iterator[SynthDoc]

Split ranges: train formats use seeds in [0, 1e9), dev in [1e9, 2e9), unseen in [2e9, 3e9), so a
format seen in training can never appear among the unseen formats.
"""
from __future__ import annotations

import hashlib
import random
from typing import Iterator, Sequence

from docassay.extractors.synth.canvas import Layout, build_document
from docassay.extractors.synth.families import apply_invoice_family, apply_receipt_family, pick_family, resolve_families
from docassay.extractors.synth.invoice_layout import compose_invoice
from docassay.extractors.synth.invoice_rich import compose_rich_invoice, sample_rich_values
from docassay.extractors.synth.invoice_style import InvoiceStyle, sample_invoice_style
from docassay.extractors.synth.invoice_values import sample_invoice_values
from docassay.extractors.synth.receipt import ReceiptStyle, compose_receipt, sample_receipt_style, sample_receipt_values
from docassay.extractors.synth.receipt_rich import compose_rich_receipt, sample_rich_receipt_values
from docassay.extractors.synth.types import KINDS, Format, SynthDoc, spans_from_hits

__all__ = ["SPLITS", "SPLIT_SPAN", "split_of", "format_seeds", "make_format", "make_document", "generate"]

SPLITS = ("train", "dev", "unseen")
SPLIT_SPAN = 10 ** 9


def split_of(format_seed: int) -> str | None:
    """The split whose seed range holds `format_seed` (None outside every range)."""
    i = format_seed // SPLIT_SPAN
    return SPLITS[i] if 0 <= i < len(SPLITS) else None


def format_seeds(split: str, n: int, seed: int = 0) -> list[int]:
    """`n` distinct format seeds of `split`, drawn reproducibly from its range."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    rng = random.Random(f"format-seeds/{split}/{seed}")
    base = SPLITS.index(split) * SPLIT_SPAN
    return [base + s for s in rng.sample(range(SPLIT_SPAN), n)]


def make_format(seed: int, kind: str = "invoice", families: str | Sequence[str] | None = None) -> Format:
    """The format (template) with this seed: layout, fonts, labels, locale and positions.

    `families` names the layout families to draw from (`families.INVOICE_FAMILIES` /
    `RECEIPT_FAMILIES`, a list, a comma-separated string or "all"); None draws the default of the
    seed's split (`families.default_families`). The family comes from its own random stream, so a
    classic format is the same whichever families were allowed."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    family = pick_family(seed, kind, resolve_families(kind, families, split_of(seed)))
    style: InvoiceStyle | ReceiptStyle
    if kind == "invoice":
        lang, loc, style = sample_invoice_style(seed)
        style = apply_invoice_family(style, family, seed, lang, loc)
    else:
        lang, loc, style = sample_receipt_style(seed)
        style = apply_receipt_family(style, family, seed, lang)
    return Format(format_id=f"{kind[:3]}-{seed}", kind=kind, seed=seed, language=lang, locale=loc, style=style)


def _layout_digest(layout: Layout) -> str:
    h = hashlib.sha256()
    for p in layout.pages:
        h.update(f"P{p.width:.2f}x{p.height:.2f}".encode())
        for r in p.runs:
            h.update(f"{r.x:.2f},{r.y:.2f},{r.font},{r.size},{r.text}\n".encode())
    return h.hexdigest()


def make_document(fmt: Format, seed: int) -> SynthDoc:
    """Document `seed` of format `fmt`: the `Document` built from the layout, its truth and spans."""
    rng = random.Random(f"{fmt.format_id}/doc/{seed}")
    if fmt.kind == "invoice":
        values = sample_invoice_values(fmt.style, fmt.locale, fmt.language, rng)  # type: ignore[arg-type]
        if getattr(fmt.style, "rich", None) is None:
            layout, truth = compose_invoice(fmt.style, fmt.locale, fmt.language, values)  # type: ignore[arg-type]
        else:                                   # extra values from their own stream: classic values keep
            rich = sample_rich_values(fmt.style, fmt.locale, fmt.language, values,  # type: ignore[arg-type]
                                      random.Random(f"{fmt.format_id}/doc/{seed}/rich"))
            layout, truth = compose_rich_invoice(fmt.style, fmt.locale, fmt.language, values,  # type: ignore[arg-type]
                                                 rich)
    else:
        rvalues = sample_receipt_values(fmt.style, fmt.locale, fmt.language, rng)  # type: ignore[arg-type]
        if getattr(fmt.style, "rich", None) is None:
            layout, truth = compose_receipt(fmt.style, fmt.locale, fmt.language, rvalues)  # type: ignore[arg-type]
        else:
            rrv = sample_rich_receipt_values(fmt.style, fmt.locale, fmt.language, rvalues,  # type: ignore[arg-type]
                                             random.Random(f"{fmt.format_id}/doc/{seed}/rich"))
            layout, truth = compose_rich_receipt(fmt.style, fmt.locale, fmt.language, rrv)  # type: ignore[arg-type]
    doc_id = f"{fmt.format_id}-{seed}"
    meta = fmt.meta()
    meta.update({"doc_id": doc_id, "doc_seed": seed, "split": split_of(fmt.seed), "pages": len(layout.pages)})
    document, hits = build_document(layout, source=f"synth://{doc_id}", sha256=_layout_digest(layout), meta=meta)
    spans = spans_from_hits(document, hits, truth, layout.relations)
    return SynthDoc(doc_id=doc_id, format_id=fmt.format_id, kind=fmt.kind, seed=seed, document=document,
                    truth=truth, truth_spans=spans, meta=meta, layout=layout)


def generate(n_formats: int, docs_per_format: int, kind: str = "invoice", seed: int = 0,
             split: str = "train", families: str | Sequence[str] | None = None) -> Iterator[SynthDoc]:
    """`n_formats` formats of `split` (seeded by `seed`), `docs_per_format` documents each, format by
    format; `families` as in `make_format`."""
    resolve_families(kind, families, split)                   # a bad name fails before any work
    for fseed in format_seeds(split, n_formats, seed):
        fmt = make_format(fseed, kind, families)
        for j in range(docs_per_format):
            yield make_document(fmt, seed * 1_000_003 + j)
