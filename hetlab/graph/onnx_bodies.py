"""Control-flow bodies (``If`` branches) as ``OpGraph`` s, and one recorded run of a body.

The loader keeps an ``If`` as one vertex (``Node.outer_inputs`` lists the outer tensors its
bodies read; the bodies themselves are not kept). Devices that run a body themselves (the
OpenCL device, ``hetlab/devices/opencl/if_runner.py``) get it here:

- ``if_bodies(graph, node)``: ``{"then_branch": body, "else_branch": body}``. A body is an
  ``OpGraph`` of the branch's nodes (``Constant`` nodes folded, as in the loader). Its
  ``inputs`` are the outer-scope tensors it reads (nested bodies included), its ``outputs``
  the branch outputs. Dtypes and the shapes ONNX shape inference could fix are filled in
  (inference runs once per model with the graph's fixed input shapes); other shapes are None.
  Nested ``If`` nodes of a body work the same way: ``if_bodies(body, nested_node)``.
- ``record(body, values)``: every value the body's own nodes produce, from one onnxruntime
  run of the body as a standalone model fed the outer ``values``. Used once per input
  signature for shapes and shape arithmetic; the compute itself runs on the device.

Like ``onnx_io`` (whose helpers it uses) this module imports ``onnx``.
"""

from __future__ import annotations

import contextlib

import numpy as np
import onnx
from onnx import helper, numpy_helper

from hetlab.errors import HetlabError
from hetlab.graph.ir import Edge, Node, OpGraph, Tensor
from hetlab.graph.onnx_extract import weights
from hetlab.graph.onnx_proto import (
    attr_graphs,
    constant_value,
    declared_dims,
    dtype_name,
    fixed_model,
    node_attrs,
    outer_reads,
    read_model,
    vertex_ids,
)
from hetlab.graph.ort_session import reference_session

BRANCHES = ("then_branch", "else_branch")


def _proto(graph: OpGraph) -> tuple[onnx.GraphProto, onnx.ModelProto]:
    """The (shape-inferred) GraphProto behind ``graph`` and its model (cached on the graph)."""
    g = getattr(graph, "_hetlab_proto", None)
    if g is not None:
        return g, graph._hetlab_model  # type: ignore[attr-defined]
    if not graph.model_path:
        raise HetlabError(f"graph {graph.name!r} has no model file; control-flow bodies need one")
    m = read_model(graph.model_path)
    fm = fixed_model(m, dict(graph.input_shapes))
    # shape inference is a help, not a requirement: a model it fails on keeps its own shapes
    with contextlib.suppress(Exception):
        fm = onnx.shape_inference.infer_shapes(
            fm, check_type=False, strict_mode=False, data_prop=True
        )
    graph._hetlab_proto, graph._hetlab_model = fm.graph, fm  # type: ignore[attr-defined]
    return fm.graph, fm


def _weights_of(graph: OpGraph) -> dict[str, np.ndarray]:
    """Constants of ``graph`` (a model or a body), cached on it as the OpenCL builder does."""
    w = getattr(graph, "_hetlab_weights", None)
    if w is None:
        w = weights(graph) if graph.consts else {}
        graph._hetlab_weights = w  # type: ignore[attr-defined]
    return w


def if_bodies(graph: OpGraph, node: Node) -> dict[str, OpGraph]:
    """The then/else bodies of ``If`` vertex ``node`` of ``graph`` (cached per node)."""
    cache = graph.__dict__.setdefault("_hetlab_bodies", {})
    if node.id in cache:
        return cache[node.id]
    g, m = _proto(graph)
    if node.op_type != "If" or node.index >= len(g.node) or g.node[node.index].op_type != "If":
        raise HetlabError(
            f"node {node.id!r} of {graph.name!r} is not an If with bodies in the model file"
        )
    proto = g.node[node.index]
    bodies = {}
    for a in proto.attribute:
        if a.name in BRANCHES and a.type == onnx.AttributeProto.GRAPH:
            bodies[a.name] = _body_graph(graph, a.g, m, f"{node.id}/{a.name}")
    if set(bodies) != set(BRANCHES):
        raise HetlabError(f"If node {node.id!r} lacks a then_branch or else_branch body")
    cache[node.id] = bodies
    return bodies


def _tensor_of(vi: onnx.ValueInfoProto) -> Tensor | None:
    if not vi.type.HasField("tensor_type"):
        return None
    dims = declared_dims(vi)
    tt = vi.type.tensor_type
    ok = tt.HasField("shape") and all(isinstance(d, int) and d >= 0 for d in dims)
    return Tensor(
        vi.name,
        tuple(dims) if ok else None,
        dtype_name(tt.elem_type) if tt.elem_type else "unknown",
    )


