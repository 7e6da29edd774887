"""Write a stretched (multi-branch) ONNX model from a ``hetlab.stretch`` plan.

The second module of hetlab that imports ``onnx``, for model *rewriting* only (reading stays
in ``onnx_io``). Each branched part's nodes are replaced by one copy per branch (dropped
blocks skipped, widths scaled), a 1x1 Conv per branch that restores its share of the output
channels, and a Concat whose output keeps the original tensor name, so the rest of the
model is untouched. Branch nodes are named ``stretch/p{k}/b{i}/{original name}`` (restore:
``.../restore``; join: ``stretch/p{k}/meet``); ``metadata_props['hetlab.stretch']`` holds the
plan summary with each branch's device. Every weight of the written model is fresh and
deterministic (``zoo_weights.materialize`` from ``seed``, He-scaled), so its accuracy needs
retraining, which is out of scope here.
"""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from hetlab.errors import HetlabError
from hetlab.graph.ir import OpGraph
from hetlab.graph.onnx_io import read_model, vertex_ids
from hetlab.graph.zoo_weights import materialize, strip_weights

META_KEY = "hetlab.stretch"


def branch_prefix(part: int, branch: int) -> str:
    return f"stretch/p{part}/b{branch}/"


def _small_values(op: str, index: int, shape: tuple[int, ...]) -> np.ndarray:
    """Values for new tensors too small to be re-synthesized by ``materialize``."""
    if op == "BatchNormalization" and index in (1, 4):  # scale, running variance
        return np.ones(shape, np.float32)
    return np.zeros(shape, np.float32)


def _new_init(name: str, op: str, index: int, shape: tuple[int, ...]) -> onnx.TensorProto:
    return numpy_helper.from_array(_small_values(op, index, shape), name)


def _branch_nodes(
    g: OpGraph,
    protos: dict[str, onnx.NodeProto],
    inits: dict[str, onnx.TensorProto],
    k: int,
    i: int,
    part: Any,
    br: Any,
) -> tuple[list[onnx.NodeProto], list[onnx.TensorProto], str]:
    lay = br.layout
    pre = branch_prefix(k, i)

    def rename(t: str) -> str:
        t = _real(lay, t)
        return t if (not t or t == part.input) else pre + t

    nodes: list[onnx.NodeProto] = []
    new_inits: list[onnx.TensorProto] = []
    for v in lay.nodes:
        p = protos[v]
        n = copy.deepcopy(p)
        n.name = pre + (p.name or v)
        del n.input[:]
        for idx, t in enumerate(p.input):
            if t in inits:
                dims = _scaled_dims(g, lay, p, idx, tuple(int(d) for d in inits[t].dims))
                new_inits.append(_new_init(pre + t, p.op_type, idx, dims))
                n.input.append(pre + t)
            else:
                n.input.append(rename(t))
        del n.output[:]
        n.output.extend(rename(t) if t else t for t in p.output)
        for a in n.attribute:
            if p.op_type == "Conv" and a.name == "group" and a.i != 1:
                a.i = lay.channels[p.output[0]]  # depthwise stays depthwise
        nodes.append(n)
    restore, weights = _restore_conv(pre, br, rename(lay.out))
    return nodes + [restore], new_inits + weights, restore.output[0]


def _real(lay: Any, t: str) -> str:
    """The tensor ``t`` stands for in the layout (through its aliases)."""
    while t in lay.alias:
        t = lay.alias[t]
    return t


