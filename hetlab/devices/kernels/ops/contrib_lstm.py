"""onnxruntime's DynamicQuantizeLSTM (domain com.microsoft): the LSTM that ``quantize_dynamic``
writes, its weights W ``[D, I, 4H]`` and R ``[D, H, 4H]`` in int8 or uint8 (transposed from
ONNX's LSTM) with scales and zero points per direction (``[D]``) or per direction and gate
column (``[D, 4H]``), its activations quantized as they come.

As onnxruntime computes it (its ``UniDirectionalLstm`` with uint8 GEMMs), per direction:
- X, all steps at once, is quantized to uint8 as DynamicQuantizeLinear does (one scale and
  zero point over the whole tensor), and ``Xw = float(sum) * (x_scale * W_scale)``;
- at each step the previous h (the whole batch) is quantized the same way, and
  ``Z = (Xw[t] + float(sum) * (h_scale * R_scale)) + (Wb + Rb)``, the bias added last;
- the gates on Z as onnxruntime computes them (MLAS's logistic and tanh: ``lstm_cell`` built
  with ``MLAS_GATES``), so that h, quantized again at the next step, is onnxruntime's.
The integer sums are exact (quant.cl's ``TOFLOAT`` epilogue). onnxruntime quantizes h per
group of batch rows that one of its threads computes when the batch is large (more than 4
rows, or 2 and more with H <= 256): with one thread, or a batch of one, the groups are ours.
The scales and zero points must be constants (they are initializers in what
``quantize_dynamic`` writes); as in ``lstm.py``: default activations, no clip, no
input_forget, no peepholes, every sequence of the full length.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import MS, register
from hetlab.devices.kernels.ops.common import attr, f32, grid1, i32, is_const
from hetlab.devices.kernels.ops.contrib import shape_of, to_float_args
from hetlab.devices.kernels.ops.data_movement import copy_launch
from hetlab.devices.kernels.ops.integer import integer_gemm
from hetlab.devices.kernels.ops.quant import (
    CL_TYPE,
    FLOAT,
    Q8,
    Signature,
    dynamic_quantize,
    typed_buffer,
)
from hetlab.devices.kernels.ops.recurrence import bias_and_lengths
from hetlab.devices.kernels.ops.rnn_cpu import (
    FAST,
    panels,
    reversed_bits,
    seq_args,
    whole_sequence,
)
from hetlab.devices.kernels.ops.rnn_gpu import work_group
from hetlab.graph.ir import Node, OpGraph

DEFAULT_ACTS = (["Sigmoid", "Tanh", "Tanh"], ["Sigmoid", "Tanh", "Tanh"] * 2)


def _params_reason(node: Node, graph: OpGraph, ins: list[str]) -> str | None:
    """Why W's or R's scale or zero point (inputs 8 to 11) rules the node out."""
    D, _, G4 = shape_of(graph, ins[1])
    for i, of in ((8, 1), (9, 1), (10, 2), (11, 2)):
        name = ins[i]
        if not is_const(graph, name):
            return f"input {i} (a scale or zero point) is not a constant"
        if shape_of(graph, name) not in ((D,), (D, G4)):
            return f"input {i} of shape {list(shape_of(graph, name))} (takes [{D}] or [{D}, {G4}])"
        if i in (9, 11) and graph.tensors[name].dtype != graph.tensors[ins[of]].dtype:
            return f"input {i} (a zero point) and input {of} differ in type"
    return None


def _direction_params(ctx: Any, name: str, d: int, dtype: str) -> tuple[Any, int]:
    """Direction ``d``'s slice of a constant scale or zero point: (buffer, count)."""
    v = np.asarray(ctx.const(name))
    part = v[d].reshape(-1)
    return ctx.upload(part, key=("direction", name, d), dtype=dtype), part.size


