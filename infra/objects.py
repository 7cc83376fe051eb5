"""Object storage for document bytes and results: a local folder by default, S3 by URL.

    ObjectStore.open("/path/or/home/objects") -> LocalObjectStore
    ObjectStore.open("s3://bucket/prefix")    -> S3ObjectStore (infra.s3, needs boto3)

Keys are relative paths with `/` separators ("documents/<sha256>", "results/<run>/results.jsonl").
Keys are checked: no absolute paths, no `..`, no control characters — document text never becomes
a path.
"""
from __future__ import annotations

import os
import re
import tempfile
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Iterator

from docassay.infra.errors import ConfigError

__all__ = ["ObjectStore", "LocalObjectStore", "check_key"]

_BAD = re.compile(r"[\x00-\x1f\x7f\\]")


def check_key(key: str) -> str:
    if not key or key.startswith("/") or _BAD.search(key) or any(p in ("", ".", "..") for p in key.split("/")):
        raise ConfigError(f"invalid object key {key!r}", key=key)
    return key


class ObjectStore(ABC):
    url: str

    @abstractmethod
    def put(self, key: str, data: bytes) -> None: ...

    @abstractmethod
    def get(self, key: str) -> bytes: ...

    @abstractmethod
    def exists(self, key: str) -> bool: ...

    @abstractmethod
    def list(self, prefix: str = "") -> Iterator[str]: ...

    @abstractmethod
    def delete(self, key: str) -> None: ...

    @staticmethod
    def open(url: str | Path) -> "ObjectStore":
        u = str(url)
        if u.startswith("s3://"):
            from docassay.infra.s3 import S3ObjectStore  # optional dependency (boto3)
            return S3ObjectStore.from_url(u)
        return LocalObjectStore(Path(u))


class LocalObjectStore(ObjectStore):
    """Objects as files under `root`; writes are atomic (temporary file, then rename)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.url = str(self.root)

    def _path(self, key: str) -> Path:
        return self.root / check_key(key)

    def put(self, key: str, data: bytes) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def get(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError as exc:
            raise KeyError(key) from exc

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def list(self, prefix: str = "") -> Iterator[str]:
        if not self.root.exists():
            return
        for p in sorted(self.root.rglob("*")):
            if p.is_file() and not p.name.startswith(".tmp-"):
                key = p.relative_to(self.root).as_posix()
                if key.startswith(prefix):
                    yield key

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)
