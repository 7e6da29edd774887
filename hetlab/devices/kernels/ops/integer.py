"""The integer products on quant.cl: MatMulInteger and ConvInteger (int32 outputs), and the
requantizing QLinearMatMul and QLinearConv (uint8/int8 outputs).

One work-item per output element sums in int32 (on a CPU device, a block of them:
``integer_cpu.py``), so the sums are exact, as ONNX defines
them (onnxruntime's saturate on some CPUs: ``hetlab.graph.onnx_exact``). Zero points:
MatMul's A per tensor or per row, its B per tensor or per column; Conv's X per tensor, its
W per tensor or per output channel; each the same for every batch. QLinear* requantize as
onnxruntime does, with the combined scale ``x_scale * w_scale / y_scale`` computed in
float32 on the host: their scales must be constants, per tensor (B's and W's also per
column or output channel).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import register
from hetlab.devices.kernels.ops.common import attr, bcast_strides, f32, i32, numel
from hetlab.devices.kernels.ops.conv_geometry import geometry
from hetlab.devices.kernels.ops.integer_cpu import cpu_conv, cpu_gemm
from hetlab.devices.kernels.ops.quant import (
    CL_TYPE,
    FLOAT,
    Q8,
    RANGE,
    Signature,
    input_at,
    optional_buffer,
    typed_buffer,
)
from hetlab.graph.ir import Node, OpGraph

# input positions of (x, x zero point, w, w zero point) in each op
# quant.cl's matmul_integer_split: its work-group shape (TN outputs by KS slices of K) and
# the K from which it runs instead of one work-item per output (a serial loop over K)
TILE_N, K_SLICES, SPLIT_K = 16, 16, 64

SLOTS = {
    "MatMulInteger": (0, 2, 1, 3),
    "ConvInteger": (0, 2, 1, 3),
    "QLinearMatMul": (0, 2, 3, 5),
    "QLinearConv": (0, 2, 3, 5),
}
QLINEAR = (
    (Q8, False),
    (FLOAT, False),
    (Q8, False),
    (Q8, False),
    (FLOAT, False),
    (Q8, False),
    (FLOAT, False),
)


def _along(graph: OpGraph, node: Node, slot: int) -> tuple[int, int, str]:
    """(the size of the axis that the zero point of the operand at ``slot`` may run along,
    that axis counted from the end, its name): A's rows, B's columns, W's output channels;
    X's none."""
    shape = graph.tensors[node.inputs[slot]].shape
    if "Conv" in node.op_type:
        return (int(shape[0]), len(shape), "output channel") if slot != 0 else (1, 1, "")
    if len(shape) < 2:
        return 1, 1, ""
    return (int(shape[-2]), 2, "row") if slot == 0 else (int(shape[-1]), 1, "column")


def zero_point_reason(shape: tuple[int, ...], along: int, axis: int, word: str) -> str | None:
    """Why a zero point of ``shape`` has a layout the kernels do not take, or None: one
    value (per tensor), or one per index of the operand's axis ``axis`` from the end (A's
    rows: ``[M]`` or ``[1.., M, 1]``; B's columns: ``[N]`` or ``[1.., 1, N]``; W's output
    channels: ``[C]``), the same for every batch."""
    if numel(shape) == 1 or shape == (along,):
        return None
    if along > 1 and len(shape) >= axis and shape[-axis] == along and numel(shape) == along:
        return None
    per = f"per tensor or per {word}" if word else "per tensor"
    return f"a zero point of shape {list(shape)} (the kernels take one {per})"


def _params(graph: OpGraph, node: Node) -> str | None:
    """Why the zero points (and, for QLinear*, scales) rule the node out, or None."""
    x, zx, w, zw = SLOTS[node.op_type]
    for z, of in ((zx, x), (zw, w)):
        name = input_at(node, z)
        if not name:
            continue
        if graph.tensors[name].dtype != graph.tensors[node.inputs[of]].dtype:
            return f"input {z} (zero point) and input {of} differ in type"
        along, axis, word = _along(graph, node, of)
        why = zero_point_reason(tuple(int(d) for d in graph.tensors[name].shape), along, axis, word)
        if why is not None:
            return why
    if node.op_type.startswith("QLinear"):
        return _scales(graph, node)
    return None


