"""ONNX LSTM (forward, reverse, bidirectional; default activations; peepholes; layout 0).

Per direction: one GEMM for the input projection of all time steps (``X @ W^T + Wb + Rb``),
then per step a GEMM ``h @ R^T`` whose bias operand is that step's slice of the projection,
followed by ``lstm_cell`` (gates i, o, f, c) writing h straight into Y[t, d].
Where the device runs the whole sequence in one launch (``recurrence.py``: ``rnn_cpu.py``,
``rnn_gpu.py``), these launches do not run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import register
from hetlab.devices.kernels.ops.common import attr, f32, grid1, i32
from hetlab.devices.kernels.ops.data_movement import copy_launch
from hetlab.devices.kernels.ops.recurrence import Recurrence, input_projection, weights_gemm
from hetlab.graph.ir import Node


@register
class LSTM(Recurrence):
    op_types = ("LSTM",)
    float_ins = (0, 1, 2, 3, 5, 6, 7)
    activations = ("Sigmoid", "Tanh", "Tanh")
    flags = ("input_forget", "layout")
    n_inputs = 8
    n_outputs = 3

    def build(self, node: Node, ctx: Any) -> None:
        if self.whole(node, ctx):
            return
        s = self.steps(node, ctx)
        x, _, _, b, _, h0, c0 = s.ins[:7]
        T, B, _, H, D = s.dims
        G4 = 4 * H
        direction = attr(node, "direction", "forward")
        bias_val = ctx.const(b) if b else None
        Xw = ctx.scratch(T * B * G4)
        Z = ctx.scratch(B * G4)
        c = ctx.scratch(B * H)
        for d in range(D):
            bias = None
            if bias_val is not None:
                bv = np.asarray(bias_val, dtype=np.float64)[d]
                bias = ctx.upload(bv[:G4] + bv[G4:])
            input_projection(ctx, node, d, ctx.t(x), s.wl, Xw, bias, s.dims)
            if c0:
                copy_launch(ctx, node, ctx.t(c0), c, (B * H,), (1,), (1,), d * B * H, 0)
            else:
                g, l = grid1(B * H)
                ctx.launch(node, ctx.kernel("eltwise.cl", "fill"), g, l, [c, i32(B * H), f32(0.0)])
            steps = (
                range(T)
                if direction == "forward" or (direction == "bidirectional" and d == 0)
                else range(T - 1, -1, -1)
            )
            prev: tuple[Any, int] = (ctx.t(h0), d * B * H) if h0 else (s.zeros, 0)
            for t in steps:
                prev = _step(ctx, node, d, t, prev, s.rl, (Xw, Z, c, s.Y), s.dims)
            if s.outs[1]:
                copy_launch(
                    ctx, node, s.Y, ctx.t(s.outs[1]), (B * H,), (1,), (1,), prev[1], d * B * H
                )
            if s.outs[2]:
                copy_launch(ctx, node, c, ctx.t(s.outs[2]), (B * H,), (1,), (1,), 0, d * B * H)


def _step(
    ctx: Any,
    node: Node,
    d: int,
    t: int,
    prev: tuple[Any, int],
    rl: tuple[Any, int, int],
    bufs: tuple[Any, Any, Any, Any],
    dims: tuple,
) -> tuple[Any, int]:
    """Step ``t`` of direction ``d``: Z = h @ R[d] + Xw[t], then the cell writes Y[t, d] and c;
    returns where the new h lies (buffer, offset)."""
    Xw, Z, c, Y = bufs
    _, B, _, H, D = dims
    G4 = 4 * H
    offs = (prev[1], d * G4 * H, 0, t * B * G4)
    weights_gemm(ctx, node, (B, G4, H), prev[0], rl, (Z, G4), offs, (Xw, G4))
    hoff = (t * D + d) * B * H
    args = [Z, c, Y, i32(H), i32(hoff)]
    peep = node.inputs[7] if len(node.inputs) > 7 else ""
    if peep:  # gru.cl's cell with peepholes: i and f see the old c, o the new one
        args += [ctx.tensor_or_const(peep), i32(d * 3 * H)]
        ctx.launch(node, ctx.kernel("gru.cl", "lstm_cell_peep"), (H, B), None, args)
    else:
        ctx.launch(node, ctx.kernel("conv_misc.cl", "lstm_cell"), (H, B), None, args)
    return Y, hoff
