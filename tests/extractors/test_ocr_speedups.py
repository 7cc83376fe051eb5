"""Issue 15's OCR speed-ups keep what is read: the simplified PP-OCR graphs compute what the wheel's
models compute, RapidOCR reads the same words with them, and a large JPEG decoded reduced gives its
words in the full image's pixels."""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from docassay.extractors.document import BBox, Word
from docassay.extractors.parsers import ocr, ocr_graph, parse
from docassay.extractors.parsers.image import ocr_frame, scale_words
from docassay.infra.config import Settings
from tests.extractors.test_ocr_engines import _font, text_png

MODELS = Path(__import__("rapidocr_onnxruntime").__file__).parent / "models"


def _session(model: bytes):
    import onnxruntime as ort
    return ort.InferenceSession(model, providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("name,shape", [("ch_PP-OCRv4_rec_infer.onnx", (2, 3, 48, 160)),
                                        ("ch_PP-OCRv4_det_infer.onnx", (1, 3, 96, 128)),
                                        ("ch_ppocr_mobile_v2.0_cls_infer.onnx", (2, 3, 48, 192))])
def test_the_simplified_graph_computes_what_the_wheels_model_computes(name: str, shape: tuple) -> None:
    raw = (MODELS / name).read_bytes()
    stats = ocr_graph.SimplifyStats()
    new = ocr_graph.simplify(raw, stats)
    assert new is not None and stats["hardswish"] > 0 and (stats["fold"] > 0) == ("PP-OCRv4" in name)
    assert ocr_graph.simplify(new) is None                     # nothing left to rewrite
    x = np.random.default_rng(15).standard_normal(shape).astype(np.float32)
    a, b = _session(raw), _session(new)
    assert len(b.get_inputs()) == len(a.get_inputs()) and len(b.get_outputs()) == len(a.get_outputs())
    want = a.run(None, {a.get_inputs()[0].name: x})[0]
    got = b.run(None, {b.get_inputs()[0].name: x})[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


def test_only_the_patterns_a_model_has_are_rewritten() -> None:
    # the classifier (PP-OCR mobile v2) has hard-swish but no affine blocks after its convolutions
    stats = ocr_graph.SimplifyStats()
    cls = (MODELS / "ch_ppocr_mobile_v2.0_cls_infer.onnx").read_bytes()
    assert ocr_graph.simplify(cls, stats) is not None
    assert stats["fold"] == 0 and stats["hardswish"] > 0


def _fresh_engine(monkeypatch: pytest.MonkeyPatch, **env: str) -> None:
    monkeypatch.setattr(ocr, "_engine", None)
    monkeypatch.setattr(ocr, "_settings", None)
    for key, value in env.items():
        monkeypatch.setenv(key, value)


def test_rapidocr_reads_the_same_words_with_the_simplified_graphs(monkeypatch: pytest.MonkeyPatch) -> None:
    img = Image.open(io.BytesIO(text_png(["INVOICE 2024-05-01", "TOTAL 12.50"]))).convert("RGB")
    read = {}
    for flag in ("0", "1"):
        _fresh_engine(monkeypatch, DOCASSAY_OCR_SIMPLIFY=flag)
        read[flag] = [(w.text, round(w.bbox.x0), round(w.bbox.y0)) for w in ocr.ocr_words(img, "rapidocr")]
        assert ocr._settings is not None and ocr._settings.simplify is (flag == "1")
    assert " ".join(t for t, _, _ in read["1"]).endswith("TOTAL 12.50")
    assert read["1"] == read["0"]


def test_the_settings_flags_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCASSAY_OCR_SIMPLIFY", "off")
    monkeypatch.setenv("DOCASSAY_OCR_SPIN", "0")
    s = ocr.OcrSettings.from_env()
    assert (s.simplify, s.spin) == (False, False)
    monkeypatch.delenv("DOCASSAY_OCR_SIMPLIFY")
    monkeypatch.delenv("DOCASSAY_OCR_SPIN")
    s = ocr.OcrSettings.from_env()
    assert (s.simplify, s.spin) == (True, True)


def _jpeg(img: Image.Image, **kw: object) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=92, **kw)
    return buf.getvalue()


def test_a_large_jpeg_is_decoded_reduced_but_its_page_keeps_the_full_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ocr, "CROP_MAX_SIDE", 400)             # RapidOCR reads lines at <= 400 px
    full = Image.new("RGB", (1600, 600), "white")
    frame, size = ocr_frame(Image.open(io.BytesIO(_jpeg(full))), "rapidocr")
    assert size == (1600, 600) and frame.size == (400, 150)    # 1/4: the smallest scale >= 400 px
    monkeypatch.setenv("DOCASSAY_OCR_JPEG_DRAFT", "0")
    frame, size = ocr_frame(Image.open(io.BytesIO(_jpeg(full))), "rapidocr")
    assert frame.size == size == (1600, 600)
    monkeypatch.delenv("DOCASSAY_OCR_JPEG_DRAFT")
    exif = Image.Exif()
    exif[0x0112] = 6                                           # stored turned: displayed 600 x 1600
    frame, size = ocr_frame(Image.open(io.BytesIO(_jpeg(full, exif=exif))), "rapidocr")
    assert size == (600, 1600) and frame.size == (150, 400)
    png = io.BytesIO()
    full.save(png, format="PNG")                               # only JPEG decodes reduced
    frame, size = ocr_frame(Image.open(io.BytesIO(png.getvalue())), "rapidocr")
    assert frame.size == size == (1600, 600)


def test_words_of_a_reduced_decode_are_in_the_full_images_pixels(monkeypatch: pytest.MonkeyPatch) -> None:
    assert scale_words([Word("A", BBox(1, 2, 3, 4))], 2.0, 4.0)[0].bbox == BBox(2, 8, 6, 16)
    monkeypatch.setattr(ocr, "CROP_MAX_SIDE", 700)
    img = Image.new("L", (1400, 400), 255)
    ImageDraw.Draw(img).text((80, 120), "TOTAL 12.50", fill=0, font=_font(90))
    page = parse("big.jpg", _jpeg(img), settings=Settings.load(ocr_engine="rapidocr")).pages[0]
    assert (page.width, page.height) == (1400, 400)
    assert [w.text for w in page.words] == ["TOTAL", "12.50"]
    total = page.words[0].bbox
    assert abs(total.x0 - 80) < 25 and 100 < total.y0 < 170 and total.x1 > 300     # not half of that
