"""The quantizing ops on quant.cl: QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear,
and what the integer ops (``integer.py``) share with them.

Their integer tensors (uint8, int8, int32) live in buffers of their own type (the builder's
``TYPED``), so integer results are exact and match onnxruntime bit for bit; float32 tensors
are as elsewhere. Scales and zero points are per tensor or per axis. Blocked quantization
(``block_size``), float8, 4- and 16-bit types and non-float32 scales are refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import Op, register
from hetlab.devices.kernels.ops.common import attr, cpu_grid1, f32, grid1, i32, numel
from hetlab.graph.ir import Node, OpGraph

Q8 = ("uint8", "int8")
CL_TYPE = {"uint8": "U8", "int8": "I8", "int32": "int"}
RANGE = {"uint8": (0.0, 255.0), "int8": (-128.0, 127.0)}
FLOAT = ("float32",)
RANGE_PARTS = 64  # a CPU device's DynamicQuantizeLinear range: at most this many parts


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


def input_at(node: Node, i: int) -> str:
    return node.inputs[i] if i < len(node.inputs) else ""


def typed_buffer(ctx: Any, name: str) -> Any:
    """The buffer of input ``name``: its value uploaded in its own type when constant."""
    c = ctx.const(name)
    if c is None:
        return ctx.t(name)
    return ctx.upload(np.asarray(c), key=("typed", name), dtype=ctx.dtype(name))


def optional_buffer(ctx: Any, name: str) -> tuple[Any, int]:
    """(buffer, present) of an optional input; a placeholder buffer where it is absent."""
    return (typed_buffer(ctx, name), 1) if name else (ctx.scratch(1), 0)


class Signature(Op):
    """An op whose inputs and outputs have fixed element types: ``inputs`` is one
    (allowed dtypes, optional) per input index, ``outputs`` the allowed dtypes per output."""

    inputs: tuple[tuple[tuple[str, ...], bool], ...] = ()
    outputs: tuple[tuple[str, ...], ...] = ()

    def why_not(self, node: Node, graph: OpGraph) -> str | None:
        if len(node.inputs) > len(self.inputs):
            return f"{node.op_type} with {len(node.inputs)} inputs"
        for i, (dtypes, optional) in enumerate(self.inputs):
            name = input_at(node, i)
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
    zp = input_at(node, 2)
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


def elementwise_kernel(ctx: Any, name: str, opts: str) -> Any:
    """quant.cl's ``quantize`` or ``dequantize``; on a CPU device quant_cpu.cl's, which takes
    16 elements a work-item (``elementwise_grid``)."""
    if ctx.device.cpu_kernels:
        return ctx.kernel("quant_cpu.cl", f"{name}_cpu", opts)
    return ctx.kernel("quant.cl", name, opts)


def elementwise_grid(ctx: Any, n: int) -> tuple[tuple[int], tuple[int]]:
    """(global size, work-group size) of ``elementwise_kernel`` over ``n`` elements."""
    return cpu_grid1(n) if ctx.device.cpu_kernels else grid1(n)


class _LinearQuant(Signature):
    """QuantizeLinear and DequantizeLinear: x, a scale and an optional zero point, per
    tensor or along an axis, one work-item per element."""

    zero_point_like = "output"  # the tensor whose type the zero point has

    def check(self, node: Node, graph: OpGraph) -> str | None:
        zp = input_at(node, 2)
        like = node.outputs[0] if self.zero_point_like == "output" else node.inputs[0]
        if zp and graph.tensors[zp].dtype != graph.tensors[like].dtype:
            return f"zero point and {self.zero_point_like} differ in type"
        layout = _axis_layout(node, graph)
        return layout if isinstance(layout, str) else None

    def launch_each(self, node: Node, ctx: Any, kernel: Any, *extra: Any) -> None:
        """``kernel`` over every element: x (from its first element), scale, zero point
        (and whether there is one), the output, the count, the axis layout, then ``extra``."""
        x, s, z = node.inputs[0], node.inputs[1], input_at(node, 2)
        inner, C = _axis_layout(node, ctx.graph)
        zbuf, has = optional_buffer(ctx, z)
        n = numel(ctx.shape(x))
        args = [typed_buffer(ctx, x), i32(0), typed_buffer(ctx, s), zbuf, i32(has)]
        args.append(ctx.t(node.outputs[0]))
        ctx.launch(
            node, kernel, *elementwise_grid(ctx, n), [*args, i32(n), i32(inner), i32(C), *extra]
        )


@register
class QuantizeLinear(_LinearQuant):
    op_types = ("QuantizeLinear",)
    inputs = ((FLOAT, False), (FLOAT, False), (Q8, True))
    outputs = (Q8,)

    def build(self, node: Node, ctx: Any) -> None:
        ty = ctx.dtype(node.outputs[0])
        k = elementwise_kernel(ctx, "quantize", f"-DTY={CL_TYPE[ty]}")
        self.launch_each(node, ctx, k, *map(f32, RANGE[ty]))


@register
class DequantizeLinear(_LinearQuant):
    op_types = ("DequantizeLinear",)
    inputs = ((Q8 + ("int32",), False), (FLOAT, False), (Q8 + ("int32",), True))
    outputs = (FLOAT,)
    zero_point_like = "input"

    def build(self, node: Node, ctx: Any) -> None:
        tx = ctx.dtype(node.inputs[0])
        self.launch_each(node, ctx, elementwise_kernel(ctx, "dequantize", f"-DTX={CL_TYPE[tx]}"))


@register
class DynamicQuantizeLinear(Signature):
    """Two launches: one work-group finds the range, scale and zero point; then every
    element is quantized with them."""

    op_types = ("DynamicQuantizeLinear",)
    inputs = ((FLOAT, False),)
    outputs = (("uint8",), FLOAT, ("uint8",))

    def build(self, node: Node, ctx: Any) -> None:
        y, ys, yz = (ctx.t(o) if o else None for o in (list(node.outputs) + [""] * 3)[:3])
        x, n = typed_buffer(ctx, node.inputs[0]), numel(ctx.shape(node.inputs[0]))
        dynamic_quantize(ctx, node, (x, 0), n, (y, ys, yz))


def dynamic_quantize(
    ctx: Any, node: Node, x: tuple[Any, int], n: int, out: tuple[Any, Any, Any] = (None,) * 3
) -> tuple[Any, Any, Any]:
    """DynamicQuantizeLinear of the ``n`` floats at ``x`` (buffer, element offset), as
    onnxruntime quantizes activations (here and inside its contrib ops): (the uint8 values,
    the scale, the zero point), each written to ``out``'s buffer or a scratch one."""
    y, ys, yz = out
    y = ctx.scratch(n, "uint8") if y is None else y
    ys = ctx.scratch(1) if ys is None else ys
    yz = ctx.scratch(1, "uint8") if yz is None else yz
    if ctx.device.cpu_kernels:  # quant_cpu.cl: the range in parts, one per work-group
        parts = min(RANGE_PARTS, -(-n // 4096))
        chunk = -(-n // (8 * parts)) * 8
        part = ctx.scratch(2 * parts)
        k = ctx.kernel("quant_cpu.cl", "range_parts_cpu")
        ctx.launch(node, k, (parts,), (1,), [x[0], i32(x[1]), i32(n), i32(chunk), part])
        k = ctx.kernel("quant_cpu.cl", "dynamic_qparams_parts")
        ctx.launch(node, k, (1,), (1,), [part, i32(parts), ys, yz])
    else:
        k = ctx.kernel("quant.cl", "dynamic_qparams")
        ctx.launch(node, k, (256,), (256,), [x[0], i32(x[1]), i32(n), ys, yz])
    k = elementwise_kernel(ctx, "quantize", "-DTY=U8")
    args = [x[0], i32(x[1]), ys, yz, i32(1), y, i32(n), i32(1), i32(1), f32(0.0), f32(255.0)]
    ctx.launch(node, k, *elementwise_grid(ctx, n), args)
    return y, ys, yz
