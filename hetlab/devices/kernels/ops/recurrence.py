"""What ONNX's LSTM, GRU and RNN share: the checks (float inputs, default activations, no
clip, layout 0, a constant bias, full-length sequences) and the head of their builds, which
runs the whole sequence in one launch where the device can (``rnn_cpu.py`` on a CPU device,
``rnn_gpu.py`` on a GPU) and otherwise sets up the step-by-step launches of ``lstm.py``,
``gru.py`` and ``rnn.py``."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import Op
from hetlab.devices.kernels.ops.common import attr, const_value, is_const
from hetlab.devices.kernels.ops.gemm import gemm_launch, no_act
from hetlab.devices.kernels.ops.rnn_cpu import GATES, float_sequence, whole_sequence
from hetlab.devices.kernels.ops.rnn_gpu import gpu_sequence, work_group
from hetlab.graph.ir import Node, OpGraph


@dataclass
class Steps:
    """What the step-by-step launches of one node start from: its inputs and outputs padded
    with "" to their full count, dims (T, B, I, H, D), Y (the output or scratch), W's and
    R's layouts (``weight_layout``) and zeros [B, H] for an absent initial h."""

    ins: list[str]
    outs: list[str]
    dims: tuple[int, int, int, int, int]
    Y: Any
    wl: tuple[Any, int, int]
    rl: tuple[Any, int, int]
    zeros: Any


class Recurrence(Op):
    """The base of LSTM, GRU and RNN: ``float_ins`` are the float inputs that may be present,
    ``activations`` one direction's defaults (the only ones the kernels compute), ``flags``
    the integer attributes that must be 0, ``n_inputs`` and ``n_outputs`` the op's counts."""

    float_ins: tuple[int, ...] = (0, 1, 2, 3, 5)
    activations: tuple[str, ...] = ()
    flags: tuple[str, ...] = ("layout",)
    n_inputs = 6
    n_outputs = 2

    def float_inputs(self, node: Node) -> list[int]:
        return [i for i in self.float_ins if i < len(node.inputs) and node.inputs[i]]

    def why_not(self, node: Node, graph: OpGraph) -> str | None:
        # the base checks the first output: Y, or Y_h where Y is omitted
        r = super().why_not(replace(node, outputs=[o for o in node.outputs if o]), graph)
        if r:
            return r
        op, default = node.op_type, list(self.activations)
        acts = attr(node, "activations", None)
        if acts and [a.decode() if isinstance(a, bytes) else a for a in acts] not in (
            default,
            default * 2,
        ):
            return f"{op} with activations other than {'/'.join(default)}"
        if "clip" in node.attrs or any(int(attr(node, f, 0)) for f in self.flags):
            return f"{op} clip/{'/'.join(self.flags)}=1"
        ins = node.inputs + [""] * (self.n_inputs - len(node.inputs))
        return bias_and_lengths(op, graph, ins)

    def whole(self, node: Node, ctx: Any) -> bool:
        """Run ``node``'s whole sequence in one launch where the device can; whether it did."""
        if whole_sequence(ctx, node):  # a CPU device: rnn_cpu.cl, two launches in all
            float_sequence(ctx, node)
            return True
        wg = work_group(ctx, node)
        if wg:  # a GPU, a step in one work-group: rnn_gpu.cl, two launches in all
            gpu_sequence(ctx, node, wg)
        return bool(wg)

    def steps(self, node: Node, ctx: Any) -> Steps:
        """The head of the step-by-step build (``Steps``)."""
        ins = node.inputs + [""] * (self.n_inputs - len(node.inputs))
        outs = node.outputs + [""] * (self.n_outputs - len(node.outputs))
        T, B, I = ctx.shape(ins[0])
        D, G, _ = ctx.shape(ins[1])
        H = G // GATES[node.op_type]
        Y = ctx.t(outs[0]) if outs[0] else ctx.scratch(T * D * B * H)
        wl, rl = weight_layout(ctx, ins[1], I, G), weight_layout(ctx, ins[2], H, G)
        zeros = ctx.upload(np.zeros(B * H, dtype=np.float32))
        return Steps(ins, outs, (T, B, I, H, D), Y, wl, rl, zeros)


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
