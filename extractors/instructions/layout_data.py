"""Training examples for the layout reader: ground truth aligned to a document's words.

A field's right words are found the way the ranker's labels are (`model_data.same_value`): every
proposal `propose()` makes for the field whose value equals the truth marks its span's first word
as a right *begin* and its last word as a right *end* (a total printed twice gives two right spans).
A field the truth has but no proposal reads is not scored (no target); a field the truth lacks is
a known "absent" only where the truth is complete (`absent_known`: the synthetic generator's
truth lists every printed field; the dev data's does not, so there it is not scored either).

Sources: the synthetic generator's `train` split (`synth_layout_docs`; half of the one-page formats
read as OCR line files, as the ranker's data) and any (document, truth) pairs a caller passes in
(`label_layout`): `docassay model train --model layout --extra-docs LIST` reads a list written by
`bench/layout_docs.py`, which is where the dev data's `dev-tune` split is chosen (never dev-holdout).
"""
from __future__ import annotations

from typing import Callable, Iterator, Mapping

import numpy as np

from docassay.extractors.instructions.executor import locate
from docassay.extractors.instructions.generator import detect_locale, schema_fields
from docassay.extractors.instructions.layout_features import doc_words, layout_doc
from docassay.extractors.instructions.model_data import as_ocr_lines, same_value
from docassay.extractors.instructions.proposals import propose
from docassay.extractors.labels import FieldSpec
from docassay.extractors.spans import DocIndex
from docassay.infra.model.layout import LayoutDoc

__all__ = ["label_layout", "synth_layout_docs"]


def label_layout(ix: DocIndex, truth: Mapping[str, object], specs: list[FieldSpec], *, absent_known: bool,
                 doc_id: str = "") -> LayoutDoc:
    """The model's input for one document with its word-level targets."""
    words = doc_words(ix)
    d = layout_doc(ix, specs, words)
    n, f = d.n_words, len(specs)
    begin = np.zeros((f, n), dtype=bool)
    end = np.zeros((f, n), dtype=bool)
    absent = np.zeros(f, dtype=bool)
    known = np.zeros(f, dtype=bool)
    locale = detect_locale(ix)
    for j, spec in enumerate(specs):
        want = truth.get(spec.name)
        if want is None or isinstance(want, (list, dict)):
            absent[j] = known[j] = absent_known
            continue
        for p in propose(ix, spec, locale):
            got = p.value
            if spec.multiline:
                fv = locate(ix, p.locator, p.rule(spec), locale)
                got = None if fv is None else fv.value
            if not same_value(spec.type, got, want):
                continue
            fl = words.span_words(ix, p.span)
            if fl is not None:
                begin[j, fl[0]] = end[j, fl[1]] = True
        known[j] = bool(begin[j].any())
    d.begin, d.end, d.absent, d.known, d.doc_id = begin, end, absent, known, doc_id
    return d


def synth_layout_docs(kind: str, schema: Mapping[str, object], n_formats: int, docs_per_format: int, *,
                      split: str, seed: int, ocr_share: float = 0.5,
                      progress: Callable[[int], None] | None = None) -> Iterator[LayoutDoc]:
    """Labelled synthetic documents of `split`; an `ocr_share` of the one-page formats are read as OCR
    line files of their scans (`model_data.as_ocr_lines`)."""
    from docassay.extractors.synth import generate

    specs, _ = schema_fields(schema)
    rng = np.random.default_rng([seed, 13])
    fmt_ocr: dict[str, bool] = {}
    for i, sd in enumerate(generate(n_formats, docs_per_format, kind=kind, seed=seed, split=split)):
        if sd.format_id not in fmt_ocr:
            fmt_ocr[sd.format_id] = bool(rng.random() < ocr_share)
        doc = as_ocr_lines(sd) if fmt_ocr[sd.format_id] and len(sd.document.pages) == 1 else sd.document
        ix = DocIndex(doc)
        if progress:
            progress(i + 1)
        yield label_layout(ix, sd.truth, specs, absent_known=True, doc_id=sd.doc_id)
