"""Data movement on tensors of any kernel dtype (float32, int32, int64, bool, the int8 and
uint8 of quantized models, and float16 as its 16 bits): views (Reshape, Flatten, Squeeze,
Unsqueeze, Identity, Dropout, and a Transpose that moves only axes of extent 1 -- no kernel,
the output aliases the input buffer) and strided copies (Transpose, Slice, Concat, Split,
Expand, Tile), compiled per element type. Shape inputs are never read: output shapes are
fixed in the graph. Gather is in gather.py, Pad in pad.py."""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import Op, register
from hetlab.devices.kernels.ops.common import (
    CPU_ELEMENTS,
    MAXD,
    MOVED,
    attr,
    bcast_strides,
    cpu_grid1,
    grid1,
    i32,
    is_const,
    nd_meta,
    numel,
    strides,
    type_options,
)
from hetlab.devices.kernels.views import contiguous, pack
from hetlab.graph.ir import Node, OpGraph


def copy_launch(ctx: Any, node: Node, src: Any, dst: Any, shape, sa, sb, offa=0, offb=0) -> None:
    """Copy ``src`` into ``dst`` over ``shape`` with the given strides and offsets, in the
    node's output type (a CPU device: move_cpu.cl's ``copy_cpu``, 16 elements a work-item)."""
    meta = nd_meta(shape, sa, sb, offa, offb)
    n = numel(shape)
    out = next((o for o in node.outputs if o), "")
    dtype = ctx.dtype(out) if out else "float32"
    if ctx.device.cpu_kernels:
        g, l = cpu_grid1(n)
        k = ctx.kernel("move_cpu.cl", "copy_cpu", type_options(dtype))
    else:
        g, l = grid1(n)
        k = ctx.kernel("eltwise.cl", "copy_nd", type_options(dtype))
    ctx.launch(node, k, g, l, [src, dst, ctx.ints(meta), i32(n)])


class Move(Op):
    """A data-movement op: every kernel dtype and the 1-byte integers. Its checked tensor is
    the data (input 0); the other inputs are shapes, starts or repeats, read as constants."""

    def float_inputs(self, node: Node) -> list[int]:
        return [0]

    def dtypes(self, node: Node) -> tuple[str, ...]:
        return MOVED


@register
class View(Move):
    op_types = ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout")

    def check(self, node: Node, graph: OpGraph) -> str | None:
        if node.op_type == "Dropout" and len(node.outputs) > 1 and node.outputs[1]:
            return "Dropout's mask output is not produced"
        return None

    def build(self, node: Node, ctx: Any) -> None:
        ctx.make_alias(node.outputs[0], node.inputs[0])


@register
class Transpose(Move):
    op_types = ("Transpose",)

    def build(self, node: Node, ctx: Any) -> None:
        xs = ctx.shape(node.inputs[0])
        perm = list(attr(node, "perm", list(range(len(xs)))[::-1]))
        st = strides(xs)
        ys = ctx.shape(node.outputs[0])
        sa = [st[p] for p in perm]
        if in_order(ys, sa):  # it moves only axes of extent 1: the same bytes, a view
            ctx.make_alias(node.outputs[0], node.inputs[0])
            return
        copy_launch(ctx, node, ctx.t(node.inputs[0]), ctx.t(node.outputs[0]), ys, sa, strides(ys))


def in_order(shape, sa) -> bool:
    """Whether reading strides ``sa`` over ``shape`` visits the source in memory order, so
    the copy to a row-major ``shape`` would be the source's bytes as they are."""
    meta = nd_meta(shape, sa, strides(shape))
    return meta[0] == 0 or (meta[0] == 1 and meta[2 * MAXD] == meta[3 * MAXD] == 1)


