"""Layout families of the synthetic generator and OCR noise: each family renders, parses back with
the project's parsers and keeps every truth value findable; classic formats are unchanged;
families are chosen by name; noise changes the text but keeps the truth where it promises to."""
from __future__ import annotations

import io
import json
from collections import Counter
from decimal import Decimal

import pytest
from PIL import Image

from docassay.extractors.synth import (
    ALL_INVOICE_FAMILIES,
    ALL_RECEIPT_FAMILIES,
    NOISE_LEVELS,
    OcrNoise,
    format_seeds,
    generate,
    make_document,
    make_format,
    parse_amount,
    parse_date,
    to_noisy_ocr_lines,
    to_ocr_lines,
    to_pdf,
    to_png,
    vocab,
    write_dataset,
)
from docassay.extractors.synth.families import pick_family, resolve_families
from docassay.extractors.synth.invoice_style import sample_invoice_style
from docassay.extractors.synth.receipt import sample_receipt_style
from docassay.extractors.synth.types import SynthDoc

AMOUNTS = {"net_total", "tax_total", "gross_total", "total", "quantity", "unit_price", "line_total"}
DATES = {"issue_date", "due_date", "date"}
SEEDS = format_seeds("train", 2, seed=5)


def _fold(s: str) -> str:
    return " ".join(s.split()).casefold()


def _check(sd: SynthDoc, key: str, text: str, truth: object) -> None:
    """The printed text of a truth value normalises back to the truth."""
    loc = make_format(int(sd.meta["format_seed"]), sd.kind, families=[str(sd.meta["family"])]).locale
    if key in AMOUNTS:
        got = parse_amount(text, loc)
        assert got is not None and abs(float(got) - float(truth)) < 1e-9, (sd.doc_id, key, text, truth)
    elif key in DATES:
        got_d = parse_date(text, loc)
        assert got_d is not None and got_d.isoformat() == truth, (sd.doc_id, key, text, truth)
    elif key == "currency":
        assert any(m in text for m in vocab.CURRENCY_MARKS[str(truth)]), (sd.doc_id, text, truth)
    else:
        assert _fold(text) == _fold(str(truth)), (sd.doc_id, key, text, truth)


def _truth_chunks(sd: SynthDoc) -> list[tuple[int, str, str, object]]:
    """(page, key, printed text, truth) of every field and line-item cell."""
    out = [(s.page, k, s.text, sd.truth[k]) for k, s in sd.truth_spans.fields.items()]
    items = sd.truth.get("line_items", []) or []
    for it, item in zip(sd.truth_spans.items, items):  # type: ignore[arg-type]
        out += [(it.page, c, cell.text, item[c]) for c, cell in it.cells.items()]
    return out


def _consistent(sd: SynthDoc, parsed_texts: list[str]) -> None:
    """Every truth value: its span normalises to the truth, and each of its printed lines is in the
    parsed text of its page."""
    for _page, key, text, truth in _truth_chunks(sd):
        _check(sd, key, text, truth)
    for page, ids in [(s.page, s.word_ids) for s in sd.truth_spans.fields.values()] + \
            [(it.page, c.word_ids) for it in sd.truth_spans.items for c in it.cells.values()]:
        words = sd.document.pages[page - 1].words
        by_line: dict[int, list[str]] = {}
        for i in ids:
            by_line.setdefault(words[i].line, []).append(words[i].text)
        for ws in by_line.values():
            assert " ".join(ws) in parsed_texts[page - 1], (sd.doc_id, ws)


def _no_overlap(sd: SynthDoc) -> None:
    from docassay.extractors.synth.canvas import ascent_descent
    for pl in sd.layout.pages:
        boxes = sorted((r.y - ascent_descent(r.font, r.size)[0], r.y - ascent_descent(r.font, r.size)[1], r.x, r.x1,
                        r.text) for r in pl.runs)
        for i, (t0, b0, l0, r0, text0) in enumerate(boxes):
            for t1, b1, l1, r1, text1 in boxes[i + 1:]:
                if t1 >= b0:
                    break
                assert min(r0, r1) - max(l0, l1) <= 0.5 or min(b0, b1) - max(t0, t1) <= 0.5, (sd.doc_id, text0, text1)


