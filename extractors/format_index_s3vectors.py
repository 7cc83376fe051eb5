"""The format index on Amazon S3 Vectors: `s3vectors://<vector bucket>/<index>`.

Same interface and semantics as the faiss `FormatIndex` (extractors/format_index.py), stored in a
vector index with cosine distance:

    add(format_id, vector, meta)   PutVectors: one vector per exemplar, key `<format_id>#<n>`
                                   (n < max_exemplars), metadata = the format's meta + `format_id`;
                                   a full format replaces its most redundant exemplar (never #0);
                                   a near-duplicate (>= duplicate_above) is not stored
    search(vector, k, filter)      QueryVectors: topK = k x max_exemplars (at most MAX_TOP_K), the
                                   dict filter passed through unchanged (it is written in the S3
                                   Vectors filter language already), similarity = 1 - distance,
                                   grouped by format; a callable filter is applied to the returned
                                   metadata (then topK = MAX_TOP_K)
    remove / set_meta / get_meta   DeleteVectors / PutVectors again / GetVectors of the format's keys
    formats()                      ListVectors, every page

Every write goes straight to the service (`save()` has nothing to do). Concurrent writers to one
format may race on the exemplar slot they pick; the loser's exemplar overwrites the winner's, and
a format never loses exemplar #0. The index is created (float32, cosine, dimension `dim`) when it
does not exist; an existing one with another dimension or metric is refused.

Testing: moto implements the bucket, index and vector calls but not QueryVectors; the tests cover
the put/get path on moto and the query path with botocore's Stubber (and an in-test emulation of
QueryVectors over moto's stored vectors). The filter language itself is evaluated by the service
and is not exercised against AWS here.
"""
from __future__ import annotations

import json
from typing import Any, Iterator, Mapping

import numpy as np

from docassay.extractors.format_index import Filter, FormatIndexBase, Match
from docassay.infra.errors import ConfigError, StorageError

__all__ = ["S3VectorsFormatIndex", "parse_s3vectors_url", "MAX_TOP_K", "SCHEME"]

SCHEME = "s3vectors://"
MAX_TOP_K = 100                # QueryVectors' largest topK
_GET_BATCH = 100               # GetVectors keys per call
_PUT_BATCH = 500               # PutVectors / DeleteVectors vectors per call
_FORMAT_KEY = "format_id"
DEFAULT_DIM = 512


def parse_s3vectors_url(url: str) -> tuple[str, str]:
    """(vector bucket, index) of `s3vectors://bucket/index`."""
    if not url.startswith(SCHEME):
        raise ConfigError(f"not an S3 Vectors URL: {url!r} (expected s3vectors://bucket/index)", setting="index")
    bucket, _, index = url[len(SCHEME):].strip("/").partition("/")
    if not bucket or not index or "/" in index:
        raise ConfigError(f"S3 Vectors URL {url!r} must name a vector bucket and an index: "
                          "s3vectors://bucket/index", setting="index")
    return bucket, index


def _code(exc: Exception) -> str:
    return str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))


