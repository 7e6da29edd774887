"""Recurrences on a CPU device (PoCL): ``cl/rnn_cpu.cl``'s whole-sequence kernels for ONNX's
LSTM, GRU and RNN and onnxruntime's DynamicQuantizeLSTM, where W and R are constants.

Two launches a node instead of two or more a step: one GEMM (``gemm_cpu.cl``) projects every
step's input for every direction at once, X [T*B, I] times W laid out [I, D*G] (biases
folded in), then one work-item per direction runs the steps (``lstm_seq``, ``gru_seq``,
``rnn_seq``). DynamicQuantizeLSTM keeps ``contrib_lstm.py``'s quantized input projection
(per direction, into [D, T, B, G]) and runs its steps in ``dq_lstm_seq``, the same values bit
for bit. A GPU takes ``rnn_gpu.py``'s kernels after the same GEMM (``project``), or the
step-by-step launches of ``lstm.py``, ``gru.py`` and ``rnn.py`` (docs/decisions.md,
"Recurrences on a CPU device").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops.common import attr, i32
from hetlab.devices.kernels.ops.gemm import gemm_launch, no_act
from hetlab.graph.ir import Node

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
FAST = "-DFAST_FMA"  # mlas.h's FMAs as one instruction each (PoCL is clang)


def whole_sequence(ctx: Any, node: Node) -> bool:
    """Whether ``node`` runs on ``rnn_cpu.cl``: a CPU device, W and R constants."""
    return bool(ctx.device.cpu_kernels) and all(ctx.const(n) is not None for n in node.inputs[1:3])


def reversed_bits(node: Node) -> int:
    """rnn_cpu.cl's ``rev``: bit d set where direction d runs backward."""
    return {"forward": 0, "reverse": 1, "bidirectional": 2}[attr(node, "direction", "forward")]


def state(ctx: Any, name: str, n: int) -> Any:
    """An initial state ([D, B, H]): the input, or zeros where the node has none."""
    if name:
        return ctx.tensor_or_const(name)
    return ctx.upload(np.zeros(n, np.float32), key=("zeros", n))


def panels(rt: np.ndarray, gates: int) -> np.ndarray:
    """R^T [D, H, gates * H] as rnn_cpu.cl takes it: panels of 32 columns [D, gates * Hp /
    32, H, 32], each gate's H columns padded with zeros to Hp, a multiple of 32."""
    D, H, _ = rt.shape
    hp = -(-H // 32) * 32
    p = np.zeros((D, H, gates, hp), np.float32)
    p[..., :H] = np.asarray(rt, np.float32).reshape(D, H, gates, H)
    return p.reshape(D, H, gates * hp // 32, 32).transpose(0, 2, 1, 3)


def seq_args(ctx: Any, node: Node, xw: tuple[Any, int, int, int], dims: tuple) -> list[Any]:
    """The sequence kernels' common arguments (``SEQ_ARGS``): xw with its strides along t,
    b and d, h0, z, Y, Y_h, T, B, H and the directions; dims (T, B, H, D, gates)."""
    T, B, H, D, gates = dims
    G = gates * (-(-H // 32) * 32)
    outs = node.outputs + [""] * (2 - len(node.outputs))
    Y = ctx.t(outs[0]) if outs[0] else ctx.scratch(T * D * B * H)
    yh = (ctx.t(outs[1]), 1) if outs[1] else (ctx.scratch(1), 0)
    h0 = state(ctx, node.inputs[5] if len(node.inputs) > 5 else "", D * B * H)
    return [
        xw[0],
        *(i32(s) for s in xw[1:]),
        h0,
        ctx.scratch(D * B * G),
        Y,
        yh[0],
        i32(yh[1]),
        i32(T),
        i32(B),
        i32(H),
        i32(reversed_bits(node)),
    ]


def project(ctx: Any, node: Node, gates: int) -> tuple[Any, tuple[int, int, int, int, int]]:
    """xw [T, B, D * G]: X times W laid out [I, D * G], the biases folded in (``biases``),
    one GEMM for every step and direction; with the dims (T, B, I, H, D)."""
    ins = node.inputs + [""] * (4 - len(node.inputs))
    T, B, I = ctx.shape(ins[0])
    W = np.asarray(ctx.const(ins[1]), np.float32)
    D, G, _ = W.shape
    wt = ctx.upload(np.transpose(W, (2, 0, 1)), key=("IDG", ins[1]))
    bias, _ = biases(ctx, node, ins[3], (D, G, G // gates))
    xw = ctx.scratch(T * B * D * G)
    gemm_launch(
        ctx,
        node,
        M=T * B,
        N=D * G,
        K=I,
        A=ctx.tensor_or_const(ins[0]),
        sam=I,
        sak=1,
        B=wt,
        sbk=D * G,
        sbn=1,
        C=xw,
        ldc=D * G,
        offs=[(0, 0, 0, 0)],
        bias=bias,
        sbias_m=0,
        sbias_n=1,
        act=no_act(),
    )
    return xw, (T, B, I, G // gates, D)


def float_sequence(ctx: Any, node: Node) -> None:
    """LSTM, GRU or RNN: the projection of every step and direction, then the steps."""
    kind = node.op_type
    ins = node.inputs + [""] * (8 - len(node.inputs))
    xw, (T, B, _, H, D) = project(ctx, node, GATES[kind])
    G = GATES[kind] * H
    rt = panels(np.transpose(ctx.const(ins[2]), (0, 2, 1)), GATES[kind])
    rt = ctx.upload(rt, key=("panels", ins[2]))
    args = seq_args(ctx, node, (xw, B * D * G, D * G, G), (T, B, H, D, GATES[kind])) + [rt]
    if kind == "LSTM":
        outs = node.outputs + [""] * (3 - len(node.outputs))
        c = ctx.t(outs[2]) if outs[2] else ctx.scratch(D * B * H)
        k = ctx.kernel("rnn_cpu.cl", "lstm_seq", FAST)
        pp = ctx.tensor_or_const(ins[7]) if ins[7] else ctx.scratch(1)
        args += [state(ctx, ins[6], D * B * H), c, pp, i32(bool(ins[7]))]
    elif kind == "GRU":
        lbr = int(attr(node, "linear_before_reset", 0))
        k = ctx.kernel("rnn_cpu.cl", "gru_seq", f"{FAST} -DLBR={lbr}")
        args += [biases(ctx, node, ins[3], (D, G, H))[1], ctx.scratch(D * B * H)]
    else:
        k = ctx.kernel("rnn_cpu.cl", "rnn_seq", FAST)
    ctx.launch(node, k, (D,), (1,), args)


def biases(ctx: Any, node: Node, b: str, dims: tuple[int, int, int]) -> tuple[Any, Any]:
    """(the input projection's bias [D*G] or None, the GRU's recurrent bias inside its h
    gate [D, H]: Rb_h with linear_before_reset, else zeros and unused)."""
    D, G, H = dims
    bv = np.asarray(ctx.const(b), np.float64) if b else np.zeros((D, 2 * G))
    proj, rb = bv[:, :G] + bv[:, G:], np.zeros((D, H))
    if node.op_type == "GRU" and int(attr(node, "linear_before_reset", 0)):
        proj[:, 2 * H :] = bv[:, 2 * H : G]
        rb = bv[:, G + 2 * H :]
    bias = ctx.upload(proj, key=("bias", b, node.id)) if b else None
    return bias, ctx.upload(rb, key=("rb", b, node.id))