# ---- choosing families -----------------------------------------------------------------------------

def test_families_are_chosen_by_name_and_checked() -> None:
    assert resolve_families("invoice", "all", "train") == ALL_INVOICE_FAMILIES
    assert resolve_families("invoice", "sidebar, credit_note", "dev") == ("sidebar", "credit_note")
    assert resolve_families("receipt", "new", "train") == ("slogan", "branch", "rich_totals")
    assert resolve_families("receipt", None, "dev") == ("classic",)
    assert resolve_families("receipt", None, "unseen") == ALL_RECEIPT_FAMILIES
    for bad in (["nope"], "", ["sidebar", "slogan"]):
        with pytest.raises(ValueError):
            resolve_families("invoice", bad, "train")
    with pytest.raises(ValueError):
        next(generate(1, 1, families=["no-such-family"]))
    seeds = format_seeds("train", 60, seed=2)
    drawn = Counter(pick_family(s, "invoice", ALL_INVOICE_FAMILIES) for s in seeds)
    assert len(drawn) >= 6 and drawn["classic"] < 30                       # new families by default
    assert all(make_format(s, "invoice", families=["letterhead"]).meta()["family"] == "letterhead" for s in seeds[:3])
    assert {make_format(s, "invoice").meta()["family"] for s in format_seeds("dev", 10, seed=1)} == {"classic"}


def test_classic_formats_are_the_original_generator() -> None:
    for s in format_seeds("train", 8, seed=9):
        assert make_format(s, "invoice", families=["classic"]).style == sample_invoice_style(s)[2]
        assert make_format(s, "receipt", families=["classic"]).style == sample_receipt_style(s)[2]
        fam = make_format(s, "invoice")                           # whatever family: the same locale and language
        assert (fam.language, fam.locale) == sample_invoice_style(s)[:2]


def test_families_are_deterministic() -> None:
    for fam in ("sidebar", "credit_note", "rich_totals"):
        kind = "receipt" if fam == "rich_totals" else "invoice"
        a = make_document(make_format(SEEDS[0], kind, families=[fam]), 3)
        b = make_document(make_format(SEEDS[0], kind, families=[fam]), 3)
        assert a.truth == b.truth and a.document.sha256 == b.document.sha256 and a.truth_spans == b.truth_spans
        assert to_pdf(a) == to_pdf(b)
        assert make_document(make_format(SEEDS[0], kind, families=[fam]), 4).document.sha256 != a.document.sha256


# ---- each invoice family renders, parses back, and keeps its truth -------------------------------------

@pytest.mark.parametrize("family", [f for f in ALL_INVOICE_FAMILIES if f != "classic"])
def test_invoice_family_round_trip(family: str) -> None:
    parsers = pytest.importorskip("docassay.extractors.parsers")
    for fseed in SEEDS:
        fmt = make_format(fseed, "invoice", families=[family])
        assert fmt.meta()["family"] == family and fmt.meta()["layout"]["rich"]["family"] == family
        docs = [make_document(fmt, j) for j in range(2)]
        for sd in docs:
            _no_overlap(sd)
            parsed = parsers.parse(f"{sd.doc_id}.pdf", to_pdf(sd))
            assert len(parsed.pages) == sd.n_pages
            for mine, theirs in zip(sd.document.pages, parsed.pages):
                assert Counter(w.text for w in mine.words) == Counter(w.text for w in theirs.words), sd.doc_id
            _consistent(sd, [" ".join(w.text for w in p.words) for p in parsed.pages])
        # a format is a template: the labels of its page header sit at the same place on every document
        table_top = min(d.truth_spans.items[0].bbox.y0 for d in docs)
        for key, span in docs[0].truth_spans.fields.items():
            other = docs[1].truth_spans.fields.get(key)
            if span.anchor is not None and other is not None and other.anchor is not None and span.page == 1 \
                    and span.anchor.bbox.y1 < table_top:
                assert span.anchor.bbox == other.anchor.bbox, (family, key)


