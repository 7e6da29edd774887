"""Folding what is constant once the input shapes are fixed (spec §1).

With every input shape fixed, the shape arithmetic of a model (Shape -> Gather -> Unsqueeze ->
Concat -> Reshape, ConstantOfShape, Range...) computes the same values on every run: it is
constant. onnxscript's constant folder (``onnxscript.optimizer.fold_constants``) evaluates
those nodes once and writes their values as initializers; nodes that nothing reads any more go.

What folding keeps:
- every node that depends on an input's values (only shapes fixed by ``--shape`` count as
  known; shapes recorded from the onnxruntime run are not trusted, they may depend on values);
- control-flow nodes (``If``, ``Loop``, ``Scan``) and their bodies as they are: the folder
  sees them as opaque nodes reading their inputs and the outer tensors their bodies read;
- the producer of every model output (a model output the folder turned into a constant is
  written by an ``Identity`` node);
- every node's name: before folding each node is named by its vertex id (spec §1), so a
  vertex keeps its id, and ``origins`` maps each vertex to the original vertices it stands for.

The folded model is written once to ``<cache>/fold/<stem>-<sha256[:12]>.onnx`` (``<cache>``
as the zoo's: ``$HETLAB_CACHE`` or ``~/.cache/hetlab``), keyed by the fixed model, the folder's
version and ``FOLD_VERSION``; a model where nothing folds leaves an empty ``.same`` file, so
neither is computed again.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

import numpy as np
import onnx
from onnx import helper

from hetlab.fileio import atomic_write_bytes
from hetlab.graph import zoo
from hetlab.graph.ir import Tensor
from hetlab.graph.onnx_proto import attr_graphs, outer_reads, vertex_ids
from hetlab.graph.ort_session import reference_session

FOLD_VERSION = 1  # bump when folding would give another model for the same input (keys the cache)
OPAQUE = "hetlab.opaque"  # the domain a control-flow node has while the folder runs
SMALL = 1 << 16  # ConstantOfShape outputs of at most this many elements are folded
_MAX_BYTES = 1 << 31  # a model this large cannot be serialized whole; it is not folded


def cache_dir() -> Path:
    """Where folded models live: ``fold`` beside the zoo's cache."""
    return zoo.cache_dir().parent / "fold"


def named(fm: onnx.ModelProto) -> None:
    """Name every node of ``fm``'s main graph by its vertex id (in place), so the folded
    model's vertices keep the ids of spec §1."""
    for i, (n, v) in enumerate(zip(fm.graph.node, vertex_ids(fm.graph), strict=True)):
        n.name = v or f"Constant_{i}"


def has_constants(g: onnx.GraphProto) -> bool:
    """True when some vertex of ``g`` reads only constants, or is a Shape or Size (whose
    input's shape is fixed): only then can folding change the model."""
    consts = {t.name for t in g.initializer}
    consts |= {o for n in g.node if _is_constant(n) for o in n.output}
    for n in g.node:
        if _is_constant(n) or _is_control_flow(n):
            continue
        if n.op_type in ("Shape", "Size") and n.domain in ("", "ai.onnx"):
            return True
        ins = [t for t in n.input if t]
        if ins and all(t in consts for t in ins):
            return True
    return False


def fold(fm: onnx.ModelProto, stem: str, static: dict[str, Tensor]) -> tuple[Path | None, str]:
    """(the file of the folded model of ``fm``, named and with fixed input shapes, or None;
    why it is not folded where that is no plain "nothing to fold"). ``static`` are the shapes
    that hold for any input values. Cached on disk (see the module docstring). A folded model
    that onnxruntime cannot load, or a folder that fails, leaves the model as given."""
    if not has_constants(fm.graph):
        return None, ""
    if fm.ByteSize() >= _MAX_BYTES:
        return None, "the model is too large to fold (2 GiB)"
    data = fm.SerializeToString(deterministic=True)
    key = hashlib.sha256(data + f"|fold-v{FOLD_VERSION}|{_folder_version()}".encode()).hexdigest()
    out = cache_dir() / f"{stem}-{key[:12]}.onnx"
    same = out.with_suffix(".same")
    if same.is_file():
        return None, same.read_text()
    if out.is_file() and out.stat().st_size > 0:
        return out, ""
    why = ""
    try:
        folded = _run_folder(fm, static)
        changed = _vertices(folded.graph) != _vertices(fm.graph)
        if changed:
            _loads(folded)
    except Exception as e:  # noqa: BLE001  a failing folder keeps the model as given
        changed = False
        why = f"folding failed, kept as given: {(str(e).strip().splitlines() or [''])[0][:200]}"
    if not changed:
        atomic_write_bytes(same, why.encode())
        return None, why
    atomic_write_bytes(out, folded.SerializeToString(deterministic=True))
    return out, ""


