"""ONNX GRU (forward, reverse, bidirectional; linear_before_reset 0 and 1; default
activations; layout 0), composed like ``lstm.py``.

Per direction, one GEMM projects every step's input at once: Xw = X @ W^T + Wb, plus the
recurrent biases that add outside any gate product (Rb_z, Rb_r, and Rb_h when
linear_before_reset=0). Per step, with linear_before_reset=1: one GEMM Z = h @ R^T (+ Rb_h
on the h gate) and ``gru_cell``, where n = tanh(Xw_h + r * Z_h). With linear_before_reset=0:
a GEMM Z_zr = h @ R_zr^T, ``gru_reset`` forms r * h, a GEMM Z_h = (r * h) @ R_h^T, then
``gru_cell`` with n = tanh(Xw_h + Z_h). The cell writes h straight into Y[t, d].
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
class GRU(Op):
    op_types = ("GRU",)

    def float_inputs(self, node: Node) -> list[int]:
        return [i for i in (0, 1, 2, 3, 5) if i < len(node.inputs) and node.inputs[i]]

    def why_not(self, node: Node, graph: OpGraph) -> str | None:
        # the base checks the first output: Y, or Y_h where Y is omitted
        r = super().why_not(replace(node, outputs=[o for o in node.outputs if o]), graph)
        if r:
            return r
        acts = attr(node, "activations", None)
        if acts and [a.decode() if isinstance(a, bytes) else a for a in acts] not in (
            ["Sigmoid", "Tanh"],
            ["Sigmoid", "Tanh"] * 2,
        ):
            return "GRU with non-default activations"
        if "clip" in node.attrs or int(attr(node, "layout", 0)):
            return "GRU clip/layout=1"
        ins = node.inputs + [""] * (6 - len(node.inputs))
        return bias_and_lengths("GRU", graph, ins)

    def build(self, node: Node, ctx: Any) -> None:
        if whole_sequence(ctx, node):  # a CPU device: rnn_cpu.cl, two launches in all
            float_sequence(ctx, node)
            return
        ins = node.inputs + [""] * (6 - len(node.inputs))
        outs = node.outputs + [""] * (2 - len(node.outputs))
        x, w, r, b, _, h0 = ins[:6]
        T, B, I = ctx.shape(x)
        D, G3, _ = ctx.shape(w)
        H = G3 // 3
        lbr = bool(int(attr(node, "linear_before_reset", 0)))
        direction = attr(node, "direction", "forward")
        Y = ctx.t(outs[0]) if outs[0] else ctx.scratch(T * D * B * H)
        # Xw, Z, and r * h (linear_before_reset=0 only)
        bufs = (ctx.scratch(T * B * G3), ctx.scratch(B * G3), ctx.scratch(B * H), Y)
        wl = weight_layout(ctx, w, I, G3)
        rl = weight_layout(ctx, r, H, G3)
        zeros = ctx.upload(np.zeros(B * H, dtype=np.float32))
        bias_val = ctx.const(b) if b else None
        dims = (T, B, I, H, D)
        for d in range(D):
            proj, rec = _biases(ctx, bias_val, d, H, lbr)
            input_projection(ctx, node, d, ctx.tensor_or_const(x), wl, bufs[0], proj, dims, gates=3)
            steps = (
                range(T)
                if direction == "forward" or (direction == "bidirectional" and d == 0)
                else range(T - 1, -1, -1)
            )
            prev: tuple[Any, int] = (ctx.tensor_or_const(h0), d * B * H) if h0 else (zeros, 0)
            for t in steps:
                prev = _step(ctx, node, (d, t, lbr), prev, rl, rec, bufs, dims)
            if outs[1]:
                copy_launch(ctx, node, Y, ctx.t(outs[1]), (B * H,), (1,), (1,), prev[1], d * B * H)


def _biases(ctx: Any, bias_val: Any, d: int, H: int, lbr: bool) -> tuple[Any, Any]:
    """(bias of the input projection, bias of the recurrent GEMM or None) of direction d."""
    if bias_val is None:
        return None, None
    bv = np.asarray(bias_val, dtype=np.float64)[d]
    wb, rb = bv[: 3 * H], bv[3 * H :].copy()
    if not lbr:
        return ctx.upload(wb + rb), None
    proj = wb.copy()
    proj[: 2 * H] += rb[: 2 * H]
    rb[: 2 * H] = 0.0
    return ctx.upload(proj), ctx.upload(rb)


def _recurrent(
    ctx: Any,
    node: Node,
    A: tuple[Any, int],
    rl: tuple,
    Z: Any,
    cols: tuple,
    dims: tuple,
    bias: Any = None,
) -> None:
    """Z[:, c0:c0+n] = A @ R[d]^T[:, c0:c0+n] (+ bias), cols = (d, c0, n)."""
    _, B, _, H, _ = dims
    d, c0, n = cols
    offs = (A[1], d * 3 * H * H + c0 * rl[2], c0, 0)
    weights_gemm(ctx, node, (B, n, H), A[0], rl, (Z, 3 * H), offs, (bias, 0))


def _step(
    ctx: Any,
    node: Node,
    where: tuple[int, int, bool],
    prev: tuple[Any, int],
    rl: tuple[Any, int, int],
    rec: Any,
    bufs: tuple[Any, Any, Any, Any],
    dims: tuple,
) -> tuple[Any, int]:
    """Step ``t`` of direction ``d``; returns where the new h lies (buffer, offset)."""
    d, t, lbr = where
    Xw, Z, rh, Y = bufs
    _, B, _, H, D = dims
    xoff = t * B * 3 * H
    if lbr:
        _recurrent(ctx, node, prev, rl, Z, (d, 0, 3 * H), dims, rec)
    else:
        _recurrent(ctx, node, prev, rl, Z, (d, 0, 2 * H), dims)
        reset = ctx.kernel("gru.cl", "gru_reset")
        args = [Xw, i32(xoff), Z, prev[0], i32(prev[1]), rh, i32(H)]
        ctx.launch(node, reset, (H, B), None, args)
        _recurrent(ctx, node, (rh, 0), rl, Z, (d, 2 * H, H), dims)
    hoff = (t * D + d) * B * H
    cell = ctx.kernel("gru.cl", "gru_cell", "-DLBR=1" if lbr else "")
    args = [Xw, i32(xoff), Z, prev[0], i32(prev[1]), Y, i32(hoff), i32(H)]
    ctx.launch(node, cell, (H, B), None, args)
    return Y, hoff
