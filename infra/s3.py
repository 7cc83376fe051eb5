"""S3 as an `ObjectStore`: inbox documents in, results out, through boto3.

    S3ObjectStore.from_url("s3://bucket/prefix")      keys are relative to the prefix
    read_url("s3://bucket/key", max_bytes)            one object's bytes, size checked first
    parse_s3_url("s3://bucket/a/b") -> ("bucket", "a/b")

Keys pass `infra.objects.check_key` (no `..`, no control characters). A missing object is a
`KeyError` (as for `LocalObjectStore`); every other failure (no credentials, access denied, no
such bucket, network) is a `StorageError` that names the bucket and key. Single `PutObject`
calls are atomic on S3: a reader sees the old object or the new one, never half of one.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from botocore.exceptions import BotoCoreError, ClientError

from docassay.infra.aws import client as aws_client
from docassay.infra.errors import ConfigError, StorageError
from docassay.infra.objects import ObjectStore, check_key

__all__ = ["S3ObjectStore", "S3Object", "parse_s3_url", "read_url", "is_s3_url"]

_MISSING = {"404", "NoSuchKey", "NotFound"}
_AWS_ERRORS = (ClientError, BotoCoreError)


def is_s3_url(url: object) -> bool:
    return isinstance(url, str) and url.startswith("s3://")


def parse_s3_url(url: str) -> tuple[str, str]:
    """(bucket, key or prefix) of `s3://bucket/key`; the key may be empty."""
    if not is_s3_url(url):
        raise ConfigError(f"not an S3 URL: {url!r} (expected s3://bucket/prefix)", url=url)
    bucket, _, key = url[len("s3://"):].partition("/")
    if not bucket:
        raise ConfigError(f"S3 URL without a bucket: {url!r}", url=url)
    return bucket, key


@dataclass(frozen=True)
class S3Object:
    key: str              # relative to the store's prefix
    size: int
    etag: str
    last_modified: float  # seconds since the epoch


def _code(exc: Exception) -> str:
    return str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))


def _storage_error(exc: Exception, action: str, url: str) -> StorageError:
    code = _code(exc) or type(exc).__name__
    return StorageError(f"cannot {action} {url}: {code}: {exc}", url=url, code=code)


class S3ObjectStore(ObjectStore):
    """Objects under `s3://bucket/prefix/`. `client` defaults to `infra.aws.client("s3")`."""

    def __init__(self, bucket: str, prefix: str = "", *, client: Any | None = None) -> None:
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        self.url = f"s3://{bucket}/{self.prefix}"
        self._client = client

    @classmethod
    def from_url(cls, url: str, *, client: Any | None = None) -> "S3ObjectStore":
        bucket, prefix = parse_s3_url(url)
        return cls(bucket, prefix, client=client)

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = aws_client("s3")
        return self._client

    def _key(self, key: str) -> str:
        return self.prefix + check_key(key)

    def url_of(self, key: str) -> str:
        return f"s3://{self.bucket}/{self._key(key)}"

    def put(self, key: str, data: bytes, *, content_type: str | None = None) -> None:
        extra = {"ContentType": content_type} if content_type else {}
        try:
            self.client.put_object(Bucket=self.bucket, Key=self._key(key), Body=data, **extra)
        except _AWS_ERRORS as exc:
            raise _storage_error(exc, "write", self.url_of(key)) from exc

    def get(self, key: str, *, max_bytes: int | None = None) -> bytes:
        """The object's bytes; `KeyError` when it does not exist; `StorageError(kind="too_large")`
        before reading an object larger than `max_bytes`."""
        return _get(self.client, self.bucket, self._key(key), max_bytes)

    def head(self, key: str) -> S3Object | None:
        try:
            r = self.client.head_object(Bucket=self.bucket, Key=self._key(key))
        except _AWS_ERRORS as exc:
            if _code(exc) in _MISSING:
                return None
            raise _storage_error(exc, "look up", self.url_of(key)) from exc
        return S3Object(key, int(r["ContentLength"]), str(r.get("ETag", "")).strip('"'),
                        r["LastModified"].timestamp())

    def exists(self, key: str) -> bool:
        return self.head(key) is not None

    def objects(self, prefix: str = "") -> Iterator[S3Object]:
        """Objects whose key (relative to the store) starts with `prefix`, in key order."""
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=self.prefix + prefix)
        try:
            for page in pages:
                for o in page.get("Contents", ()):
                    rel = o["Key"][len(self.prefix):]
                    if rel and not rel.endswith("/"):
                        yield S3Object(rel, int(o["Size"]), str(o.get("ETag", "")).strip('"'),
                                       o["LastModified"].timestamp())
        except _AWS_ERRORS as exc:
            raise _storage_error(exc, "list", self.url + prefix) from exc

    def list(self, prefix: str = "") -> Iterator[str]:
        for o in self.objects(prefix):
            yield o.key

    def delete(self, key: str) -> None:
        try:
            self.client.delete_object(Bucket=self.bucket, Key=self._key(key))
        except _AWS_ERRORS as exc:
            raise _storage_error(exc, "delete", self.url_of(key)) from exc

    def move(self, key: str, new_key: str) -> None:
        """Copy then delete (S3 has no rename). A crash in between leaves both copies, never none."""
        try:
            self.client.copy_object(Bucket=self.bucket, Key=self._key(new_key),
                                    CopySource={"Bucket": self.bucket, "Key": self._key(key)})
        except _AWS_ERRORS as exc:
            raise _storage_error(exc, "copy", self.url_of(key)) from exc
        self.delete(key)


def _get(client: Any, bucket: str, key: str, max_bytes: int | None) -> bytes:
    url = f"s3://{bucket}/{key}"
    try:
        r = client.get_object(Bucket=bucket, Key=key)
    except _AWS_ERRORS as exc:
        if _code(exc) in _MISSING:
            raise KeyError(key) from exc
        raise _storage_error(exc, "read", url) from exc
    body = r["Body"]
    try:
        size = int(r.get("ContentLength", 0))
        if max_bytes is not None and size > max_bytes:
            raise StorageError(f"{url} is {size:,} bytes, more than the limit of {max_bytes:,} (max_bytes)",
                               kind="too_large", url=url, size=size)
        data = body.read() if max_bytes is None else body.read(max_bytes + 1)
    except StorageError:
        raise
    except _AWS_ERRORS as exc:
        raise _storage_error(exc, "read", url) from exc
    finally:
        body.close()
    if max_bytes is not None and len(data) > max_bytes:
        raise StorageError(f"{url} is more than the limit of {max_bytes:,} bytes (max_bytes)",
                           kind="too_large", url=url)
    return data


def read_url(url: str, max_bytes: int | None = None, *, client: Any | None = None) -> bytes:
    """The bytes of the object at `s3://bucket/key` (see `S3ObjectStore.get` for errors)."""
    bucket, key = parse_s3_url(url)
    if not key:
        raise ConfigError(f"{url} names a bucket, not an object", url=url)
    return _get(client or aws_client("s3"), bucket, key, max_bytes)