def slice_params(node: Node, graph_or_ctx_const) -> tuple[list, list, list] | None:
    get = graph_or_ctx_const
    if len(node.inputs) > 1:
        vals = [
            get(node.inputs[i]) if len(node.inputs) > i and node.inputs[i] else None
            for i in range(1, 5)
        ]
        if vals[0] is None or vals[1] is None:
            return None
        starts = [int(v) for v in np.asarray(vals[0]).reshape(-1)]
        axes = None if vals[2] is None else [int(v) for v in np.asarray(vals[2]).reshape(-1)]
        steps = None if vals[3] is None else [int(v) for v in np.asarray(vals[3]).reshape(-1)]
    else:
        starts = list(attr(node, "starts", []))
        axes = attr(node, "axes", None)
        steps = None
    axes = list(range(len(starts))) if axes is None else list(axes)
    steps = [1] * len(starts) if steps is None else steps
    return starts, axes, steps


@register
class Slice(Move):
    """A strided copy, or where the slice is a contiguous range of its input, a view of it
    (``views.py``) where the builder can make one, with no launch."""

    op_types = ("Slice",)

    def check(self, node: Node, graph: OpGraph) -> str | None:
        for t in node.inputs[1:]:
            if t and not is_const(graph, t):
                return "Slice starts/ends/axes/steps must be constants"
        return None

    def build(self, node: Node, ctx: Any) -> None:
        xs, ys = ctx.shape(node.inputs[0]), ctx.shape(node.outputs[0])
        starts, axes, steps = slice_params(node, ctx.const)
        st = strides(xs)
        sa, off, forward = list(st), 0, True
        for s0, ax, step in zip(starts, axes, steps, strict=False):
            ax = ax % len(xs)
            dim = xs[ax]
            s0 = s0 + dim if s0 < 0 else s0
            s0 = min(max(s0, 0), dim if step > 0 else dim - 1)
            off += s0 * st[ax]
            sa[ax] = st[ax] * step
            forward = forward and (step == 1 or ys[ax] == 1)
        if forward and contiguous(xs, ys) and ctx.make_view(node.outputs[0], node.inputs[0], off):
            return
        copy_launch(
            ctx, node, ctx.t(node.inputs[0]), ctx.t(node.outputs[0]), ys, sa, strides(ys), off, 0
        )


@register
class Concat(Move):
    op_types = ("Concat",)

    def float_inputs(self, node: Node) -> list[int]:
        return [i for i, t in enumerate(node.inputs) if t]  # every input is data

    def build(self, node: Node, ctx: Any) -> None:
        """One launch per run of up to four consecutive inputs that no producer wrote in
        place (``ctx.sub``); a run of one input is a strided copy."""
        ys = ctx.shape(node.outputs[0])
        ax = int(attr(node, "axis", 0)) % len(ys)
        dtype = ctx.dtype(node.outputs[0])
        y, base = ctx.dest(node)
        pos, run = 0, []
        for t in [*node.inputs, None]:
            if t is None or t in ctx.sub or len(run) == 4:
                concat_run(ctx, node, run, ys, ax, y, base)
                run = []
            if t is None:
                break
            xs = ctx.shape(t) if ctx.const(t) is None else tuple(np.shape(ctx.const(t)))
            if t not in ctx.sub:  # else its producer already wrote it in place
                run.append((ctx.tensor_or_const(t, dtype), xs, pos))
            pos += xs[ax]


def concat_run(ctx: Any, node: Node, run: list, ys, ax: int, y: Any, base: int) -> None:
    """Copy ``run`` (each input's buffer, shape and axis position, consecutive on the axis)
    into its place in ``y`` (the Concat's output, from element ``base``)."""
    if not run:
        return
    yst, dtype = strides(ys), ctx.dtype(node.outputs[0])
    if len(run) == 1:
        src, xs, pos = run[0]
        copy_launch(ctx, node, src, y, xs, strides(xs), yst, 0, base + pos * yst[ax])
        return
    p0, inner = run[0][2], yst[ax]
    at = [p - p0 for _, _, p in run]
    end = run[-1][2] + run[-1][1][ax] - p0
    meta = [ys[ax], inner, base, p0, *at, *[end] * (5 - len(at))]
    n = numel(ys[:ax]) * end * inner
    g, l = cpu_grid1(n) if ctx.device.cpu_kernels else grid1(n)
    ew = CPU_ELEMENTS if ctx.device.cpu_kernels else 1
    srcs = [r[0] for r in run] + [run[0][0]] * (4 - len(run))
    k = ctx.kernel("eltwise.cl", "concat4", type_options(dtype))
    ctx.launch(node, k, g, l, [*srcs, y, ctx.ints(meta), i32(n), i32(ew)])