@register
class DynamicQuantizeLSTM(Signature):
    domain = MS
    op_types = ("DynamicQuantizeLSTM",)
    inputs = (
        (FLOAT, False),
        (Q8, False),
        (Q8, False),
        (FLOAT, True),
        (("int32",), True),
        (FLOAT, True),
        (FLOAT, True),
        (FLOAT, True),
        (FLOAT, False),
        (Q8, False),
        (FLOAT, False),
        (Q8, False),
    )
    outputs = (FLOAT, FLOAT, FLOAT)

    def check(self, node: Node, graph: OpGraph) -> str | None:
        acts = attr(node, "activations", None)
        if acts and [a.decode() if isinstance(a, bytes) else a for a in acts] not in DEFAULT_ACTS:
            return "DynamicQuantizeLSTM with non-default activations"
        if "clip" in node.attrs or int(attr(node, "input_forget", 0)):
            return "DynamicQuantizeLSTM clip/input_forget"
        ins = node.inputs + [""] * (12 - len(node.inputs))
        if ins[7]:
            return "DynamicQuantizeLSTM peepholes"
        if len(shape_of(graph, ins[0])) != 3:
            return "X of rank other than 3"
        return bias_and_lengths("DynamicQuantizeLSTM", graph, ins) or _params_reason(
            node, graph, ins
        )

    def build(self, node: Node, ctx: Any) -> None:
        ins = node.inputs + [""] * (12 - len(node.inputs))
        outs = node.outputs + [""] * (3 - len(node.outputs))
        T, B, I = ctx.shape(ins[0])
        D, _, G4 = ctx.shape(ins[1])
        H = G4 // 4
        if whole_sequence(ctx, node):
            _whole_sequence(ctx, node, (T, B, I, H, D))
            return
        wg = work_group(ctx, node)
        if wg:
            _gpu_sequence(ctx, node, (T, B, I, H, D), wg)
            return
        Y = ctx.t(outs[0]) if outs[0] else ctx.scratch(T * D * B * H)
        # Xw, Z, c, Y, and h quantized (values, scale, zero point; one set for every step)
        hq = (ctx.scratch(B * H, "uint8"), ctx.scratch(1), ctx.scratch(1, "uint8"))
        bufs = (ctx.scratch(T * B * G4), ctx.scratch(B * G4), ctx.scratch(B * H), Y, hq)
        xq = dynamic_quantize(ctx, node, (typed_buffer(ctx, ins[0]), 0), T * B * I)
        for d in range(D):
            _direction(ctx, node, d, xq, bufs, (T, B, I, H, D))
            prev_off = _last_step(node, d, T, B * H, D)
            if outs[1]:
                copy_launch(ctx, node, Y, ctx.t(outs[1]), (B * H,), (1,), (1,), prev_off, d * B * H)
            if outs[2]:
                copy_launch(ctx, node, bufs[2], ctx.t(outs[2]), (B * H,), (1,), (1,), 0, d * B * H)


def _last_step(node: Node, d: int, T: int, BH: int, D: int) -> int:
    """Where in Y the final h of direction ``d`` lies (its last step's slice)."""
    forward = attr(node, "direction", "forward") == "forward" or (
        attr(node, "direction", "forward") == "bidirectional" and d == 0
    )
    return ((T - 1 if forward else 0) * D + d) * BH


def _direction(ctx: Any, node: Node, d: int, xq: tuple, bufs: tuple, dims: tuple) -> None:
    """Direction ``d``: the input projection of every step, then the steps in order."""
    ins = node.inputs + [""] * (12 - len(node.inputs))
    T, B, I, H, D = dims
    G4 = 4 * H
    Xw, Z, c, Y, hq = bufs
    weights = [
        (typed_buffer(ctx, w), _direction_params(ctx, s, d, "float32"))
        + (_direction_params(ctx, z, d, ctx.dtype(w)),)
        for w, s, z in ((ins[1], ins[8], ins[9]), (ins[2], ins[10], ins[11]))
    ]
    opts = [f"-DTX=U8 -DTW={CL_TYPE[ctx.dtype(w)]} -DTOFLOAT" for w in ins[1:3]]
    (wb, (ws, ns), (wz, nz)), (rb, (rs, nrs), (rz, nrz)) = weights
    operands = [xq[0], wb, xq[2], i32(1), wz, i32(nz)]
    extra = to_float_args(ctx, (xq[1], ws, ns), "")
    integer_gemm(ctx, node, (T * B, G4, I), operands, Xw, [0, d * I * G4, 0], opts[0], extra)
    bias = _bias(ctx, ins[3], d, G4)
    if ins[6]:
        copy_launch(ctx, node, ctx.t(ins[6]), c, (B * H,), (1,), (1,), d * B * H, 0)
    else:
        g, l = grid1(B * H)
        ctx.launch(node, ctx.kernel("eltwise.cl", "fill"), g, l, [c, i32(B * H), f32(0.0)])
    if ins[5]:
        prev = (ctx.t(ins[5]), d * B * H)
    else:
        prev = (ctx.upload(np.zeros(B * H, np.float32), key=("zeros", B * H)), 0)
    backward = attr(node, "direction", "forward") == "reverse" or d == 1
    for t in range(T - 1, -1, -1) if backward else range(T):
        dynamic_quantize(ctx, node, prev, B * H, hq)
        operands = [hq[0], rb, hq[2], i32(1), rz, i32(nrz)]
        extra = to_float_args(ctx, (hq[1], rs, nrs), bias, (Xw, t * B * G4, G4))
        integer_gemm(ctx, node, (B, G4, H), operands, Z, [0, d * H * G4, 0], opts[1], extra)
        hoff = (t * D + d) * B * H
        cell = ctx.kernel("conv_misc.cl", "lstm_cell", "-DMLAS_GATES")
        ctx.launch(node, cell, (H, B), None, [Z, c, Y, i32(H), i32(hoff)])
        prev = (Y, hoff)