def test_invoice_family_renders_as_image() -> None:
    sd = make_document(make_format(SEEDS[0], "invoice", families=["sidebar"]), 0)
    pngs = to_png(sd, dpi=40, augment=True)
    assert len(pngs) == sd.n_pages
    img = Image.open(io.BytesIO(pngs[0]))
    assert abs(img.size[0] - sd.document.pages[0].width * 40 / 72) <= 1
    assert to_png(sd, dpi=40, augment=True) == pngs


def test_delivery_address_is_a_captioned_distractor() -> None:
    for family in ("sidebar", "letterhead", "grid_header"):
        for fseed in SEEDS:
            fmt = make_format(fseed, "invoice", families=[family])
            sd = make_document(fmt, 1)
            text = " ".join(w.text for w in sd.document.pages[0].words)
            caption = fmt.style.labels["ship_to"]
            assert caption in text, (family, caption)
            buyer = sd.truth_spans.fields["buyer_name"]
            cap_words = [i for i, w in enumerate(sd.document.pages[0].words) if w.text == caption.split()[0]]
            assert cap_words and not set(cap_words) & set(buyer.word_ids)


def test_credit_notes_are_negative_with_their_title_and_reference() -> None:
    modes = Counter()
    for fseed in format_seeds("train", 9, seed=3):
        fmt = make_format(fseed, "invoice", families=["credit_note"])
        rich = fmt.style.rich
        sd = make_document(fmt, 0)
        t = sd.truth
        assert t["gross_total"] < 0 and t["net_total"] < 0                 # the schema's convention
        assert all(it["line_total"] < 0 and it["quantity"] < 0 and it["unit_price"] > 0 for it in t["line_items"])
        text = " ".join(w.text for p in sd.document.pages for w in p.words)
        assert fmt.style.credit_title.split()[0] in text
        if rich.credit_ref:
            assert rich.labels["ref_invoice"].split()[0] in text
        gross = sd.truth_spans.fields["gross_total"].text
        modes[rich.credit_mode] += 1
        if rich.credit_mode == "trailing_minus":
            assert gross.endswith("-")
        elif rich.credit_mode == "parentheses":
            assert "(" in gross and gross.endswith(")")
        else:
            assert "-" in gross
    assert len(modes) >= 2 and set(modes) <= {"negative", "trailing_minus", "parentheses"}


def test_long_tables_carry_totals_over_pages_and_repeat_headers() -> None:
    fmt = make_format(SEEDS[1], "invoice", families=["long_table"])
    sd = make_document(fmt, 0)
    assert sd.n_pages >= 2 and 20 <= len(sd.truth["line_items"]) <= 40
    carried, brought = fmt.style.labels["carried_forward"], fmt.style.labels["brought_forward"]
    item_pages = sorted({it.page for it in sd.truth_spans.items})
    assert len(item_pages) >= 2 and item_pages == list(range(1, len(item_pages) + 1))
    for i in item_pages:                        # (totals or a payment slip may spill onto a page of their own)
        text = " ".join(w.text for w in sd.document.pages[i - 1].words)
        assert fmt.style.labels["description"] in text                      # the header on every item page
        if i < item_pages[-1]:
            assert carried in text
        if i > 1:
            assert brought in text


def test_tax_summary_family_prints_several_rates() -> None:
    several = 0
    for fseed in format_seeds("train", 6, seed=4):
        fmt = make_format(fseed, "invoice", families=["tax_summary"])
        assert fmt.style.tax_style == "summary" and fmt.style.tax_total_line
        sd = make_document(fmt, 0)
        if len(fmt.style.rates) > 1:
            several += 1
            assert "tax_rate" in fmt.style.columns
        assert round(sd.truth["net_total"] + sd.truth["tax_total"], 2) == sd.truth["gross_total"]
    assert several >= 3


# ---- receipts --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("family", [f for f in ALL_RECEIPT_FAMILIES if f != "classic"])
def test_receipt_family_round_trip(family: str) -> None:
    parsers = pytest.importorskip("docassay.extractors.parsers")
    for fseed in SEEDS:
        fmt = make_format(fseed, "receipt", families=[family])
        sd = make_document(fmt, 0)
        _no_overlap(sd)
        assert set(sd.truth) == {"company", "date", "address", "total"}
        printed = " ".join(w.text for w in sd.document.pages[0].words)
        assert sd.truth["address"] in " ".join(printed.split())
        parsed = parsers.parse(f"{sd.doc_id}.ocr.json", json.dumps(to_ocr_lines(sd)).encode())
        _consistent(sd, [" ".join(w.text for w in parsed.pages[0].words)])
        pdf = parsers.parse(f"{sd.doc_id}.pdf", to_pdf(sd))
        _consistent(sd, [" ".join(w.text for w in pdf.pages[0].words)])


