"""The one list of job options: what a batch extracts and how (`JobOptions`).

Every field carries its command-line form in its metadata (`Cli`: flag, help, choices, type), so
one declaration serves every way in:

    add_job_options(parser)        the flags of `docassay extract` and `docassay deploy`
    JobOptions.from_args(args)     ... and back from the parsed arguments
    opts.to_json() / from_json()   the Prefect flows' one plain-JSON `options` parameter
                                   (flows/extract_flow.py, flows/inbox.py, deployments)
    InboxSpec.job                  an inbox run's options (flows/inbox.py)
    docassay.extract(**options)    the public API's keyword arguments (docassay/_api.py)

A new option is one field here plus its use (`flows.jobs.build_job`). Light on purpose: building
the CLI's parser imports this module, so it imports nothing heavy.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, overload

from docassay.infra.errors import ConfigError

__all__ = ["JobOptions", "Cli", "add_job_options", "GENERATOR_CHOICES", "PARSER_CHOICES", "EINVOICE_CHOICES",
           "DEFAULT_GENERATOR", "DEFAULT_CONCURRENCY"]

GENERATOR_CHOICES = ("baseline", "model", "ranker", "layout")   # flows.jobs.GENERATORS: name -> scorer factory
PARSER_CHOICES = ("local", "rapidocr", "tesseract", "textract")   # flows.jobs.PARSERS: -> Settings.ocr_engine
EINVOICE_CHOICES = ("use", "check", "ignore")  # flows.einvoice.MODES
DEFAULT_GENERATOR = "model"
DEFAULT_CONCURRENCY = 2


@dataclass(frozen=True)
class Cli:
    """How a job option appears on the command line. A bool option is a switch: `--x` when its
    default is False, `--no-x` when it is True."""
    help: str
    flag: str | None = None            # None: `--` + the field name with dashes
    type: type | None = None           # argparse `type` (int, float); None: a string
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    required: bool = False
    path: bool = False                 # a local path (made absolute for deployments), or an s3:// URL

    def flag_for(self, name: str, default: Any) -> str:
        if self.flag:
            return self.flag
        dashed = name.replace("_", "-")
        return f"--no-{dashed}" if default is True else f"--{dashed}"


def _opt(default: Any = dataclasses.MISSING, **cli: Any) -> Any:
    return field(default=default, metadata={"cli": Cli(**cli)})


@dataclass(frozen=True)
class JobOptions:
    schema: str | Path = _opt(required=True, path=True, help="JSON Schema of the record to extract")
    rules: str | Path | None = _opt(None, path=True, help="SQL rule pack: a .sql file or a folder of them")
    home: str | Path | None = _opt(None, path=True, help="format library, vector index and embedded database "
                                                         "(default: $DOCASSAY_HOME, else ~/.docassay)")
    db: str | None = _opt(None, help="PostgreSQL DSN (default: the embedded server under --home)")
    generator: str = _opt(DEFAULT_GENERATOR, choices=GENERATOR_CHOICES,
                          help="how instructions for new formats are written: the default model (`model`, today the "
                               "proposal ranker; on the server of --model-url if given, else in-process), the "
                               "ranker by name, the word-level layout reader (`layout`, in-process) or the "
                               "baseline (label similarity, no model tokens)")
    concurrency: int = _opt(DEFAULT_CONCURRENCY, type=int,
                            help=f"documents processed at once (default {DEFAULT_CONCURRENCY})")
    reuse_formats: bool = _opt(True, help="treat every document as a new format: match nothing in the format "
                                          "library (an ablation; learning costs model tokens)")
    repair: bool = _opt(True, help="no fixer and no troubleshooter: a record that fails verification is not "
                                   "repaired (an ablation)")
    project: str | None = _opt(None, help="project charged for model tokens "
                                          "(default: $DOCASSAY_QUOTA_PROJECT or 'default')")
    user: str | None = _opt(None, help="user charged for model tokens (default: $DOCASSAY_QUOTA_USER or the login "
                                       "name)")
    parser: str = _opt("local", choices=PARSER_CHOICES,
                       help="who reads images and scanned PDFs: the local OCR (default: $DOCASSAY_OCR_ENGINE, else "
                            "auto = Tesseract where installed, else RapidOCR), one local engine by name, or Amazon "
                            "Textract")
    index: str | None = _opt(None, path=True,
                             help="format index: s3vectors://bucket/index (default: faiss under --home)")
    model_url: str | None = _opt(None, help="URL of a running `docassay model serve` (default: $DOCASSAY_MODEL_URL, "
                                            "else the model runs in-process); used by --generator model, the default")
    follow_links: bool = _opt(False, help="read files and folders behind symbolic links (default: a link ends as a "
                                          "`not_a_file` row)")
    einvoice: str = _opt("use", choices=EINVOICE_CHOICES,
                         help="e-invoices (Factur-X/ZUGFeRD/XRechnung/UBL XML in a PDF, or a bare .xml): use the XML "
                              "as the record, check the print against it and learn the layout from it (default); "
                              "check: read the print and compare it with the XML; ignore: the layout path alone")
    min_confidence: float | None = _opt(None, type=float, metavar="P",
                                        help="a record passes only when every required field's calibrated confidence "
                                             "reaches P (0..1; a field's x-docassay min_confidence overrides; default "
                                             "verifiers.confidence.DEFAULT_MIN_CONFIDENCE)")

    # ------------------------------------------------------------------------- the ways in

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_args(cls, args: Any) -> "JobOptions":
        """From the arguments `add_job_options` declared (an argparse Namespace)."""
        return cls(**{name: getattr(args, name) for name in cls.names()})

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "JobOptions":
        """From `to_json`'s dict (a flow or deployment parameter); an unknown or missing name is a ConfigError."""
        if not isinstance(data, Mapping):
            raise ConfigError(f"job options must be a JSON object, not {type(data).__name__}", setting="options")
        unknown = sorted(set(data) - set(cls.names()))
        if unknown:
            raise ConfigError(f"unknown job option(s) {', '.join(unknown)}: known are {', '.join(cls.names())}",
                              setting="options")
        if "schema" not in data:
            raise ConfigError("job options need a schema", setting="options")
        return cls(**data)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values (paths as strings), as `from_json` reads them."""
        return {name: os.fspath(v) if isinstance(v, os.PathLike) else v
                for name, v in ((f.name, getattr(self, f.name)) for f in dataclasses.fields(self))}

    def absolute(self) -> "JobOptions":
        """Local paths made absolute (a deployment runs in another working directory); URLs as given."""
        changes: dict[str, Any] = {f.name: absolute_path(getattr(self, f.name))
                                   for f in dataclasses.fields(self) if cli_of(f).path}
        return dataclasses.replace(self, **changes)


def cli_of(f: dataclasses.Field) -> Cli:
    return f.metadata["cli"]


@overload
def absolute_path(path: str | Path) -> str: ...
@overload
def absolute_path(path: None) -> None: ...
def absolute_path(path: str | Path | None) -> str | None:
    if not path or str(path).startswith(("s3://", "s3vectors://")):
        return None if path is None else str(path)
    return str(Path(path).expanduser().resolve())


def add_job_options(p: Any, names: Iterable[str] | None = None) -> None:
    """Add the flags of the job options (all, or those in `names`) to argparse parser `p`; their
    argparse `dest` is the field name, so `JobOptions.from_args` reads them back."""
    wanted = None if names is None else set(names)
    for f in dataclasses.fields(JobOptions):
        if wanted is not None and f.name not in wanted:
            continue
        c = cli_of(f)
        default = None if f.default is dataclasses.MISSING else f.default
        flag = c.flag_for(f.name, default)
        if isinstance(default, bool):
            p.add_argument(flag, dest=f.name, action="store_false" if default else "store_true", help=c.help)
            continue
        kw: dict[str, Any] = {"dest": f.name, "help": c.help}
        if c.required:
            kw["required"] = True
        else:
            kw["default"] = default
        for key in ("type", "choices", "metavar"):
            if getattr(c, key) is not None:
                kw[key] = getattr(c, key)
        p.add_argument(flag, **kw)
