"""The OCR engine's settings are named, with environment overrides (bench/ocr_settings.py measures them)."""
from __future__ import annotations

import pytest

from docassay.extractors.parsers.ocr import DET_MAX_SIDE, OcrSettings
from docassay.infra.errors import ConfigError


def test_defaults_and_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("DOCASSAY_OCR_DET_MAX_SIDE", "DOCASSAY_OCR_USE_CLS", "DOCASSAY_OCR_THREADS"):
        monkeypatch.delenv(k, raising=False)
    d = OcrSettings.from_env()
    assert d == OcrSettings(DET_MAX_SIDE, True, 0)
    assert d.engine_kwargs() == {"det_limit_type": "max", "det_limit_side_len": DET_MAX_SIDE, "use_cls": True}
    monkeypatch.setenv("DOCASSAY_OCR_DET_MAX_SIDE", "1280")
    monkeypatch.setenv("DOCASSAY_OCR_USE_CLS", "0")
    monkeypatch.setenv("DOCASSAY_OCR_THREADS", "1")
    s = OcrSettings.from_env()
    assert s.engine_kwargs() == {"det_limit_type": "max", "det_limit_side_len": 1280, "use_cls": False,
                                 "intra_op_num_threads": 1}
    monkeypatch.setenv("DOCASSAY_OCR_THREADS", "many")
    with pytest.raises(ConfigError):
        OcrSettings.from_env()
