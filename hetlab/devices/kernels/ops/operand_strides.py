"""A Transpose or Slice whose output only MatMuls read has no launch of its own: each MatMul
reads the Transpose's (Slice's) input through the strides and offset that the op would have
copied with (an operand view). ``gemm_launch`` already takes any row and column stride per
operand and an element offset per batch matrix, so the product is the same launch.

Not folded: a tensor that is a unit output or a float16 twin, a constant (folded at build
time anyway), an op that is already a view (a Transpose of extent-1 axes), and, on a CPU
device, a B whose columns would not be adjacent where the product is large enough for
``gemm_pack.cpu_pack_b`` to pack B (the pack launch reads adjacent columns: the copy stays).
Planned with the other fusions, before any op builds; the folded op's node is skipped by the
builder, like a view, and the MatMul's launch depends on what makes the op's input.

Likewise on the result side: a Transpose that alone reads a MatMul's (final) output and keeps
its last axis is written by the MatMul directly (its C at a row stride and per-batch offsets
into the Transpose's output), the Transpose fused into the MatMul's launch."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from hetlab.devices.kernels.ops.common import attr, numel, strides
from hetlab.devices.kernels.ops.data_movement import in_order, slice_params
from hetlab.devices.kernels.ops.gemm_pack import PACK_LEAST
from hetlab.graph.ir import Node

VIEWED = ("Transpose", "Slice")


@dataclass(frozen=True)
class OperandView:
    """The viewed tensor's element (i0, i1, ...) is ``source``'s flat element
    ``offset + sum(i * s for s in strides)``."""

    source: str
    offset: int
    strides: tuple[int, ...]


def _view(n: Node, ub: Any) -> OperandView | None:
    """The strides and offset through which op ``n`` reads its input, None where it cannot
    be said (a Slice of negative steps)."""
    xs = ub.shape(n.inputs[0])
    st = strides(xs)
    if n.op_type == "Transpose":
        perm = list(attr(n, "perm", list(range(len(xs)))[::-1]))
        sa = [st[p] for p in perm]
        if in_order(ub.shape(n.outputs[0]), sa):  # the op is a view already
            return None
        return OperandView(n.inputs[0], 0, tuple(sa))
    params = slice_params(n, ub.const)
    if params is None:
        return None
    sa, off = list(st), 0
    for s0, ax, step in zip(*params, strict=False):
        ax %= len(xs)
        if step < 1:
            return None
        s0 = min(max(s0 + xs[ax] if s0 < 0 else s0, 0), xs[ax])
        off, sa[ax] = off + s0 * st[ax], st[ax] * step
    return OperandView(n.inputs[0], off, tuple(sa))


def _fits(ub: Any, reader: Node, y: str, view: OperandView) -> bool:
    """Whether ``reader``'s product keeps its kernels with ``y`` read through ``view``."""
    if not ub.device.cpu_kernels or view.strides[-1] == 1 or reader.inputs[1] != y:
        return True
    K = ub.shape(y)[-2]
    return numel(ub.shape(reader.outputs[0])) * K < PACK_LEAST


def plan_result_views(ub: Any) -> None:
    """``ub.result_views``: MatMul id -> the ``OperandView`` of the Transpose that alone reads
    its (final) output and keeps the last axis: the MatMul writes the Transpose's output,
    its result's element (i0, i1, ...) at ``strides`` there; the Transpose is fused into it."""
    ub.result_views = {}
    for n in ub.nodes:
        if n.op_type != "MatMul" or n.id in ub.fused or n.id in ub.widened:
            continue
        if min(len(ub.shape(n.inputs[0])), len(ub.shape(n.inputs[1]))) < 2:
            continue  # a vector operand: the result has no row or column axis
        y = ub.final.get(n.id, n.outputs[0])
        names = ub.consumers.get(y, [])
        if len(names) != 1 or names[0] not in ub.position or y in ub.outputs or y in ub.rounded:
            continue
        t = ub.graph.node(names[0])
        nd = len(ub.shape(y))
        if t.op_type != "Transpose" or t.id in ub.fused or t.id in ub.widened or nd < 2:
            continue
        perm = [p % nd for p in attr(t, "perm", list(range(nd))[::-1])]
        if perm[-1] != nd - 1 or ub.graph.tensors[t.outputs[0]].dtype != "float32":
            continue
        zs = strides(ub.shape(t.outputs[0]))
        ub.result_views[n.id] = OperandView(
            t.outputs[0], 0, tuple(zs[perm.index(i)] for i in range(nd))
        )
        ub.fused[t.id], ub.final[n.id] = n.id, t.outputs[0]