def _projection(ctx: Any, node: Node, dims: tuple) -> Any:
    """xw [D, T, B, G]: the quantized input projection of each direction, as the steps of
    ``rnn_cpu.cl``'s and ``rnn_gpu.cl``'s ``dq_lstm_seq`` take it."""
    ins = node.inputs + [""] * (12 - len(node.inputs))
    T, B, I, H, D = dims
    G4 = 4 * H
    xq = dynamic_quantize(ctx, node, (typed_buffer(ctx, ins[0]), 0), T * B * I)
    xw = ctx.scratch(D * T * B * G4)
    wb, opts = typed_buffer(ctx, ins[1]), f"-DTX=U8 -DTW={CL_TYPE[ctx.dtype(ins[1])]} -DTOFLOAT"
    for d in range(D):
        (ws, ns), (wz, nz) = (
            _direction_params(ctx, n, d, t)
            for n, t in ((ins[8], "float32"), (ins[9], ctx.dtype(ins[1])))
        )
        operands = [xq[0], wb, xq[2], i32(1), wz, i32(nz)]
        extra = to_float_args(ctx, (xq[1], ws, ns), "")
        offs = [0, d * I * G4, d * T * B * G4]
        integer_gemm(ctx, node, (T * B, G4, I), operands, xw, offs, opts, extra)
    return xw


def _step_operands(ctx: Any, node: Node, dims: tuple) -> tuple[np.ndarray, list[Any]]:
    """R less its zero point (int32, [D, H, G]) and the steps' other operands: R's scales
    and their count, Wb + Rb [D, G] and whether there is one, h0 and c0 (zeros where the
    node has none), c (Y_c or scratch)."""
    ins = node.inputs + [""] * (12 - len(node.inputs))
    outs = node.outputs + [""] * (3 - len(node.outputs))
    _, B, _, H, D = dims
    G4, n = 4 * H, D * B * H
    rz = np.asarray(ctx.const(ins[11]), np.int32).reshape(D, 1, -1)
    rq = np.asarray(ctx.const(ins[2]), np.int32) - rz
    rs = np.asarray(ctx.const(ins[10]), np.float32).reshape(D, -1)
    bias = np.asarray(ctx.const(ins[3]), np.float32) if ins[3] else np.zeros((D, 2 * G4))
    zeros = ctx.upload(np.zeros(n), key=("zeros", n))
    return rq, [
        ctx.upload(rs, key=("rs", ins[10])),
        i32(rs.shape[1]),
        ctx.upload(bias[:, :G4] + bias[:, G4:], key=("WbRb", ins[3])),
        i32(bool(ins[3])),
        ctx.tensor_or_const(ins[5]) if ins[5] else zeros,
        ctx.tensor_or_const(ins[6]) if ins[6] else zeros,
        ctx.t(outs[2]) if outs[2] else ctx.scratch(n),
    ]


def _whole_sequence(ctx: Any, node: Node, dims: tuple) -> None:
    """On a CPU device: the quantized input projection of each direction into [D, T, B, G],
    then ``rnn_cpu.cl``'s ``dq_lstm_seq`` runs every step (R less its zero point in int32)."""
    T, B, _, H, D = dims
    G4 = 4 * H
    xw = _projection(ctx, node, dims)
    rq, (rs, ns, bias, has_bias, _, c0, c) = _step_operands(ctx, node, dims)
    args = seq_args(ctx, node, (xw, B * G4, G4, T * B * G4), (T, B, H, D, 4))
    rq = ctx.upload(panels(rq, 4), key=("rq", node.inputs[2], node.inputs[11]))
    args += [rq, rs, ns, bias, has_bias, ctx.scratch(D * B * H), c0, c]
    ctx.launch(node, ctx.kernel("rnn_cpu.cl", "dq_lstm_seq", FAST), (D,), (1,), args)


def _gpu_sequence(ctx: Any, node: Node, dims: tuple, wg: int) -> None:
    """On a GPU where a step fits one work-group of ``wg``: the same projection, then
    ``rnn_gpu.cl``'s ``dq_lstm_seq``, a work-group per direction over the whole batch."""
    T, B, _, H, D = dims
    outs = node.outputs + [""] * (2 - len(node.outputs))
    xw = _projection(ctx, node, dims)
    rq, (rs, ns, bias, has_bias, h0, c0, c) = _step_operands(ctx, node, dims)
    rq = ctx.upload(rq, key=("rq int32", node.inputs[2], node.inputs[11]), dtype="int32")
    y = ctx.t(outs[0]) if outs[0] else ctx.scratch(T * D * B * H)
    yh = ctx.t(outs[1]) if outs[1] else ctx.scratch(D * B * H)
    args = [xw, rq, rs, ns, bias, has_bias, h0, c0, y, yh, c, i32(T), i32(reversed_bits(node))]
    opts = f"-DHD={H} -DWG={wg} -DNB={B} -DWGP={1 << (wg - 1).bit_length()}"
    ctx.launch(node, ctx.kernel("rnn_gpu.cl", "dq_lstm_seq", opts), (wg, 1, D), (wg, 1, 1), args)


def _bias(ctx: Any, name: str, d: int, G4: int) -> tuple[Any, int]:
    """Direction ``d``'s Wb + Rb in float32, as onnxruntime folds them: (buffer, present)."""
    if not name:
        return ctx.scratch(1), 0
    v = np.asarray(ctx.const(name), np.float32)[d]
    return ctx.upload(v[:G4] + v[G4:], key=("WbRb", name, d)), 1
