"""What the devices take from a loaded graph's model: its constants (``weights``), the tensors
entering and leaving a set of vertices (``unit_io``), and a standalone model of them
(``extract``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

from hetlab.errors import HetlabError
from hetlab.graph.ir import OpGraph
from hetlab.graph.onnx_proto import constant_value, read_model


def weights(graph: OpGraph) -> dict[str, np.ndarray]:
    """Initializers and folded ``Constant`` outputs of ``graph``'s model, by tensor name."""
    m = read_model(graph.model_path)
    out = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    for n in m.graph.node:
        if n.op_type == "Constant" and n.domain in ("", "ai.onnx"):
            v = constant_value(n)
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
    default outputs); the constants it reads are included, shapes are the graph's fixed ones
    (none for a data-dependent one)."""
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
    # their inputs with the element type only; so does every tensor whose shape is data-dependent
    # (the recorded run's shape is one of many), and onnxruntime passes the actual shapes on.
    loose = any(graph.node(v).op_type in ("If", "Loop", "Scan") for v in sel)

    def vi(t: str, fixed: bool = True) -> onnx.ValueInfoProto:
        ti = graph.tensors.get(t)
        if ti is None or ti.dtype in ("string",):
            return helper.make_empty_tensor_value_info(t)
        shape = ti.shape if fixed and not ti.dynamic else None
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
