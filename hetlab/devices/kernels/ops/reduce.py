"""ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSumExp, ReduceLogSum, ReduceMin and
ReduceProd (reduce.cl ``reduce_more``, over pool.cl's reduce meta block), and ArgMax/ArgMin
(``arg_reduce``: int64 indices, exact).

The axes come from the attribute or, from the opsets that moved them there, the second
input (constant); ``keepdims`` only changes the output's fixed shape. With empty axes and
``noop_with_empty_axes`` each element is reduced alone: onnxruntime still applies the
op's map (|x|, x*x, log x), which a reduction over one value gives.
"""

from __future__ import annotations

from typing import Any

from hetlab.devices.kernels.ops import Op, register
from hetlab.devices.kernels.ops.common import (
    NUMERIC,
    attr,
    cpu_rows,
    grid1,
    i32,
    numel,
    type_options,
)
from hetlab.devices.kernels.ops.pool import RL, Reduce, reduce_axes, reduce_meta
from hetlab.graph.ir import Node

MODES = {
    "ReduceL1": 0,
    "ReduceL2": 1,
    "ReduceSumSquare": 2,
    "ReduceLogSumExp": 3,
    "ReduceLogSum": 4,
    "ReduceMin": 5,
    "ReduceProd": 6,
}


@register
class ReduceMore(Reduce):
    """The reductions beyond ReduceSum/Mean/Max: the same inputs and checks, their own kernel."""

    op_types = tuple(MODES)

    def build(self, node: Node, ctx: Any) -> None:
        xs = ctx.shape(node.inputs[0])
        axes = reduce_axes(node, len(xs), ctx.const)
        rm, R, nout = reduce_meta(xs, axes)
        args = [ctx.t(node.inputs[0]), ctx.t(node.outputs[0]), ctx.ints(rm), i32(R)]
        args.append(i32(MODES[node.op_type]))
        if ctx.device.cpu_kernels:  # move_cpu.cl: a work-item per output
            k = ctx.kernel("move_cpu.cl", "reduce_more_cpu")
            ctx.launch(node, k, *cpu_rows(nout), [*args, i32(nout)])
            return
        ctx.launch(node, ctx.kernel("reduce.cl", "reduce_more"), (nout * RL,), (RL,), args)


@register
class ArgReduce(Op):
    """ArgMax and ArgMin of float32, int32 or int64 data along ``axis``; ties go to the
    first index, or the last with ``select_last_index``."""

    op_types = ("ArgMax", "ArgMin")

    def float_inputs(self, node: Node) -> list[int]:
        return [0]

    def dtypes(self, node: Node) -> tuple[str, ...]:
        return NUMERIC

    def build(self, node: Node, ctx: Any) -> None:
        xs = ctx.shape(node.inputs[0])
        ax = int(attr(node, "axis", 0)) % len(xs)
        L, inner = xs[ax], numel(xs[ax + 1 :])
        n = numel(xs) // L
        dtype = ctx.dtype(node.inputs[0])
        k = ctx.kernel("reduce.cl", "arg_reduce", type_options(dtype))
        args = [ctx.t(node.inputs[0]), ctx.t(node.outputs[0]), i32(L), i32(inner), i32(n)]
        args += [i32(node.op_type == "ArgMax"), i32(int(attr(node, "select_last_index", 0)))]
        ctx.launch(node, k, *grid1(n), args)
