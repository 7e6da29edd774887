"""onnxruntime's contrib matmuls (domain com.microsoft) that end in float32:
MatMulIntegerToFloat and DynamicQuantizeMatMul, which onnxruntime's graph optimiser writes
in place of what ``quantize_dynamic`` leaves (DynamicQuantizeLinear, MatMulInteger, Cast,
Mul, and an Add of a bias), and which models saved after it keep.

Both are quant.cl's integer product with the ``TOFLOAT`` epilogue: the exact int32 sum of
``(a - a_zero_point) * (b - b_zero_point)``, then ``float(sum) * (a_scale * b_scale) + bias``
in float32, rounded as onnxruntime's MLAS output processor rounds it. DynamicQuantizeMatMul
first quantizes its float A to uint8 as DynamicQuantizeLinear does (``quant.dynamic_quantize``).
Layouts, as onnxruntime's CPU kernels take them: A's scale and zero point per tensor; B's per
tensor or per column (``[N]`` or ``[1, N]`` for a 2-D B, ``[1.., 1, N]`` for a B of one
matrix); the bias ``[N]``. B's per column and per matrix (``[D, 1, N]``) is refused.
"""

from __future__ import annotations

from typing import Any

from hetlab.devices.kernels.ops import MS, register
from hetlab.devices.kernels.ops.common import i32, numel
from hetlab.devices.kernels.ops.integer import batch_offsets, integer_gemm
from hetlab.devices.kernels.ops.quant import (
    CL_TYPE,
    FLOAT,
    Q8,
    Signature,
    dynamic_quantize,
    input_at,
    optional_buffer,
    typed_buffer,
)
from hetlab.graph.ir import Node, OpGraph


def shape_of(graph: OpGraph, name: str) -> tuple[int, ...]:
    return tuple(int(d) for d in graph.tensors[name].shape)


def to_float_args(
    ctx: Any, scales: tuple[Any, Any, int], bias: str | tuple[Any, int], add: tuple = ()
) -> list[Any]:
    """The ``TOFLOAT`` epilogue's arguments: ``scales`` (A's scale buffer, B's, B's count),
    ``bias`` (a tensor name, "" for none, or a (buffer, present) pair) and ``add`` (buffer,
    element offset, row stride; none where empty)."""
    a_scale, b_scale, n_scales = scales
    bias_buf, has_bias = optional_buffer(ctx, bias) if isinstance(bias, str) else bias
    add_buf, add_off, add_rs = add or (ctx.scratch(1), 0, 0)
    return [
        a_scale,
        b_scale,
        i32(n_scales),
        add_buf,
        i32(add_off),
        i32(add_rs),
        i32(bool(add)),
        bias_buf,
        i32(has_bias),
    ]


def _param_reason(shape: tuple[int, ...], bshape: tuple[int, ...] | None) -> str | None:
    """Why a scale or zero point of ``shape`` rules the node out, or None: A's (``bshape``
    None) per tensor; B's per tensor or per column, as onnxruntime's kernels take it (``[N]``
    for a 2-D B, else B's shape with 1 for K) and the same for every matrix of B. Other
    layouts onnxruntime computes otherwise (it scales the bias with B's scale)."""
    if numel(shape) == 1:
        return None
    if bshape is not None and len(bshape) >= 2 and numel(bshape[:-2]) == 1:
        n = bshape[-1]
        if (len(bshape) == 2 and shape == (n,)) or shape == (*bshape[:-2], 1, n):
            return None
    per = "per tensor or per column of a single matrix" if bshape is not None else "per tensor"
    return f"of shape {list(shape)} (the kernels take one {per})"


class _ToFloat(Signature):
    """The checks both ops share: slots of A, its scale and zero point (None where the op
    computes them), of B, its scale and zero point, and of the bias."""

    domain = MS
    a_slots: tuple[int, int | None, int | None] = (0, None, None)
    b_slots = (1, 2, 3)
    bias_slot = 4

    def check(self, node: Node, graph: OpGraph) -> str | None:
        a, a_scale, a_zp = self.a_slots
        b, b_scale, b_zp = self.b_slots
        bshape = shape_of(graph, node.inputs[b])
        for slot, of in ((a_scale, a), (a_zp, a), (b_scale, b), (b_zp, b)):
            name = input_at(node, slot) if slot is not None else ""
            if not name:
                continue
            zp = slot in (a_zp, b_zp)
            if zp and graph.tensors[name].dtype != graph.tensors[node.inputs[of]].dtype:
                return f"input {slot} (a zero point) and input {of} differ in type"
            shape = shape_of(graph, name)
            why = _param_reason(shape, bshape if of == b else None)
            if why is not None:
                return f"input {slot} ({'a zero point' if zp else 'a scale'}) {why}"
        bias = input_at(node, self.bias_slot)
        n = bshape[-1] if len(bshape) >= 2 else 1
        if bias and shape_of(graph, bias) != (n,):
            return f"a bias of shape {list(shape_of(graph, bias))} (the kernels take [{n}])"
        return None

    def gemm(self, node: Node, ctx: Any, a: tuple[Any, Any, Any], a_type: str) -> None:
        """The product of the quantized A (values, scale, zero point) and B, to float."""
        _, b_scale, b_zp = self.b_slots
        b = node.inputs[self.b_slots[0]]
        mnk, offs = batch_offsets(list(ctx.shape(node.inputs[0])), list(ctx.shape(b)))
        zb, has_zb = optional_buffer(ctx, input_at(node, b_zp))
        zb_n = numel(ctx.shape(input_at(node, b_zp))) if has_zb else 0
        za_n = 0 if a[2] is None else 1
        za = ctx.scratch(1) if a[2] is None else a[2]
        operands = [a[0], typed_buffer(ctx, b), za, i32(za_n), zb, i32(zb_n)]
        scales = (
            a[1],
            typed_buffer(ctx, node.inputs[b_scale]),
            numel(ctx.shape(node.inputs[b_scale])),
        )
        extra = to_float_args(ctx, scales, input_at(node, self.bias_slot))
        opts = f"-DTX={CL_TYPE[a_type]} -DTW={CL_TYPE[ctx.dtype(b)]} -DTOFLOAT"
        integer_gemm(ctx, node, mnk, operands, ctx.t(node.outputs[0]), offs, opts, extra)


@register
class MatMulIntegerToFloat(_ToFloat):
    op_types = ("MatMulIntegerToFloat",)
    inputs = (
        (Q8, False),
        (Q8, False),
        (FLOAT, False),
        (FLOAT, False),
        (Q8, True),
        (Q8, True),
        (FLOAT, True),
    )
    outputs = (FLOAT,)
    a_slots = (0, 2, 4)
    b_slots = (1, 3, 5)
    bias_slot = 6

    def build(self, node: Node, ctx: Any) -> None:
        za = input_at(node, 4)
        a = (
            typed_buffer(ctx, node.inputs[0]),
            typed_buffer(ctx, node.inputs[2]),
            typed_buffer(ctx, za) if za else None,
        )
        self.gemm(node, ctx, a, ctx.dtype(node.inputs[0]))


@register
class DynamicQuantizeMatMul(_ToFloat):
    op_types = ("DynamicQuantizeMatMul",)
    inputs = ((FLOAT, False), (Q8, False), (FLOAT, False), (Q8, True), (FLOAT, True))
    outputs = (FLOAT,)

    def build(self, node: Node, ctx: Any) -> None:
        x = node.inputs[0]
        a = dynamic_quantize(ctx, node, (typed_buffer(ctx, x), 0), numel(ctx.shape(x)))
        self.gemm(node, ctx, a, "uint8")
