"""ONNX -> OpGraph (spec §1). The only module of hetlab that imports ``onnx``.

``load`` reads a zoo name or an ``.onnx`` path, fixes the input shapes (``shapes.py``), infers
every intermediate shape (ONNX shape inference, then one recorded onnxruntime run for what
inference leaves open), and builds the DAG: one vertex per node of the main graph except
``Constant`` (its outputs count as initializers), control-flow nodes as single vertices with
edges for the outer tensors their bodies read, and one edge per ordered pair.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from hetlab.errors import HetlabError
from hetlab.graph import zoo
from hetlab.graph.flops import node_flops
from hetlab.graph.inputs import random_arrays
from hetlab.graph.ir import Edge, Node, OpGraph, Tensor
from hetlab.graph.shapes import Dim, resolve_input_shapes

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


def _dtype(elem_type: int) -> str:
    try:
        return str(helper.tensor_dtype_to_np_dtype(elem_type))
    except Exception:  # noqa: BLE001  a type numpy lacks (bfloat16, float8): float32 stands in
        return "float32"


def _declared_dims(vi: onnx.ValueInfoProto) -> list[Dim]:
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


def _attrs(node: onnx.NodeProto) -> dict[str, Any]:
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


def _outer_reads(g: onnx.GraphProto, defined: set[str]) -> list[str]:
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
            for sub in _subgraphs(a):
                reads.extend(x for x in _outer_reads(sub, local) if x not in local)
    return list(dict.fromkeys(reads))


def _subgraphs(a: onnx.AttributeProto) -> list[onnx.GraphProto]:
    if a.type == onnx.AttributeProto.GRAPH:
        return [a.g]
    if a.type == onnx.AttributeProto.GRAPHS:
        return list(a.graphs)
    return []


def _constant_value(node: onnx.NodeProto) -> np.ndarray | None:
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


def _fixed_model(m: onnx.ModelProto, fixed: dict[str, tuple[int, ...]]) -> onnx.ModelProto:
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


def _infer(m: onnx.ModelProto) -> dict[str, Tensor]:
    try:
        inf = onnx.shape_inference.infer_shapes(
            m, check_type=False, strict_mode=False, data_prop=True
        )
    except Exception:  # noqa: BLE001  inference is best effort; onnxruntime fills the rest
        inf = m
    g = inf.graph
    out: dict[str, Tensor] = {}
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        tt = vi.type.tensor_type
        if not vi.type.HasField("tensor_type"):
            continue
        dims = _declared_dims(vi)
        ok = tt.HasField("shape") and all(isinstance(d, int) and d >= 0 for d in dims)
        out[vi.name] = Tensor(vi.name, tuple(dims) if ok else None, _dtype(tt.elem_type))
    for t in g.initializer:
        out[t.name] = Tensor(t.name, tuple(t.dims), _dtype(t.data_type))
    return out


def _ort_shapes(
    fm: onnx.ModelProto,
    fixed: dict[str, tuple[int, ...]],
    names: list[str],
    known: dict[str, Tensor],
    values: dict[str, np.ndarray],
) -> dict[str, Tensor]:
    """Shapes of ``names`` recorded from one onnxruntime run on seeded inputs (or ``values``)."""
    # lazy: onnxruntime is slow to import
    import onnxruntime as ort

    rm = onnx.ModelProto()
    rm.CopyFrom(fm)
    have = {o.name for o in rm.graph.output}
    for t in names:
        if t in have:
            continue
        k = known.get(t)
        vi = (
            helper.make_tensor_value_info(
                t, helper.np_dtype_to_tensor_dtype(np.dtype(k.dtype)), None
            )
            if k is not None and k.dtype not in ("string", "bfloat16")
            else helper.make_empty_tensor_value_info(t)
        )
        rm.graph.output.append(vi)
    specs = []
    for vi in fm.graph.input:
        if vi.name in fixed:
            specs.append(Tensor(vi.name, fixed[vi.name], _dtype(vi.type.tensor_type.elem_type)))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 4
    feeds = {**random_arrays(specs, seed=0), **values}
    try:
        sess = ort.InferenceSession(rm.SerializeToString(), so, providers=["CPUExecutionProvider"])
        ro = ort.RunOptions()
        ro.log_severity_level = 4
        outs = sess.run(names, feeds, ro)
    except Exception as e:  # noqa: BLE001  onnxruntime's errors become one line
        first = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
        raise HetlabError(
            f"cannot determine the shapes of {len(names)} tensor(s) (e.g. {names[0]!r}): shape inference "
            f"left them open and onnxruntime could not run the model on seeded random inputs ({first}); "
            f"give valid input values with --input NAME=FILE.npy or NAME=NUMBER"
        ) from None
    res: dict[str, Tensor] = {}
    for t, v in zip(names, outs, strict=False):
        a = np.asarray(v)
        res[t] = Tensor(
            t, tuple(int(d) for d in a.shape), str(a.dtype) if a.dtype != object else "string"
        )
    return res


def load(
    model: str | Path,
    shapes: dict[str, tuple[int, ...]] | None = None,
    values: dict[str, np.ndarray] | None = None,
) -> OpGraph:
    """Load a zoo name or an .onnx path into an ``OpGraph`` with every shape fixed (spec §1).

    ``values`` are input arrays for the one onnxruntime run that records data-dependent shapes
    (seeded random inputs otherwise); their shapes count as given ``shapes``.
    """
    values = dict(values or {})
    shapes = {**{k: tuple(v.shape) for k, v in values.items()}, **dict(shapes or {})}
    path = resolve_model_path(model)
    m = read_model(path)
    g = m.graph
    init = {t.name for t in g.initializer}
    real_inputs = [vi for vi in g.input if vi.name not in init]
    given = dict(shapes or {})
    for vi in real_inputs:
        if not vi.type.tensor_type.HasField("shape") and vi.name not in given:
            raise HetlabError(
                f"input {vi.name!r} declares no shape at all; give it with --shape {vi.name}=..."
            )
    declared = {vi.name: _declared_dims(vi) for vi in real_inputs}
    for name, dims in given.items():  # rank-less inputs take the given rank
        if name in declared and not declared[name]:
            declared[name] = [None] * len(dims)
    fixed = resolve_input_shapes(declared, given)
    fm = _fixed_model(m, fixed)
    tensors = _infer(fm)
    for vi in real_inputs:
        tensors[vi.name] = Tensor(vi.name, fixed[vi.name], _dtype(vi.type.tensor_type.elem_type))
    ids = vertex_ids(g)
    consts = set(init)
    for i, n in enumerate(g.node):
        if ids[i] is None:
            for o in n.output:
                v = _constant_value(n)
                consts.add(o)
                if v is not None:
                    tensors[o] = Tensor(o, tuple(v.shape), str(v.dtype))
    missing = [
        t
        for i, n in enumerate(g.node)
        if ids[i] is not None
        for t in n.output
        if t and (t not in tensors or tensors[t].shape is None)
    ]
    if missing:
        tensors.update(_ort_shapes(fm, fixed, missing, tensors, values))

    producer: dict[str, str] = {}
    nodes: list[Node] = []
    main_names = set(tensors) | consts | set(fixed)
    for i, n in enumerate(g.node):
        if ids[i] is None:
            continue
        outer: list[str] = []
        for a in n.attribute:
            for sub in _subgraphs(a):
                outer.extend(
                    t for t in _outer_reads(sub, set()) if t in main_names or t in producer
                )
        outer = [t for t in dict.fromkeys(outer) if t not in n.input]
        at = _attrs(n)
        ins = [tensors[t].shape if t and t in tensors else None for t in n.input]
        outs = [tensors[t].shape if t in tensors else None for t in n.output if t]
        nd = Node(
            id=ids[i],
            op_type=n.op_type,
            inputs=list(n.input),
            outputs=list(n.output),
            attrs=at,
            domain=n.domain,
            index=i,
            outer_inputs=outer,
            flops=int(node_flops(n.op_type, at, ins, outs)),
            out_bytes=sum(tensors[t].nbytes for t in n.output if t in tensors),
        )
        nodes.append(nd)
        for o in n.output:
            if o:
                producer[o] = nd.id
    pairs: dict[tuple[str, str], list[str]] = {}
    for nd in nodes:
        for t in list(nd.inputs) + nd.outer_inputs:
            u = producer.get(t)
            if u is not None and u != nd.id:
                lst = pairs.setdefault((u, nd.id), [])
                if t not in lst:
                    lst.append(t)
    edges = [Edge(u, v, sum(tensors[t].nbytes for t in ts), ts) for (u, v), ts in pairs.items()]
    name = (
        str(model)
        if not str(model).endswith(".onnx") and not os.path.exists(str(model))
        else Path(path).stem
    )
    graph = OpGraph(
        name=name,
        nodes=nodes,
        edges=edges,
        tensors=tensors,
        inputs=[vi.name for vi in real_inputs],
        outputs=[o.name for o in g.output],
        consts=consts,
        model_path=str(path),
        input_shapes=fixed,
    )
    graph.lint()
    graph.compute_upranks()
    return graph


def weights(graph: OpGraph) -> dict[str, np.ndarray]:
    """Initializers and folded ``Constant`` outputs of ``graph``'s model, by tensor name."""
    m = read_model(graph.model_path)
    out = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    for n in m.graph.node:
        if n.op_type == "Constant" and n.domain in ("", "ai.onnx"):
            v = _constant_value(n)
            if v is not None:
                out[n.output[0]] = v
    return out


