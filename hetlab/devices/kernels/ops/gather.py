"""Gather on tensors of any kernel dtype or int8/uint8. A few constant indices (at most ``FEW``) become one
strided copy each; indices read at run time, or many constants, run eltwise.cl ``gather``
(compiled per data and index type), which counts a negative index from the end of the
axis and writes 0 for one out of range (onnxruntime refuses the run). Constant indices that
count up by one over a contiguous range of the data make the output a view of it where the
builder can (``views.py``), with no launch."""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import Op, register
from hetlab.devices.kernels.ops.common import (
    INTS,
    MOVED,
    attr,
    const_value,
    grid1,
    i32,
    numel,
    strides,
    type_options,
)
from hetlab.devices.kernels.ops.data_movement import copy_launch
from hetlab.devices.kernels.views import contiguous
from hetlab.graph.ir import Node, OpGraph

FEW = 64


def _few_constants(ctx: Any, node: Node) -> np.ndarray | None:
    idx = ctx.const(node.inputs[1])
    return None if idx is None or np.asarray(idx).size > FEW else np.asarray(idx).reshape(-1)


def _as_view(ctx: Any, node: Node, xs: tuple[int, ...], ax: int) -> bool:
    """Whether the output is now a view of the data (``views.py``): constant indices that
    count up by one select a contiguous range of it."""
    idx = ctx.const(node.inputs[1])
    if idx is None or not np.asarray(idx).size:
        return False
    idx = np.asarray(idx, dtype=np.int64).reshape(-1) % xs[ax]
    if np.any(np.diff(idx) != 1):
        return False
    box = list(xs[:ax]) + [idx.size] + list(xs[ax + 1 :])
    off = int(idx[0]) * int(np.prod(xs[ax + 1 :], dtype=np.int64))
    return contiguous(xs, box) and ctx.make_view(node.outputs[0], node.inputs[0], off)


@register
class Gather(Op):
    op_types = ("Gather",)

    def float_inputs(self, node: Node) -> list[int]:
        return [0]

    def dtypes(self, node: Node) -> tuple[str, ...]:
        return MOVED

    def check(self, node: Node, graph: OpGraph) -> str | None:
        t = graph.tensors.get(node.inputs[1]) if len(node.inputs) > 1 else None
        if t is None or t.shape is None or t.dtype not in INTS:
            return "Gather indices must be int32 or int64 of a fixed shape"
        idx = const_value(graph, node.inputs[1])
        xs = graph.tensors[node.inputs[0]].shape
        dim = xs[int(attr(node, "axis", 0)) % len(xs)]
        if idx is not None and (np.any(np.asarray(idx) >= dim) or np.any(np.asarray(idx) < -dim)):
            return "Gather index out of range"
        return None

    def build(self, node: Node, ctx: Any) -> None:
        xs = ctx.shape(node.inputs[0])
        ax = int(attr(node, "axis", 0)) % len(xs)
        if _as_view(ctx, node, xs, ax):
            return
        dtype = ctx.dtype(node.outputs[0])
        x = ctx.tensor_or_const(node.inputs[0], dtype)
        idx = _few_constants(ctx, node)
        if idx is None:
            self._runtime(node, ctx, x, xs, ax, dtype)
            return
        sx = strides(xs)
        view = list(xs[:ax]) + [len(idx)] + list(xs[ax + 1 :])
        sv = strides(view)
        block = list(xs[:ax]) + list(xs[ax + 1 :])
        for k, j in enumerate(idx):
            j = int(j) % xs[ax]
            copy_launch(
                ctx,
                node,
                x,
                ctx.t(node.outputs[0]),
                block,
                sx[:ax] + sx[ax + 1 :],
                sv[:ax] + sv[ax + 1 :],
                j * sx[ax],
                k * sv[ax],
            )

    def _runtime(self, node: Node, ctx: Any, x: Any, xs: tuple, ax: int, dtype: str) -> None:
        itype = ctx.dtype(node.inputs[1])
        idx = ctx.tensor_or_const(node.inputs[1], itype)
        c = ctx.const(node.inputs[1])
        k = numel(ctx.shape(node.inputs[1])) if c is None else int(np.asarray(c).size)
        n = numel(ctx.shape(node.outputs[0]))
        inner = numel(xs[ax + 1 :])
        opts = f"{type_options(dtype)} {type_options(itype, 'IT')}".strip()
        kern = ctx.kernel("eltwise.cl", "gather", opts)
        args = [x, idx, ctx.t(node.outputs[0]), i32(k), i32(xs[ax]), i32(inner), i32(n)]
        ctx.launch(node, kern, *grid1(n), args)
