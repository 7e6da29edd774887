"""Test helper: one- or few-node ONNX models -> OpGraph, run on an OpenCL device, compare
with onnxruntime. Builds the OpGraph directly (independent of hetlab.graph.onnx_io)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

from hetlab.graph.ir import Edge, Node, OpGraph, Tensor
from hetlab.graph.onnx_exact import MS, exact_source

NP2ONNX = {
    np.dtype("float32"): onnx.TensorProto.FLOAT,
    np.dtype("int64"): onnx.TensorProto.INT64,
    np.dtype("int32"): onnx.TensorProto.INT32,
    np.dtype("bool"): onnx.TensorProto.BOOL,
    np.dtype("uint8"): onnx.TensorProto.UINT8,
    np.dtype("int8"): onnx.TensorProto.INT8,
}


def make_model(
    nodes: Sequence[onnx.NodeProto],
    inputs: dict[str, np.ndarray],
    inits: dict[str, np.ndarray],
    outputs: Sequence[str],
    opset: int = 17,
) -> onnx.ModelProto:
    g = helper.make_graph(
        list(nodes),
        "case",
        [helper.make_tensor_value_info(k, NP2ONNX[v.dtype], v.shape) for k, v in inputs.items()],
        [helper.make_tensor_value_info(o, onnx.TensorProto.FLOAT, None) for o in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()],
    )
    ms = [helper.make_opsetid(MS, 1)] if any(n.domain == MS for n in nodes) else []
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset), *ms])
    m.ir_version = 8
    return m


def node_attrs(n: onnx.NodeProto) -> dict[str, Any]:
    out = {}
    for a in n.attribute:
        v = helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode()
        elif isinstance(v, onnx.TensorProto):
            v = numpy_helper.to_array(v)
        elif isinstance(v, list) and v and isinstance(v[0], bytes):
            v = [s.decode() for s in v]
        out[a.name] = v
    return out


def _elem_types(model: onnx.ModelProto) -> dict[str, int]:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.output[:]
    inf = onnx.shape_inference.infer_shapes(m)
    return {
        v.name: v.type.tensor_type.elem_type
        for v in inf.graph.value_info
        if v.type.tensor_type.elem_type
    }


def reference(
    model: onnx.ModelProto, inputs: dict[str, np.ndarray], names: Sequence[str]
) -> list[np.ndarray]:
    """onnxruntime's values of ``names`` (graph optimisations off), its integer products
    exact where this CPU's onnxruntime saturates them (``onnx_exact``)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    types = _elem_types(model)
    del m.graph.output[:]
    for t in names:
        m.graph.output.append(
            helper.make_tensor_value_info(t, types.get(t, onnx.TensorProto.FLOAT), None)
        )
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    src = exact_source(m.SerializeToString())[0]  # no saturating u8 x s8 product
    sess = ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
    return sess.run(list(names), inputs)


def to_graph(
    model: onnx.ModelProto,
    inputs: dict[str, np.ndarray],
    opset: int | None,
    values: dict[str, np.ndarray] | None = None,
) -> OpGraph:
    """An OpGraph with every tensor's shape (taken from ``values``, the value of every node
    output, or else from an onnxruntime run) and its weights."""
    g = model.graph
    weights = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    every = [t for n in g.node for t in n.output if t]
    vals = [values[t] for t in every] if values is not None else reference(model, inputs, every)
    tensors = {k: Tensor(k, tuple(v.shape), str(v.dtype)) for k, v in {**inputs, **weights}.items()}
    tensors.update(
        {k: Tensor(k, tuple(v.shape), str(v.dtype)) for k, v in zip(every, vals, strict=False)}
    )
    nodes = [
        Node(
            id=n.name or f"n{i}",
            op_type=n.op_type,
            domain=n.domain,
            inputs=list(n.input),
            outputs=list(n.output),
            attrs=node_attrs(n),
            index=i,
        )
        for i, n in enumerate(g.node)
    ]
    prod = {t: n.id for n in nodes for t in n.outputs if t}
    edges: dict[tuple[str, str], list[str]] = {}
    for n in nodes:
        for t in n.inputs:
            if t in prod:
                edges.setdefault((prod[t], n.id), []).append(t)
    graph = OpGraph(
        name="case",
        nodes=nodes,
        edges=[Edge(s, d, sum(tensors[t].nbytes for t in ts), ts) for (s, d), ts in edges.items()],
        tensors=tensors,
        inputs=list(inputs),
        outputs=[o.name for o in g.output],
        consts=set(weights),
        input_shapes={k: v.shape for k, v in inputs.items()},
    )
    graph._hetlab_weights = weights  # type: ignore[attr-defined]
    if opset is not None:
        graph.opset = opset  # type: ignore[attr-defined]
    return graph


def rel_err(out: np.ndarray, ref: np.ndarray) -> float:
    out, ref = np.asarray(out, np.float64), np.asarray(ref, np.float64)
    assert out.shape == ref.shape, (out.shape, ref.shape)
    den = np.linalg.norm(ref)
    return float(np.linalg.norm(out - ref) / (den if den > 0 else 1.0))


