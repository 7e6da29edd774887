"""MaxPool, AveragePool (count_include_pad, ceil_mode via the fixed output shape), global
pools and ReduceMean/ReduceSum/ReduceMax (pool.cl), LRN."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import Op, register
from hetlab.devices.kernels.ops.common import (
    attr,
    conv_pads,
    cpu_rows,
    f32,
    grid1,
    i32,
    is_const,
    numel,
    strides,
)
from hetlab.graph.ir import Node, OpGraph

RL = 64


@register
class Pool(Op):
    op_types = ("MaxPool", "AveragePool")

    def float_inputs(self, node: Node) -> list[int]:
        return [0]

    def check(self, node: Node, graph: OpGraph) -> str | None:
        r = len(graph.tensors[node.inputs[0]].shape)
        if r not in (3, 4):
            return f"{node.op_type} on rank-{r} input (only 1-D and 2-D pools)"
        if len(node.outputs) > 1 and node.outputs[1]:
            return "MaxPool Indices output"
        if int(attr(node, "storage_order", 0)):
            return "MaxPool storage_order=1"
        return None

    def build(self, node: Node, ctx: Any) -> None:
        xs, ys = ctx.shape(node.inputs[0]), ctx.shape(node.outputs[0])
        r = len(xs) - 2
        k = list(attr(node, "kernel_shape"))
        s = list(attr(node, "strides", [1] * r))
        d = list(attr(node, "dilations", [1] * r))
        pb, pe = conv_pads(node, xs[2:], ys[2:], k, s, d)
        if r == 1:
            pp = [1, xs[2], 1, ys[2], 1, k[0], 1, s[0], 0, pb[0], 1, d[0], 0, pe[0]]
        else:
            pp = [
                xs[2],
                xs[3],
                ys[2],
                ys[3],
                k[0],
                k[1],
                s[0],
                s[1],
                pb[0],
                pb[1],
                d[0],
                d[1],
                pe[0],
                pe[1],
            ]
        mode = 0 if node.op_type == "MaxPool" else 1 + int(attr(node, "count_include_pad", 0))
        y, yoff = ctx.dest(node)
        args = [ctx.t(node.inputs[0]), y, ctx.ints(pp), i32(mode), i32(yoff)]
        if ctx.device.cpu_kernels:  # move_cpu.cl: a work-item per output row
            rows = pp[2] * xs[0] * xs[1]
            built = zip(("KH", "KW", "SH", "SW", "DH", "DW"), pp[4:8] + pp[10:12], strict=True)
            k = ctx.kernel("move_cpu.cl", "pool2d_cpu", " ".join(f"-D{m}={v}" for m, v in built))
            ctx.launch(node, k, *cpu_rows(rows), [*args, i32(rows)])
            return
        ctx.launch(node, ctx.kernel("pool.cl", "pool2d"), (pp[3], pp[2], xs[0] * xs[1]), None, args)


def _merge(shape: Sequence[int], st: Sequence[int]) -> tuple[list[int], list[int]]:
    out: list[list[int]] = []
    for n, s in zip(shape, st, strict=False):
        if n == 1:
            continue
        if out and out[-1][1] == s * n:
            out[-1] = [out[-1][0] * n, s]
        else:
            out.append([n, s])
    return [o[0] for o in out], [o[1] for o in out]


def reduce_meta(xs: Sequence[int], axes: Sequence[int]) -> tuple[list[int], int, int]:
    """pool.cl's reduce meta block of a reduction of shape ``xs`` over ``axes``, the count R
    of values reduced into each output and the number of outputs."""
    st = strides(xs)
    keep = [i for i in range(len(xs)) if i not in axes]
    os_, ost = _merge([xs[i] for i in keep], [st[i] for i in keep])
    rs, rst = _merge([xs[i] for i in axes], [st[i] for i in axes])
    if len(os_) > 6 or len(rs) > 6:
        raise ValueError("too many dims")

    def pad6(v: list[int], fill: int) -> list[int]:
        return [fill] * (6 - len(v)) + v

    rm = [len(os_)] + pad6(os_, 1) + pad6(ost, 0) + [len(rs)] + pad6(rs, 1) + pad6(rst, 0)
    return rm, numel([xs[i] for i in axes]), numel([xs[i] for i in keep])


def reduce_launch(
    ctx: Any, node: Node, x: str, y: str, axes: Sequence[int], mode: int, mean: bool
) -> None:
    """y = reduction of x over ``axes`` (sum: mode 0, max: mode 1, sum of squares: mode 2;
    mean scales by 1/R); on a CPU device move_cpu.cl's ``reduce_cpu``, a work-item per
    output."""
    rm, R, nout = reduce_meta(ctx.shape(x), axes)
    args = [ctx.t(x), ctx.t(y), ctx.ints(rm), i32(R), i32(mode), f32(1.0 / R if mean else 1.0)]
    if ctx.device.cpu_kernels:
        k = ctx.kernel("move_cpu.cl", "reduce_cpu")
        ctx.launch(node, k, *cpu_rows(nout), [*args, i32(nout)])
        return
    ctx.launch(
        node,
        ctx.kernel("pool.cl", "reduce"),
        (nout * RL,),
        (RL,),
        args,
    )


@register
class GlobalPool(Op):
    op_types = ("GlobalAveragePool", "GlobalMaxPool")

    def build(self, node: Node, ctx: Any) -> None:
        r = len(ctx.shape(node.inputs[0]))
        avg = node.op_type == "GlobalAveragePool"
        reduce_launch(
            ctx, node, node.inputs[0], node.outputs[0], list(range(2, r)), 0 if avg else 1, avg
        )


REDUCE = {"ReduceMean": (0, True), "ReduceSum": (0, False), "ReduceMax": (1, False)}


def reduce_axes(node: Node, rank: int, get) -> list[int] | None:
    if len(node.inputs) > 1 and node.inputs[1]:
        v = get(node.inputs[1])
        if v is None:
            return None
        axes = [int(a) for a in np.asarray(v).reshape(-1)]
    else:
        axes = attr(node, "axes", None)
        axes = [] if axes is None else [int(a) for a in axes]
    if not axes:
        return [] if int(attr(node, "noop_with_empty_axes", 0)) else list(range(rank))
    return sorted({a % rank for a in axes})


@register
class Reduce(Op):
    op_types = tuple(REDUCE)

    def float_inputs(self, node: Node) -> list[int]:
        return [0]

    def check(self, node: Node, graph: OpGraph) -> str | None:
        if len(node.inputs) > 1 and node.inputs[1] and not is_const(graph, node.inputs[1]):
            return f"{node.op_type} axes must be constant"
        return None

    def build(self, node: Node, ctx: Any) -> None:
        xs = ctx.shape(node.inputs[0])
        axes = reduce_axes(node, len(xs), ctx.const)
        if not axes:
            ctx.make_alias(node.outputs[0], node.inputs[0])
            return
        mode, mean = REDUCE[node.op_type]
        x = ctx.square_of.get(node.id)  # the input of a Pow(x, 2) fused in (squares.py)
        if x is not None:
            mode = 2
        reduce_launch(ctx, node, x or node.inputs[0], node.outputs[0], axes, mode, mean)


@register
class LRN(Op):
    op_types = ("LRN",)

    def build(self, node: Node, ctx: Any) -> None:
        xs = ctx.shape(node.inputs[0])
        n = numel(xs)
        g, l = grid1(n)
        ctx.launch(
            node,
            ctx.kernel("pool.cl", "lrn"),
            g,
            l,
            [
                ctx.t(node.inputs[0]),
                ctx.t(node.outputs[0]),
                i32(n),
                i32(xs[1]),
                i32(numel(xs[2:])),
                i32(attr(node, "size")),
                f32(attr(node, "alpha", 1e-4)),
                f32(attr(node, "beta", 0.75)),
                f32(attr(node, "bias", 1.0)),
            ],
        )
