"""ScatterElements and ScatterND whose indices are read at run time (scatter_rt.cl), and the
data's way into the output that both paths take (a copy, or the data's buffer itself).
Repeated indices keep the last update, as onnxruntime's in-order loop does. ScatterElements
with a reduction combines its updates lane by lane (the updates that differ only along the
axis), each lane in order, so repeated indices combine in onnxruntime's order; ScatterND's
updates of one output element can come from anywhere, so its reductions over indices read
at run time are refused. ONNX leaves repeated ScatterND indices undefined, and
onnxruntime's ScatterND spreads its updates over threads: with repeats its own result varies
from run to run, and the last update is what it gives on one thread."""

from __future__ import annotations

from typing import Any

from hetlab.devices.kernels.in_place import writable
from hetlab.devices.kernels.ops.common import attr, grid1, i32, numel, strides, type_options
from hetlab.devices.kernels.ops.data_movement import copy_launch
from hetlab.graph.ir import Node, OpGraph

REDUCTIONS = {"none": 0, "add": 1, "mul": 2, "max": 3, "min": 4}  # scatter.cl's red


def runtime_reason(node: Node, graph: OpGraph) -> str | None:
    """Why the node cannot scatter at indices read at run time (None when it can)."""
    red = attr(node, "reduction", "none")
    if red != "none" and node.op_type == "ScatterND":
        return (
            f"ScatterND reduction {red!r} over repeated indices or indices read at run time "
            "(its updates would combine in an order that differs from onnxruntime's)"
        )
    xs = graph.tensors[node.inputs[0]].shape
    ids = graph.tensors[node.inputs[1]].shape
    us = graph.tensors[node.inputs[2]].shape
    if node.op_type == "ScatterND":
        k = int(ids[-1]) if len(ids) else 0
        if not ids or k > len(xs) or tuple(us) != tuple(ids[:-1]) + tuple(xs[k:]):
            return "ScatterND indices and updates of shapes that do not match the data"
    elif len(ids) != len(xs) or tuple(ids) != tuple(us):
        return f"{node.op_type} indices and updates of shapes that do not match the data"
    if numel(xs) >= 2**31 or numel(us) >= 2**31:
        return f"{node.op_type} of 2**31 elements or more"
    return None


def meta_of(node: Node, xs, ids) -> tuple[list[int], int, int]:
    """scatter_claim's meta block, its nd_mode and the elements of one update slice."""
    st = strides(xs)
    if node.op_type == "ScatterND":
        k = int(ids[-1])
        return [k, *xs[:k], *st[:k]], 1, numel(xs[k:])
    ax = int(attr(node, "axis", 0)) % len(xs)
    return [len(xs), ax, xs[ax], *ids, *st], 0, 1


def data_into_output(node: Node, ctx: Any) -> Any:
    """The output's buffer, holding the data: the data's own buffer where the node may write
    into it (``in_place.py``: no launch), else a copy of the data."""
    data, out = node.inputs[0], node.outputs[0]
    if writable(ctx, node):
        ctx.make_alias(out, data)
        return ctx.t(out)
    dtype, y = ctx.dtype(out), ctx.t(out)
    n = numel(ctx.shape(data))
    copy_launch(ctx, node, ctx.tensor_or_const(data, dtype), y, [n], [1], [1])
    return y


def runtime_scatter(node: Node, ctx: Any) -> None:
    """y = data; each update written where its indices point, the last one where they
    repeat, or combined by the reduction in order (``scatter_lanes``)."""
    xs, ids = ctx.shape(node.inputs[0]), ctx.shape(node.inputs[1])
    dtype, itype = ctx.dtype(node.outputs[0]), ctx.dtype(node.inputs[1])
    y = data_into_output(node, ctx)
    ny, n = numel(xs), numel(ctx.shape(node.inputs[2]))
    red = REDUCTIONS[attr(node, "reduction", "none")]
    if red:
        meta, _, _ = meta_of(node, xs, ids)
        lanes = n // max(int(ids[meta[1]]), 1)
        k = ctx.kernel(
            "scatter_rt.cl", "scatter_lanes", f"{type_options(dtype)} {type_options(itype, 'IT')}"
        )
        idx, upd = (ctx.tensor_or_const(node.inputs[i], t) for i, t in ((1, itype), (2, dtype)))
        ctx.launch(node, k, *grid1(lanes), [y, idx, upd, ctx.ints(meta), i32(red), i32(lanes)])
        return
    owner, at = ctx.scratch(ny, "int32"), ctx.scratch(n, "int32")
    fill = ctx.kernel("eltwise.cl", "fill", type_options("int32"))
    ctx.launch(node, fill, *grid1(ny), [owner, i32(ny), i32(-1)])
    meta, mode, inner = meta_of(node, xs, ids)
    opts = type_options(itype, "IT")
    claim = ctx.kernel("scatter_rt.cl", "scatter_claim", opts)
    idx = ctx.tensor_or_const(node.inputs[1], itype)
    args = [idx, at, owner, ctx.ints(meta), i32(mode), i32(inner), i32(n), i32(ny)]
    ctx.launch(node, claim, *grid1(n), args)
    owned = ctx.kernel("scatter_rt.cl", "scatter_owned", type_options(dtype))
    upd = ctx.tensor_or_const(node.inputs[2], dtype)
    ctx.launch(node, owned, *grid1(n), [y, at, owner, upd, i32(n)])