def _loads(m: onnx.ModelProto) -> None:
    """Raise unless onnxruntime accepts ``m`` (its checks of every node and body)."""
    reference_session(m)


@lru_cache(maxsize=1)
def _folder_version() -> str:
    from importlib.metadata import version

    return f"onnxscript-{version('onnxscript')}"


def folder_name() -> str:
    """The library that folds, with its version (``onnxscript-0.7.2``)."""
    return _folder_version()


def _vertices(g: onnx.GraphProto) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(n.name, n.op_type, tuple(n.input)) for n in g.node if not _is_constant(n)]


def _is_constant(n: onnx.NodeProto) -> bool:
    return n.op_type == "Constant" and n.domain in ("", "ai.onnx")


def _is_control_flow(n: onnx.NodeProto) -> bool:
    return any(attr_graphs(a) for a in n.attribute)


def _run_folder(fm: onnx.ModelProto, static: dict[str, Tensor]) -> onnx.ModelProto:
    """onnxscript's constant folder over the main graph of ``fm``, control flow kept opaque,
    then the nodes nothing reads removed."""
    # lazy: onnxscript (and sympy under it) take about half a second to import
    from onnxscript import ir, optimizer

    m = onnx.ModelProto()
    m.CopyFrom(fm)
    real_outputs = {o.name for o in m.graph.output}
    kept = _opaque_control_flow(m.graph)
    _add_static_shapes(m.graph, static)
    model = ir.serde.deserialize_model(m)

    def should_fold(node) -> bool | None:
        if any(v.name in real_outputs for v in node.outputs):
            return False  # a model output stays some vertex's
        if node.op_type == "ConstantOfShape" and node.domain in ("", "ai.onnx"):
            shape = node.inputs[0].const_value if node.inputs else None
            return shape is not None and int(np.prod(shape.numpy())) <= SMALL
        return None

    optimizer.fold_constants(model, onnx_shape_inference=True, should_fold=should_fold)
    ir.passes.common.RemoveUnusedNodesPass()(model)
    out = ir.serde.serialize_model(model)
    _restore_control_flow(out.graph, kept)
    for o in [o for o in out.opset_import if o.domain == OPAQUE]:
        out.opset_import.remove(o)
    del out.graph.output[len(fm.graph.output) :]  # the outer reads kept while folding
    del out.graph.value_info[:]
    _produce_outputs(out.graph, fm.graph)
    return out


def _opaque_control_flow(g: onnx.GraphProto) -> dict[str, onnx.NodeProto]:
    """Replace each control-flow node of ``g`` by a node of an unknown domain that reads its
    inputs and the outer tensors its bodies read (the folder neither folds nor enters it);
    those outer tensors become graph outputs meanwhile, so they keep their names."""
    kept: dict[str, onnx.NodeProto] = {}
    outer_all: list[str] = []
    for i, n in enumerate(g.node):
        if not _is_control_flow(n):
            continue
        outer = [t for a in n.attribute for s in attr_graphs(a) for t in outer_reads(s, set())]
        outer = [t for t in dict.fromkeys(outer) if t not in n.input]
        kept[n.name] = onnx.NodeProto()
        kept[n.name].CopyFrom(n)
        op = helper.make_node(
            n.op_type, list(n.input) + outer, list(n.output), name=n.name, domain=OPAQUE
        )
        g.node[i].CopyFrom(op)
        outer_all.extend(outer)
    outputs = {o.name for o in g.output}
    inputs = {i.name for i in g.input} | {t.name for t in g.initializer}
    for t in dict.fromkeys(outer_all):
        if t not in outputs and t not in inputs:
            g.output.append(helper.make_empty_tensor_value_info(t))
    return kept


