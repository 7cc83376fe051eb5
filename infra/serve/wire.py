"""Arrays in JSON bodies: exact bits, base64 of little-endian raw data.

    {"dtype": "float32", "shape": [N, F], "data": "<base64>"}

A document on the wire is {"ids": int64 [T], "id_start": int64 [N+1], "num": float32 [N, F]} (the
arrays of `extractors.instructions.model_features.DocFeatures`); a score vector is float32 [N].
"""
from __future__ import annotations

import base64
from typing import Any

import numpy as np

from docassay.infra.serve.errors import BadRequest
from docassay.infra.serve.front import DocInput

__all__ = ["encode_array", "decode_array", "encode_doc", "decode_doc"]

_DTYPES: dict[str, np.dtype] = {"int64": np.dtype("<i8"), "float32": np.dtype("<f4")}


def encode_array(a: np.ndarray) -> dict[str, Any]:
    name = {np.dtype("int64"): "int64", np.dtype("float32"): "float32"}.get(a.dtype)
    if name is None:
        raise ValueError(f"unsupported dtype {a.dtype}")
    raw = np.ascontiguousarray(a, dtype=_DTYPES[name]).tobytes()
    return {"dtype": name, "shape": list(a.shape), "data": base64.b64encode(raw).decode("ascii")}


def decode_array(obj: Any, dtype: str, ndim: int, what: str) -> np.ndarray:
    """The array `obj` encodes; BadRequest unless it has `dtype` and `ndim` dimensions."""
    if not isinstance(obj, dict) or obj.get("dtype") != dtype or not isinstance(obj.get("shape"), list):
        raise BadRequest(f"{what}: expected an encoded {dtype} array")
    shape = obj["shape"]
    if len(shape) != ndim or not all(isinstance(s, int) and s >= 0 for s in shape):
        raise BadRequest(f"{what}: expected {ndim} dimensions, got shape {shape}")
    try:
        raw = base64.b64decode(obj.get("data", ""), validate=True)
    except (ValueError, TypeError) as exc:
        raise BadRequest(f"{what}: data is not base64") from exc
    dt = _DTYPES[dtype]
    if len(raw) != int(np.prod(shape, dtype=np.int64)) * dt.itemsize:
        raise BadRequest(f"{what}: {len(raw)} bytes do not make shape {shape}")
    return np.frombuffer(raw, dtype=dt).reshape(shape).astype(dt.newbyteorder("="), copy=True)


def encode_doc(ids: np.ndarray, id_start: np.ndarray, num: np.ndarray) -> dict[str, Any]:
    return {"ids": encode_array(np.asarray(ids, dtype=np.int64)),
            "id_start": encode_array(np.asarray(id_start, dtype=np.int64)),
            "num": encode_array(np.asarray(num, dtype=np.float32))}


def decode_doc(obj: Any, n_buckets: int, n_numeric: int, max_tokens: int, i: int = 0) -> DocInput:
    """A validated document: ids in [0, n_buckets), id_start from 0 to len(ids) and non-decreasing,
    num [N, n_numeric] finite, N <= max_tokens."""
    if not isinstance(obj, dict):
        raise BadRequest(f"documents[{i}]: expected an object")
    ids = decode_array(obj.get("ids"), "int64", 1, f"documents[{i}].ids")
    start = decode_array(obj.get("id_start"), "int64", 1, f"documents[{i}].id_start")
    num = decode_array(obj.get("num"), "float32", 2, f"documents[{i}].num")
    n = num.shape[0]
    if n > max_tokens:
        raise BadRequest(f"documents[{i}]: {n} tokens, at most {max_tokens} per document", status=413)
    if num.shape[1] != n_numeric:
        raise BadRequest(f"documents[{i}].num: {num.shape[1]} features per token, the model takes {n_numeric}")
    if start.shape[0] != n + 1 or start[0] != 0 or start[-1] != ids.shape[0]:
        raise BadRequest(f"documents[{i}].id_start must run from 0 to len(ids) with N + 1 entries")
    if n and bool((np.diff(start) < 0).any()):
        raise BadRequest(f"documents[{i}].id_start must not decrease")
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= n_buckets):
        raise BadRequest(f"documents[{i}].ids must lie in [0, {n_buckets})")
    if not np.isfinite(num).all():
        raise BadRequest(f"documents[{i}].num has non-finite values")
    return DocInput(ids, start, num)
