"""The synthetic generator: determinism, arithmetic, span labels, variety, splits (no rendering here)."""
from __future__ import annotations

import random
from collections import Counter
from decimal import Decimal

import pytest

from docassay.extractors.synth import (
    SPLITS,
    format_seeds,
    generate,
    make_document,
    make_format,
    parse_amount,
    parse_date,
    split_of,
    vocab,
)
from docassay.extractors.synth.invoice_style import sample_invoice_style
from docassay.extractors.synth.invoice_values import sample_invoice_values
from docassay.extractors.synth.locale import money
from docassay.extractors.synth.names import iban
from docassay.extractors.synth.types import SynthDoc
from docassay.extractors.synth.words import number_to_words

AMOUNT_KEYS = {"net_total", "tax_total", "gross_total", "total"}
DATE_KEYS = {"issue_date", "due_date", "date"}


@pytest.fixture(scope="module")
def invoices() -> list[SynthDoc]:
    return list(generate(40, 2, kind="invoice", seed=11, split="train"))


@pytest.fixture(scope="module")
def receipts() -> list[SynthDoc]:
    return list(generate(30, 2, kind="receipt", seed=11, split="train"))


def _fold(s: str) -> str:
    return " ".join(s.split()).casefold()


_FORMATS: dict[tuple[int, str], object] = {}


def _locale(sd: SynthDoc):
    key = (int(sd.meta["format_seed"]), sd.kind)
    if key not in _FORMATS:
        _FORMATS[key] = make_format(*key)
    return _FORMATS[key].locale


def _check_value(sd: SynthDoc, key: str, text: str, truth: object) -> None:
    loc = _locale(sd)
    if key in AMOUNT_KEYS or key in ("quantity", "unit_price", "line_total"):
        got = parse_amount(text, loc)
        assert got is not None and abs(float(got) - float(truth)) < 1e-9, (sd.doc_id, key, text, truth)
    elif key in DATE_KEYS:
        got_d = parse_date(text, loc)
        assert got_d is not None and got_d.isoformat() == truth, (sd.doc_id, key, text, truth, loc.date_pattern)
    elif key == "currency":
        assert any(m in text for m in vocab.CURRENCY_MARKS[str(truth)]), (sd.doc_id, text, truth)
    else:
        assert _fold(text) == _fold(str(truth)), (sd.doc_id, key, text, truth)


# ---- determinism ---------------------------------------------------------------------------------

def test_same_seed_same_document_and_different_seeds_differ() -> None:
    fmt_a, fmt_b = make_format(123, "invoice"), make_format(123, "invoice")
    assert fmt_a == fmt_b
    a, b = make_document(fmt_a, 5), make_document(fmt_b, 5)
    assert a.truth == b.truth
    assert a.document.sha256 == b.document.sha256
    assert [(w.text, w.bbox) for p in a.document.pages for w in p.words] == \
           [(w.text, w.bbox) for p in b.document.pages for w in p.words]
    assert a.truth_spans == b.truth_spans
    c = make_document(fmt_a, 6)
    assert c.truth != a.truth
    r1, r2 = make_document(make_format(9, "receipt"), 1), make_document(make_format(9, "receipt"), 1)
    assert r1.truth == r2.truth and r1.document.sha256 == r2.document.sha256


def test_generate_is_reproducible() -> None:
    first = [(d.doc_id, d.truth) for d in generate(3, 2, kind="receipt", seed=4, split="dev")]
    again = [(d.doc_id, d.truth) for d in generate(3, 2, kind="receipt", seed=4, split="dev")]
    assert first == again
    assert len({d for d, _ in first}) == 6


# ---- arithmetic ----------------------------------------------------------------------------------

def test_invoice_values_arithmetic_is_exact() -> None:
    for seed in range(60):
        lang, loc, style = sample_invoice_style(seed)
        v = sample_invoice_values(style, loc, lang, random.Random(seed))
        for it in v.items:
            assert it.line_total == money(it.quantity * it.unit_price - it.discount)
            if it.discount_pct is not None:
                assert it.discount == money(it.quantity * it.unit_price * it.discount_pct / 100)
            assert (it.line_total < 0) == v.credit and it.line_total != 0
        assert v.subtotal == sum(it.line_total for it in v.items)
        assert v.subtotal - v.doc_discount == v.net
        for t in v.taxes:
            assert t.tax == money(t.base * t.rate / 100)
            base = sum((it.line_total for it in v.items if it.tax_rate == t.rate), Decimal(0))
            assert t.base == base - money(base * v.doc_discount_pct / 100)
        assert v.net == sum(t.base for t in v.taxes)
        assert v.tax_total == sum(t.tax for t in v.taxes)
        assert v.gross == v.net + v.tax_total
        assert v.amount_due == v.gross - v.deposit


