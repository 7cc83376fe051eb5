"""Simplify the PP-OCR ONNX graphs before onnxruntime runs them (same function, fewer operators).

The PP-OCRv4 models in the rapidocr-onnxruntime wheel were exported by paddle2onnx with every
"learnable affine block" and every hard-swish spelled out as elementwise operators:

    Conv -> Mul(a) -> Add(c) -> Add(3) -> Clip(0, 6) -> Mul(x) -> Div(6) -> ...

onnxruntime fuses none of these, so they run as separate elementwise passes over every feature
map. With the two rewrites below (both exact up to float rounding) an A4 page and a receipt take
about two thirds of the CPU time, with the same words (BENCHMARKS.md "Issue 15: RapidOCR on an A4
page"):

    fold       Conv(W, b) -> Mul(scalar a) -> Add(scalar c)   becomes   Conv(W * a, b * a + c)
    hardswish  Add(x, 3) -> Clip(0, 6) -> Mul(x, .) -> Div(6) becomes   Mul(x, HardSigmoid(x; 1/6, 1/2))

The graph is read and written with a minimal description of onnx.proto built here (protobuf ships
with onnxruntime; the `onnx` package is not needed): only the fields the rewrites touch are
declared, every other field is kept byte for byte as an unknown field. `simplify` returns the new
model's bytes, or None when nothing matched.
"""
from __future__ import annotations

from typing import Any

__all__ = ["simplify", "SimplifyStats"]

_FLOAT = 1                      # TensorProto.DataType.FLOAT
_ATTR_FLOAT = 1                 # AttributeProto.AttributeType.FLOAT
_MESSAGES: dict[str, Any] | None = None


def _messages() -> dict[str, Any]:
    """Message classes for the part of onnx.proto (proto2 field numbers) that the rewrites use."""
    global _MESSAGES
    if _MESSAGES is not None:
        return _MESSAGES
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    F = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name="docassay_onnx_subset.proto", package="docassay_onnx_subset",
                                             syntax="proto2")

    def msg(name: str, *fields: tuple[str, int, int, int, str]) -> None:
        m = fdp.message_type.add(name=name)
        for fname, number, ftype, label, tname in fields:
            f = m.field.add(name=fname, number=number, type=ftype, label=label)
            if tname:
                f.type_name = f".docassay_onnx_subset.{tname}"

    opt, rep = F.LABEL_OPTIONAL, F.LABEL_REPEATED
    msg("TensorProto", ("dims", 1, F.TYPE_INT64, rep, ""), ("data_type", 2, F.TYPE_INT32, opt, ""),
        ("float_data", 4, F.TYPE_FLOAT, rep, ""), ("name", 8, F.TYPE_STRING, opt, ""),
        ("raw_data", 9, F.TYPE_BYTES, opt, ""))
    msg("AttributeProto", ("name", 1, F.TYPE_STRING, opt, ""), ("f", 2, F.TYPE_FLOAT, opt, ""),
        ("t", 5, F.TYPE_MESSAGE, opt, "TensorProto"), ("type", 20, F.TYPE_INT32, opt, ""))
    msg("NodeProto", ("input", 1, F.TYPE_STRING, rep, ""), ("output", 2, F.TYPE_STRING, rep, ""),
        ("name", 3, F.TYPE_STRING, opt, ""), ("op_type", 4, F.TYPE_STRING, opt, ""),
        ("attribute", 5, F.TYPE_MESSAGE, rep, "AttributeProto"), ("domain", 7, F.TYPE_STRING, opt, ""))
    msg("ValueInfoProto", ("name", 1, F.TYPE_STRING, opt, ""))
    msg("GraphProto", ("node", 1, F.TYPE_MESSAGE, rep, "NodeProto"),
        ("initializer", 5, F.TYPE_MESSAGE, rep, "TensorProto"), ("output", 12, F.TYPE_MESSAGE, rep, "ValueInfoProto"))
    msg("ModelProto", ("graph", 7, F.TYPE_MESSAGE, opt, "GraphProto"))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    _MESSAGES = {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"docassay_onnx_subset.{name}"))
                 for name in ("TensorProto", "AttributeProto", "NodeProto", "ValueInfoProto", "GraphProto",
                                 "ModelProto")}
    return _MESSAGES


class SimplifyStats(dict):
    """How many of each rewrite were made: {"fold": n, "hardswish": n}."""


def _floats(t: Any) -> Any:
    """The values of float tensor `t` as a numpy array of its shape (decoded when asked: a model's
    weights are most of its bytes, and only the scalars and the folded convolutions are read)."""
    import numpy as np
    raw = t.raw_data
    vals = np.frombuffer(raw, dtype="<f4") if raw else np.asarray(t.float_data, dtype=np.float32)
    return vals.reshape([int(d) for d in t.dims]) if len(t.dims) else vals


def _size(t: Any) -> int:
    return len(t.raw_data) // 4 if t.raw_data else len(t.float_data)


