"""ONNX RNN (forward, reverse, bidirectional; the default Tanh; layout 0), composed like
``lstm.py``: one GEMM projects every step's input (``X @ W^T + Wb + Rb``), then per step a
GEMM ``h @ R^T`` whose bias operand is that step's slice of the projection and ``rnn_cell``
(``gru.cl``: h = tanh of it, MLAS's tanh) writing h into Y[t, d]. With constant weights the
whole sequence is one launch on a CPU device (``rnn_cpu.py``) and, where a step fits one
work-group, on a GPU (``rnn_gpu.py``; ``recurrence.py`` chooses).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import register
from hetlab.devices.kernels.ops.common import attr, i32
from hetlab.devices.kernels.ops.data_movement import copy_launch
from hetlab.devices.kernels.ops.recurrence import Recurrence, input_projection, weights_gemm
from hetlab.graph.ir import Node


@register
class RNN(Recurrence):
    op_types = ("RNN",)
    activations = ("Tanh",)

    def build(self, node: Node, ctx: Any) -> None:
        if self.whole(node, ctx):
            return
        s = self.steps(node, ctx)
        x, _, _, b, _, h0 = s.ins[:6]
        T, B, _, H, D = s.dims
        Xw, Z = ctx.scratch(T * B * H), ctx.scratch(B * H)
        bias_val = ctx.const(b) if b else None
        backward = {"forward": (0,), "reverse": (1,), "bidirectional": (0, 1)}
        for d, back in enumerate(backward[attr(node, "direction", "forward")]):
            bias = None
            if bias_val is not None:
                bv = np.asarray(bias_val, dtype=np.float64)[d]
                bias = ctx.upload(bv[:H] + bv[H:])
            input_projection(ctx, node, d, ctx.tensor_or_const(x), s.wl, Xw, bias, s.dims, 1)
            prev: tuple[Any, int] = (ctx.tensor_or_const(h0), d * B * H) if h0 else (s.zeros, 0)
            for t in range(T - 1, -1, -1) if back else range(T):
                offs = (prev[1], d * H * H, 0, t * B * H)
                weights_gemm(ctx, node, (B, H, H), prev[0], s.rl, (Z, H), offs, (Xw, H))
                hoff = (t * D + d) * B * H
                args = [Z, s.Y, i32(hoff), i32(B * H)]
                ctx.launch(node, ctx.kernel("gru.cl", "rnn_cell"), (B * H,), None, args)
                prev = (s.Y, hoff)
            if s.outs[1]:
                copy_launch(
                    ctx, node, s.Y, ctx.t(s.outs[1]), (B * H,), (1,), (1,), prev[1], d * B * H
                )