class S3VectorsFormatIndex(FormatIndexBase):
    def __init__(self, bucket: str, index: str, dim: int | None = None, *, client: Any | None = None,
                 max_exemplars: int = 8, duplicate_above: float = 0.999, create: bool = True) -> None:
        if not 1 <= max_exemplars <= _GET_BATCH:
            raise ValueError(f"max_exemplars must be between 1 and {_GET_BATCH}")
        from botocore.exceptions import BotoCoreError, ClientError  # boto3 is optional: only this backend needs it
        self._aws_errors = (ClientError, BotoCoreError)
        if client is None:
            from docassay.infra.aws import client as aws_client
            client = aws_client("s3vectors")
        self.client = client
        self.bucket, self.index = bucket, index
        self.url = f"{SCHEME}{bucket}/{index}"
        self.max_exemplars = max_exemplars
        self.duplicate_above = duplicate_above
        self._where = {"vectorBucketName": bucket, "indexName": index}
        self._dim = self._open(dim, create)

    @classmethod
    def from_url(cls, url: str, dim: int | None = None, **kw: Any) -> "S3VectorsFormatIndex":
        bucket, index = parse_s3vectors_url(url)
        return cls(bucket, index, dim, **kw)

    # --------------------------------------------------------------------------------- public API
    @property
    def dim(self) -> int:
        return self._dim

    def add(self, format_id: str, vector: np.ndarray, meta: Mapping[str, Any] | None = None) -> None:
        if not isinstance(format_id, str) or not format_id or "#" in format_id:
            raise ValueError("format_id must be a non-empty string without '#'")
        vec = self._unit(vector)
        have = self._exemplars(format_id)
        new_meta = _check_meta(meta) if meta is not None else (have[0][2] if have else {})
        slots = {int(k.rsplit("#", 1)[1]): (k, v) for k, v, _ in have}
        puts: list[dict[str, Any]] = []
        if have and meta is not None and new_meta != have[0][2]:
            puts += [self._record(k, v, format_id, new_meta) for k, v, _ in have]
        vectors = np.stack([v for _, v, _ in have]) if have else np.zeros((0, self.dim), np.float32)
        if not have or float((vectors @ vec).max()) < self.duplicate_above:
            free = next((i for i in range(self.max_exemplars) if i not in slots), None)
            if free is None:
                free = _most_redundant(vectors, [int(k.rsplit("#", 1)[1]) for k, _, _ in have])
            puts = [p for p in puts if p["key"] != f"{format_id}#{free}"]
            puts.append(self._record(f"{format_id}#{free}", vec, format_id, new_meta))
        for i in range(0, len(puts), _PUT_BATCH):
            self._call("put_vectors", vectors=puts[i:i + _PUT_BATCH])

    def remove(self, format_id: str) -> bool:
        keys = [k for k, _, _ in self._exemplars(format_id)]
        if keys:
            self._call("delete_vectors", keys=keys)
        return bool(keys)

    def set_meta(self, format_id: str, meta: Mapping[str, Any]) -> None:
        have = self._exemplars(format_id)
        if not have:
            raise KeyError(format_id)
        new_meta = _check_meta(meta)
        self._call("put_vectors", vectors=[self._record(k, v, format_id, new_meta) for k, v, _ in have])

    def search(self, vector: np.ndarray, k: int = 5, filter: Filter = None) -> list[Match]:
        if k < 1:
            return []
        q = self._unit(vector)
        args: dict[str, Any] = {"topK": MAX_TOP_K if callable(filter) else min(MAX_TOP_K, k * self.max_exemplars),
                                "queryVector": {"float32": q.tolist()}, "returnMetadata": True,
                                "returnDistance": True}
        if filter is not None and not callable(filter):
            args["filter"] = json.loads(json.dumps(dict(filter)))
        resp = self._call("query_vectors", **args)
        out: list[Match] = []
        seen: set[str] = set()
        for hit in resp.get("vectors") or ():
            meta = dict(hit.get("metadata") or {})
            fid = str(meta.pop(_FORMAT_KEY, None) or str(hit["key"]).rsplit("#", 1)[0])
            if fid in seen or (callable(filter) and not filter(fid, meta)):
                continue
            seen.add(fid)
            sim = 1.0 - float(hit.get("distance", 1.0))
            out.append(Match(fid, float(min(max(sim, -1.0), 1.0)), meta))
        out.sort(key=lambda m: -m.similarity)     # the service returns them nearest first already
        return out[:k]

    def formats(self) -> list[str]:
        return sorted({k.rsplit("#", 1)[0] for k in self._keys()})

    def get_meta(self, format_id: str) -> dict[str, Any]:
        have = self._exemplars(format_id)
        if not have:
            raise KeyError(format_id)
        return dict(have[0][2])

    def exemplars(self, format_id: str) -> np.ndarray:
        """The stored exemplar vectors of a format, shape (n, dim) (n = 0 when unknown)."""
        have = self._exemplars(format_id)
        return np.stack([v for _, v, _ in have]) if have else np.zeros((0, self.dim), dtype=np.float32)

    def __len__(self) -> int:
        return len(self.formats())

    # --------------------------------------------------------------------------------- internals
    def _open(self, dim: int | None, create: bool) -> int:
        try:
            info = self.client.get_index(**self._where)["index"]
        except self._aws_errors as exc:
            if _code(exc) not in ("NotFoundException", "ResourceNotFoundException") or not create:
                raise self._error(exc, "open") from exc
            want = dim or DEFAULT_DIM
            try:
                self.client.create_vector_bucket(vectorBucketName=self.bucket)
            except self._aws_errors as exc2:
                if _code(exc2) not in ("ConflictException", "BucketAlreadyExists"):
                    raise self._error(exc2, "create the vector bucket of") from exc2
            try:
                self.client.create_index(**self._where, dataType="float32", dimension=want, distanceMetric="cosine")
            except self._aws_errors as exc2:
                if _code(exc2) != "ConflictException":
                    raise self._error(exc2, "create") from exc2
            info = self.client.get_index(**self._where)["index"]
        if info.get("distanceMetric") != "cosine":
            raise ConfigError(f"S3 Vectors index {self.url} uses {info.get('distanceMetric')} distance; "
                              "the format index needs cosine", setting="index")
        stored = int(info["dimension"])
        if dim is not None and stored != dim:
            raise ConfigError(f"S3 Vectors index {self.url} holds {stored}-dimensional vectors, not {dim}: "
                              "fingerprints changed; use a new index", setting="index")
        return stored

    def _call(self, op: str, **kwargs: Any) -> dict[str, Any]:
        try:
            return getattr(self.client, op)(**self._where, **kwargs)
        except self._aws_errors as exc:
            raise self._error(exc, op.replace("_", " ") + " on") from exc

    def _error(self, exc: Exception, action: str) -> StorageError:
        return StorageError(f"cannot {action} S3 Vectors index {self.url}: {_code(exc) or type(exc).__name__}: {exc}",
                            url=self.url)

    def _exemplars(self, format_id: str) -> list[tuple[str, np.ndarray, dict[str, Any]]]:
        """(key, unit vector, format meta) of the format's stored exemplars, by slot number."""
        keys = [f"{format_id}#{i}" for i in range(self.max_exemplars)]
        resp = self._call("get_vectors", keys=keys, returnData=True, returnMetadata=True)
        out = []
        for v in resp.get("vectors") or ():
            meta = dict(v.get("metadata") or {})
            if meta.pop(_FORMAT_KEY, format_id) != format_id:
                continue
            out.append((str(v["key"]), np.asarray(v["data"]["float32"], dtype=np.float32), meta))
        return sorted(out, key=lambda t: int(t[0].rsplit("#", 1)[1]))

    def _keys(self) -> Iterator[str]:
        token: str | None = None
        while True:
            resp = self._call("list_vectors", maxResults=1000, **({"nextToken": token} if token else {}))
            for v in resp.get("vectors") or ():
                yield str(v["key"])
            token = resp.get("nextToken")
            if not token:
                return

    def _record(self, key: str, vec: np.ndarray, format_id: str, meta: Mapping[str, Any]) -> dict[str, Any]:
        return {"key": key, "data": {"float32": [float(x) for x in vec]}, "metadata": {**meta, _FORMAT_KEY: format_id}}

    def _unit(self, vector: np.ndarray) -> np.ndarray:
        v = np.asarray(vector, dtype=np.float32).reshape(-1)
        if v.shape[0] != self.dim:
            raise ValueError(f"vector has {v.shape[0]} dimensions, the index holds {self.dim}")
        if not np.all(np.isfinite(v)):
            raise ValueError("vector has NaN or infinite entries")
        norm = float(np.linalg.norm(v))
        if norm == 0.0:
            raise ValueError("vector is all zeros; it has no direction to compare")
        return v / norm


def _most_redundant(vectors: np.ndarray, slots: list[int]) -> int:
    """The slot whose exemplar is most similar to another one of the format (slot 0 is kept)."""
    sim = vectors @ vectors.T
    np.fill_diagonal(sim, -np.inf)
    redundancy = sim.max(axis=1)
    for i, s in enumerate(slots):
        if s == 0:
            redundancy[i] = -np.inf
    return slots[int(np.argmax(redundancy))]


def _check_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    """S3 Vectors metadata: strings, numbers, booleans and lists of them (no nested objects)."""
    if not isinstance(meta, Mapping):
        raise ValueError(f"meta must be a dict, got {type(meta).__name__}")
    out = json.loads(json.dumps(dict(meta), allow_nan=False))
    for k, v in out.items():
        if k == _FORMAT_KEY:
            raise ValueError(f"metadata key {_FORMAT_KEY!r} is reserved by the index")
        items = v if isinstance(v, list) else [v]
        if any(isinstance(x, (dict, list)) or x is None for x in items):
            raise ValueError(f"metadata {k!r}: S3 Vectors stores strings, numbers, booleans and lists of them")
    return out

