"""Recurrences on a GPU: ``cl/rnn_gpu.cl``'s whole-sequence kernels for ONNX's LSTM, GRU and
RNN, where W and R are constants and one step fits one work-group.

Two launches a node instead of two to four a step: ``rnn_cpu.py``'s GEMM projects every
step's input for every direction at once, then one work-group per direction and batch row
runs every step, h in local memory and a barrier between a step's recurrent sums and its cell
(docs/decisions.md, "Recurrences on a GPU, whole sequence"). It is chosen from what the
device declares (``KernelDevice``): not ``cpu_kernels`` (those take ``rnn_cpu.py``) nor
``step_launches``, every gate column of a step on a work-item of its own within
``dev.max_work_group_size``, and the step's state within ``dev.local_mem_size``. Otherwise
the step-by-step launches of ``lstm.py``, ``gru.py`` and ``rnn.py`` run it. The same choice
runs onnxruntime's DynamicQuantizeLSTM on ``rnn_gpu.cl``'s ``dq_lstm_seq`` (launched by
``contrib_lstm.py``), a work-group per direction over the whole batch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops.common import attr, i32
from hetlab.devices.kernels.ops.rnn_cpu import GATES, biases, project, reversed_bits, state
from hetlab.graph.ir import Node

QLSTM = "DynamicQuantizeLSTM"  # contrib_lstm.py launches its kernel, dq_lstm_seq


def _local_floats(kind: str, B: int, H: int, wg: int) -> int:
    """The floats of local memory a kernel holds: h and the gates' pre-activations, the
    GRU's r * h; the quantized LSTM's h, h quantized, c and the gates of every batch row and
    its range's reduction."""
    if kind == QLSTM:
        return 7 * B * H + 2 * wg
    return {"LSTM": 5, "GRU": 5, "RNN": 2}[kind] * H


def work_group(ctx: Any, node: Node) -> int:
    """The work-group size ``rnn_gpu.cl`` runs ``node`` with, or 0 where the step-by-step
    launches run it: a CPU device, ``step_launches``, W or R not constants, a step that
    does not fit one work-group, or a single step (one launch either way, and the step's
    launch spreads its gates over many work-groups; docs/decisions.md, "Recurrences on a
    GPU, whole sequence")."""
    dev, kind = ctx.device, node.op_type
    if dev.cpu_kernels or dev.step_launches or kind not in (*GATES, QLSTM):
        return 0
    if ctx.shape(node.inputs[0])[0] < 2:
        return 0
    if any(ctx.const(n) is None for n in node.inputs[1:3]):
        return 0
    R = ctx.shape(node.inputs[2])  # [D, G, H], the quantized LSTM's [D, H, G]
    H = R[-1] // 4 if kind == QLSTM else R[-1]
    columns = GATES.get(kind, 4) * H
    limit = int(dev.dev.max_work_group_size)
    wg = min(-(-columns // 32) * 32, limit)
    local = _local_floats(kind, ctx.shape(node.inputs[0])[1], H, wg)
    if columns > limit or 4 * local > int(dev.dev.local_mem_size):
        return 0
    return wg


def gpu_sequence(ctx: Any, node: Node, wg: int) -> None:
    """LSTM, GRU or RNN on ``rnn_gpu.cl`` with work-groups of ``wg``: the projection of
    every step and direction, then one launch for the steps."""
    kind = node.op_type
    ins = node.inputs + [""] * (8 - len(node.inputs))
    outs = node.outputs + [""] * (3 - len(node.outputs))
    xw, (T, B, _, H, D) = project(ctx, node, GATES[kind])
    rt = np.ascontiguousarray(np.transpose(ctx.const(ins[2]), (0, 2, 1)), np.float32)
    n = D * B * H
    args = [
        xw,
        ctx.upload(rt, key=("HG", ins[2])),
        state(ctx, ins[5], n),
        ctx.t(outs[0]) if outs[0] else ctx.scratch(T * n),
        ctx.t(outs[1]) if outs[1] else ctx.scratch(n),
        i32(T),
        i32(B),
        i32(reversed_bits(node)),
    ]
    opts = f"-DHD={H} -DWG={wg}"
    if kind == "LSTM":
        pp = ctx.tensor_or_const(ins[7]) if ins[7] else ctx.scratch(1)
        c = ctx.t(outs[2]) if outs[2] else ctx.scratch(n)
        args += [state(ctx, ins[6], n), c, pp, i32(bool(ins[7]))]
    elif kind == "GRU":
        opts += f" -DLBR={int(attr(node, 'linear_before_reset', 0))}"
        args.append(biases(ctx, node, ins[3], (D, 3 * H, H))[1])
    k = ctx.kernel("rnn_gpu.cl", f"{kind.lower()}_seq", opts)
    ctx.launch(node, k, (wg, B, D), (wg, 1, 1), args)
