"""Pad (constant, reflect and edge modes) on tensors of any kernel dtype, one launch that
reads each output element's source index; pads and the constant value must be constants."""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import register
from hetlab.devices.kernels.ops.common import (
    attr,
    grid1,
    i32,
    is_const,
    numel,
    scalar,
    type_options,
)
from hetlab.devices.kernels.ops.data_movement import Move
from hetlab.graph.ir import Node, OpGraph

PAD_MODES = {"constant": 0, "reflect": 1, "edge": 2}


@register
class Pad(Move):
    op_types = ("Pad",)

    def check(self, node: Node, graph: OpGraph) -> str | None:
        if attr(node, "mode", "constant") not in PAD_MODES:
            return f"Pad mode {attr(node, 'mode')!r}"
        for t in node.inputs[1:]:
            if t and not is_const(graph, t):
                return "Pad pads/value/axes must be constants"
        return None

    def build(self, node: Node, ctx: Any) -> None:
        xs, ys = ctx.shape(node.inputs[0]), ctx.shape(node.outputs[0])
        r = len(xs)
        if len(node.inputs) > 1 and node.inputs[1]:
            pads = [int(v) for v in np.asarray(ctx.const(node.inputs[1])).reshape(-1)]
            cv = ctx.const(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] else None
            value = 0.0 if cv is None else float(np.asarray(cv).reshape(-1)[0])
            axes_in = ctx.const(node.inputs[3]) if len(node.inputs) > 3 and node.inputs[3] else None
        else:
            pads = [int(v) for v in attr(node, "pads", [0] * 2 * r)]
            value, axes_in = float(attr(node, "value", 0.0)), None
        axes = (
            list(range(r))
            if axes_in is None
            else [int(a) % r for a in np.asarray(axes_in).reshape(-1)]
        )
        begin = [0] * r
        for i, a in enumerate(axes):
            begin[a] = pads[i]
        lead = 6 - r
        pm = [r] + [1] * lead + list(ys) + [1] * lead + list(xs) + [0] * lead + begin
        n = numel(ys)
        g, l = grid1(n)
        ctx.launch(
            node,
            ctx.kernel("eltwise.cl", "pad", type_options(ctx.dtype(node.outputs[0]))),
            g,
            l,
            [
                ctx.t(node.inputs[0]),
                ctx.t(node.outputs[0]),
                ctx.ints(pm),
                i32(n),
                i32(PAD_MODES[attr(node, "mode", "constant")]),
                scalar(ctx.dtype(node.outputs[0]), value),
            ],
        )