def consumers(graph: OpGraph) -> dict[str, list[str]]:
    """Tensor name -> ids of the vertices that read it (inputs and control-flow outer reads)."""
    cache = getattr(graph, "_consumers", None)
    if cache is None:
        cache = {}
        for nd in graph.nodes:
            for t in dict.fromkeys(list(nd.inputs) + nd.outer_inputs):
                if t:
                    cache.setdefault(t, []).append(nd.id)
        graph._consumers = cache  # type: ignore[attr-defined]
    return cache


def unit_io(graph: OpGraph, node_ids: Iterable[str]) -> tuple[list[str], list[str]]:
    """(inputs, outputs) of a set of vertices: tensors entering from outside (not constants),
    and tensors it produces that a vertex outside the set reads or that are model outputs."""
    sel = set(node_ids)
    order = sorted(sel, key=lambda v: graph.node(v).index)
    produced: list[str] = []
    reads: list[str] = []
    for v in order:
        nd = graph.node(v)
        reads.extend(t for t in list(nd.inputs) + nd.outer_inputs if t)
        produced.extend(t for t in nd.outputs if t)
    pset = set(produced)
    ins = [t for t in dict.fromkeys(reads) if t not in pset and t not in graph.consts]
    cons = consumers(graph)
    model_out = set(graph.outputs)
    outs = [t for t in produced if t in model_out or any(c not in sel for c in cons.get(t, []))]
    return ins, outs


