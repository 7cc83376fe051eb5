"""Arrays in JSON bodies: exact bits, base64 of little-endian raw data.

    {"dtype": "float32", "shape": [N, F], "data": "<base64>"}

A document on the wire is {"ids": int64 [T], "id_start": int64 [N+1], "num": float32 [N, F]} (the
arrays of `extractors.instructions.model_features.DocFeatures`); a score vector is float32 [N].

For the layout reader (`docassay model serve` on a layout checkpoint), a document is its words and
the schema's field queries, the arrays of `infra.model.layout.LayoutDoc`:

    {"ids": int64 [T], "id_start": int64 [N+1], "pos": int64 [N, 6], "flags": float32 [N, n_flags],
     "xy": float32 [N, 3], "q_ids": int64 [Q], "q_start": int64 [F+1], "q_type": int64 [F]}

and its answer is {"begin": float32 [F, N+1] (logits, the last column: absent), "end": float32 [F, N]}.
"""
from __future__ import annotations

import base64
from typing import Any

import numpy as np

from docassay.infra.model.layout import MAX_LINE_POS, MAX_PAGE, N_POS, POS_BINS, VALUE_TYPES, LayoutDoc
from docassay.infra.serve.errors import BadRequest
from docassay.infra.serve.front import DocInput
from docassay.infra.serve.layout_front import LayoutInput

__all__ = ["encode_array", "decode_array", "encode_doc", "decode_doc", "encode_layout_doc", "decode_layout_doc",
           "encode_spans", "decode_spans"]

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


_POS_LIMITS = np.array([POS_BINS] * 4 + [MAX_PAGE, MAX_LINE_POS], dtype=np.int64)   # exclusive upper bound per column
assert len(_POS_LIMITS) == N_POS


def encode_layout_doc(d: LayoutDoc) -> dict[str, Any]:
    """A layout document's inputs (targets are not sent)."""
    i64, f32 = np.int64, np.float32
    return {"ids": encode_array(np.asarray(d.ids, dtype=i64)), "id_start": encode_array(np.asarray(d.id_start, dtype=i64)),
            "pos": encode_array(np.asarray(d.pos, dtype=i64)), "flags": encode_array(np.asarray(d.flags, dtype=f32)),
            "xy": encode_array(np.asarray(d.xy, dtype=f32)), "q_ids": encode_array(np.asarray(d.q_ids, dtype=i64)),
            "q_start": encode_array(np.asarray(d.q_start, dtype=i64)),
            "q_type": encode_array(np.asarray(d.q_type, dtype=i64))}


def _bags(ids: np.ndarray, start: np.ndarray, n: int, n_buckets: int, ids_name: str, start_name: str) -> None:
    """Bags of hashed ids: start [n + 1] from 0 to len(ids), non-decreasing; ids in [0, n_buckets)."""
    if start.shape[0] != n + 1 or start[0] != 0 or start[-1] != ids.shape[0]:
        raise BadRequest(f"{start_name} must run from 0 to len({ids_name.rsplit('.', 1)[-1]}) with {n + 1} entries")
    if n and bool((np.diff(start) < 0).any()):
        raise BadRequest(f"{start_name} must not decrease")
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= n_buckets):
        raise BadRequest(f"{ids_name} must lie in [0, {n_buckets})")


def decode_layout_doc(obj: Any, n_buckets: int, n_flags: int, max_words: int, i: int = 0) -> LayoutInput:
    """A validated layout document: at least one word and one field, every id in [0, n_buckets),
    every position bin and field type inside its embedding, flags and centres finite."""
    w = f"documents[{i}]"
    if not isinstance(obj, dict):
        raise BadRequest(f"{w}: expected an object")
    ids = decode_array(obj.get("ids"), "int64", 1, f"{w}.ids")
    start = decode_array(obj.get("id_start"), "int64", 1, f"{w}.id_start")
    pos = decode_array(obj.get("pos"), "int64", 2, f"{w}.pos")
    flags = decode_array(obj.get("flags"), "float32", 2, f"{w}.flags")
    xy = decode_array(obj.get("xy"), "float32", 2, f"{w}.xy")
    q_ids = decode_array(obj.get("q_ids"), "int64", 1, f"{w}.q_ids")
    q_start = decode_array(obj.get("q_start"), "int64", 1, f"{w}.q_start")
    q_type = decode_array(obj.get("q_type"), "int64", 1, f"{w}.q_type")
    n, f = pos.shape[0], q_type.shape[0]
    if n == 0 or f == 0:
        raise BadRequest(f"{w}: a layout document needs at least one word and one field (got {n} words, {f} fields)")
    if n > max_words:
        raise BadRequest(f"{w}: {n} words, at most {max_words} per document", status=413)
    if pos.shape[1] != N_POS or flags.shape != (n, n_flags) or xy.shape != (n, 3):
        raise BadRequest(f"{w}: pos must be [N, {N_POS}], flags [N, {n_flags}], xy [N, 3] for the N = {n} words "
                         f"(got {pos.shape}, {flags.shape}, {xy.shape})")
    _bags(ids, start, n, n_buckets, f"{w}.ids", f"{w}.id_start")
    _bags(q_ids, q_start, f, n_buckets, f"{w}.q_ids", f"{w}.q_start")
    if bool((pos < 0).any()) or bool((pos >= _POS_LIMITS).any()):
        raise BadRequest(f"{w}.pos: columns must lie in [0, {_POS_LIMITS.tolist()})")
    if q_type.size and (int(q_type.min()) < 0 or int(q_type.max()) >= len(VALUE_TYPES)):
        raise BadRequest(f"{w}.q_type must lie in [0, {len(VALUE_TYPES)})")
    if not (np.isfinite(flags).all() and np.isfinite(xy).all()):
        raise BadRequest(f"{w}: flags and xy must be finite")
    return LayoutInput(LayoutDoc(ids, start, pos, flags, xy, q_ids, q_start, q_type))


def encode_spans(result: tuple[np.ndarray, np.ndarray]) -> dict[str, Any]:
    begin, end = result
    return {"begin": encode_array(begin), "end": encode_array(end)}


def decode_spans(obj: Any, what: str = "spans") -> tuple[np.ndarray, np.ndarray]:
    """(begin [F, N+1], end [F, N]) logits of one document."""
    if not isinstance(obj, dict):
        raise BadRequest(f"{what}: expected an object")
    begin = decode_array(obj.get("begin"), "float32", 2, f"{what}.begin")
    end = decode_array(obj.get("end"), "float32", 2, f"{what}.end")
    if begin.shape != (end.shape[0], end.shape[1] + 1):
        raise BadRequest(f"{what}: begin {begin.shape} and end {end.shape} do not belong together")
    return begin, end