def test_rich_receipt_totals_add_up() -> None:
    import random

    from docassay.extractors.synth.receipt import sample_receipt_values
    from docassay.extractors.synth.receipt_rich import sample_rich_receipt_values
    for fseed in format_seeds("train", 10, seed=6):
        fmt = make_format(fseed, "receipt", families=["rich_totals"])
        v = sample_receipt_values(fmt.style, fmt.locale, fmt.language, random.Random(1))
        rv = sample_rich_receipt_values(fmt.style, fmt.locale, fmt.language, v, random.Random(2))
        w = rv.values
        assert rv.service == (w.subtotal * fmt.style.rich.service_pct / 100).quantize(Decimal("0.01"),
                                                                                        rounding="ROUND_HALF_UP")
        extra = w.tax if fmt.style.tax_mode == "exclusive" else Decimal(0)
        assert w.total == w.subtotal + rv.service + extra + w.rounding
        assert w.change == w.cash - w.total >= 0
        sd = make_document(fmt, 0)
        assert fmt.style.rich.labels["service"].split()[0] in " ".join(
            w.text for w in sd.document.pages[0].words)


# ---- OCR noise -------------------------------------------------------------------------------------------

def _noise_docs() -> list[SynthDoc]:
    return [make_document(make_format(SEEDS[0], "receipt", families=["rich_totals"]), 0),
            make_document(make_format(SEEDS[1], "invoice", families=["grid_header"]), 0)]


def test_ocr_noise_changes_text_and_keeps_truth_words() -> None:
    parsers = pytest.importorskip("docassay.extractors.parsers")
    for sd in _noise_docs():
        clean = to_ocr_lines(sd, augment=True)
        noisy = to_noisy_ocr_lines(sd, "heavy")
        assert noisy == to_noisy_ocr_lines(sd, "heavy")                               # deterministic
        assert [l["text"] for l in noisy["lines"]] != [l["text"] for l in clean["lines"]]
        tokens = Counter(t for l in noisy["lines"] for t in l["text"].split())
        for _page, key, text, _truth in _truth_chunks(sd):
            for word in text.split():
                assert tokens[word] >= 1, (sd.doc_id, key, word)                       # still a whole token
        one_page = {"lines": [{"text": l["text"], "quad": l["quad"]} for l in noisy["lines"] if l.get("page", 1) == 1]}
        parsed = parsers.parse(f"{sd.doc_id}.ocr.json", json.dumps(one_page).encode())
        page_text = " ".join(w.text for w in parsed.pages[0].words)
        for page, key, text, _truth in _truth_chunks(sd):
            if page == 1:
                assert all(w in page_text.split() for w in text.split()), (sd.doc_id, key, text)
    assert to_noisy_ocr_lines(_noise_docs()[0], "none") == to_ocr_lines(_noise_docs()[0])


def test_noisy_tokens_carry_the_tags_of_their_words() -> None:
    sd = _noise_docs()[1]
    lines = to_noisy_ocr_lines(sd, "heavy", with_tags=True)["lines"]
    plain = to_noisy_ocr_lines(sd, "heavy")["lines"]
    assert [l["text"] for l in lines] == [l["text"] for l in plain] and "tags" not in plain[0]
    tagged: dict[str, list[str]] = {}
    for l in lines:
        toks = l["text"].split()
        assert len(toks) == len(l["tags"])
        for tok, tags in zip(toks, l["tags"]):
            for t in tags:
                tagged.setdefault(t, []).append(tok)
    for key, span in sd.truth_spans.fields.items():
        assert tagged.get(key) == span.text.split(), key                   # protected: the words as printed
    for k, item in enumerate(sd.truth_spans.items):
        assert tagged[f"i{k}.description"] == item.cells["description"].text.split()


