"""ONNX GRU (forward, reverse, bidirectional; linear_before_reset 0 and 1; default
activations; layout 0), composed like ``lstm.py``.

Per direction, one GEMM projects every step's input at once: Xw = X @ W^T + Wb, plus the
recurrent biases that add outside any gate product (Rb_z, Rb_r, and Rb_h when
linear_before_reset=0). Per step, with linear_before_reset=1: one GEMM Z = h @ R^T (+ Rb_h
on the h gate) and ``gru_cell``, where n = tanh(Xw_h + r * Z_h). With linear_before_reset=0:
a GEMM Z_zr = h @ R_zr^T, ``gru_reset`` forms r * h, a GEMM Z_h = (r * h) @ R_h^T, then
``gru_cell`` with n = tanh(Xw_h + Z_h). The cell writes h straight into Y[t, d].
Where the device runs the whole sequence in one launch (``recurrence.py``: ``rnn_cpu.py``,
``rnn_gpu.py``), these launches do not run.
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
class GRU(Recurrence):
    op_types = ("GRU",)
    activations = ("Sigmoid", "Tanh")

    def build(self, node: Node, ctx: Any) -> None:
        if self.whole(node, ctx):
            return
        s = self.steps(node, ctx)
        x, _, _, b, _, h0 = s.ins[:6]
        T, B, _, H, D = s.dims
        lbr = bool(int(attr(node, "linear_before_reset", 0)))
        direction = attr(node, "direction", "forward")
        # Xw, Z, and r * h (linear_before_reset=0 only)
        bufs = (ctx.scratch(T * B * 3 * H), ctx.scratch(B * 3 * H), ctx.scratch(B * H), s.Y)
        bias_val = ctx.const(b) if b else None
        for d in range(D):
            proj, rec = _biases(ctx, bias_val, d, H, lbr)
            X = ctx.tensor_or_const(x)
            input_projection(ctx, node, d, X, s.wl, bufs[0], proj, s.dims, gates=3)
            steps = (
                range(T)
                if direction == "forward" or (direction == "bidirectional" and d == 0)
                else range(T - 1, -1, -1)
            )
            prev: tuple[Any, int] = (ctx.tensor_or_const(h0), d * B * H) if h0 else (s.zeros, 0)
            for t in steps:
                prev = _step(ctx, node, (d, t, lbr), prev, s.rl, rec, bufs, s.dims)
            if s.outs[1]:
                copy_launch(
                    ctx, node, s.Y, ctx.t(s.outs[1]), (B * H,), (1,), (1,), prev[1], d * B * H
                )


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
