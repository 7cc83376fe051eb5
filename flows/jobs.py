"""Build a `Job` from plain options (CLI flags, flow parameters)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from extractors.instructions.generator import Scorer
from flows.batch import load_rule_pack, load_schema
from flows.pipeline import Job
from infra.config import Settings
from infra.errors import ConfigError
from infra.quota import QuotaBudget, is_metered


def _model_scorer() -> Scorer:
    from extractors.instructions.model_scorer import model_scorer   # the MoE model, loaded once
    return model_scorer()


GENERATORS: dict[str, Callable[[], Scorer | None]] = {
    "baseline": lambda: None,          # label similarity, no model, no tokens
    "model": _model_scorer,            # the MoE model; metered by the token quotas
}
"""Generator name -> scorer factory (the one place a generator's scorer is made)."""


@dataclass
class JobOptions:
    schema: str | Path
    rules: str | Path | None = None
    home: str | Path | None = None
    db: str | None = None
    generator: str = "baseline"
    concurrency: int = 2
    reuse_formats: bool = True
    repair: bool = True
    project: str | None = None         # quota identity (None: settings.quota_project / quota_user)
    user: str | None = None


def build_job(o: JobOptions) -> Job:
    """The job, with a token budget (infra.quota) when its generator calls a model."""
    if o.generator not in GENERATORS:
        raise ConfigError(f"unknown generator {o.generator!r}: choose one of {', '.join(GENERATORS)}")
    settings = Settings.load(home=o.home, db=o.db, concurrency=o.concurrency,
                             quota_project=o.project, quota_user=o.user)
    job = Job(schema=load_schema(o.schema), rules=load_rule_pack(o.rules), settings=settings,
              generator=o.generator, reuse_formats=o.reuse_formats, repair=o.repair)
    job.scorer = GENERATORS[o.generator]()
    if is_metered(job.scorer):
        job.budget = QuotaBudget.from_settings(settings)
    return job
