"""Ops that make values rather than move them: Cast between float32, int32, int64, bool, int8
and uint8 (eltwise.cl ``cast``: C's conversions, as onnxruntime's, so float -> integer
truncates toward zero; to int8/uint8, through int32, keeping the low 8 bits; to bool,
nonzero -> 1; a cast to the same type is a view) and to and from float16 (half.py),
ConstantOfShape (``fill``), integer Range (``range``), and Shape and Size, whose values the
fixed shapes give at build time (one small copy into the output)."""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import Op, register
from hetlab.devices.kernels.ops.common import (
    ANY,
    BYTES,
    INTS,
    MOVED,
    attr,
    grid1,
    i32,
    numel,
    scalar,
    strides,
    type_options,
)
from hetlab.devices.kernels.ops.data_movement import copy_launch
from hetlab.devices.kernels.ops.half import HALF, half_cast
from hetlab.graph.ir import Node, OpGraph


@register
class Cast(Op):
    op_types = ("Cast",)

    def float_inputs(self, node: Node) -> list[int]:
        return [0]

    def dtypes(self, node: Node) -> tuple[str, ...]:
        return MOVED

    def build(self, node: Node, ctx: Any) -> None:
        src, dst = ctx.dtype(node.inputs[0]), ctx.dtype(node.outputs[0])
        if src == dst:
            ctx.make_alias(node.outputs[0], node.inputs[0])
            return
        if HALF in (src, dst):
            half_cast(node, ctx, src, dst)
            return
        opts = f"{type_options(src, 'IT')} {type_options(dst, 'OT')}"
        opts += " -DOT_BOOL" if dst == "bool" else " -DOT_NARROW" if dst in BYTES else ""
        n = numel(ctx.shape(node.outputs[0]))
        args = [ctx.tensor_or_const(node.inputs[0], src), ctx.t(node.outputs[0]), i32(n)]
        ctx.launch(node, ctx.kernel("eltwise.cl", "cast", opts), *grid1(n), args)


@register
class ConstantOfShape(Op):
    """Its input (the shape) is never read: the output's shape is fixed in the graph."""

    op_types = ("ConstantOfShape",)

    def float_inputs(self, node: Node) -> list[int]:
        return []

    def dtypes(self, node: Node) -> tuple[str, ...]:
        return ANY

    def build(self, node: Node, ctx: Any) -> None:
        dtype = ctx.dtype(node.outputs[0])
        value = np.asarray(attr(node, "value", np.zeros(1, np.float32))).reshape(-1)[0]
        n = numel(ctx.shape(node.outputs[0]))
        args = [ctx.t(node.outputs[0]), i32(n), scalar(dtype, value)]
        ctx.launch(node, ctx.kernel("eltwise.cl", "fill", type_options(dtype)), *grid1(n), args)


@register
class Range(Op):
    """Integer Range (onnxruntime adds ``delta`` step by step: for floats that rounds
    differently from ``start + i * delta``, so float Range stays on the CPU)."""

    op_types = ("Range",)

    def dtypes(self, node: Node) -> tuple[str, ...]:
        return INTS

    def build(self, node: Node, ctx: Any) -> None:
        dtype = ctx.dtype(node.outputs[0])
        start = ctx.tensor_or_const(node.inputs[0], dtype)
        delta = ctx.tensor_or_const(node.inputs[2], dtype)
        n = numel(ctx.shape(node.outputs[0]))
        args = [start, delta, ctx.t(node.outputs[0]), i32(n)]
        ctx.launch(node, ctx.kernel("eltwise.cl", "range", type_options(dtype)), *grid1(n), args)


@register
class ShapeOf(Op):
    """Shape (with ``start``/``end``) and Size of an input of fixed shape."""

    op_types = ("Shape", "Size")

    def float_inputs(self, node: Node) -> list[int]:
        return []

    def dtypes(self, node: Node) -> tuple[str, ...]:
        return ("int64",)

    def check(self, node: Node, graph: OpGraph) -> str | None:
        t = graph.tensors.get(node.inputs[0])
        return "input has no fixed shape" if t is None or t.shape is None else None

    def build(self, node: Node, ctx: Any) -> None:
        xs = [int(d) for d in ctx.graph.tensors[node.inputs[0]].shape]
        if node.op_type == "Size":
            values = np.asarray(numel(xs), np.int64)
        else:
            end = attr(node, "end", None)
            values = np.asarray(xs[int(attr(node, "start", 0)) : end], np.int64)
        src = ctx.upload(values, dtype="int64")
        shape = list(values.shape)
        copy_launch(ctx, node, src, ctx.t(node.outputs[0]), shape, strides(shape), strides(shape))
