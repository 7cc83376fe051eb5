"""Settings: every named limit, threshold and tolerance in one place.

Values come from the defaults below, overridden by environment variables `DOCASSAY_<NAME>` (upper
case) and then by explicit keyword arguments (the CLI passes its flags). No globals are mutated:
stages receive a `Settings` object.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from docassay.infra.errors import ConfigError


def default_home() -> Path:
    env = os.environ.get("DOCASSAY_HOME")
    return Path(env).expanduser() if env else Path.home() / ".docassay"


@dataclass(frozen=True)
class Limits:
    """Bounds on what one document may cost to read (bad or hostile input ends as an `error` row)."""
    max_bytes: int = 64 * 1024 * 1024          # file size
    max_pages: int = 300                       # pages per document
    max_page_pixels: int = 60_000_000          # rendered / decoded image pixels per page
    max_words_per_page: int = 20_000
    max_text_chars: int = 2_000_000            # plain-text input
    max_json_depth: int = 64                   # nesting of JSON inputs (OCR line files, Textract)
    max_json_values: int = 2_000_000           # values in a JSON input, counted before it is parsed
    parse_timeout_s: float = 120.0             # wall time per document parse
    ocr_render_dpi: int = 200                  # rendering scanned PDF pages for OCR


@dataclass(frozen=True)
class Settings:
    home: Path = field(default_factory=default_home)
    db: str | None = None                      # DSN; None = embedded PostgreSQL under home
    index: str | None = None                   # format index; None = faiss under home/index, or s3vectors://bucket/index
    limits: Limits = field(default_factory=Limits)
    match_threshold: float = 0.72              # cosine similarity for a `known` format (bench/format_matching.py)
    max_attempts: int = 3                      # repair attempts before needs_review
    rule_timeout_ms: int = 2000                # statement timeout per SQL rule
    rule_sandbox: str = "role"                 # "role": rules run as docassay_rule (rules/sandbox.py); "off": as the login
    concurrency: int = 2                       # documents processed at once
    follow_links: bool = False                 # read inputs behind symbolic links (`--follow-links`)
    schema_ref_dirs: str = ""                  # folders (os.pathsep-separated) a schema $ref may read besides its own
    ocr_engine: str = "rapidocr"               # rapidocr | tesseract | auto | textract (extractors.parsers.ocr)
    # Token budgets (infra/quota.py): who is charged, daily defaults, and when the day ends.
    quota_project: str = "default"             # project charged for model tokens (`--project`)
    quota_user: str = ""                       # user charged (`--user`); "" = the login name
    quota_project_input_tokens: int = 50_000_000   # default daily limits; a project or user may be
    quota_project_output_tokens: int = 5_000_000   # set lower (`docassay quota set`), never higher
    quota_user_input_tokens: int = 10_000_000
    quota_user_output_tokens: int = 1_000_000
    quota_timezone: str = "UTC"                # quotas reset at midnight in this IANA time zone
    quota_reservation_ttl_s: int = 3600        # a reservation never settled (crashed worker) is released after this

    @classmethod
    def load(cls, **overrides: object) -> "Settings":
        values: dict[str, Any] = {}
        for f in fields(cls):
            env = os.environ.get(f"DOCASSAY_{f.name.upper()}")
            if env is None or f.name == "limits":
                continue
            values[f.name] = _coerce(f.name, env, f.type)
        values.update({k: v for k, v in overrides.items() if v is not None})
        if "home" in values:
            values["home"] = Path(str(values["home"])).expanduser()
        return replace(cls(), **values)


def _coerce(name: str, raw: str, typ: object) -> object:
    t = str(typ)
    if "bool" in t:
        if raw.strip().lower() in ("1", "true", "yes", "on"):
            return True
        if raw.strip().lower() in ("0", "false", "no", "off", ""):
            return False
        raise ConfigError(f"DOCASSAY_{name.upper()}={raw!r} is not true or false", setting=name)
    try:
        if "float" in t:
            return float(raw)
        if "int" in t:
            return int(raw)
    except ValueError as exc:
        raise ConfigError(f"DOCASSAY_{name.upper()}={raw!r} is not a number", setting=name) from exc
    return raw
