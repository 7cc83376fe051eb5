"""Batch results in object storage: `docassay extract ... --out s3://bucket/prefix`.

The batch writes `results.jsonl` to a local cache folder as rows finish (as for a local `--out`),
then `publish` copies it to `<out>/results.jsonl` and writes one object per document,
`<out>/documents/<sha256>.json` (the same row). The local copy is only a cache.
"""
from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Iterable

from docassay.flows.results import Row
from docassay.infra.objects import ObjectStore

__all__ = ["is_remote", "local_dir", "publish"]


def is_remote(out: str | Path) -> bool:
    return str(out).startswith("s3://")


def local_dir(out: str | Path, home: Path) -> Path:
    """Where the batch writes: `out` itself when local, else a fresh cache folder under `home`."""
    if not is_remote(out):
        return Path(out)
    return Path(home) / "cache" / "results" / uuid.uuid4().hex[:12]


def publish(out: str, results: Path, rows: Iterable[Row]) -> str:
    """Copy `results` to `<out>/results.jsonl` and write `<out>/documents/<sha256>.json` per row
    with a content hash; returns the URL of results.jsonl."""
    store = ObjectStore.open(out)
    for row in rows:
        if row.sha256:
            store.put(f"documents/{row.sha256}.json",
                      (json.dumps(row.to_json(), ensure_ascii=False, default=str) + "\n").encode())
    store.put("results.jsonl", results.read_bytes())
    return store.url.rstrip("/") + "/results.jsonl"
