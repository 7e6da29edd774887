"""BatchNormalization (inference; a per-channel affine when not folded into a Conv) and
Softmax/LogSoftmax (pool.cl ``softmax``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.opencl.ops import Op, register
from hetlab.devices.opencl.ops.common import attr, grid1, i32, is_const, numel
from hetlab.graph.ir import Node, OpGraph

RL = 64


@register
class BatchNorm(Op):
    op_types = ("BatchNormalization",)

    def float_inputs(self, node: Node) -> list[int]:
        return [0]

    def check(self, node: Node, graph: OpGraph) -> str | None:
        if int(attr(node, "training_mode", 0)) or len([o for o in node.outputs if o]) > 1:
            return "BatchNormalization in training mode"
        if not all(is_const(graph, t) for t in node.inputs[1:5]):
            return "BatchNormalization scale/bias/mean/var must be constants"
        if len(graph.tensors[node.inputs[0]].shape) < 2:
            return "BatchNormalization on a rank < 2 input"
        return None

    def build(self, node: Node, ctx: Any) -> None:
        gamma, beta, mean, var = (np.asarray(ctx.const(t), dtype=np.float64) for t in node.inputs[1:5])
        s = gamma / np.sqrt(var + float(attr(node, "epsilon", 1e-5)))
        xs = ctx.shape(node.inputs[0])
        n = numel(xs)
        g, l = grid1(n)
        ctx.launch(node, ctx.kernel("eltwise.cl", "affine"), g, l, [
            ctx.t(node.inputs[0]), ctx.t(ctx.out(node)), ctx.upload(s), ctx.upload(beta - mean * s),
            i32(n), i32(xs[1]), i32(numel(xs[2:])), *ctx.act(node)])


def softmax_geometry(node: Node, shape: tuple[int, ...], opset: int | None) -> tuple[int, int] | None:
    """(L, inner) of the softmax rows, or None when the result depends on an unknown opset."""
    r = len(shape)

    def new(ax: int) -> tuple[int, int]:
        ax %= r
        return shape[ax], numel(shape[ax + 1:])

    def old(ax: int) -> tuple[int, int]:
        return numel(shape[ax % r:]), 1

    a = node.attrs.get("axis")
    if opset is not None:
        return new(-1 if a is None else int(a)) if opset >= 13 else old(1 if a is None else int(a))
    g13, g11 = new(-1 if a is None else int(a)), old(1 if a is None else int(a))
    return g13 if g13 == g11 else None


@register
class Softmax(Op):
    op_types = ("Softmax", "LogSoftmax")

    def check(self, node: Node, graph: OpGraph) -> str | None:
        shape = tuple(graph.tensors[node.inputs[0]].shape)
        if softmax_geometry(node, shape, getattr(graph, "opset", None)) is None:
            return "Softmax axis meaning depends on the model's opset, which is unknown"
        return None

    def build(self, node: Node, ctx: Any) -> None:
        xs = ctx.shape(node.inputs[0])
        L, inner = softmax_geometry(node, xs, getattr(ctx.graph, "opset", None))
        rows = numel(xs) // L
        ctx.launch(node, ctx.kernel("pool.cl", "softmax"), (rows * RL,), (RL,), [
            ctx.t(node.inputs[0]), ctx.t(node.outputs[0]), i32(L), i32(inner),
            i32(node.op_type == "LogSoftmax")])


__all__ = ["grid1"]