def test_invoice_truth_is_consistent(invoices: list[SynthDoc]) -> None:
    for sd in invoices:
        t = sd.truth
        if "tax_total" in t:
            assert round(t["net_total"] + t["tax_total"], 2) == t["gross_total"]
        lines = t["line_items"]
        assert 1 <= len(lines) <= 40
        for it in lines:
            full = money(Decimal(repr(it["quantity"])) * Decimal(repr(it["unit_price"])))
            assert Decimal(repr(it["line_total"])) <= full        # only discounts take anything off
            assert (it["line_total"] < 0) == (t["gross_total"] < 0)   # credit notes: all negative
        assert abs(round(sum(it["line_total"] for it in lines), 2)) >= abs(t["net_total"])


def test_receipt_total_is_rounded_sum(receipts: list[SynthDoc]) -> None:
    for sd in receipts:
        assert sd.truth["total"] > 0
        assert set(sd.truth) == {"company", "date", "address", "total"}


# ---- span labels ---------------------------------------------------------------------------------

def test_truth_keys_follow_the_canonical_format(invoices: list[SynthDoc], receipts: list[SynthDoc]) -> None:
    allowed = {"invoice_number", "issue_date", "due_date", "seller_name", "seller_vat_id", "buyer_name", "currency",
               "net_total", "tax_total", "gross_total", "line_items"}
    for sd in invoices:
        assert set(sd.truth) <= allowed
        assert {"invoice_number", "issue_date", "seller_name", "buyer_name", "currency", "gross_total",
                "line_items"} <= set(sd.truth)
        assert all(v is not None for v in sd.truth.values())
        for it in sd.truth["line_items"]:
            assert set(it) == {"description", "quantity", "unit_price", "line_total"}
    seen = Counter(k for sd in invoices for k in sd.truth)
    assert seen["due_date"] and seen["seller_vat_id"] and seen["tax_total"]


def test_spans_point_at_words_that_normalise_to_the_truth(invoices: list[SynthDoc],
                                                          receipts: list[SynthDoc]) -> None:
    for sd in invoices + receipts:
        spans = sd.truth_spans
        assert set(spans.fields) == set(sd.truth) - {"line_items"}
        for key, span in spans.fields.items():
            words = sd.document.pages[span.page - 1].words
            assert span.text == " ".join(words[i].text for i in span.word_ids)
            for i in span.word_ids:
                b = words[i].bbox
                assert span.bbox.x0 <= b.x0 and b.x1 <= span.bbox.x1 and span.bbox.y0 <= b.y0 and b.y1 <= span.bbox.y1
            _check_value(sd, key, span.text, sd.truth[key])
            if span.anchor is not None:
                assert span.anchor.text and span.anchor.relation in {"left", "above", "title", "column"}
                assert not set(span.anchor.word_ids) & set(span.word_ids) or span.anchor.relation == "title"
        items = sd.truth.get("line_items", [])
        assert len(spans.items) == len(items)
        for it_span, item in zip(spans.items, items):
            assert set(it_span.cells) == set(item)
            row_words = set(it_span.word_ids)
            for col, cell in it_span.cells.items():
                assert set(cell.word_ids) <= row_words
                _check_value(sd, col, cell.text, item[col])
                assert cell.header is not None and cell.header.relation == "column"


def test_header_labels_relate_to_values(invoices: list[SynthDoc]) -> None:
    for sd in invoices:
        span = sd.truth_spans.fields["invoice_number"]
        a = span.anchor
        assert a is not None
        if a.relation == "left":
            assert a.bbox.x1 <= span.bbox.x0 + 0.01 and a.bbox.y_overlap(span.bbox) > 0.5
        elif a.relation == "above":
            assert a.bbox.y1 <= span.bbox.y0 + 0.01


# ---- formats -------------------------------------------------------------------------------------

def test_documents_of_a_format_share_layout_and_label_positions() -> None:
    for seed in range(25):
        fmt = make_format(seed, "invoice")
        docs = [make_document(fmt, d) for d in range(3)]
        assert all(d.meta["layout"] == docs[0].meta["layout"] for d in docs)
        for key in ("invoice_number", "issue_date", "buyer_name"):
            anchors = [d.truth_spans.fields[key].anchor for d in docs]
            if anchors[0] is None:
                assert all(a is None for a in anchors)
                continue
            assert len({a.text for a in anchors}) == 1
            assert len({a.bbox for a in anchors}) == 1, (seed, key)        # fixed block positions


def test_formats_differ_from_each_other() -> None:
    metas = [make_format(s, "invoice").meta() for s in range(30)]
    signatures = {(m["language"], m["layout"]["fields_style"], m["layout"]["labels"]["invoice_number"],
                   m["layout"]["labels"]["gross_total"], m["layout"]["seller_pos"]) for m in metas}
    assert len(signatures) >= 27
    assert len({m["layout"]["fields_style"] for m in metas}) == 5
    assert len({m["number_style"] for m in metas}) >= 4
    assert len({m["date_pattern"] for m in metas}) >= 10
    receipts = [make_format(s, "receipt").meta() for s in range(30)]
    assert len({(m["language"], m["layout"]["labels"]["total"], m["layout"]["item_style"]) for m in receipts}) >= 25