def extract(graph: OpGraph, node_ids: Sequence[str], outputs: Sequence[str] | None = None) -> bytes:
    """A standalone serialized ONNX model of ``node_ids`` (see ``unit_io`` for its inputs and
    default outputs); the constants it reads are included, shapes are the graph's fixed ones."""
    m = read_model(graph.model_path)
    g = m.graph
    ins, outs = unit_io(graph, node_ids)
    sel = sorted(set(node_ids), key=lambda v: graph.node(v).index)
    produced = {t for v in sel for t in graph.node(v).outputs if t}
    if outputs is not None:
        bad = [t for t in outputs if t not in produced]
        if bad:
            raise HetlabError(f"cannot extract outputs {bad}: no selected node produces them")
        outs = list(outputs)
    reads = {t for v in sel for t in list(graph.node(v).inputs) + graph.node(v).outer_inputs if t}
    inits = [t for t in g.initializer if t.name in reads]
    const_nodes = [
        n
        for n in g.node
        if n.op_type == "Constant"
        and n.output
        and n.output[0] in reads
        and n.output[0] not in produced
    ]

    # Control-flow bodies are checked against the unit's input shapes for every branch, even the
    # one that will not run; fixed shapes can contradict a dormant branch, so such units declare
    # their inputs with the element type only.
    loose = any(graph.node(v).op_type in ("If", "Loop", "Scan") for v in sel)

    def vi(t: str, fixed: bool = True) -> onnx.ValueInfoProto:
        ti = graph.tensors.get(t)
        if ti is None or ti.dtype in ("string",):
            return helper.make_empty_tensor_value_info(t)
        shape = ti.shape if fixed else None
        return helper.make_tensor_value_info(
            t, helper.np_dtype_to_tensor_dtype(np.dtype(ti.dtype)), shape
        )

    body = list(const_nodes)
    for v in sel:  # node names become the unique vertex ids (onnxruntime rejects duplicates)
        n = onnx.NodeProto()
        n.CopyFrom(g.node[graph.node(v).index])
        n.name = v
        body.append(n)
    sg = helper.make_graph(
        body,
        f"{graph.name}_unit",
        [vi(t, not loose) for t in ins],
        [vi(t, not loose) for t in outs],
        inits,
    )
    sm = helper.make_model(sg, opset_imports=list(m.opset_import), ir_version=m.ir_version)
    sm.functions.extend(m.functions)
    return sm.SerializeToString()
