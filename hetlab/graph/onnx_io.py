"""ONNX -> OpGraph (spec §1). Beside it, ``onnx_proto`` reads protos, ``onnx_infer`` infers
shapes and ``onnx_extract`` takes weights and units out; their public names are re-exported here.

``load`` reads a zoo name or an ``.onnx`` path, fixes the input shapes (``shapes.py``), infers
every intermediate shape (ONNX shape inference, then one recorded onnxruntime run for what
inference leaves open; ``dynamic.py`` marks the recorded shapes that input values may change),
and builds the DAG: one vertex per node of the main graph except
``Constant`` (its outputs count as initializers), control-flow nodes as single vertices with
edges for the outer tensors their bodies read, and one edge per ordered pair.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx

from hetlab.errors import HetlabError
from hetlab.graph.dynamic import data_dependent
from hetlab.graph.flops import node_flops
from hetlab.graph.inputs import fit_values
from hetlab.graph.ir import Edge, Node, OpGraph, Tensor
from hetlab.graph.onnx_extract import consumers, extract, unit_io, weights
from hetlab.graph.onnx_fold import fold as fold_model
from hetlab.graph.onnx_fold import folder_name, named, origins
from hetlab.graph.onnx_infer import infer, ort_shapes, steady_branches
from hetlab.graph.onnx_proto import (
    attr_graphs,
    constant_value,
    declared_dims,
    dtype_name,
    fixed_model,
    node_attrs,
    outer_reads,
    read_model,
    resolve_model_path,
    vertex_ids,
)
from hetlab.graph.shapes import resolve_input_shapes, value_shapes

# the reading, inference and extraction halves live beside this module; their public names
# are re-exported here, where every caller imports them
__all__ = [
    "consumers",
    "extract",
    "load",
    "read_model",
    "resolve_model_path",
    "unit_io",
    "vertex_ids",
    "weights",
]


def load(
    model: str | Path,
    shapes: dict[str, tuple[int, ...]] | None = None,
    values: dict[str, np.ndarray] | None = None,
    fold: bool = True,
) -> OpGraph:
    """Load a zoo name or an .onnx path into an ``OpGraph`` with every shape fixed (spec §1).

    ``values`` are input arrays for the one onnxruntime run that records data-dependent shapes
    (seeded random inputs otherwise); their shapes count as given ``shapes``, except a single
    number's on an input of rank 1 or more, which fills that input's shape. With ``fold``
    the graph is that of the model with what is constant folded (``onnx_fold``): its
    ``model_path`` is the folded file, ``source_path`` the given one.
    """
    path = resolve_model_path(model)
    m = read_model(path)
    init = {t.name for t in m.graph.initializer}
    real_inputs = [vi for vi in m.graph.input if vi.name not in init]
    fixed, values = _fixed_inputs(real_inputs, dict(shapes or {}), values or {})
    fm = fixed_model(m, fixed)
    named(fm)
    tensors, consts, recorded = _tensors(fm, real_inputs, fixed, values)
    steady = steady_branches(fm, fixed, values, {t: tensors[t] for t in recorded}, tensors)
    static = {k: t for k, t in tensors.items() if k not in recorded}
    fpath, why = fold_model(fm, Path(path).stem, static) if fold else (None, "")
    folded = read_model(fpath) if fpath is not None else None
    run = folded if folded is not None else fm
    if folded is not None:
        tensors, consts, refolded = _folded_tensors(folded, tensors, real_inputs, fixed, values)
        recorded |= refolded
    g = run.graph
    ids = vertex_ids(g)
    nodes, producer = _vertices(g, ids, tensors, set(tensors) | consts | set(fixed))
    origin, dropped = origins(fm.graph, g) if folded is not None else ({}, [])
    for nd in nodes:
        nd.origin = origin.get(nd.id) or [nd.id]
    name = (
        str(model)
        if not str(model).endswith(".onnx") and not os.path.exists(str(model))
        else Path(path).stem
    )
    graph = OpGraph(
        name=name,
        nodes=nodes,
        edges=_edges(nodes, producer, tensors),
        tensors=tensors,
        inputs=[vi.name for vi in real_inputs],
        outputs=[o.name for o in g.output],
        consts=consts,
        model_path=str(fpath or path),
        input_shapes=fixed,
        source_path=str(path),
        fold=_fold_doc(fold, fm, folded, dropped, why),
    )
    graph.lint()
    graph.compute_levels()
    for t in data_dependent(graph, recorded, steady):
        graph.tensors[t].dynamic = True
    return graph


def _fold_doc(
    asked: bool, fm: onnx.ModelProto, folded: onnx.ModelProto | None, dropped, why: str
) -> dict:
    """``OpGraph.fold``: whether folding was asked and changed the model, the vertices before
    (and why it did not fold, where it failed)."""
    before = sum(1 for v in vertex_ids(fm.graph) if v is not None)
    doc = {"enabled": asked, "folded": folded is not None, "nodes_before": before}
    if why:
        doc["note"] = why
    if folded is not None:
        doc.update(folder=folder_name(), dropped=list(dropped))
    return doc


def _fixed_inputs(
    real_inputs: list, given: dict[str, tuple[int, ...]], values: dict[str, np.ndarray]
) -> tuple[dict[str, tuple[int, ...]], dict[str, np.ndarray]]:
    """The inputs' fixed shapes (``_fixed_input_shapes``) and the ``values`` fitted to them
    (``inputs.fit_values``: a number fills its input's shape)."""
    values = {k: np.asarray(v) for k, v in values.items()}
    fixed = _fixed_input_shapes(real_inputs, given, values)
    specs = [
        Tensor(vi.name, fixed[vi.name], dtype_name(vi.type.tensor_type.elem_type))
        for vi in real_inputs
    ]
    return fixed, fit_values(specs, values)


def _fixed_input_shapes(
    real_inputs: list, given: dict[str, tuple[int, ...]], values: dict[str, np.ndarray]
) -> dict:
    """Each model input's fixed shape: its declared dims resolved with the ``given`` ones
    (``--shape``) and those of the ``values`` (``--input``; ``--shape`` wins)."""
    declared = {vi.name: declared_dims(vi) for vi in real_inputs}
    given = {**value_shapes(declared, values), **given}
    for vi in real_inputs:
        if not vi.type.tensor_type.HasField("shape") and vi.name not in given:
            raise HetlabError(
                f"input {vi.name!r} declares no shape at all; give it with --shape {vi.name}=..."
            )
    for name, dims in given.items():  # rank-less inputs take the given rank
        if name in declared and not declared[name]:
            declared[name] = [None] * len(dims)
    return resolve_input_shapes(declared, given)


def _tensors(
    fm: onnx.ModelProto,
    real_inputs: list,
    fixed: dict[str, tuple[int, ...]],
    values: dict[str, np.ndarray],
) -> tuple[dict[str, Tensor], set[str], set[str]]:
    """Every tensor of ``fm``'s main graph with its shape, the constants (initializers and
    ``Constant`` outputs), and the names whose shapes onnxruntime recorded where inference
    left them open (they may hold only for the input values of that run)."""
    g = fm.graph
    tensors = infer(fm)
    for vi in real_inputs:
        tensors[vi.name] = Tensor(
            vi.name, fixed[vi.name], dtype_name(vi.type.tensor_type.elem_type)
        )
    consts = _constants(g, tensors)
    ids = vertex_ids(g)
    missing = [
        t
        for i, n in enumerate(g.node)
        if ids[i] is not None
        for t in n.output
        if t and (t not in tensors or tensors[t].shape is None)
    ]
    if missing:
        tensors.update(ort_shapes(fm, fixed, missing, tensors, values))
    return tensors, consts, set(missing)


def _constants(g: onnx.GraphProto, tensors: dict[str, Tensor]) -> set[str]:
    """The initializers and ``Constant`` outputs of ``g``; their shapes go into ``tensors``."""
    consts = {t.name for t in g.initializer}
    for t in g.initializer:
        tensors.setdefault(t.name, Tensor(t.name, tuple(t.dims), dtype_name(t.data_type)))
    for n in g.node:
        if n.op_type == "Constant" and n.domain in ("", "ai.onnx"):
            v = constant_value(n)
            for o in n.output:
                consts.add(o)
                if v is not None:
                    tensors[o] = Tensor(o, tuple(v.shape), str(v.dtype))
    return consts


def _folded_tensors(
    folded: onnx.ModelProto,
    known: dict[str, Tensor],
    real_inputs: list,
    fixed: dict[str, tuple[int, ...]],
    values: dict[str, np.ndarray],
) -> tuple[dict[str, Tensor], set[str], set[str]]:
    """The tensors and constants of the folded model: the known shapes of the names it still
    has, its new constants' from their values (onnxruntime for a name the folder made, also
    returned)."""
    g = folded.graph
    used = {o.name for o in g.output} | set(fixed)
    for n in g.node:
        outer = [t for a in n.attribute for sub in attr_graphs(a) for t in outer_reads(sub, set())]
        used.update(t for t in list(n.input) + list(n.output) + outer if t)
    tensors = {k: t for k, t in known.items() if k in used}
    consts = _constants(g, tensors)
    for t in g.initializer:  # a folded value replaces the tensor of the same name
        tensors[t.name] = Tensor(t.name, tuple(t.dims), dtype_name(t.data_type))
    missing = [
        t for n in g.node if n.op_type != "Constant" for t in n.output if t and t not in tensors
    ]
    if missing:
        tensors.update(ort_shapes(folded, fixed, missing, tensors, values))
    return tensors, consts, set(missing)


def _vertices(
    g: onnx.GraphProto, ids: list[str | None], tensors: dict[str, Tensor], main_names: set[str]
) -> tuple[list[Node], dict[str, str]]:
    """One vertex per node (``Constant`` aside), and the vertex producing each tensor."""
    producer: dict[str, str] = {}
    nodes: list[Node] = []
    for i, n in enumerate(g.node):
        if ids[i] is None:
            continue
        outer: list[str] = []
        for a in n.attribute:
            for sub in attr_graphs(a):
                outer.extend(t for t in outer_reads(sub, set()) if t in main_names or t in producer)
        outer = [t for t in dict.fromkeys(outer) if t not in n.input]
        at = node_attrs(n)
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
    return nodes, producer


def _edges(nodes: list[Node], producer: dict[str, str], tensors: dict[str, Tensor]) -> list[Edge]:
    """One edge per ordered pair of vertices, carrying every tensor that passes between them."""
    pairs: dict[tuple[str, str], list[str]] = {}
    for nd in nodes:
        for t in list(nd.inputs) + nd.outer_inputs:
            u = producer.get(t)
            if u is not None and u != nd.id:
                lst = pairs.setdefault((u, nd.id), [])
                if t not in lst:
                    lst.append(t)
    return [Edge(u, v, sum(tensors[t].nbytes for t in ts), ts) for (u, v), ts in pairs.items()]