def test_noisy_ocr_document_is_what_the_parser_reads() -> None:
    from docassay.extractors.synth import to_noisy_ocr_document
    sd = _noise_docs()[0]
    doc = to_noisy_ocr_document(sd, "heavy")
    assert len(doc.pages) == 1 and doc.pages[0].words
    words = [w.text for w in doc.pages[0].words]
    clean = [w.text for w in sd.document.pages[0].words]
    assert Counter(words) != Counter(clean)                                       # misread, not only reordered
    for _page, key, text, _truth in _truth_chunks(sd):
        assert all(w in words for w in text.split()), key
    multi = make_document(make_format(SEEDS[1], "invoice", families=["long_table"]), 0)
    with pytest.raises(ValueError, match="one page"):
        to_noisy_ocr_document(multi)


def test_ocr_noise_kinds_each_happen() -> None:
    sd = _noise_docs()[1]
    clean = to_ocr_lines(sd, augment=True)["lines"]
    rough = OcrNoise(merge_p=0.3, split_p=0.6, confuse_p=0.2, drop_p=0.05, jitter_px=2.0, protect_truth=False)
    noisy = to_noisy_ocr_lines(sd, rough)["lines"]
    assert len(noisy) > len(clean)                                                    # split lines
    clean_words = sum(len(l["text"].split()) for l in clean)
    assert sum(len(l["text"].split()) for l in noisy) < clean_words                   # merged words
    truth_words = {w for _, _, text, _ in _truth_chunks(sd) for w in text.split() if any(c in "0125,." for c in w)}
    noisy_tokens = {t for l in noisy for t in l["text"].split()}
    assert truth_words - noisy_tokens                                               # unprotected: truth misread too
    with pytest.raises(ValueError):
        to_noisy_ocr_lines(sd, "extreme")
    assert set(NOISE_LEVELS) == {"none", "light", "medium", "heavy"}


def test_scan_images_match_the_noisy_lines() -> None:
    import numpy as np

    from docassay.extractors.synth import to_scan_png
    sd = _noise_docs()[0]
    dpi = 60
    pngs = to_scan_png(sd, "heavy", dpi)
    assert pngs == to_scan_png(sd, "heavy", dpi) and pngs[0] != to_scan_png(sd, "light", dpi)[0]
    img = Image.open(io.BytesIO(pngs[0])).convert("L")
    lines = to_noisy_ocr_lines(sd, OcrNoise(jitter_px=0.0, merge_p=0, split_p=0, confuse_p=0, drop_p=0), dpi)
    for q in (l["quad"] for l in lines["lines"]):
        crop = np.asarray(img.crop((min(q[0::2]), min(q[1::2]), max(q[0::2]) + 1, max(q[1::2]) + 1)))
        assert crop.size == 0 or crop.min() < 160                                    # ink inside every box


def test_write_dataset_with_families_and_noise(tmp_path) -> None:
    rows = write_dataset(tmp_path, 2, 1, kind="receipt", split="dev", seed=1, render=("ocr",),
                         families=["branch", "slogan"], ocr_noise="medium")
    assert {r["family"] for r in rows} <= {"branch", "slogan"} and len(rows) == 2
    for r in rows:
        lines = json.loads((tmp_path / r["ocr"]).read_text())["lines"]
        assert lines and all(set(l) == {"text", "quad"} for l in lines)
        tags = json.loads((tmp_path / r["ocr_tags"]).read_text())
        assert [len(t) for t in tags] == [len(l["text"].split()) for l in lines]
        assert any("total" in t for line_tags in tags for t in line_tags)
    with pytest.raises(ValueError):
        write_dataset(tmp_path, 1, 1, render=("ocr",), ocr_noise="loud")


def test_synth_command_takes_families_and_noise(tmp_path, capsys) -> None:
    from docassay.flows.cli import main
    assert main(["synth", "--out", str(tmp_path), "--kind", "receipt", "--formats", "2", "--docs", "1",
                 "--families", "slogan", "--render", "ocr", "--ocr-noise", "light"]) == 0
    rows = [json.loads(line) for line in (tmp_path / "manifest.jsonl").read_text().splitlines()]
    assert [r["family"] for r in rows] == ["slogan", "slogan"] and all("ocr_tags" in r for r in rows)
    assert main(["synth", "--out", str(tmp_path), "--kind", "receipt", "--families", "sidebar"]) == 2
    assert "receipt families must be" in capsys.readouterr().err


