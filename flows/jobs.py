"""Build a `Job` from plain options (CLI flags, flow parameters)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from flows.batch import load_rule_pack, load_schema
from flows.pipeline import Job
from infra.config import Settings
from infra.errors import ConfigError

GENERATORS = ("baseline", "model")


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


def build_job(o: JobOptions) -> Job:
    if o.generator not in GENERATORS:
        raise ConfigError(f"unknown generator {o.generator!r}: choose one of {', '.join(GENERATORS)}")
    settings = Settings.load(home=o.home, db=o.db, concurrency=o.concurrency)
    job = Job(schema=load_schema(o.schema), rules=load_rule_pack(o.rules), settings=settings,
              generator=o.generator, reuse_formats=o.reuse_formats, repair=o.repair)
    if o.generator == "model":
        from extractors.instructions.model_scorer import model_scorer   # the MoE model, loaded once
        job.scorer = model_scorer()
    return job