def simplify(model: bytes, stats: SimplifyStats | None = None) -> bytes | None:
    """The model `model` (ONNX bytes) with the two rewrites applied; None when none applies."""
    import numpy as np
    M = _messages()
    m = M["ModelProto"]()
    m.ParseFromString(model)
    g = m.graph
    consts: dict[str, Any] = {}                          # name -> float TensorProto
    for n in g.node:
        if n.op_type == "Constant" and len(n.attribute) == 1 and n.attribute[0].name == "value" \
                and n.attribute[0].t.data_type == _FLOAT:
            consts[n.output[0]] = n.attribute[0].t
    for t in g.initializer:
        if t.data_type == _FLOAT:
            consts[t.name] = t
    nodes = list(g.node)
    producer = {o: n for n in nodes for o in n.output}
    users: dict[str, list[Any]] = {}
    for n in nodes:
        for i in n.input:
            users.setdefault(i, []).append(n)
    graph_outputs = {o.name for o in g.output}

    def scalar(name: str) -> float | None:
        c = consts.get(name)
        return float(_floats(c).reshape(-1)[0]) if c is not None and _size(c) == 1 else None

    def other(n: Any, x: str) -> str | None:
        if len(n.input) != 2:
            return None
        return n.input[1] if n.input[0] == x else n.input[0] if n.input[1] == x else None

    def only_user(name: str, op: str) -> Any | None:
        us = users.get(name, [])
        if len(us) == 1 and us[0].op_type == op and name not in graph_outputs:
            return us[0]
        return None

    removed: set[int] = set()
    replaced: dict[int, list[Any]] = {}
    new_inits: list[Any] = []
    folds = swishes = 0
    for conv in nodes:                                   # fold: Conv -> Mul(a) -> Add(c)
        if conv.op_type != "Conv" or len(conv.input) < 2 or conv.input[1] not in consts:
            continue
        mul = only_user(conv.output[0], "Mul")
        if mul is None or (a := scalar(other(mul, conv.output[0]) or "")) is None:
            continue
        add = only_user(mul.output[0], "Add")
        if add is None or (c := scalar(other(add, mul.output[0]) or "")) is None:
            continue
        w = _floats(consts[conv.input[1]])
        if len(conv.input) > 2 and conv.input[2]:
            if conv.input[2] not in consts:
                continue
            b = _floats(consts[conv.input[2]]).reshape(-1)
        else:
            b = np.zeros(w.shape[0], dtype=np.float32)
        if b.shape != (w.shape[0],):
            continue
        wname, bname = f"{conv.output[0]}__folded_w", f"{conv.output[0]}__folded_b"
        new_inits += [_tensor(M, wname, w * np.float32(a)), _tensor(M, bname, b * np.float32(a) + np.float32(c))]
        x_in = conv.input[0]
        del conv.input[:]
        conv.input.extend([x_in, wname, bname])
        conv.output[0] = add.output[0]
        removed.update((id(mul), id(add)))
        folds += 1
    for clip in nodes:                                    # hardswish: x * clip(x + 3, 0, 6) / 6
        if clip.op_type != "Clip" or len(clip.input) != 3 or id(clip) in removed:
            continue
        add3 = producer.get(clip.input[0])
        if add3 is None or add3.op_type != "Add" or len(add3.input) != 2 or id(add3) in removed:
            continue
        x = add3.input[0] if scalar(add3.input[1]) == 3.0 else add3.input[1] if scalar(add3.input[0]) == 3.0 else None
        if x is None or scalar(clip.input[1]) != 0.0 or scalar(clip.input[2]) != 6.0 \
                or only_user(add3.output[0], "Clip") is None:
            continue
        mul = only_user(clip.output[0], "Mul")
        if mul is None or other(mul, clip.output[0]) != x:
            continue
        div = only_user(mul.output[0], "Div")
        if div is None or div.input[0] != mul.output[0] or scalar(div.input[1]) != 6.0:
            continue
        hsig, hmul = M["NodeProto"](), M["NodeProto"]()
        hsig.op_type, hsig.name = "HardSigmoid", f"{div.output[0]}__hardsigmoid"
        hsig.input.append(x)
        hsig.output.append(f"{div.output[0]}__hardsigmoid")
        for name, value in (("alpha", 1.0 / 6.0), ("beta", 0.5)):
            at = hsig.attribute.add()
            at.name, at.f, at.type = name, value, _ATTR_FLOAT
        hmul.op_type, hmul.name = "Mul", f"{div.output[0]}__hardswish"
        hmul.input.extend([x, hsig.output[0]])
        hmul.output.append(div.output[0])
        removed.update((id(add3), id(clip), id(mul)))
        replaced[id(div)] = [hsig, hmul]
        swishes += 1
    if stats is not None:
        stats.update(fold=folds, hardswish=swishes)
    if not folds and not swishes:
        return None
    kept: list[Any] = []
    for n in nodes:
        if id(n) in replaced:
            kept.extend(replaced[id(n)])
        elif id(n) not in removed:
            kept.append(n)
    used = {i for n in kept for i in n.input} | graph_outputs
    kept = [n for n in kept if n.op_type != "Constant" or any(o in used for o in n.output)]   # old weights
    copies = [type(n)() for n in kept]
    for src, dst in zip(kept, copies):
        dst.CopyFrom(src)
    del g.node[:]
    g.node.extend(copies)
    g.initializer.extend(new_inits)
    return m.SerializeToString()


def _tensor(M: dict[str, Any], name: str, arr: Any) -> Any:
    import numpy as np
    t = M["TensorProto"]()
    t.name, t.data_type = name, _FLOAT
    t.dims.extend(int(d) for d in arr.shape)
    t.raw_data = np.ascontiguousarray(arr, dtype="<f4").tobytes()
    return t