def test_item_tables_with_group_headings_keep_exactly_the_line_items() -> None:
    found = 0
    for fseed in format_seeds("train", 40, seed=8):
        fmt = make_format(fseed, "invoice", families=["tax_summary"])
        if not fmt.style.rich.sections:
            continue
        sd = make_document(fmt, 0)
        if len(sd.truth["line_items"]) < 3:
            continue
        found += 1
        words = [w.text for p in sd.document.pages for w in p.words]
        assert fmt.style.rich.sections[0].split()[0] in words or fmt.style.rich.sections[0].upper().split()[0] in words
        assert len(sd.truth_spans.items) == len(sd.truth["line_items"])          # headings and subtotals are no items
        item_words = {(it.page, i) for it in sd.truth_spans.items for i in it.word_ids}
        heading = fmt.style.rich.sections[0].split()[0]
        assert not any(sd.document.pages[p - 1].words[i].text in (heading, heading.upper()) and
                       sd.document.pages[p - 1].words[i].bold for p, i in item_words)
        if found >= 3:
            break
    assert found >= 2


@pytest.mark.slow
def test_a_scan_of_a_rich_receipt_is_read_by_the_image_parser() -> None:
    """The project's image parser (OCR) reads the total of a `light` scan (about 15 s: marked slow)."""
    parsers = pytest.importorskip("docassay.extractors.parsers")
    from docassay.extractors.synth import to_scan_png
    sd = make_document(make_format(SEEDS[0], "receipt", families=["rich_totals"]), 0)
    doc = parsers.parse(f"{sd.doc_id}.png", to_scan_png(sd, "light", 200)[0])
    assert sd.truth_spans.fields["total"].text in " ".join(w.text for w in doc.pages[0].words)


def test_bilingual_labels_name_both_languages() -> None:
    from docassay.extractors.synth.families import BILINGUAL_KEYS
    found = 0
    for fseed in format_seeds("train", 60, seed=12):
        fmt = make_format(fseed, "invoice", families=["letterhead"])
        if not fmt.style.rich.bilingual:
            continue
        found += 1
        assert fmt.language != "en"
        assert all(" / " in fmt.style.labels[k] for k in BILINGUAL_KEYS)
        sd = make_document(fmt, 0)
        anchor = sd.truth_spans.fields["gross_total"].anchor
        assert anchor is not None and " / " in anchor.text
    assert found >= 3


def test_payment_slip_reprints_values_without_moving_the_truth() -> None:
    found = 0
    for fseed in format_seeds("train", 60, seed=13):
        fmt = make_format(fseed, "invoice", families=["letterhead"])
        if not fmt.style.rich.payment_slip:
            continue
        sd = make_document(fmt, 0)
        if sd.truth["gross_total"] < 0:
            continue
        found += 1
        page = sd.document.pages[-1]
        words = [w.text for w in page.words]
        assert fmt.style.rich.labels["slip"].split()[0] in words
        number = sd.truth_spans.fields["invoice_number"]
        assert sum(w.text == sd.truth["invoice_number"] for p in sd.document.pages for w in p.words) >= 2
        assert number.page == 1 and number.anchor is not None                   # the labelled one stays the truth
        if found >= 2:
            break
    assert found >= 2


@pytest.mark.slow
def test_sweep_no_overlap_and_exact_truth_in_every_family() -> None:
    """40 unseen formats x 2 documents of every family: no text over other text, every truth value
    printed as its truth (the sweep that found the long-label and wide-total collisions)."""
    for kind, fams in (("invoice", ALL_INVOICE_FAMILIES), ("receipt", ALL_RECEIPT_FAMILIES)):
        for fam in fams:
            for s in format_seeds("unseen", 40, seed=42):
                fmt = make_format(s, kind, families=[fam])
                for d in range(2):
                    sd = make_document(fmt, d)
                    _no_overlap(sd)
                    for _page, key, text, truth in _truth_chunks(sd):
                        _check(sd, key, text, truth)
