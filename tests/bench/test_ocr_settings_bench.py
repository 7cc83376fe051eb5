"""bench/ocr_settings.py: a setting names its engine's environment; the line score counts spaces."""
from __future__ import annotations

import pytest


def test_bench_settings_name_each_engines_environment() -> None:
    from bench.ocr_settings import score_lines, setting_env
    assert setting_env("rapidocr:det=1280:cls=0", 2) == ("rapidocr", {
        "DOCASSAY_OCR_THREADS": "2", "DOCASSAY_OCR_DET_MAX_SIDE": "1280", "DOCASSAY_OCR_USE_CLS": "0"})
    assert setting_env("tesseract:psm=4:junk=-1", 2) == ("tesseract", {
        "DOCASSAY_OCR_TESSERACT_PSM": "4", "DOCASSAY_OCR_TESSERACT_JUNK_CONF": "-1"})
    with pytest.raises(SystemExit, match="unknown key 'det'"):
        setting_env("tesseract:det=960", 2)
    with pytest.raises(SystemExit, match="unknown engine"):
        setting_env("easyocr", 2)
    line = [{"text": "TOTAL  12.50", "quad": [0, 0, 100, 0, 100, 20, 0, 20]}]
    assert score_lines(line, [("TOTAL", 0, 0, 50, 20), ("12.50", 55, 0, 100, 20)]) == {
        "lines": 1, "char_acc": 1.0, "word_acc": 1.0, "line_hit": 1.0}
    lost_space = score_lines(line, [("TOTAL12.50", 0, 0, 100, 20)])
    assert lost_space["char_acc"] == 1 - 1 / 11 and lost_space["word_acc"] == 0.0