def _scales(graph: OpGraph, node: Node) -> str | None:
    """Why a QLinear op's scales rule it out: each a constant, per tensor (W's or B's also
    per output channel or column)."""
    along = _along(graph, node, SLOTS[node.op_type][2])[0]
    for i, most in ((1, 1), (4, along), (6, 1)):
        name = input_at(node, i)
        shape = tuple(int(d) for d in graph.tensors[name].shape)
        if numel(shape) != 1 and shape != (most,):
            return f"input {i} (a scale) of shape {list(shape)}"
        if name not in graph.consts:
            return f"input {i} (a scale) is not a constant"
    y, zy = node.outputs[0], input_at(node, 7)
    if zy and graph.tensors[zy].dtype != graph.tensors[y].dtype:
        return "y_zero_point and output differ in type"
    if zy and numel(graph.tensors[zy].shape) != 1:
        return "y_zero_point is not per tensor"
    return None


def _rank_check(node: Node, graph: OpGraph) -> str | None:
    x, _, w, _ = SLOTS[node.op_type]
    r = len(graph.tensors[node.inputs[x]].shape)
    if "Conv" in node.op_type:
        if r not in (3, 4):
            return f"{node.op_type} on rank-{r} input (only 1-D and 2-D convolutions)"
        if len(graph.tensors[node.inputs[w]].shape) != r:
            return "weight rank differs from input rank"
    return _params(graph, node)


def _requant(ctx: Any, node: Node) -> tuple[str, list[Any]]:
    """(build options, extra arguments) of a QLinear op's requantizing epilogue."""
    xs, ws, ys = (np.asarray(ctx.const(node.inputs[i]), np.float32) for i in (1, 4, 6))
    rs = (xs.reshape(-1)[0] * ws.reshape(-1)) / ys.reshape(-1)[0]  # float32, as onnxruntime
    b = input_at(node, 8) if node.op_type == "QLinearConv" else ""
    bias, has_b = optional_buffer(ctx, b)
    yz, has_z = optional_buffer(ctx, input_at(node, 7))
    ty = ctx.dtype(node.outputs[0])
    args = [ctx.upload(rs, key=("rs", node.id)), i32(rs.size), bias, i32(has_b), yz, i32(has_z)]
    return f" -DREQUANT -DTY={CL_TYPE[ty]}", [*args, *map(f32, RANGE[ty])]


def _operands(ctx: Any, node: Node) -> tuple[str, list[Any], list[Any]]:
    """(build options, the kernel's first six arguments: x, w and their zero points, the
    requantizing epilogue's arguments)."""
    x, zx, w, zw = (input_at(node, i) for i in SLOTS[node.op_type])
    zxb, has_x = optional_buffer(ctx, zx)
    zwb, has_w = optional_buffer(ctx, zw)
    zx_n = numel(ctx.shape(zx)) if has_x else 0
    zw_n = numel(ctx.shape(zw)) if has_w else 0
    opts = f"-DTX={CL_TYPE[ctx.dtype(x)]} -DTW={CL_TYPE[ctx.dtype(w)]}"
    if node.op_type.startswith("QLinear"):
        more, extra = _requant(ctx, node)
        opts += more
    else:
        extra = []
    return (
        opts,
        [typed_buffer(ctx, x), typed_buffer(ctx, w), zxb, i32(zx_n), zwb, i32(zw_n)],
        extra,
    )


def batch_offsets(ash: list[int], bsh: list[int]) -> tuple[tuple[int, int, int], list[int]]:
    """((M, N, K), the (a, b, c) element offsets of each batch) of a numpy-style matmul of
    operands of shapes ``ash`` and ``bsh`` (batch dimensions broadcast; a 1-D A is one row,
    a 1-D B one column)."""
    ash = [1] + ash if len(ash) == 1 else ash
    bsh = bsh + [1] if len(bsh) == 1 else bsh
    M, K, N = ash[-2], ash[-1], bsh[-1]
    obat = list(np.broadcast_shapes(tuple(ash[:-2]), tuple(bsh[:-2])))
    sa, sb = bcast_strides(ash[:-2], obat), bcast_strides(bsh[:-2], obat)
    offs = []
    for t, idx in enumerate(np.ndindex(*obat)):
        ia = sum(i * s for i, s in zip(idx, sa, strict=False)) * M * K
        ib = sum(i * s for i, s in zip(idx, sb, strict=False)) * K * N
        offs += [ia, ib, t * M * N]
    return (M, N, K), offs


