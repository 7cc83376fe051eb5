"""A batch: collect the inputs, run every document through the pipeline, write results as they land.

`run_batch` is the plain-function form (tests and benchmarks call it), on the same loop as the CLI's
local runs (flows/dispatch.py); `flows/extract_flow.py` runs the same per-document stage as Prefect
tasks.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import jsonschema

from docassay.flows.context import Job, RunContext
from docassay.flows.progress import Progress
from docassay.flows.results import ResultsWriter, Row
from docassay.infra.errors import ConfigError
from docassay.verifiers.schema_refs import SchemaRefError, bundle

__all__ = ["collect_sources", "load_schema", "load_rule_pack", "run_batch", "SKIP_NAMES", "is_document_key",
           "s3_sources"]

# Files that sit beside documents but are not documents (ground truth, manifests, our own output).
SKIP_NAMES = {"manifest.jsonl", "results.jsonl", ".DS_Store"}
_SIDECAR_SUFFIXES = (".gt.json", ".spans.json")
_DOCUMENT_SUFFIXES = (".pdf", ".ocr.json", ".png", ".jpg", ".txt", ".tif", ".xml")


def collect_sources(paths: Iterable[str], *, skip: Callable[[Path], bool] | None = None,
                    follow_links: bool = False) -> list[str]:
    """Files as given; folders recursed (sorted, hidden files skipped). Missing paths are a usage error.

    Without `follow_links` a symbolic link inside a folder (to a file or a folder) is listed but
    not followed: reading it ends as a `not_a_file` row (extractors.parsers.local_file), as does a
    named pipe, socket or device. With it, linked folders are walked too, each real folder once.
    """
    out: list[str] = []
    for p in paths:
        if str(p).startswith("s3://"):
            out.extend(s3_sources(str(p)))
            continue
        path = Path(p)
        if path.is_dir() and (follow_links or not path.is_symlink()):
            seen: set[tuple[int, int]] = set()
            for root, dirs, files in os.walk(path, followlinks=follow_links):
                st = os.stat(root)
                if (st.st_dev, st.st_ino) in seen:          # a link loop, or a folder linked twice
                    dirs[:] = []
                    continue
                seen.add((st.st_dev, st.st_ino))
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                if not follow_links:                         # a linked folder: listed, refused when read
                    files = [*files, *(d for d in dirs if (Path(root) / d).is_symlink())]
                    dirs[:] = [d for d in dirs if not (Path(root) / d).is_symlink()]
                for name in sorted(files):
                    f = Path(root) / name
                    if name.startswith(".") or name in SKIP_NAMES or name.endswith(_SIDECAR_SUFFIXES):
                        continue
                    if skip is not None and skip(f):
                        continue
                    out.append(str(f))
        elif path.exists() or path.is_symlink():
            out.append(str(path))
        else:
            raise ConfigError(f"input not found: {p}", path=str(p))
    return list(dict.fromkeys(out))


def ground_truth_sidecar(path: Path) -> bool:
    """True for `<id>.json` ground-truth files that sit beside `<id>.pdf` / `<id>.ocr.json` inputs."""
    if path.suffix != ".json" or path.name.endswith(".ocr.json"):
        return False
    stem = path.name[:-len(".json")]
    return any((path.parent / f"{stem}{ext}").exists() for ext in _DOCUMENT_SUFFIXES)


def is_document_key(key: str, keys: set[str]) -> bool:
    """Whether object key `key` (`/`-separated) of a listing `keys` is a document: not hidden (no
    part starts with `.`), not one of SKIP_NAMES or a sidecar, not an `<id>.json` ground truth
    beside `<id>.pdf` (or another document) in the same listing."""
    parts = key.split("/")
    name = parts[-1]
    if any(part.startswith(".") for part in parts) or name in SKIP_NAMES or name.endswith(_SIDECAR_SUFFIXES):
        return False
    if name.endswith(".json") and not name.endswith(".ocr.json"):
        stem = key[:-len(".json")]
        return not any(stem + ext in keys for ext in _DOCUMENT_SUFFIXES)
    return True


def s3_sources(url: str) -> list[str]:
    """`s3://bucket/key` of one object as given; a prefix expanded to the documents under it
    (sorted; hidden keys, sidecars and ground truth skipped, as for folders)."""
    from docassay.infra.s3 import S3ObjectStore, parse_s3_url  # boto3 only for S3 inputs
    bucket, key = parse_s3_url(url)
    if key and not key.endswith("/") and S3ObjectStore(bucket).exists(key):
        return [url]
    store = S3ObjectStore(bucket, key)
    keys = set(store.list())
    found = [store.url_of(k) for k in sorted(keys) if is_document_key(k, keys)]
    if not found and not keys:
        raise ConfigError(f"input not found: {url} (no object and no objects under that prefix)", path=url)
    return found


def load_schema(path: str | Path, *, ref_dirs: Sequence[str | Path] = ()) -> dict[str, Any]:
    """The target schema, with the documents its `$ref`s name embedded (verifiers.schema_refs): read
    from its own folder or one of `ref_dirs`, never from the network."""
    try:
        schema = json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the schema {path}: {exc}", path=str(path)) from exc
    if not isinstance(schema, dict) or schema.get("type") != "object" or not isinstance(schema.get("properties"), dict):
        raise ConfigError(f"the schema {path} must be a JSON Schema of type object with properties", path=str(path))
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
        schema = bundle(schema, path, ref_dirs)
    except jsonschema.SchemaError as exc:
        raise ConfigError(f"the schema {path} is not a valid JSON Schema: {exc.message}", path=str(path)) from exc
    except SchemaRefError as exc:
        raise ConfigError(exc.message, path=str(path)) from exc
    return schema


def load_rule_pack(path: str | Path | None) -> list:
    if not path:
        return []
    from docassay.rules.loader import load_rules
    return load_rules(path)


def run_batch(sources: list[str], job: Job, ctx: RunContext, *, writer: ResultsWriter | None = None,
              progress: Progress | None = None, concurrency: int | None = None,
              documents: Mapping[str, Any] | None = None) -> list[Row]:
    """Process every source with the batch's own loop (`ThreadDispatch`, as the CLI runs locally),
    writing each row as soon as it is done. Rows come back in input order. `documents` may map a
    source to an already parsed Document."""
    from docassay.flows.dispatch import ThreadDispatch
    from docassay.flows.signals import StopRequest
    rows: dict[int, Row] = {}
    dispatch = ThreadDispatch(max(1, concurrency or job.settings.concurrency), documents=documents)
    for i, row in dispatch.run(sources, job, ctx, StopRequest()):
        rows[i] = row
        if writer is not None:
            writer.write(row)
        if progress is not None:
            progress.update(row)
    return [rows[i] for i in range(len(sources))]
