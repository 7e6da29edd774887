"""The quantized ops on quant.cl: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
MatMulInteger and ConvInteger.

Their integer tensors (uint8, int8, int32) live in buffers of their own type (the builder's
``TYPED``), so integer results are exact and match onnxruntime bit for bit; float32 tensors
are as elsewhere. Scales and zero points are per tensor or, where ONNX allows, per axis
(QuantizeLinear, DequantizeLinear), per column (MatMulInteger's B) or per output channel
(ConvInteger's W). Blocked quantization (``block_size``), float8, 4- and 16-bit types and
non-float32 scales are refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import Op, register
from hetlab.devices.kernels.ops.common import attr, bcast_strides, f32, grid1, i32, numel
from hetlab.devices.kernels.ops.conv import geometry
from hetlab.graph.ir import Node, OpGraph

Q8 = ("uint8", "int8")
CL_TYPE = {"uint8": "U8", "int8": "I8", "int32": "int"}
RANGE = {"uint8": (0.0, 255.0), "int8": (-128.0, 127.0)}
FLOAT = ("float32",)


def _typed(graph: OpGraph, name: str, dtypes: tuple[str, ...], role: str) -> str | None:
    """Why tensor ``name`` (the node's ``role``) rules the node out, or None."""
    t = graph.tensors.get(name)
    if t is None or t.shape is None:
        return f"{role} has no fixed shape"
    if t.dtype not in dtypes:
        return f"{role} is {t.dtype} (the quantized kernels take {'/'.join(dtypes)} here)"
    if len(t.shape) > 6:
        return f"{role} has rank {len(t.shape)} > 6"
    if any(int(d) <= 0 for d in t.shape):
        return f"{role} is empty"
    return None


def _input(node: Node, i: int) -> str:
    return node.inputs[i] if i < len(node.inputs) else ""


def _buf(ctx: Any, name: str) -> Any:
    """The buffer of input ``name``: its value uploaded in its own type when constant."""
    c = ctx.const(name)
    if c is None:
        return ctx.t(name)
    return ctx.upload(np.asarray(c), key=("typed", name), dtype=ctx.dtype(name))


def _opt(ctx: Any, name: str) -> tuple[Any, int]:
    """(buffer, present) of an optional input; a placeholder buffer where it is absent."""
    return (_buf(ctx, name), 1) if name else (ctx.scratch(1), 0)


class Signature(Op):
    """An op whose inputs and outputs have fixed element types: ``inputs`` is one
    (allowed dtypes, optional) per input index, ``outputs`` the allowed dtypes per output."""

    inputs: tuple[tuple[tuple[str, ...], bool], ...] = ()
    outputs: tuple[tuple[str, ...], ...] = ()

    def why_not(self, node: Node, graph: OpGraph) -> str | None:
        if len(node.inputs) > len(self.inputs):
            return f"{node.op_type} with {len(node.inputs)} inputs"
        for i, (dtypes, optional) in enumerate(self.inputs):
            name = _input(node, i)
            if not name:
                if not optional:
                    return f"input {i} is omitted"
                continue
            r = _typed(graph, name, dtypes, f"input {i}")
            if r:
                return r
        for i, dtypes in enumerate(self.outputs):
            if i < len(node.outputs) and node.outputs[i]:
                r = _typed(graph, node.outputs[i], dtypes, f"output {i}")
                if r:
                    return r
        return self.check(node, graph)


def _axis_layout(node: Node, graph: OpGraph) -> tuple[int, int] | str:
    """(inner, C) of a Quantize/DequantizeLinear's parameters: element i uses parameter
    (i // inner) % C. A refusal reason where the layout is not per tensor or per axis."""
    if int(attr(node, "block_size", 0) or 0):
        return "blocked quantization (block_size)"
    xs = tuple(int(d) for d in graph.tensors[node.inputs[0]].shape)
    ss = tuple(int(d) for d in graph.tensors[node.inputs[1]].shape)
    zp = _input(node, 2)
    if zp and tuple(int(d) for d in graph.tensors[zp].shape) != ss:
        return "zero point and scale differ in shape"
    if len(ss) == 0 or (len(ss) == 1 and ss[0] == 1 and not xs):
        return 1, 1
    axis = int(attr(node, "axis", 1))
    axis = axis + len(xs) if axis < 0 else axis
    if len(ss) != 1 or not 0 <= axis < len(xs):
        return f"scale of shape {ss} on an input of rank {len(xs)}"
    if ss[0] == 1:
        return 1, 1
    if ss[0] != xs[axis]:
        return f"{ss[0]} scales along an axis of {xs[axis]}"
    return numel(xs[axis + 1 :]), ss[0]


@register
class QuantizeLinear(Signature):
    op_types = ("QuantizeLinear",)
    inputs = ((FLOAT, False), (FLOAT, False), (Q8, True))
    outputs = (Q8,)

    def check(self, node: Node, graph: OpGraph) -> str | None:
        zp = _input(node, 2)
        if zp and graph.tensors[zp].dtype != graph.tensors[node.outputs[0]].dtype:
            return "zero point and output differ in type"
        layout = _axis_layout(node, graph)
        return layout if isinstance(layout, str) else None

    def build(self, node: Node, ctx: Any) -> None:
        x, s, z = node.inputs[0], node.inputs[1], _input(node, 2)
        inner, C = _axis_layout(node, ctx.graph)
        ty = ctx.dtype(node.outputs[0])
        zbuf, has = _opt(ctx, z)
        n = numel(ctx.shape(x))
        k = ctx.kernel("quant.cl", "quantize", f"-DTY={CL_TYPE[ty]}")
        args = [_buf(ctx, x), _buf(ctx, s), zbuf, i32(has), ctx.t(node.outputs[0]), i32(n)]
        ctx.launch(node, k, *grid1(n), [*args, i32(inner), i32(C), *map(f32, RANGE[ty])])


@register
class DequantizeLinear(Signature):
    op_types = ("DequantizeLinear",)
    inputs = ((Q8 + ("int32",), False), (FLOAT, False), (Q8 + ("int32",), True))
    outputs = (FLOAT,)

    def check(self, node: Node, graph: OpGraph) -> str | None:
        zp = _input(node, 2)
        if zp and graph.tensors[zp].dtype != graph.tensors[node.inputs[0]].dtype:
            return "zero point and input differ in type"
        layout = _axis_layout(node, graph)
        return layout if isinstance(layout, str) else None

    def build(self, node: Node, ctx: Any) -> None:
        x, s, z = node.inputs[0], node.inputs[1], _input(node, 2)
        inner, C = _axis_layout(node, ctx.graph)
        zbuf, has = _opt(ctx, z)
        n = numel(ctx.shape(x))
        k = ctx.kernel("quant.cl", "dequantize", f"-DTX={CL_TYPE[ctx.dtype(x)]}")
        args = [_buf(ctx, x), _buf(ctx, s), zbuf, i32(has), ctx.t(node.outputs[0]), i32(n)]
        ctx.launch(node, k, *grid1(n), [*args, i32(inner), i32(C)])


@register
class DynamicQuantizeLinear(Signature):
    """Two launches: one work-group finds the range, scale and zero point; then every
    element is quantized with them."""

    op_types = ("DynamicQuantizeLinear",)
    inputs = ((FLOAT, False),)
    outputs = (("uint8",), FLOAT, ("uint8",))

    def build(self, node: Node, ctx: Any) -> None:
        x = _buf(ctx, node.inputs[0])
        y, ys, yz = (ctx.t(o) if o else ctx.scratch(1) for o in (list(node.outputs) + [""] * 3)[:3])
        n = numel(ctx.shape(node.inputs[0]))
        k = ctx.kernel("quant.cl", "dynamic_qparams")
        ctx.launch(node, k, (256,), (256,), [x, i32(n), ys, yz])
        k = ctx.kernel("quant.cl", "quantize", "-DTY=U8")
        args = [x, ys, yz, i32(1), y, i32(n), i32(1), i32(1), f32(0.0), f32(255.0)]
        ctx.launch(node, k, *grid1(n), args)


def _zero_points(graph: OpGraph, node: Node, per: tuple[int, int]) -> str | None:
    """Why the zero points of a MatMulInteger/ConvInteger rule it out: input ``per[0]``'s
    zero point may be per tensor only; input ``per[1]``'s per tensor or 1-D of ``per[1]``'s
    size along its column (MatMulInteger) or output-channel (ConvInteger) axis."""
    for i, zi in enumerate((2, 3)):
        zp = _input(node, zi)
        if not zp:
            continue
        if graph.tensors[zp].dtype != graph.tensors[node.inputs[i]].dtype:
            return f"zero point {zi} and input {i} differ in type"
        shape = tuple(int(d) for d in graph.tensors[zp].shape)
        if numel(shape) == 1:
            continue
        ws = graph.tensors[node.inputs[1]].shape
        along = int(ws[-1] if node.op_type == "MatMulInteger" else ws[0])
        if i == 0 or shape != (along,):
            return f"zero point {zi} of shape {shape}"
    return None


@register
class MatMulInteger(Signature):
    op_types = ("MatMulInteger",)
    inputs = ((Q8, False), (Q8, False), (Q8, True), (Q8, True))
    outputs = (("int32",),)

    def check(self, node: Node, graph: OpGraph) -> str | None:
        return _zero_points(graph, node, (0, 1))

    def build(self, node: Node, ctx: Any) -> None:
        a, b = node.inputs[0], node.inputs[1]
        ash, bsh = list(ctx.shape(a)), list(ctx.shape(b))
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
        za, has_a = _opt(ctx, _input(node, 2))
        zb, has_b = _opt(ctx, _input(node, 3))
        zb_n = numel(ctx.shape(_input(node, 3))) if has_b else 0
        opts = f"-DTX={CL_TYPE[ctx.dtype(a)]} -DTW={CL_TYPE[ctx.dtype(b)]}"
        k = ctx.kernel("quant.cl", "matmul_integer", opts)
        args = [_buf(ctx, a), _buf(ctx, b), za, i32(has_a), zb, i32(zb_n)]
        args += [ctx.t(node.outputs[0]), i32(M), i32(N), i32(K), ctx.ints(offs)]
        ctx.launch(node, k, (N, M, len(offs) // 3), None, args)


@register
class ConvInteger(Signature):
    op_types = ("ConvInteger",)
    inputs = ((Q8, False), (Q8, False), (Q8, True), (Q8, True))
    outputs = (("int32",),)

    def check(self, node: Node, graph: OpGraph) -> str | None:
        r = len(graph.tensors[node.inputs[0]].shape)
        if r not in (3, 4):
            return f"ConvInteger on rank-{r} input (only 1-D and 2-D convolutions)"
        if len(graph.tensors[node.inputs[1]].shape) != r:
            return "weight rank differs from input rank"
        return _zero_points(graph, node, (0, 1))

    def build(self, node: Node, ctx: Any) -> None:
        x, w = node.inputs[0], node.inputs[1]
        xs, ys, ws = ctx.shape(x), ctx.shape(node.outputs[0]), ctx.shape(w)
        g = geometry(node, xs, ys, list(ws[2:]))
        keys = ("H", "W", "OH", "OW", "KH", "KW", "SH", "SW", "PH", "PW", "DH", "DW")
        p = [g[k] for k in keys] + [xs[1], ws[0], int(attr(node, "group", 1))]
        zx, has_x = _opt(ctx, _input(node, 2))
        zw, has_w = _opt(ctx, _input(node, 3))
        zw_n = numel(ctx.shape(_input(node, 3))) if has_w else 0
        opts = f"-DTX={CL_TYPE[ctx.dtype(x)]} -DTW={CL_TYPE[ctx.dtype(w)]}"
        k = ctx.kernel("quant.cl", "conv_integer", opts)
        args = [_buf(ctx, x), _buf(ctx, w), zx, i32(has_x), zw, i32(zw_n)]
        args += [ctx.t(node.outputs[0]), ctx.ints(p)]
        ctx.launch(node, k, (g["OW"], g["OH"], xs[0] * ws[0]), None, args)
