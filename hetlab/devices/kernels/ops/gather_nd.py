"""GatherND and GatherElements on data of any kernel dtype, indices int32 or int64 read at run
time (scatter.cl ``gather_nd``, ``gather_elements``, compiled per data and index type). A
negative index counts from the end of its axis; constant indices out of range are refused, one
read at run time out of range gives 0 (onnxruntime refuses the run)."""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import Op, register
from hetlab.devices.kernels.ops.common import (
    ANY,
    INTS,
    attr,
    const_value,
    grid1,
    i32,
    numel,
    strides,
    type_options,
)
from hetlab.graph.ir import Node, OpGraph


def index_reason(node: Node, graph: OpGraph, name: str) -> str | None:
    """Why the indices tensor ``name`` rules the node out (int32/int64 of a fixed shape)."""
    t = graph.tensors.get(name)
    if t is None or t.shape is None or t.dtype not in INTS:
        return f"{node.op_type} indices must be int32 or int64 of a fixed shape"
    return None


def out_of_range(idx: np.ndarray, dims) -> bool:
    """Whether any index (last axis of ``idx`` over ``dims``) lies outside [-dim, dim)."""
    d = np.asarray(dims, dtype=np.int64)
    return bool(np.any(idx >= d) or np.any(idx < -d))


class GatherOp(Op):
    def float_inputs(self, node: Node) -> list[int]:
        return [0]

    def dtypes(self, node: Node) -> tuple[str, ...]:
        return ANY

    def _launch(self, node: Node, ctx: Any, name: str, meta: list[int], extra: list) -> None:
        dtype = ctx.dtype(node.outputs[0])
        itype = ctx.dtype(node.inputs[1])
        opts = f"{type_options(dtype)} {type_options(itype, 'IT')}".strip()
        kern = ctx.kernel("scatter.cl", name, opts)
        n = numel(ctx.shape(node.outputs[0]))
        x = ctx.tensor_or_const(node.inputs[0], dtype)
        idx = ctx.tensor_or_const(node.inputs[1], itype)
        args = [x, idx, ctx.t(node.outputs[0]), ctx.ints(meta), *extra, i32(n)]
        ctx.launch(node, kern, *grid1(n), args)


@register
class GatherND(GatherOp):
    op_types = ("GatherND",)

    def check(self, node: Node, graph: OpGraph) -> str | None:
        r = index_reason(node, graph, node.inputs[1])
        if r:
            return r
        xs = graph.tensors[node.inputs[0]].shape
        ish = graph.tensors[node.inputs[1]].shape
        b = int(attr(node, "batch_dims", 0))
        if not ish or b < 0 or b + int(ish[-1]) > len(xs) or b >= len(ish):
            return "GatherND indices do not fit the data's rank"
        idx = const_value(graph, node.inputs[1])
        if idx is not None and out_of_range(np.asarray(idx), xs[b : b + int(ish[-1])]):
            return "GatherND index out of range"
        return None

    def build(self, node: Node, ctx: Any) -> None:
        xs, ish = ctx.shape(node.inputs[0]), ctx.shape(node.inputs[1])
        b, k = int(attr(node, "batch_dims", 0)), ish[-1]
        meta = [k, *xs[b : b + k], *strides(xs)[b : b + k]]
        extra = [i32(numel(ish[b:-1])), i32(numel(xs[b:])), i32(numel(xs[b + k :]))]
        self._launch(node, ctx, "gather_nd", meta, extra)


@register
class GatherElements(GatherOp):
    op_types = ("GatherElements",)

    def check(self, node: Node, graph: OpGraph) -> str | None:
        r = index_reason(node, graph, node.inputs[1])
        if r:
            return r
        xs = graph.tensors[node.inputs[0]].shape
        ax = int(attr(node, "axis", 0)) % len(xs)
        idx = const_value(graph, node.inputs[1])
        if idx is not None and out_of_range(np.asarray(idx)[..., None], [xs[ax]]):
            return "GatherElements index out of range"
        return None

    def build(self, node: Node, ctx: Any) -> None:
        xs, ish = ctx.shape(node.inputs[0]), ctx.shape(node.inputs[1])
        ax = int(attr(node, "axis", 0)) % len(xs)
        meta = [len(xs), ax, xs[ax], *ish, *strides(xs)]
        self._launch(node, ctx, "gather_elements", meta, [])