@register
class Split(Move):
    """Each part a view of the input where it is a contiguous range of it that the builder
    can view (``views.py``); the other parts, of one size and evenly spaced, views of one
    buffer that one copy fills, else a copy each."""

    op_types = ("Split",)

    def why_not(self, node: Node, graph: OpGraph) -> str | None:
        r = super().why_not(node, graph)
        if r is None and any(not o for o in node.outputs):
            return "Split with omitted outputs"
        return r

    def build(self, node: Node, ctx: Any) -> None:
        xs = ctx.shape(node.inputs[0])
        ax = int(attr(node, "axis", 0)) % len(xs)
        st = strides(xs)
        pos, rest = 0, []
        for o in node.outputs:
            ys, off = ctx.shape(o), pos * st[ax]
            pos += ys[ax]
            if not (contiguous(xs, ys) and ctx.make_view(o, node.inputs[0], off)):
                rest.append((o, ys, off))
        if len(rest) > 1 and _packed(ctx, node, xs, rest):
            return
        for o, ys, off in rest:
            copy_launch(ctx, node, ctx.t(node.inputs[0]), ctx.t(o), ys, st, strides(ys), off, 0)


def _packed(ctx: Any, node: Node, xs: tuple[int, ...], parts: list[tuple]) -> bool:
    """Whether ``parts`` (output, shape, offset in the input) are now views of one buffer of
    the unit's that one copy fills (``views.pack``): parts of one size, each a contiguous
    range of the input, evenly spaced in it."""
    n = numel(parts[0][1])
    offs = [p[2] for p in parts]
    gap = offs[1] - offs[0]
    if any(numel(p[1]) != n or not contiguous(xs, p[1]) for p in parts) or gap < n:
        return False
    if offs != list(range(offs[0], offs[0] + gap * len(offs), gap)):
        return False
    got = pack(ctx, [p[0] for p in parts], n)
    if got is None:
        return False
    buf, step = got
    shape = (len(parts), n)
    copy_launch(ctx, node, ctx.t(node.inputs[0]), buf.buf, shape, (gap, 1), (step, 1), offs[0])
    return True


@register
class Expand(Move):
    op_types = ("Expand",)

    def build(self, node: Node, ctx: Any) -> None:
        xs, ys = ctx.shape(node.inputs[0]), ctx.shape(node.outputs[0])
        copy_launch(
            ctx,
            node,
            ctx.t(node.inputs[0]),
            ctx.t(node.outputs[0]),
            ys,
            bcast_strides(xs, ys),
            strides(ys),
        )


def tile_view(xs, ys) -> tuple[list[int], list[int], list[int]] | None:
    """Tile as one strided copy: each axis of ``ys`` split into (repeat, x's extent), the
    repeat read with stride 0; None when more than MAXD axes remain after merging."""
    shape, sa, sb = [], [], []
    for x, y, st, yt in zip(xs, ys, strides(xs), strides(ys), strict=True):
        shape += [y // x, x]
        sa += [0, st]
        sb += [x * yt, yt]
    try:
        nd_meta(shape, sa, sb)
    except ValueError:
        return None
    return shape, sa, sb


@register
class Tile(Move):
    op_types = ("Tile",)

    def check(self, node: Node, graph: OpGraph) -> str | None:
        xs = graph.tensors[node.inputs[0]].shape
        ys = graph.tensors[node.outputs[0]].shape
        if tile_view([int(d) for d in xs], [int(d) for d in ys]) is None:
            return f"Tile of more than {MAXD} axes after merging"
        return None

    def build(self, node: Node, ctx: Any) -> None:
        xs, ys = ctx.shape(node.inputs[0]), ctx.shape(node.outputs[0])
        shape, sa, sb = tile_view(xs, ys)
        copy_launch(ctx, node, ctx.t(node.inputs[0]), ctx.t(node.outputs[0]), shape, sa, sb)


__all__ = ["copy_launch"]
