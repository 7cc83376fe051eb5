"""Build a `Job` from plain options (`flows.job_options.JobOptions`: CLI flags, flow parameters)."""
from __future__ import annotations

import os
import threading
from typing import Any, Callable

from docassay.extractors.instructions.generator import Scorer
from docassay.flows.batch import load_rule_pack, load_schema
from docassay.flows.context import Job
from docassay.flows.einvoice import MODES as EINVOICE_MODES
from docassay.flows.job_options import JobOptions
from docassay.infra.config import Settings
from docassay.infra.errors import ConfigError
from docassay.infra.quota import QuotaBudget, is_metered


def _load_model_scorer() -> Scorer:
    from docassay.extractors.instructions.model_scorer import model_scorer  # the MoE model, loaded once
    return model_scorer()


class LazyModelScorer:
    """The in-process model scorer, loaded (torch imported, weights read) by the first document that
    needs it: a batch of known formats never pays for it. Metered like the model (`tokens`)."""

    def __init__(self, load: Callable[[], Scorer] = _load_model_scorer) -> None:
        self._load = load
        self._scorer: Scorer | None = None
        self._lock = threading.Lock()

    def _get(self) -> Any:
        with self._lock:
            if self._scorer is None:
                self._scorer = self._load()
            return self._scorer

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._get()(*args, **kwargs)

    def tokens(self, *args: Any, **kwargs: Any) -> Any:
        return self._get().tokens(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._get(), name)


def _model_scorer() -> Scorer:
    return LazyModelScorer()


def _load_layout_scorer() -> Scorer:
    from docassay.extractors.instructions.layout_scorer import layout_scorer  # the layout reader, loaded once
    return layout_scorer()


def _layout_scorer() -> Scorer:
    return LazyModelScorer(_load_layout_scorer)


GENERATORS: dict[str, Callable[[], Scorer | None]] = {
    "baseline": lambda: None,          # label similarity, no model, no tokens
    "model": _model_scorer,            # the default model (today the proposal ranker); metered by the token quotas
    "ranker": _model_scorer,           # the proposal ranker (infra/model/weights/moe.pt), by name
    "layout": _layout_scorer,          # the word-level layout reader (infra/model/weights/layout.pt), in-process
}
"""Generator name -> scorer factory (the one place a generator's scorer is made)."""


MODEL_URL_ENV = "DOCASSAY_MODEL_URL"


def _scorer(o: JobOptions) -> Scorer | None:
    """The generator's scorer; the model on a server when a model URL is given (option or environment)."""
    url = o.model_url or os.environ.get(MODEL_URL_ENV)
    if o.generator in ("model", "ranker") and url:
        from docassay.flows.remote_scorer import remote_scorer
        return remote_scorer(url)
    if o.generator == "layout" and url:            # a server started with `docassay model serve --model layout`
        from docassay.flows.remote_scorer import remote_layout_scorer
        return remote_layout_scorer(url)
    return GENERATORS[o.generator]()


PARSERS: dict[str, str | None] = {
    "local": None,                     # the configured local OCR (Settings.ocr_engine)
    "rapidocr": "rapidocr",            # the local engines by name (extractors.parsers.ocr)
    "tesseract": "tesseract",
    "textract": "textract",            # images and scanned PDFs go to Amazon Textract AnalyzeDocument
}
"""`--parser` choice -> Settings.ocr_engine override."""


def build_job(o: JobOptions) -> Job:
    """The job, with a token budget (infra.quota) when its generator calls a model."""
    if o.generator not in GENERATORS:
        raise ConfigError(f"unknown generator {o.generator!r}: choose one of {', '.join(GENERATORS)}")
    if o.parser not in PARSERS:
        raise ConfigError(f"unknown parser {o.parser!r}: choose one of {', '.join(PARSERS)}")
    if o.einvoice not in EINVOICE_MODES:
        raise ConfigError(f"unknown --einvoice mode {o.einvoice!r}: choose one of {', '.join(EINVOICE_MODES)}")
    if o.min_confidence is not None and not 0.0 <= o.min_confidence <= 1.0:
        raise ConfigError(f"min confidence must be between 0 and 1, not {o.min_confidence}", setting="min_confidence")
    settings = Settings.load(home=o.home, db=o.db, concurrency=o.concurrency,
                             quota_project=o.project, quota_user=o.user, index=o.index,
                             ocr_engine=PARSERS[o.parser], follow_links=o.follow_links or None)
    if settings.rule_sandbox not in ("role", "off"):
        raise ConfigError(f"DOCASSAY_RULE_SANDBOX must be 'role' (the default) or 'off', not {settings.rule_sandbox!r}",
                          setting="rule_sandbox")
    ref_dirs = [d for d in settings.schema_ref_dirs.split(os.pathsep) if d]
    job = Job(schema=load_schema(o.schema, ref_dirs=ref_dirs), rules=load_rule_pack(o.rules), settings=settings,
              generator=o.generator, reuse_formats=o.reuse_formats, repair=o.repair, einvoice=o.einvoice,
              min_confidence=o.min_confidence)
    job.scorer = _scorer(o)
    if is_metered(job.scorer):
        job.budget = QuotaBudget.from_settings(settings)
    return job