def _body_graph(parent: OpGraph, g: onnx.GraphProto, m: onnx.ModelProto, name: str) -> OpGraph:
    weights = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    tensors: dict[str, Tensor] = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        t = _tensor_of(vi)
        if t is not None:
            tensors[vi.name] = t
    nodes = _body_nodes(g, weights)
    for k, v in weights.items():
        tensors[k] = Tensor(k, tuple(int(d) for d in v.shape), str(v.dtype))
    reads = outer_reads(g, set())
    outer_w = _weights_of(parent) if any(t in parent.consts for t in reads) else {}
    for t in reads:  # outer tensors: what the enclosing graph knows of them
        if t in parent.tensors and (t not in tensors or tensors[t].shape is None):
            tensors[t] = parent.tensors[t]
        if t in outer_w:  # an enclosing graph's constant stays constant here
            weights[t] = outer_w[t]
    body = OpGraph(
        name=name,
        nodes=nodes,
        edges=_edges(nodes, tensors),
        tensors=tensors,
        inputs=list(reads),
        outputs=[o.name for o in g.output],
        consts=set(weights),
        model_path=parent.model_path,
        input_shapes={},
    )
    body._hetlab_proto, body._hetlab_model = g, m  # type: ignore[attr-defined]
    body._hetlab_weights = weights  # type: ignore[attr-defined]
    body.opset = next((int(o.version) for o in m.opset_import if o.domain in ("", "ai.onnx")), None)  # type: ignore[attr-defined]
    return body


def _body_nodes(g: onnx.GraphProto, weights: dict[str, np.ndarray]) -> list[Node]:
    """The body's vertices, each with the enclosing-graph tensors its own subgraphs read;
    a Constant node is no vertex: its value joins ``weights``."""
    ids = vertex_ids(g)
    nodes: list[Node] = []
    for i, n in enumerate(g.node):
        if ids[i] is None:
            v = constant_value(n)
            if v is not None:
                weights[n.output[0]] = v
            continue
        local = set(n.input)
        outer: list[str] = []
        for a in n.attribute:
            for sub in attr_graphs(a):
                outer.extend(t for t in outer_reads(sub, set()) if t not in local)
        nodes.append(
            Node(
                id=ids[i],
                op_type=n.op_type,
                inputs=list(n.input),
                outputs=list(n.output),
                attrs=node_attrs(n),
                domain=n.domain,
                index=i,
                outer_inputs=list(dict.fromkeys(outer)),
            )
        )
    return nodes


def _edges(nodes: list[Node], tensors: dict[str, Tensor]) -> list[Edge]:
    """One edge per producer-consumer pair of vertices, with the tensors it carries (those
    read by a consumer's subgraphs too) and their bytes."""
    producer = {t: n.id for n in nodes for t in n.outputs if t}
    pairs: dict[tuple[str, str], list[str]] = {}
    for n in nodes:
        for t in n.inputs + n.outer_inputs:
            u = producer.get(t)
            if u is not None and u != n.id:
                pairs.setdefault((u, n.id), [])
                if t not in pairs[u, n.id]:
                    pairs[u, n.id].append(t)
    return [
        Edge(u, v, sum(tensors[t].nbytes for t in ts if t in tensors), ts)
        for (u, v), ts in pairs.items()
    ]


def record(body: OpGraph, values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every value produced by ``body``'s own nodes (not inside nested bodies), from one
    onnxruntime run of the body as a standalone model fed ``values`` (its outer inputs)."""
    g, m = _proto(body)
    missing = [t for t in body.inputs if t not in values]
    if missing:
        raise HetlabError(f"body {body.name!r} needs outer tensor {missing[0]!r}")
    names = list(dict.fromkeys(o for n in body.nodes for o in n.outputs if o))
    ins = [
        helper.make_tensor_value_info(
            t,
            helper.np_dtype_to_tensor_dtype(np.asarray(values[t]).dtype),
            np.asarray(values[t]).shape,
        )
        for t in body.inputs
    ]
    outs = []
    for t in names:
        k = body.tensors.get(t)
        if k is not None and k.dtype not in ("string", "bfloat16", "unknown"):
            outs.append(
                helper.make_tensor_value_info(
                    t, helper.np_dtype_to_tensor_dtype(np.dtype(k.dtype)), None
                )
            )
        else:
            outs.append(helper.make_empty_tensor_value_info(t))
    sg = helper.make_graph(list(g.node), f"{body.name}_record", ins, outs, list(g.initializer))
    sm = helper.make_model(sg, opset_imports=list(m.opset_import), ir_version=m.ir_version)
    sm.functions.extend(m.functions)
    try:
        sess = reference_session(sm)
        res = sess.run(names, {t: np.asarray(values[t]) for t in body.inputs})
    except Exception as e:  # noqa: BLE001 - onnxruntime raises its own types
        first = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
        raise HetlabError(f"cannot record the shapes of body {body.name!r}: {first}") from None
    return {t: np.asarray(v) for t, v in zip(names, res, strict=False)}


__all__ = ["BRANCHES", "if_bodies", "record"]