def _scaled_dims(
    g: OpGraph, lay: Any, p: onnx.NodeProto, idx: int, dims: tuple[int, ...]
) -> tuple[int, ...]:
    """The dims of node ``p``'s ``idx``-th input, an initializer, in the branch: a Conv weight
    takes the branch's output and input channels (a depthwise one stays depthwise), and any
    other initializer led by the output channels takes the branch's output channels."""
    out_c = lay.channels[p.output[0]]
    if p.op_type == "Conv" and idx == 1:
        grp = next((a.i for a in p.attribute if a.name == "group"), 1)
        cin = lay.channels[_real(lay, p.input[0])]
        return (out_c, cin // (cin if grp != 1 else 1), *dims[2:])
    if dims and dims[0] == int(g.tensors[p.output[0]].shape[1]) and len(dims) >= 1:
        return (out_c, *dims[1:])
    return dims


def _restore_conv(pre: str, br: Any, src: str) -> tuple[onnx.NodeProto, list[onnx.TensorProto]]:
    """The branch's 1x1 conv restoring its share of the output channels, and its weights."""
    w = _new_init(
        pre + "restore.weight", "Conv", 1, (br.restore, br.layout.channels[br.layout.out], 1, 1)
    )
    b = _new_init(pre + "restore.bias", "Conv", 2, (br.restore,))
    node = helper.make_node(
        "Conv",
        [src, w.name, b.name],
        [pre + "restore"],
        name=pre + "restore",
        kernel_shape=[1, 1],
    )
    return node, [w, b]


def build(g: OpGraph, plan: Any) -> onnx.ModelProto:
    """The stretched model (weights still placeholders; ``write`` fills them)."""
    if not g.model_path:
        raise HetlabError("stretch needs a model loaded from a file")
    m = copy.deepcopy(read_model(g.model_path))
    ids = vertex_ids(m.graph)
    protos = {v: n for v, n in zip(ids, m.graph.node, strict=False) if v}
    inits = {t.name: t for t in m.graph.initializer}
    part_of = {v: k for k, part in enumerate(plan.parts) for v in part.nodes}
    out_nodes: list[onnx.NodeProto] = []
    added: list[onnx.TensorProto] = []
    emitted: set[int] = set()
    for v, n in zip(ids, m.graph.node, strict=False):
        k = part_of.get(v) if v else None
        if k is None:
            out_nodes.append(n)
            continue
        if k in emitted:
            continue
        emitted.add(k)
        part = plan.parts[k]
        joins = []
        for i, br in enumerate(part.branches):
            bn, bi, out = _branch_nodes(g, protos, inits, k, i, part, br)
            out_nodes += bn
            added += bi
            joins.append(out)
        out_nodes.append(
            helper.make_node("Concat", joins, [part.output], name=f"stretch/p{k}/meet", axis=1)
        )
    del m.graph.node[:]
    m.graph.node.extend(out_nodes)
    used = {t for n in out_nodes for t in n.input}
    keep = [t for t in m.graph.initializer if t.name in used]
    del m.graph.initializer[:]
    m.graph.initializer.extend(keep + added)
    del m.graph.value_info[:]
    meta = {p.key: p.value for p in m.metadata_props}
    meta[META_KEY] = json.dumps(plan.summary())
    helper.set_model_props(m, meta)
    try:
        onnx.checker.check_model(m)
        onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
    except Exception as e:  # noqa: BLE001 - a bug in the rewrite, not a bad input
        raise HetlabError(
            f"the stretched model is not valid ONNX: {str(e).splitlines()[0]}"
        ) from None
    return m


def write(g: OpGraph, plan: Any, out: str | Path, seed: int = 0) -> Path:
    """Write the stretched model with fresh deterministic weights (atomically) to ``out``."""
    m = strip_weights(build(g, plan))
    out = Path(out)
    if out.parent and not out.parent.exists():
        raise HetlabError(f"output folder {out.parent} does not exist")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "stripped.onnx"
        src.write_bytes(m.SerializeToString())
        return materialize(src, out, seed=seed)


def stretch_meta(model_path: str | Path) -> dict[str, Any] | None:
    """The plan summary stored in a stretched model, or None for another model."""
    m = read_model(model_path)
    for p in m.metadata_props:
        if p.key == META_KEY:
            return json.loads(p.value)
    return None