def test_all_languages_appear() -> None:
    inv = Counter(make_format(s, "invoice").language for s in format_seeds("train", 40, seed=0))
    assert set(inv) == set(vocab.LANGUAGES)
    rec = Counter(make_format(s, "receipt").language for s in format_seeds("train", 40, seed=0))
    assert set(rec) == set(vocab.RECEIPT_LANGUAGES)


def test_multi_page_item_tables() -> None:
    found = None
    for sd in generate(60, 1, kind="invoice", seed=5):
        if len(sd.document.pages) > 1 and max(s.page for s in sd.truth_spans.items) > 1:
            found = sd
            break
    assert found is not None, "no multi-page item table in 60 formats"
    pages = {s.page for s in found.truth_spans.items}
    assert len(pages) > 1
    for it in found.truth_spans.items:        # the header is repeated on every page with rows
        assert it.cells["description"].header is not None
    ys = [(s.page, s.bbox.y0) for s in found.truth_spans.items]
    assert ys == sorted(ys)


def test_splits_never_share_format_seeds() -> None:
    train = set(format_seeds("train", 2000, seed=1))
    unseen = set(format_seeds("unseen", 2000, seed=1))
    dev = set(format_seeds("dev", 2000, seed=1))
    assert not train & unseen and not train & dev and not dev & unseen
    assert {split_of(s) for s in train} == {"train"} and {split_of(s) for s in unseen} == {"unseen"}
    assert SPLITS == ("train", "dev", "unseen")
    sd = next(generate(1, 1, kind="invoice", seed=3, split="unseen"))
    assert sd.meta["split"] == "unseen"
    with pytest.raises(ValueError):
        format_seeds("test", 1)


def test_every_word_is_drawable_with_standard_fonts(invoices: list[SynthDoc], receipts: list[SynthDoc]) -> None:
    for sd in invoices + receipts:
        assert sd.document.kind == "synthetic"
        for p in sd.document.pages:
            assert p.source == "synthetic"
            for w in p.words:
                w.text.encode("cp1252")
                assert w.font_size and w.bbox.width > 0 and w.bbox.height > 0
                assert 0 <= w.bbox.x0 and w.bbox.x1 <= p.width + 1 and 0 <= w.bbox.y0 and w.bbox.y1 <= p.height


# ---- small parts ---------------------------------------------------------------------------------

def test_number_words() -> None:
    assert number_to_words(1234, "en") == "one thousand two hundred thirty-four"
    assert number_to_words(21, "de") == "einundzwanzig"
    assert number_to_words(1001, "de") == "eintausendeins"
    assert number_to_words(80, "fr") == "quatre-vingts"
    assert number_to_words(71, "fr") == "soixante et onze"
    assert number_to_words(200, "fr") == "deux cents"
    assert number_to_words(22, "nl") == "tweeëntwintig"
    assert number_to_words(100, "es") == "cien"
    assert number_to_words(1500, "es") == "mil quinientos"


def test_iban_check_digits() -> None:
    rng = random.Random(0)
    for country in ("DE", "FR", "NL", "GB", "ES", "CH"):
        raw = iban(rng, country).replace(" ", "")
        moved = raw[4:] + raw[:4]
        assert int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def test_no_two_text_runs_overlap() -> None:
    """Layout self-check: text never prints over other text (a collision would garble the truth)."""
    from docassay.extractors.synth.canvas import ascent_descent
    for kind in ("invoice", "receipt"):
        for sd in generate(60, 1, kind=kind, seed=17):
            for pl in sd.layout.pages:
                boxes = []
                for r in pl.runs:
                    a, d = ascent_descent(r.font, r.size)
                    boxes.append((r.y - a, r.y - d, r.x, r.x1, r.text))
                boxes.sort()
                for i, (t0, b0, l0, r0, text0) in enumerate(boxes):
                    for t1, b1, l1, r1, text1 in boxes[i + 1:]:
                        if t1 >= b0:
                            break
                        overlap_x = min(r0, r1) - max(l0, l1)
                        overlap_y = min(b0, b1) - max(t0, t1)
                        assert overlap_x <= 0.5 or overlap_y <= 0.5, (sd.doc_id, text0, text1)


def test_a_receipt_brand_is_a_trading_name() -> None:
    from docassay.extractors.synth.receipt import _brand, _shop
    assert _brand("Harris & Taylor Inc.") == "Harris"
    assert _brand("Taylor & Hill Corp.") == "Taylor"
    assert _brand("Merorvis Corp.") == "Merorvis"                 # a trading name carries no legal form
    assert _brand("Verismark Consultoría S.L.U.") == "Verismark Consultoría"
    assert _brand("Norartech-Techniek B.V.") == "Norartech-Techniek"
    rng = random.Random(3)
    shops = [_shop(rng, "en", "US", False) for _ in range(300)]
    assert all(not s.brand.endswith("&") for s in shops)
    assert all(not s.brand.endswith(("Inc.", "LLC", "Corp.", "Co.")) for s in shops)
