"""Synthetic invoices and receipts with exact ground truth and span labels (docassay synth).

A *format* is a seeded template (layout, fonts, label wording, locale, block positions); documents
of a format differ only in values. Each `SynthDoc` holds the `Document` built directly from the
layout (exact word boxes), the canonical ground truth, and `truth_spans`: where each value and its
label are printed, and each line item's row — the labels for training span pickers and locators.

    fmt = make_format(seed=7, kind="invoice")
    doc = make_document(fmt, seed=0)
    pdf_bytes = to_pdf(doc); pngs = to_png(doc, dpi=150); lines = to_ocr_lines(doc)
    for doc in generate(n_formats=10, docs_per_format=5, kind="receipt", seed=0, split="unseen"): ...
    write_dataset("out/", 10, 5, kind="invoice", split="train", seed=0, render=("pdf",))

Layout families (`INVOICE_FAMILIES`, `RECEIPT_FAMILIES`; see `families`): `make_format(seed, kind,
families=["sidebar", "credit_note"])` draws only those; the default draws every family on the train
and unseen splits and the classic one on dev. `to_noisy_ocr_lines(doc, "heavy")` misreads the OCR
lines as an OCR engine would (see `ocr_noise`).
"""
from docassay.extractors.synth.dataset import RENDERS, write_dataset
from docassay.extractors.synth.families import (
                                                 ALL_INVOICE_FAMILIES,
                                                 ALL_RECEIPT_FAMILIES,
                                                 INVOICE_FAMILIES,
                                                 RECEIPT_FAMILIES,
)
from docassay.extractors.synth.generator import SPLITS, format_seeds, generate, make_document, make_format, split_of
from docassay.extractors.synth.locale import Locale, parse_amount, parse_date
from docassay.extractors.synth.ocr_noise import (
                                                 NOISE_LEVELS,
                                                 OcrNoise,
                                                 to_noisy_ocr_document,
                                                 to_noisy_ocr_lines,
                                                 to_scan_png,
)
from docassay.extractors.synth.render import to_ocr_lines, to_pdf, to_png
from docassay.extractors.synth.types import Anchor, CellSpan, FieldSpan, Format, ItemSpan, SynthDoc, TruthSpans

__all__ = ["make_format", "make_document", "generate", "format_seeds", "split_of", "SPLITS", "write_dataset",
           "RENDERS", "to_pdf", "to_png", "to_ocr_lines", "Format", "SynthDoc", "TruthSpans", "FieldSpan",
           "ItemSpan", "CellSpan", "Anchor", "Locale", "parse_amount", "parse_date", "INVOICE_FAMILIES",
           "RECEIPT_FAMILIES", "ALL_INVOICE_FAMILIES", "ALL_RECEIPT_FAMILIES", "OcrNoise", "NOISE_LEVELS",
           "to_noisy_ocr_lines", "to_noisy_ocr_document", "to_scan_png"]
