"""Two-operand elementwise ops with full numpy broadcasting (eltwise.cl).

Float32 Add, Sub, Mul, Div, Pow, Max, Min, Sum, PRelu and Mod (fmod=1) run ``binary``, with
the fused activation epilogue; int32/int64 Add, Sub, Mul, Div (truncating), Mod, Max and
Min run ``binary_int``, compiled per type. Comparisons and And/Or/Xor write bools
(``compare``), Where selects (``where_sel``). A constant operand is uploaded once, as the
op's type (Pow's integer exponent as float32). Sum, Max and Min with more than two inputs
chain pairwise launches. Pow by a one-element exponent of 2 or 3 multiplies (``x * x``,
``x * x * x``) as onnxruntime does: ``pow`` may be an ulp away from that, and one ulp can flip
a later rounding (a DynamicQuantizeLinear tie, a truncating Cast).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import FLOAT, Op, check_tensor, register
from hetlab.devices.kernels.ops.common import (
    ANY,
    NUMERIC,
    attr,
    bcast_strides,
    cpu_grid1,
    f32,
    grid1,
    i32,
    is_const,
    nd_meta,
    numel,
    type_options,
)
from hetlab.graph.ir import Node, OpGraph

NO_ACT = (f32(1.0), f32(-3.4e38), f32(3.4e38))
CODES = {"Add": 0, "Sub": 1, "Mul": 2, "Div": 3, "Pow": 4, "Max": 5, "Min": 6, "Sum": 0, "PRelu": 7}
INT_CODES = {"Add": 0, "Sub": 1, "Mul": 2, "Div": 3, "Max": 4, "Min": 5}
COMPARE = {
    "Equal": 0,
    "Less": 1,
    "Greater": 2,
    "LessOrEqual": 3,
    "GreaterOrEqual": 4,
    "And": 5,
    "Or": 6,
    "Xor": 7,
}


def _operand(ctx: Any, name: str, dtype: str) -> tuple[Any, tuple[int, ...]]:
    c = ctx.const(name)
    return ctx.tensor_or_const(name, dtype), ctx.shape(name) if c is None else np.shape(c)


def pairwise(
    ctx: Any,
    node: Node,
    kernel: tuple[str, str],
    ins: list[str],
    dtype: str,
    tail: Callable[[bool], list],
    cpu: tuple[str, str] | None = None,
) -> None:
    """Fold ``ins`` left to right with eltwise.cl's ``kernel`` (name, build options)
    ``(a, b, dst, meta, n, *tail(last))``, one kernel object per launch (each holds its own
    arguments); constant operands are uploaded and intermediate results kept as ``dtype``,
    the last result goes to the output. ``cpu``: eltwise_cpu.cl's kernel of the same
    arguments that a CPU device runs instead (16 elements a work-item)."""
    on_cpu = cpu is not None and ctx.device.cpu_kernels
    file, kernel = ("eltwise_cpu.cl", cpu) if on_cpu else ("eltwise.cl", kernel)
    oshape = ctx.shape(node.outputs[0])
    cur, cur_shape = _operand(ctx, ins[0], dtype)
    for j, other in enumerate(ins[1:]):
        last = j == len(ins) - 2
        b, bshape = _operand(ctx, other, dtype)
        shp = oshape if last else tuple(np.broadcast_shapes(cur_shape, bshape))
        meta = nd_meta(shp, bcast_strides(cur_shape, shp), bcast_strides(bshape, shp))
        dst = ctx.t(ctx.out(node)) if last else ctx.scratch(numel(shp), dtype)
        g, l = cpu_grid1(numel(shp)) if on_cpu else grid1(numel(shp))
        k = ctx.kernel(file, *kernel)
        ctx.launch(node, k, g, l, [cur, b, dst, ctx.ints(meta), i32(numel(shp)), *tail(last)])
        cur, cur_shape = dst, shp


def _numel_of(ctx: Any, name: str) -> int:
    c = ctx.const(name)
    return numel(ctx.shape(name) if c is None else np.shape(c))


@register
class Binary(Op):
    op_types = (*CODES, "Mod")

    def float_inputs(self, node: Node) -> list[int]:
        return [0] if node.op_type == "Pow" else list(range(len(node.inputs)))

    def dtypes(self, node: Node) -> tuple[str, ...]:
        return FLOAT if node.op_type in ("Pow", "PRelu", "Sum") else NUMERIC

    def check(self, node: Node, graph: OpGraph) -> str | None:
        if len([t for t in node.inputs if t]) < 1 or any(not t for t in node.inputs):
            return "omitted inputs"
        if node.op_type == "Pow":
            e = node.inputs[1]
            t = graph.tensors.get(e)
            if not is_const(graph, e) and (t is None or check_tensor(graph, e, 6, "exponent")):
                return "Pow exponent must be float32 or a constant"
        floats = graph.tensors[node.inputs[0]].dtype in ("float32", "float16")
        if node.op_type == "Mod" and floats and not int(attr(node, "fmod", 0)):
            return "Mod of floats needs fmod=1"
        return None

    def build(self, node: Node, ctx: Any) -> None:
        ins = list(node.inputs)
        dtype = ctx.dtype(node.outputs[0])
        fmod = int(attr(node, "fmod", 0))
        if dtype != "float32":
            code = 6 + fmod if node.op_type == "Mod" else INT_CODES[node.op_type]
            if len(ins) == 1:
                ins, code = [ins[0], ins[0]], 4  # max(x, x) == x: one-input Max/Min
            kernel = ("binary_int", type_options(dtype))
            pairwise(ctx, node, kernel, ins, dtype, lambda last: [i32(code)])
            return
        code = 8 if node.op_type == "Mod" else CODES[node.op_type]
        if node.op_type == "Pow" and _numel_of(ctx, ins[1]) == 1:
            code = 9
        if len(ins) == 1:
            ins, code = [ins[0], ins[0]], 5
        act = ctx.act(node)
        pairwise(
            ctx,
            node,
            ("binary", ""),
            ins,
            dtype,
            lambda last: [i32(code), *(act if last else NO_ACT)],
            cpu=("binary_cpu", f"-DOP={code}"),
        )


@register
class Compare(Op):
    """Equal, Less, Greater, LessOrEqual, GreaterOrEqual on float32/int32/int64 (Equal also
    on bools) and And, Or, Xor on bools: a bool output."""

    op_types = tuple(COMPARE)

    def dtypes(self, node: Node) -> tuple[str, ...]:
        return ANY

    def build(self, node: Node, ctx: Any) -> None:
        a = node.inputs[0] if ctx.const(node.inputs[0]) is None else node.inputs[1]
        dtype = ctx.dtype(a)
        code = COMPARE[node.op_type]
        kernel = ("compare", type_options(dtype))
        pairwise(ctx, node, kernel, list(node.inputs), dtype, lambda last: [i32(code)])


@register
class Where(Op):
    """``Where(cond, a, b)`` over any kernel dtype, all three broadcast."""

    op_types = ("Where",)

    def dtypes(self, node: Node) -> tuple[str, ...]:
        return ANY

    def build(self, node: Node, ctx: Any) -> None:
        ys = ctx.shape(node.outputs[0])
        dtype = ctx.dtype(node.outputs[0])
        (c, cs), (a, as_), (b, bs) = (
            _operand(ctx, t, d) for t, d in zip(node.inputs, ("bool", dtype, dtype), strict=True)
        )
        mca = nd_meta(ys, bcast_strides(cs, ys), bcast_strides(as_, ys))
        mb = nd_meta(ys, bcast_strides(bs, ys), bcast_strides(bs, ys))
        k = ctx.kernel("eltwise.cl", "where_sel", type_options(dtype))
        g, l = grid1(numel(ys))
        ctx.launch(
            node,
            k,
            g,
            l,
            [c, a, b, ctx.t(ctx.out(node)), ctx.ints(mca), ctx.ints(mb), i32(numel(ys))],
        )