def plan_operand_views(ub: Any) -> None:
    """``ub.operand_views``: the output of each op so folded -> its ``OperandView``; first
    ``plan_result_views``."""
    plan_result_views(ub)
    ub.operand_views = {}
    for n in ub.nodes:
        y = n.outputs[0] if n.outputs else ""
        if n.op_type not in VIEWED or n.id in ub.fused or n.id in ub.widened:
            continue
        if not y or y in ub.outputs or y in ub.rounded or ub.const(n.inputs[0]) is not None:
            continue
        t = ub.graph.tensors.get(y)
        if t is None or t.dtype != "float32" or len(ub.shape(y)) < 2:
            continue
        names = ub.consumers.get(y, [])
        readers = [ub.graph.node(r) for r in names if r in ub.position]
        if not readers or len(readers) != len(names):
            continue
        if any(r.op_type != "MatMul" or r.id in ub.fused or r.id in ub.widened for r in readers):
            continue
        view = _view(n, ub)
        if view is not None and all(_fits(ub, r, y, view) for r in readers):
            ub.operand_views[y] = view


def _batch_strides(bat: list[int], st: list[int], obat: list[int]) -> list[int]:
    """Element strides of batch dims ``bat`` (strides ``st``) broadcast to ``obat``."""
    pad = len(obat) - len(bat)
    return [0 if i < pad or bat[i - pad] == 1 else st[i - pad] for i in range(len(obat))]


def _merges(dims: list[int], st: list[int]) -> bool:
    """Whether axes ``dims`` at strides ``st`` are one axis of stride ``st[-1]``."""
    keep = [(d, s) for d, s in zip(dims, st, strict=True) if d != 1]
    return all(s0 == s1 * d1 for (_, s0), (d1, s1) in pairwise(keep))


def view_operands(
    ctx: Any, node: Node, shapes: tuple[list[int], list[int]], N: int, full: bool
) -> dict[str, Any] | None:
    """``gemm_launch``'s M, A, sam, sak, B, sbk, sbn, ldc and offs for MatMul ``node`` where
    an operand is an operand view or its result a result view (``shapes``: A's and B's
    shapes, at least 2-D), else None. A's batch is folded into M where B has none and A's
    batch and rows are one axis, in C too."""
    views, (a, b) = getattr(ctx, "operand_views", {}), node.inputs
    res = getattr(ctx, "result_views", {}).get(node.id)
    if a not in views and b not in views and res is None:
        return None
    ops = []
    for name, shp in zip((a, b), shapes, strict=True):
        v = views.get(name)
        if v is None:
            base, st = ctx.tensor_or_const(name), strides(shp)
            ops.append((base, 0, st))
        else:
            ops.append((ctx.t(v.source), v.offset, list(v.strides)))
    (A, oa, sta), (B, ob, stb) = ops
    ash, bsh = shapes
    M, abat, bbat = ash[-2], ash[:-2], bsh[:-2]
    obat = list(np.broadcast_shapes(tuple(abat), tuple(bbat)))
    stc = list(res.strides) if res is not None else strides([*obat, M, N])
    kw = {"A": A, "sam": sta[-2], "sak": sta[-1], "B": B, "sbk": stb[-2], "sbn": stb[-1]}
    kw["ldc"] = stc[-2]
    fold = all(d == 1 for d in bbat) and abat == obat
    if fold and _merges(ash[:-1], sta[:-1]) and _merges([*obat, M], stc[:-1]):
        return {**kw, "M": M * numel(abat), "offs": [(oa, ob, 0, 0)]}
    sa, sb = _batch_strides(abat, sta[:-2], obat), _batch_strides(bbat, stb[:-2], obat)
    offs = []
    for i, idx in enumerate(np.ndindex(*obat)):
        ia = oa + sum(j * s for j, s in zip(idx, sa, strict=True))
        ib = ob + sum(j * s for j, s in zip(idx, sb, strict=True))
        ic = sum(j * s for j, s in zip(idx, stc[:-2], strict=True))
        offs.append((ia, ib, ic, i * M * N if full else 0))
    return {**kw, "M": M, "offs": offs}
