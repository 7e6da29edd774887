"""ONNX LSTM (forward, reverse, bidirectional; default activations; peepholes; layout 0).

Per direction: one GEMM for the input projection of all time steps (``X @ W^T + Wb + Rb``),
then per step a GEMM ``h @ R^T`` whose bias operand is that step's slice of the projection,
followed by ``lstm_cell`` (gates i, o, f, c) writing h straight into Y[t, d].
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import Op, register
from hetlab.devices.kernels.ops.common import attr, const_value, f32, grid1, i32, is_const
from hetlab.devices.kernels.ops.data_movement import copy_launch
from hetlab.devices.kernels.ops.gemm import gemm_launch, no_act
from hetlab.devices.kernels.ops.rnn_cpu import float_sequence, whole_sequence
from hetlab.graph.ir import Node, OpGraph


@register
class LSTM(Op):
    op_types = ("LSTM",)

    def float_inputs(self, node: Node) -> list[int]:
        return [i for i in (0, 1, 2, 3, 5, 6, 7) if i < len(node.inputs) and node.inputs[i]]

    def why_not(self, node: Node, graph: OpGraph) -> str | None:
        # the base checks the first output: Y, or Y_h where Y is omitted
        r = super().why_not(replace(node, outputs=[o for o in node.outputs if o]), graph)
        if r:
            return r
        acts = attr(node, "activations", None)
        if acts and [a.decode() if isinstance(a, bytes) else a for a in acts] not in (
            ["Sigmoid", "Tanh", "Tanh"],
            ["Sigmoid", "Tanh", "Tanh"] * 2,
        ):
            return "LSTM with non-default activations"
        if (
            "clip" in node.attrs
            or int(attr(node, "input_forget", 0))
            or int(attr(node, "layout", 0))
        ):
            return "LSTM clip/input_forget/layout=1"
        ins = node.inputs + [""] * (8 - len(node.inputs))
        return bias_and_lengths("LSTM", graph, ins)

    def build(self, node: Node, ctx: Any) -> None:
        if whole_sequence(ctx, node):  # a CPU device: rnn_cpu.cl, two launches in all
            float_sequence(ctx, node)
            return
        ins = node.inputs + [""] * (8 - len(node.inputs))
        outs = node.outputs + [""] * (3 - len(node.outputs))
        x, w, r, b, _, h0, c0 = ins[:7]
        T, B, I = ctx.shape(x)
        D, G4, _ = ctx.shape(w)
        H = G4 // 4
        direction = attr(node, "direction", "forward")
        bias_val = ctx.const(b) if b else None
        Y = ctx.t(outs[0]) if outs[0] else ctx.scratch(T * D * B * H)
        Xw = ctx.scratch(T * B * G4)
        Z = ctx.scratch(B * G4)
        c = ctx.scratch(B * H)
        # constant weights are stored transposed ([D, I, 4H], [D, H, 4H]) so that B is
        # n-contiguous (coalesced; batch-1 steps then take the skinny gemv kernel)
        wl = weight_layout(ctx, w, I, G4)
        rl = weight_layout(ctx, r, H, G4)
        zeros = ctx.upload(np.zeros(B * H, dtype=np.float32))
        dims = (T, B, I, H, D)
        for d in range(D):
            bias = None
            if bias_val is not None:
                bv = np.asarray(bias_val, dtype=np.float64)[d]
                bias = ctx.upload(bv[:G4] + bv[G4:])
            input_projection(ctx, node, d, ctx.t(x), wl, Xw, bias, dims)
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
            prev: tuple[Any, int] = (ctx.t(h0), d * B * H) if h0 else (zeros, 0)
            for t in steps:
                prev = _step(ctx, node, d, t, prev, rl, (Xw, Z, c, Y), dims)
            if outs[1]:
                copy_launch(ctx, node, Y, ctx.t(outs[1]), (B * H,), (1,), (1,), prev[1], d * B * H)
            if outs[2]:
                copy_launch(ctx, node, c, ctx.t(outs[2]), (B * H,), (1,), (1,), 0, d * B * H)


def weights_gemm(
    ctx: Any,
    node: Node,
    mnk: tuple[int, int, int],
    A: Any,
    w: tuple[Any, int, int],
    C: tuple[Any, int],
    offs: tuple[int, int, int, int],
    bias: tuple[Any, int] = (None, 0),
) -> None:
    """C = A @ W (+ bias) of an RNN: A row-major [M, K], W an input or recurrent weight laid
    out by ``weight_layout``, C with row stride ``C[1]``, the bias with row stride
    ``bias[1]`` (0: one row for all); ``offs`` as ``gemm_launch`` takes them."""
    M, N, K = mnk
    gemm_launch(
        ctx,
        node,
        M=M,
        N=N,
        K=K,
        A=A,
        sam=K,
        sak=1,
        B=w[0],
        sbk=w[1],
        sbn=w[2],
        C=C[0],
        ldc=C[1],
        offs=[offs],
        bias=bias[0],
        sbias_m=bias[1],
        sbias_n=1,
        act=no_act(),
    )


def input_projection(
    ctx: Any,
    node: Node,
    d: int,
    X: Any,
    wl: tuple[Any, int, int],
    Xw: Any,
    bias: Any,
    dims: tuple,
    gates: int = 4,
) -> None:
    """Xw = X @ W[d] + bias for every step of direction ``d`` at once; ``gates``: the
    weight's rows per hidden unit (4 for an LSTM, 3 for a GRU)."""
    T, B, I, H, _ = dims
    G = gates * H
    weights_gemm(ctx, node, (T * B, G, I), X, wl, (Xw, G), (0, d * G * I, 0, 0), (bias, 0))


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


def weight_layout(ctx: Any, name: str, k: int, gates: int) -> tuple[Any, int, int]:
    """(buffer, stride along k, stride along the gates) of an RNN's W or R [D, gates, k]."""
    c = ctx.const(name)
    if c is None:
        return ctx.t(name), 1, k
    return ctx.upload(np.ascontiguousarray(np.transpose(c, (0, 2, 1))), key=("T", name)), gates, 1


def bias_and_lengths(op: str, graph: OpGraph, ins: list[str]) -> str | None:
    """Why a recurrent node's bias (input 3) or sequence_lens (input 4) rules it out: the
    bias is folded at build time, so it must be constant, and every sequence must run the
    full length, which is what the kernels compute."""
    if ins[3] and not is_const(graph, ins[3]):
        return f"{op} bias must be constant"
    if ins[4]:
        sl = const_value(graph, ins[4])
        T = graph.tensors[ins[0]].shape[0]
        if sl is None or not np.all(np.asarray(sl) == T):
            return f"{op} sequence_lens other than the full length"
    return None
