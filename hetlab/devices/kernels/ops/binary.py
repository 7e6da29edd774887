"""Add, Sub, Mul, Div, Pow, Max, Min with full numpy broadcasting (eltwise.cl ``binary``).

A constant operand is uploaded once (converted to float32: Pow's integer exponent). Sum,
Max and Min with more than two inputs chain pairwise launches.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import Op, check_tensor, register
from hetlab.devices.kernels.ops.common import (
    bcast_strides,
    f32,
    grid1,
    i32,
    is_const,
    nd_meta,
    numel,
)
from hetlab.graph.ir import Node, OpGraph

CODES = {"Add": 0, "Sub": 1, "Mul": 2, "Div": 3, "Pow": 4, "Max": 5, "Min": 6, "Sum": 0, "PRelu": 7}


@register
class Binary(Op):
    op_types = tuple(CODES)

    def float_inputs(self, node: Node) -> list[int]:
        return [0] if node.op_type == "Pow" else list(range(len(node.inputs)))

    def check(self, node: Node, graph: OpGraph) -> str | None:
        if len([t for t in node.inputs if t]) < 1 or any(not t for t in node.inputs):
            return "omitted inputs"
        if node.op_type == "Pow":
            e = node.inputs[1]
            t = graph.tensors.get(e)
            if not is_const(graph, e) and (t is None or check_tensor(graph, e, 6, "exponent")):
                return "Pow exponent must be float32 or a constant"
        return None

    def build(self, node: Node, ctx: Any) -> None:
        code = CODES[node.op_type]
        out = ctx.out(node)
        oshape = ctx.shape(node.outputs[0])
        ins = list(node.inputs)
        if len(ins) == 1:
            ins = [ins[0], ins[0]]
            code = 5  # max(x, x) == x: a plain copy for one-input Sum/Max/Min
        act = ctx.act(node)
        cur: Any = ctx.tensor_or_const(ins[0])
        cur_shape = ctx.shape(ins[0]) if ctx.const(ins[0]) is None else np.shape(ctx.const(ins[0]))
        for j, other in enumerate(ins[1:]):
            last = j == len(ins) - 2
            b = ctx.tensor_or_const(other)
            bshape = ctx.shape(other) if ctx.const(other) is None else np.shape(ctx.const(other))
            shp = oshape if last else tuple(np.broadcast_shapes(cur_shape, bshape))
            meta = nd_meta(shp, bcast_strides(cur_shape, shp), bcast_strides(bshape, shp))
            dst = ctx.t(out) if last else ctx.scratch(numel(shp))
            k = ctx.kernel("eltwise.cl", "binary")
            g, l = grid1(numel(shp))
            a_ = act if last else (f32(1.0), f32(-3.4e38), f32(3.4e38))
            ctx.launch(
                node, k, g, l, [cur, b, dst, ctx.ints(meta), i32(numel(shp)), i32(code), *a_]
            )
            cur, cur_shape = dst, shp
