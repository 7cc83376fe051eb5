"""The OCR engine's settings are named, with environment overrides (bench/ocr_settings.py measures them)."""
from __future__ import annotations

import pytest

from docassay.extractors.parsers.ocr import DET_MAX_SIDE, REC_BATCH, REC_HEIGHT, REC_MIN_WIDTH, OcrSettings
from docassay.infra.errors import ConfigError


def test_defaults_and_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("DET_MAX_SIDE", "USE_CLS", "THREADS", "REC_BATCH", "REC_WIDTH"):
        monkeypatch.delenv(f"DOCASSAY_OCR_{k}", raising=False)
    d = OcrSettings.from_env()
    assert d == OcrSettings(DET_MAX_SIDE, False, 0, REC_BATCH, REC_MIN_WIDTH)
    assert d.engine_kwargs() == {"det_limit_type": "max", "det_limit_side_len": DET_MAX_SIDE, "use_cls": False,
                                 "rec_batch_num": REC_BATCH, "rec_img_shape": [3, REC_HEIGHT, REC_MIN_WIDTH]}
    monkeypatch.setenv("DOCASSAY_OCR_DET_MAX_SIDE", "1280")
    monkeypatch.setenv("DOCASSAY_OCR_USE_CLS", "1")
    monkeypatch.setenv("DOCASSAY_OCR_THREADS", "1")
    monkeypatch.setenv("DOCASSAY_OCR_REC_BATCH", "12")
    monkeypatch.setenv("DOCASSAY_OCR_REC_WIDTH", "320")
    s = OcrSettings.from_env()
    assert s.engine_kwargs() == {"det_limit_type": "max", "det_limit_side_len": 1280, "use_cls": True,
                                 "rec_batch_num": 12, "rec_img_shape": [3, REC_HEIGHT, 320],
                                 "intra_op_num_threads": 1}
    monkeypatch.setenv("DOCASSAY_OCR_THREADS", "many")
    with pytest.raises(ConfigError):
        OcrSettings.from_env()
    monkeypatch.setenv("DOCASSAY_OCR_THREADS", "1")
    monkeypatch.setenv("DOCASSAY_OCR_REC_BATCH", "0")
    with pytest.raises(ConfigError, match="rec batch 0"):
        OcrSettings.from_env()

