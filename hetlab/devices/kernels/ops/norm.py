"""BatchNormalization (inference; a per-channel affine when not folded into a Conv) and
Softmax/LogSoftmax (pool.cl ``softmax``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import Op, register
from hetlab.devices.kernels.ops.common import attr, cpu_rows, grid1, i32, is_const, numel
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
        gamma, beta, mean, var = (
            np.asarray(ctx.const(t), dtype=np.float64) for t in node.inputs[1:5]
        )
        s = gamma / np.sqrt(var + float(attr(node, "epsilon", 1e-5)))
        xs = ctx.shape(node.inputs[0])
        n = numel(xs)
        g, l = grid1(n)
        ctx.launch(
            node,
            ctx.kernel("eltwise.cl", "affine"),
            g,
            l,
            [
                ctx.t(node.inputs[0]),
                ctx.t(ctx.out(node)),
                ctx.upload(s),
                ctx.upload(beta - mean * s),
                i32(n),
                i32(xs[1]),
                i32(numel(xs[2:])),
                *ctx.act(node),
            ],
        )


@register
class LayerNorm(Op):
    op_types = ("LayerNormalization",)

    def check(self, node: Node, graph: OpGraph) -> str | None:
        if len([o for o in node.outputs if o]) > 1:
            return "LayerNormalization Mean/InvStdDev outputs"
        if int(attr(node, "stash_type", 1)) != 1:
            return "LayerNormalization stash_type"
        xs = graph.tensors[node.inputs[0]].shape
        L = numel(xs[int(attr(node, "axis", -1)) % len(xs) :])
        for t in node.inputs[1:3]:
            if t and numel(graph.tensors[t].shape) != L:
                return "LayerNormalization scale/bias that broadcast"
        return None

    def build(self, node: Node, ctx: Any) -> None:
        xs = ctx.shape(node.inputs[0])
        L = numel(xs[int(attr(node, "axis", -1)) % len(xs) :])
        b = node.inputs[2] if len(node.inputs) > 2 and node.inputs[2] else ""
        ctx.launch(
            node,
            ctx.kernel("pool.cl", "layernorm"),
            (numel(xs) // L * RL,),
            (RL,),
            [
                ctx.t(node.inputs[0]),
                ctx.t(node.outputs[0]),
                ctx.tensor_or_const(node.inputs[1]),
                ctx.tensor_or_const(b) if b else ctx.scratch(1),
                i32(bool(b)),
                i32(L),
                np.float32(attr(node, "epsilon", 1e-5)),
            ],
        )


def model_opset(graph: OpGraph) -> int | None:
    """The default-domain opset of the graph's model (read once from its file, cached)."""
    op = getattr(graph, "opset", None)
    if op is None and graph.model_path:
        # lazy: onnx is slow to import
        from hetlab.graph import onnx_io

        try:
            m = onnx_io.read_model(graph.model_path)
        except Exception:  # noqa: BLE001 - unreadable file: treat the opset as unknown
            return None
        op = next((int(o.version) for o in m.opset_import if o.domain in ("", "ai.onnx")), None)
        graph.opset = op  # type: ignore[attr-defined]
    return op


def softmax_geometry(
    node: Node, shape: tuple[int, ...], opset: int | None
) -> tuple[int, int] | None:
    """(L, inner) of the softmax rows, or None when the result depends on an unknown opset."""
    r = len(shape)

    def new(ax: int) -> tuple[int, int]:
        ax %= r
        return shape[ax], numel(shape[ax + 1 :])

    def old(ax: int) -> tuple[int, int]:
        return numel(shape[ax % r :]), 1

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
        if softmax_geometry(node, shape, model_opset(graph)) is None:
            return "Softmax axis meaning depends on the model's opset, which is unknown"
        return None

    def build(self, node: Node, ctx: Any) -> None:
        xs = ctx.shape(node.inputs[0])
        L, inner = softmax_geometry(node, xs, model_opset(ctx.graph))
        rows = numel(xs) // L
        args = [ctx.t(node.inputs[0]), ctx.t(node.outputs[0]), i32(L), i32(inner)]
        args.append(i32(node.op_type == "LogSoftmax"))
        if ctx.device.cpu_kernels:  # move_cpu.cl: a work-item per row
            k = ctx.kernel("move_cpu.cl", "softmax_cpu")
            ctx.launch(node, k, *cpu_rows(rows), [*args, i32(rows)])
            return
        ctx.launch(node, ctx.kernel("pool.cl", "softmax"), (rows * RL,), (RL,), args)


__all__ = ["grid1"]
