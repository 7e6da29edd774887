"""Unary elementwise ops (eltwise.cl ``unary``): activations and math functions; Neg and
Abs on int32/int64 and Not on bools run ``unary_t``, compiled per type; IsNaN and IsInf
(float32 to bool) run ``fclass``.

Relu, LeakyRelu and Clip are the epilogue ``y = clamp(x < 0 ? x * slope : x, lo, hi)`` that
every producing kernel also applies, so they fuse into their producer (see builder.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import FLOAT, Op, check_tensor, register
from hetlab.devices.kernels.ops.common import (
    NUMERIC,
    attr,
    cpu_grid1,
    f32,
    grid1,
    i32,
    is_const,
    numel,
    type_options,
)
from hetlab.graph.ir import Node, OpGraph

FMAX = float(np.finfo(np.float32).max)
CODES = {
    "Relu": 0,
    "LeakyRelu": 0,
    "Clip": 0,
    "Sigmoid": 1,
    "HardSigmoid": 2,
    "HardSwish": 3,
    "Tanh": 4,
    "Exp": 5,
    "Sqrt": 6,
    "Erf": 7,
    "Neg": 8,
    "Abs": 9,
    "Log": 10,
    "Reciprocal": 11,
    "Softplus": 12,
    "Elu": 13,
    "Gelu": 14,
    "Floor": 16,
    "Ceil": 17,
    "Round": 18,
    "Sin": 19,
    "Cos": 20,
    "Tan": 21,
    "Asin": 22,
    "Acos": 23,
    "Atan": 24,
    "Sinh": 25,
    "Cosh": 26,
    "Asinh": 27,
    "Acosh": 28,
    "Atanh": 29,
    "Sign": 30,
}
TYPED = {"Neg": 0, "Abs": 1, "Not": 2}  # eltwise.cl unary_t


def act_params(node: Node, ctx: Any) -> tuple[np.float32, np.float32, np.float32] | None:
    """(slope, lo, hi) of a Relu/LeakyRelu/Clip node, or None when its bounds aren't constant."""
    if node.op_type == "Relu":
        return f32(0.0), f32(-FMAX), f32(FMAX)
    if node.op_type == "LeakyRelu":
        return f32(attr(node, "alpha", 0.01)), f32(-FMAX), f32(FMAX)
    if node.op_type == "Clip":
        lo, hi = attr(node, "min", -FMAX), attr(node, "max", FMAX)
        for i, name in ((1, "lo"), (2, "hi")):
            if len(node.inputs) > i and node.inputs[i]:
                v = ctx.const(node.inputs[i])
                if v is None:
                    return None
                if name == "lo":
                    lo = float(np.asarray(v).reshape(-1)[0])
                else:
                    hi = float(np.asarray(v).reshape(-1)[0])
        return f32(1.0), f32(max(lo, -FMAX)), f32(min(hi, FMAX))
    return None


@register
class Unary(Op):
    op_types = (*CODES, "Not")

    def float_inputs(self, node: Node) -> list[int]:
        return [0]

    def dtypes(self, node: Node) -> tuple[str, ...]:
        if node.op_type == "Not":
            return ("bool",)
        return NUMERIC if node.op_type in TYPED else FLOAT

    def check(self, node: Node, graph: OpGraph) -> str | None:
        if node.op_type == "Gelu" and attr(node, "approximate", "none") not in ("none", "tanh"):
            return "Gelu approximate mode"
        if node.op_type == "Clip":
            for t in node.inputs[1:3]:
                if t and not is_const(graph, t):
                    return "Clip min/max must be constants"
        return None

    def build(self, node: Node, ctx: Any) -> None:
        n = numel(ctx.shape(node.inputs[0]))
        dtype = ctx.dtype(node.inputs[0])
        if dtype != "float32":
            k = ctx.kernel("eltwise.cl", "unary_t", type_options(dtype))
            args = [ctx.t(node.inputs[0]), ctx.t(ctx.out(node)), i32(n), i32(TYPED[node.op_type])]
            ctx.launch(node, k, *grid1(n), args)
            return
        code = CODES[node.op_type]
        act = act_params(node, ctx) if code == 0 else ctx.act(node)
        p0, p1 = 0.0, 0.0
        if node.op_type == "HardSigmoid":
            p0, p1 = attr(node, "alpha", 0.2), attr(node, "beta", 0.5)
        elif node.op_type == "Elu":
            p0 = attr(node, "alpha", 1.0)
        elif node.op_type == "Gelu" and attr(node, "approximate", "none") == "tanh":
            code = 15
        if ctx.device.cpu_kernels:  # eltwise_cpu.cl: 16 elements per work-item, OP built in
            k = ctx.kernel("eltwise_cpu.cl", "unary_cpu", f"-DOP={code}")
            g, l = cpu_grid1(n)
        else:
            k = ctx.kernel("eltwise.cl", "unary")
            g, l = grid1(n)
        ctx.launch(
            node,
            k,
            g,
            l,
            [
                ctx.t(node.inputs[0]),
                ctx.t(ctx.out(node)),
                i32(n),
                i32(code),
                f32(p0),
                f32(p1),
                *act,
            ],
        )


@register
class Classify(Op):
    """IsNaN and IsInf (``detect_negative``/``detect_positive``) of a float32 tensor."""

    op_types = ("IsNaN", "IsInf")

    def why_not(self, node: Node, graph: OpGraph) -> str | None:
        return check_tensor(graph, node.inputs[0], self.max_rank, "input 0") or check_tensor(
            graph, node.outputs[0], self.max_rank, "output", ("bool",)
        )

    def build(self, node: Node, ctx: Any) -> None:
        n = numel(ctx.shape(node.inputs[0]))
        inf = node.op_type == "IsInf"
        flags = [
            int(attr(node, k, 1)) if inf else 0 for k in ("detect_negative", "detect_positive")
        ]
        args = [ctx.t(node.inputs[0]), ctx.t(node.outputs[0]), i32(n), i32(int(inf))]
        args += [i32(f) for f in flags]
        ctx.launch(node, ctx.kernel("eltwise.cl", "fclass"), *grid1(n), args)
