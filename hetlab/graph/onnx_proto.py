"""Reading ONNX protos: the parsed-model cache, zoo names resolved to files, and the views of a
node that building an ``OpGraph`` needs (dtypes, declared dims, attributes, subgraphs and their
outer reads, ``Constant`` values, vertex ids)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from hetlab.errors import HetlabError
from hetlab.graph import zoo
from hetlab.graph.shapes import Dim

_MODELS: dict[tuple[str, float], onnx.ModelProto] = {}  # (abs path, mtime) -> parsed model


def read_model(path: str | Path) -> onnx.ModelProto:
    """Parse an ONNX file (cached by path and mtime); bad files raise one clear HetlabError."""
    p = Path(path).expanduser().resolve()
    if not p.exists():
        raise HetlabError(f"model file not found: {path}")
    if p.is_dir():
        raise HetlabError(f"model path is a directory, not an .onnx file: {path}")
    key = (str(p), p.stat().st_mtime)
    if key in _MODELS:
        return _MODELS[key]
    if p.stat().st_size == 0:
        raise HetlabError(f"model file is empty: {path}")
    try:
        m = onnx.load(str(p))
    except Exception as e:  # noqa: BLE001  protobuf DecodeError, external-data errors, ...
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise HetlabError(
            f"{path} is not a valid ONNX model (truncated or not ONNX?): {msg}"
        ) from None
    if not m.graph.node or not m.opset_import:
        raise HetlabError(
            f"{path} is not a valid ONNX model: it has no nodes (truncated or not ONNX?)"
        )
    try:
        onnx.checker.check_model(m, full_check=False)
    except Exception as e:  # noqa: BLE001  the checker's errors become one line
        msg = str(e).splitlines()[0]
        if not m.graph.output or "ir_version" in msg:
            raise HetlabError(f"{path} is not a valid ONNX model: {msg}") from None
    if len(_MODELS) > 8:
        _MODELS.clear()
    _MODELS[key] = m
    return m


def resolve_model_path(model: str | Path) -> Path:
    """A zoo name -> its materialized file; otherwise the path itself (which must exist)."""
    s = str(model)
    if not s.endswith(".onnx") and not os.path.exists(s):
        if zoo.is_zoo(s):
            return zoo.path(s)
        names = ", ".join(zoo.names())
        raise HetlabError(f"no model file {s!r} and no zoo model of that name (zoo: {names})")
    return Path(s).expanduser().resolve()


def dtype_name(elem_type: int) -> str:
    try:
        return str(helper.tensor_dtype_to_np_dtype(elem_type))
    except Exception:  # noqa: BLE001  a type numpy lacks (bfloat16, float8): float32 stands in
        return "float32"


def declared_dims(vi: onnx.ValueInfoProto) -> list[Dim]:
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return []
    # '?' is what some exporters write for "unknown": an unnamed dimension, not a shared name
    return [
        d.dim_value
        if d.HasField("dim_value")
        else (d.dim_param if d.dim_param not in ("", "?") else None)
        for d in t.shape.dim
    ]


def node_attrs(node: onnx.NodeProto) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for a in node.attribute:
        if a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
            out[a.name] = "<graph>"
            continue
        v = helper.get_attribute_value(a)
        if isinstance(v, onnx.TensorProto):
            v = numpy_helper.to_array(v)
        elif isinstance(v, bytes):
            v = v.decode(errors="replace")
        elif isinstance(v, list) and v and isinstance(v[0], bytes):
            v = [x.decode(errors="replace") for x in v]
        out[a.name] = v
    return out


def outer_reads(g: onnx.GraphProto, defined: set[str]) -> list[str]:
    """Names a (nested) body graph reads that it does not define itself."""
    local = set(defined) | {i.name for i in g.input} | {t.name for t in g.initializer}
    for n in g.node:
        local.update(o for o in n.output if o)
    reads: list[str] = []
    for n in g.node:
        for t in n.input:
            if t and t not in local:
                reads.append(t)
        for a in n.attribute:
            for sub in attr_graphs(a):
                reads.extend(x for x in outer_reads(sub, local) if x not in local)
    return list(dict.fromkeys(reads))


def attr_graphs(a: onnx.AttributeProto) -> list[onnx.GraphProto]:
    if a.type == onnx.AttributeProto.GRAPH:
        return [a.g]
    if a.type == onnx.AttributeProto.GRAPHS:
        return list(a.graphs)
    return []


def constant_value(node: onnx.NodeProto) -> np.ndarray | None:
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        if a.name == "value":
            return numpy_helper.to_array(v)
        if a.name == "value_float":
            return np.array(v, dtype=np.float32)
        if a.name == "value_floats":
            return np.array(v, dtype=np.float32)
        if a.name == "value_int":
            return np.array(v, dtype=np.int64)
        if a.name == "value_ints":
            return np.array(v, dtype=np.int64)
    return None


def vertex_ids(g: onnx.GraphProto) -> list[str | None]:
    """Spec §1 ids for ``g.node`` (None for Constant nodes, which are not vertices)."""
    counts: dict[str, int] = {}
    for n in g.node:
        if n.name:
            counts[n.name] = counts.get(n.name, 0) + 1
    return [
        None
        if n.op_type == "Constant" and n.domain in ("", "ai.onnx")
        else (n.name if n.name and counts[n.name] == 1 else f"{n.op_type}_{i}")
        for i, n in enumerate(g.node)
    ]


def fixed_model(m: onnx.ModelProto, fixed: dict[str, tuple[int, ...]]) -> onnx.ModelProto:
    """A copy of ``m`` (without initializer data) whose graph inputs have the fixed shapes."""
    fm = onnx.ModelProto()
    fm.CopyFrom(m)
    for vi in fm.graph.input:
        if vi.name in fixed:
            shp = vi.type.tensor_type.shape
            del shp.dim[:]
            for d in fixed[vi.name]:
                shp.dim.add().dim_value = int(d)
    return fm
