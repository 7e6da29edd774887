"""ONNX RNN (forward, reverse, bidirectional; the default Tanh; layout 0), composed like
``lstm.py``: one GEMM projects every step's input (``X @ W^T + Wb + Rb``), then per step a
GEMM ``h @ R^T`` whose bias operand is that step's slice of the projection and ``rnn_cell``
(``gru.cl``: h = tanh of it, MLAS's tanh) writing h into Y[t, d]. On a CPU device with
constant weights the whole sequence is one launch (``rnn_cpu.py``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import Op, register
from hetlab.devices.kernels.ops.common import attr, i32
from hetlab.devices.kernels.ops.data_movement import copy_launch
from hetlab.devices.kernels.ops.lstm import (
    bias_and_lengths,
    input_projection,
    weight_layout,
    weights_gemm,
)
from hetlab.devices.kernels.ops.rnn_cpu import float_sequence, whole_sequence
from hetlab.graph.ir import Node, OpGraph


@register
class RNN(Op):
    op_types = ("RNN",)

    def float_inputs(self, node: Node) -> list[int]:
        return [i for i in (0, 1, 2, 3, 5) if i < len(node.inputs) and node.inputs[i]]

    def why_not(self, node: Node, graph: OpGraph) -> str | None:
        # the base checks the first output: Y, or Y_h where Y is omitted
        r = super().why_not(replace(node, outputs=[o for o in node.outputs if o]), graph)
        if r:
            return r
        acts = attr(node, "activations", None)
        if acts and [a.decode() if isinstance(a, bytes) else a for a in acts] not in (
            ["Tanh"],
            ["Tanh"] * 2,
        ):
            return "RNN with activations other than Tanh"
        if "clip" in node.attrs or int(attr(node, "layout", 0)):
            return "RNN clip/layout=1"
        ins = node.inputs + [""] * (6 - len(node.inputs))
        return bias_and_lengths("RNN", graph, ins)

    def build(self, node: Node, ctx: Any) -> None:
        if whole_sequence(ctx, node):  # a CPU device: rnn_cpu.cl, two launches in all
            float_sequence(ctx, node)
            return
        ins = node.inputs + [""] * (6 - len(node.inputs))
        outs = node.outputs + [""] * (2 - len(node.outputs))
        x, w, r, b, _, h0 = ins[:6]
        T, B, I = ctx.shape(x)
        D, H, _ = ctx.shape(w)
        Y = ctx.t(outs[0]) if outs[0] else ctx.scratch(T * D * B * H)
        Xw, Z = ctx.scratch(T * B * H), ctx.scratch(B * H)
        wl, rl = weight_layout(ctx, w, I, H), weight_layout(ctx, r, H, H)
        zeros = ctx.upload(np.zeros(B * H, dtype=np.float32))
        bias_val = ctx.const(b) if b else None
        backward = {"forward": (0,), "reverse": (1,), "bidirectional": (0, 1)}
        for d, back in enumerate(backward[attr(node, "direction", "forward")]):
            bias = None
            if bias_val is not None:
                bv = np.asarray(bias_val, dtype=np.float64)[d]
                bias = ctx.upload(bv[:H] + bv[H:])
            input_projection(ctx, node, d, ctx.tensor_or_const(x), wl, Xw, bias, (T, B, I, H, D), 1)
            prev: tuple[Any, int] = (ctx.tensor_or_const(h0), d * B * H) if h0 else (zeros, 0)
            for t in range(T - 1, -1, -1) if back else range(T):
                offs = (prev[1], d * H * H, 0, t * B * H)
                weights_gemm(ctx, node, (B, H, H), prev[0], rl, (Z, H), offs, (Xw, H))
                hoff = (t * D + d) * B * H
                args = [Z, Y, i32(hoff), i32(B * H)]
                ctx.launch(node, ctx.kernel("gru.cl", "rnn_cell"), (B * H,), None, args)
                prev = (Y, hoff)
            if outs[1]:
                copy_launch(ctx, node, Y, ctx.t(outs[1]), (B * H,), (1,), (1,), prev[1], d * B * H)