def _restore_control_flow(g: onnx.GraphProto, kept: dict[str, onnx.NodeProto]) -> None:
    for i, n in enumerate(g.node):
        if n.domain == OPAQUE:
            orig = onnx.NodeProto()
            orig.CopyFrom(kept[n.name])
            del orig.input[:]
            orig.input.extend(n.input[: len(kept[n.name].input)])
            g.node[i].CopyFrom(orig)


def _add_static_shapes(g: onnx.GraphProto, static: dict[str, Tensor]) -> None:
    """Every statically known intermediate shape as value_info, for the folder's Shape nodes."""
    have = {v.name for v in list(g.input) + list(g.output)} | {t.name for t in g.initializer}
    del g.value_info[:]
    for t in static.values():
        if t.name in have or t.shape is None or t.dtype in ("string", "bfloat16"):
            continue
        et = helper.np_dtype_to_tensor_dtype(np.dtype(t.dtype))
        g.value_info.append(helper.make_tensor_value_info(t.name, et, t.shape))


def _produce_outputs(g: onnx.GraphProto, before: onnx.GraphProto) -> None:
    """A model output that a node wrote before folding and that is now a constant is written
    by an ``Identity`` node (named ``Identity_<output>``) from that constant."""
    produced = {t for n in g.node if not _is_constant(n) for t in n.output}
    had = {t for n in before.node if not _is_constant(n) for t in n.output}
    for o in g.output:
        if o.name in produced or o.name not in had:
            continue
        src = f"{o.name}_folded"
        for t in g.initializer:
            if t.name == o.name:
                t.name = src
        for n in g.node:
            n.output[:] = [src if t == o.name else t for t in n.output]
        g.node.append(helper.make_node("Identity", [src], [o.name], name=f"Identity_{o.name}"))


def origins(
    before: onnx.GraphProto, after: onnx.GraphProto
) -> tuple[dict[str, list[str]], list[str]]:
    """(vertex id of ``after`` -> the vertex ids of ``before`` it stands for, in model order;
    the vertices of ``before`` that nothing in ``after`` stands for).

    A vertex that folding kept stands for itself. A vertex that went is credited to one vertex
    of ``after``: the one that now writes a tensor it wrote, else the first vertex (in model
    order) that read what it wrote and stands for something; nothing reads what a dropped
    vertex computed (dead code, or constants that nothing kept reads)."""
    ids = [n.name for n in before.node if not _is_constant(n)]
    order = {v: i for i, v in enumerate(ids)}
    after_ids = [v for v in vertex_ids(after) if v is not None]
    kept = set(after_ids)
    writer = {
        t: v for n, v in zip(after.node, vertex_ids(after), strict=True) if v for t in n.output
    }
    readers: dict[str, list[str]] = {}
    nodes = [n for n in before.node if not _is_constant(n)]
    for n in nodes:
        outer = [t for a in n.attribute for s in attr_graphs(a) for t in outer_reads(s, set())]
        for t in dict.fromkeys(list(n.input) + outer):
            readers.setdefault(t, []).append(n.name)
    owner: dict[str, str] = {v: v for v in ids if v in kept}
    dropped: list[str] = []
    for n in reversed(nodes):
        if n.name in owner:
            continue
        by = next((writer[t] for t in n.output if t in writer), None)
        if by is None:
            reads = sorted({c for t in n.output if t for c in readers.get(t, [])}, key=order.get)
            by = next((owner[c] for c in reads if c in owner), None)
        if by is None:
            dropped.append(n.name)
        else:
            owner[n.name] = by
    out: dict[str, list[str]] = {v: [] for v in after_ids}
    for v in ids:
        if v in owner:
            out[owner[v]].append(v)
    return out, sorted(dropped, key=order.get)