def run_case(
    dev: Any,
    nodes: Sequence[onnx.NodeProto],
    inputs: dict[str, np.ndarray],
    inits: dict[str, np.ndarray] | None = None,
    outputs: Sequence[str] | None = None,
    opset: int = 17,
    tol: float = 1e-4,
    repeat: int = 1,
    exact: bool = False,
    node_times: bool | None = None,
) -> tuple[list[float], Any, OpGraph]:
    """Run the nodes as one unit on ``dev`` (``node_times``: ``Device.run``'s); assert every
    output is within ``tol`` of onnxruntime (with ``exact``: equal to it, dtype and every bit)."""
    inits = inits or {}
    outputs = list(outputs or [nodes[-1].output[0]])
    model = make_model(nodes, inputs, inits, outputs, opset)
    refs = reference(model, inputs, outputs)
    graph = to_graph(model, inputs, opset)
    assert all(dev.supports(n, graph) for n in graph.nodes), [
        dev.why_not(n, graph) for n in graph.nodes
    ]
    unit = dev.prepare(graph, [n.id for n in graph.nodes])
    errs: list[float] = []
    for _ in range(repeat):
        res = dev.run(unit, {k: inputs[k] for k in unit.inputs}, node_times)
        outs = [dev.copy_out(res.outputs[o]) for o in outputs]
        if exact:
            for o, r in zip(outs, refs, strict=True):
                assert o.dtype == r.dtype and o.shape == r.shape, (o.dtype, r.dtype, o.shape)
                assert o.tobytes() == r.tobytes(), (o, r, [n.op_type for n in graph.nodes])
        errs = [rel_err(o, r) for o, r in zip(outs, refs, strict=False)]
        assert max(errs) <= tol, (errs, [n.op_type for n in graph.nodes])
    return errs, (unit, res), graph


def kernel_name(launch: Any) -> str:
    """The name of a launch's kernel on any kernel device (OpenCL's ``function_name``,
    CUDA's ``name``)."""
    return getattr(launch.kernel, "function_name", None) or launch.kernel.name


def rnd(*shape: int, seed: int = 0, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return (
        np.random.default_rng(seed + len(shape) * 7 + sum(shape))
        .uniform(lo, hi, shape)
        .astype(np.float32)
    )


def agree_exactly(dev, nodes, inputs, inits=None, opset=19, outputs=None) -> str | None:
    """Run ``nodes`` as one unit on ``dev`` and compare every output with onnxruntime's:
    equal for integer outputs, within 1e-6 relative for float ones. The refusal reason
    where ``dev`` refuses a node; skips what onnxruntime itself does not run."""
    inits = inits or {}
    outputs = list(outputs or [o for o in nodes[-1].output if o])
    model = make_model(nodes, inputs, inits, outputs, opset)
    try:
        refs = reference(model, inputs, outputs)
    except Exception as e:  # noqa: BLE001 - onnxruntime's own error types
        pytest.skip(f"onnxruntime does not run this combination: {e}")
    graph = to_graph(model, inputs, opset)
    for n in graph.nodes:
        why = dev.why_not(n, graph)
        if why is not None:
            assert not dev.supports(n, graph) and why.strip()
            return why
    unit = dev.prepare(graph, [n.id for n in graph.nodes])
    res = dev.run(unit, {k: inputs[k] for k in unit.inputs})
    for name, ref in zip(outputs, refs, strict=True):
        out = dev.copy_out(res.outputs[name])
        assert out.dtype == ref.dtype and out.shape == ref.shape, (name, out.dtype, ref.dtype)
        if ref.dtype.kind in "iu":
            bad = np.flatnonzero(out.reshape(-1) != ref.reshape(-1))
            assert bad.size == 0, (
                name,
                bad[:5],
                out.reshape(-1)[bad[:5]],
                ref.reshape(-1)[bad[:5]],
            )
        else:
            np.testing.assert_allclose(out, ref, rtol=1e-6, atol=0)
    return None


def ints(dtype, *shape, seed=0):
    lo, hi = (0, 256) if dtype == np.uint8 else (-128, 128)
    return np.random.default_rng(seed).integers(lo, hi, shape).astype(dtype)


def agree_with_exact(dev, node, inputs, inits=None, opset=10) -> str | None:
    """Run one integer-product ``node`` on ``dev`` and compare its output, bit for bit, with
    the exact integer reference (``int_reference``; a float output, of onnxruntime's contrib
    ops, within float rounding); and onnxruntime's with it too, where onnxruntime runs the
    combination (its saturating products made exact, ``reference``). The refusal reason
    where ``dev`` refuses the node."""
    from tests.devices.int_reference import exact

    inits = inits or {}
    vals = {**inputs, **inits}
    out = node.output[0]
    want = exact(node.op_type, [vals[i] if i else None for i in node.input], node_attrs(node))
    model = make_model([node], inputs, inits, [out], opset)
    try:
        ort_out = reference(model, inputs, [out])[0]
    except Exception:  # noqa: BLE001 - onnxruntime's own error types: it does not run this
        ort_out = None
    if ort_out is not None:
        _same(ort_out, want, "onnxruntime")
    graph = to_graph(model, inputs, opset, {out: want})
    why = dev.why_not(graph.nodes[0], graph)
    if why is not None:
        assert not dev.supports(graph.nodes[0], graph) and why.strip()
        return why
    unit = dev.prepare(graph, [n.id for n in graph.nodes])
    res = dev.run(unit, {k: inputs[k] for k in unit.inputs})
    _same(dev.copy_out(res.outputs[out]), want, dev.name)
    return None


def _same(got: np.ndarray, want: np.ndarray, who: str) -> None:
    """Integers equal; floats (the contrib ops' float32 epilogue) within float rounding."""
    assert got.dtype == want.dtype and got.shape == want.shape, (who, got.dtype, got.shape)
    if want.dtype.kind == "f":
        scale = float(np.max(np.abs(want))) if want.size else 0.0
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6 * scale, err_msg=who)
        return
    bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
    assert bad.size == 0, (who, bad[:5], got.reshape(-1)[bad[:5]], want.reshape(-1)[bad[:5]])