def integer_gemm(
    ctx: Any,
    node: Node,
    mnk: tuple[int, int, int],
    operands: list[Any],
    out: Any,
    offs: list[int],
    opts: str,
    extra: list[Any],
    b_host: Any = None,
) -> None:
    """quant.cl's integer product ``out = OUTPUT((a - za) @ (b - zb))`` per batch:
    ``operands`` are a, b, za, za's count, zb, zb's count (``_operands``), ``offs`` the
    (a, b, out) element offsets of each batch, ``opts`` and ``extra`` the element types and
    the epilogue's build options and arguments; ``b_host``: b's values where constant."""
    M, N, K = mnk
    key = ("int_gemm_offs", tuple(offs))
    args = [*operands, out, i32(M), i32(N), i32(K), ctx.upload(offs, key=key, dtype="int32")]
    args += extra
    if ctx.device.cpu_kernels:
        cpu_gemm(ctx, node, mnk, args, offs, opts, b_host)
    elif K >= SPLIT_K:  # quant.cl's matmul_integer_split: KS items share each output's sum
        k = ctx.kernel("quant.cl", "matmul_integer_split", opts)
        grid = (-(-N // TILE_N) * TILE_N, M * K_SLICES, len(offs) // 3)
        ctx.launch(node, k, grid, (TILE_N, K_SLICES, 1), args)
    else:
        k = ctx.kernel("quant.cl", "matmul_integer", opts)
        ctx.launch(node, k, (N, M, len(offs) // 3), None, args)


class IntegerMatMul(Signature):
    def check(self, node: Node, graph: OpGraph) -> str | None:
        return _params(graph, node)

    def build(self, node: Node, ctx: Any) -> None:
        x, _, w, _ = SLOTS[node.op_type]
        mnk, offs = batch_offsets(list(ctx.shape(node.inputs[x])), list(ctx.shape(node.inputs[w])))
        opts, args, extra = _operands(ctx, node)
        out, b_host = ctx.t(node.outputs[0]), ctx.const(node.inputs[w])
        integer_gemm(ctx, node, mnk, args, out, offs, opts, extra, b_host)


class IntegerConv(Signature):
    def check(self, node: Node, graph: OpGraph) -> str | None:
        return _rank_check(node, graph)

    def build(self, node: Node, ctx: Any) -> None:
        x, _, w, zw = SLOTS[node.op_type]
        xs, ws = ctx.shape(node.inputs[x]), ctx.shape(node.inputs[w])
        g = geometry(node, xs, ctx.shape(node.outputs[0]), list(ws[2:]))
        keys = ("H", "W", "OH", "OW", "KH", "KW", "SH", "SW", "PH", "PW", "DH", "DW")
        p = [g[k] for k in keys] + [xs[1], ws[0], int(attr(node, "group", 1))]
        opts, args, extra = _operands(ctx, node)
        if ctx.device.cpu_kernels:
            cpu_conv(ctx, node, p, args, extra, opts, (node.inputs[w], input_at(node, zw)))
            return
        k = ctx.kernel("quant.cl", "conv_integer", opts)
        args += [ctx.t(node.outputs[0]), ctx.ints(p), *extra]
        ctx.launch(node, k, (g["OW"], g["OH"], xs[0] * ws[0]), None, args)


@register
class MatMulInteger(IntegerMatMul):
    op_types = ("MatMulInteger",)
    inputs = ((Q8, False), (Q8, False), (Q8, True), (Q8, True))
    outputs = (("int32",),)


@register
class ConvInteger(IntegerConv):
    op_types = ("ConvInteger",)
    inputs = ((Q8, False), (Q8, False), (Q8, True), (Q8, True))
    outputs = (("int32",),)


@register
class QLinearMatMul(IntegerMatMul):
    op_types = ("QLinearMatMul",)
    inputs = (*QLINEAR, (Q8, False))
    outputs = (Q8,)


@register
class QLinearConv(IntegerConv):
    op_types = ("QLinearConv",)
    inputs = (*QLINEAR, (Q8, True), (("int32",), True))
    outputs = (Q8,)
