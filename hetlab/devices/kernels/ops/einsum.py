"""ONNX Einsum of one or two operands as a (batched) GEMM.

Each index of a two-operand equation has one role: batch (both inputs and the output),
contracted (both inputs, not the output), free-left (first input and the output) or
free-right (second input and the output). The GEMM takes one stride per dimension, so each
role's indices flatten to one dimension -- batch to per-product offsets, free-left to M,
contracted to K, free-right to N -- where the operand's strides allow it. An operand whose
strides do not is first transpose-copied into [batch, M, K] (or [batch, K, N]); an output whose
strides do not (or whose N is not contiguous) is computed into [batch, M, N] scratch and
copied out. Computing the transposed product (B^T A^T) instead is chosen when it copies fewer
elements. One operand: a permutation of its indices, one transpose copy.

Refused, with the reason: ellipses, an index repeated in one operand (a diagonal), more than
two operands, an index summed from one operand only, sizes that differ for one index.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import Op, register
from hetlab.devices.kernels.ops.common import attr, numel, strides
from hetlab.devices.kernels.ops.data_movement import copy_launch
from hetlab.devices.kernels.ops.gemm import gemm_launch, no_act
from hetlab.errors import HetlabError
from hetlab.graph.ir import Node, OpGraph

MAX_PRODUCTS = 65535  # the launch grid's third dimension (CUDA's limit) counts the products


def parse(equation: str) -> tuple[list[str], str]:
    """(input terms, output term) of an equation; the implicit form's output is the indices
    that occur once, in alphabetical order."""
    eq = equation.replace(" ", "")
    if "." in eq:
        raise HetlabError("Einsum with an ellipsis")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    for term in [*terms, out]:
        if not re.fullmatch(r"[A-Za-z]*", term):
            raise HetlabError(f"Einsum term {term!r} is not a string of letters")
    if not arrow:
        counts = Counter("".join(terms))
        out = "".join(sorted(c for c, n in counts.items() if n == 1))
    return terms, out


def reason(terms: Sequence[str], out: str, shapes: Sequence[Sequence[int]]) -> str | None:
    """Why this equation on operands of these shapes is not one permutation or one GEMM."""
    if len(terms) != len(shapes):
        return f"Einsum equation has {len(terms)} terms for {len(shapes)} inputs"
    if len(terms) > 2:
        return "Einsum of more than two operands"
    size: dict[str, int] = {}
    for term, shape in zip(terms, shapes, strict=True):
        if len(term) != len(shape):
            return f"Einsum term {term!r} for an input of rank {len(shape)}"
        if len(set(term)) != len(term):
            return "Einsum with an index repeated in one operand (a diagonal)"
        for c, d in zip(term, shape, strict=True):
            if size.setdefault(c, int(d)) != int(d):
                return f"Einsum index {c!r} has sizes {size[c]} and {d} (broadcast)"
    if len(set(out)) != len(out) or not set(out) <= set(size):
        return "Einsum output repeats an index or has one no input has"
    if len(terms) == 1 and set(out) != set(terms[0]):
        return "Einsum summing over an index of its only operand"
    if len(terms) == 2:
        one = set(terms[0]) ^ set(terms[1])
        summed = sorted(one - set(out))
        if summed:
            return f"Einsum index {summed[0]!r} summed from one operand only"
        batch = [c for c in out if c in terms[0] and c in terms[1]]
        if numel([size[c] for c in batch]) > MAX_PRODUCTS:
            return f"Einsum of more than {MAX_PRODUCTS} batched products"
    return None


@dataclass(frozen=True)
class Layout:
    """One orientation of a two-operand product: which input is A, the index groups, and
    which of A, B and C must be copied into their canonical layout."""

    swap: bool
    batch: tuple[str, ...]
    m: tuple[str, ...]
    k: tuple[str, ...]
    n: tuple[str, ...]
    copies: tuple[bool, bool, bool]


def sizes(terms: Sequence[str], shapes: Sequence[Sequence[int]]) -> dict[str, int]:
    """Each index's size."""
    return {
        c: int(d) for t, s in zip(terms, shapes, strict=True) for c, d in zip(t, s, strict=True)
    }


def merged(st: dict[str, int], size: dict[str, int], group: Sequence[str]) -> int | None:
    """The single stride of ``group``'s indices flattened row-major in this order, or None
    when the layout does not allow it (1 for a group of no or only size-1 indices: any stride
    serves, and 1 takes the kernels' contiguous paths)."""
    g = [c for c in group if size[c] != 1]
    if not g:
        return 1
    for a, b in itertools.pairwise(g):
        if st[a] != st[b] * size[b]:
            return None
    return st[g[-1]]


def choose(terms: Sequence[str], out: str, shapes: Sequence[Sequence[int]]) -> Layout:
    """The orientation (A = first or second input; K in either input's order) that copies the
    fewest elements; ties keep the equation's order."""
    size = sizes(terms, shapes)
    sts = [dict(zip(t, strides(s), strict=True)) for t, s in zip(terms, shapes, strict=True)]
    st_out = dict(zip(out, strides([size[c] for c in out]), strict=True))
    best: tuple[int, Layout] | None = None
    for swap in (False, True):
        ia, ib = (1, 0) if swap else (0, 1)
        ta, tb = terms[ia], terms[ib]
        batch = tuple(c for c in out if c in ta and c in tb)
        m = tuple(c for c in out if c in ta and c not in tb)
        n = tuple(c for c in out if c in tb and c not in ta)
        for korder in (ta, tb):
            k = tuple(c for c in korder if c in ta and c in tb and c not in out)
            ca = merged(sts[ia], size, m) is None or merged(sts[ia], size, k) is None
            cb = merged(sts[ib], size, k) is None or merged(sts[ib], size, n) is None
            cc = merged(st_out, size, m) is None or merged(st_out, size, n) != 1
            cost = (
                ca * numel(shapes[ia]) + cb * numel(shapes[ib]) + cc * numel(size[c] for c in out)
            )
            if best is None or cost < best[0]:
                best = (cost, Layout(swap, batch, m, k, n, (ca, cb, cc)))
    assert best is not None
    return best[1]


@register
class Einsum(Op):
    op_types = ("Einsum",)

    def check(self, node: Node, graph: OpGraph) -> str | None:
        eq = attr(node, "equation", None)
        if not eq:
            return "Einsum without an equation"
        try:
            terms, out = parse(str(eq))
        except HetlabError as e:
            return str(e)
        return reason(terms, out, [graph.tensors[t].shape for t in node.inputs])

    def build(self, node: Node, ctx: Any) -> None:
        terms, out = parse(str(attr(node, "equation")))
        shapes = [tuple(ctx.shape(t)) for t in node.inputs]
        y = ctx.t(node.outputs[0])
        if len(terms) == 1:
            st = dict(zip(terms[0], strides(shapes[0]), strict=True))
            ys = [shapes[0][terms[0].index(c)] for c in out]
            src = ctx.tensor_or_const(node.inputs[0])
            copy_launch(ctx, node, src, y, ys, [st[c] for c in out], strides(ys))
            return
        _product(ctx, node, terms, out, shapes, y)


def _product(ctx: Any, node: Node, terms: list[str], out: str, shapes: list, y: Any) -> None:
    """The GEMM of a two-operand equation, with the copies its layout needs."""
    lay = choose(terms, out, shapes)
    ia, ib = (1, 0) if lay.swap else (0, 1)
    size = sizes(terms, shapes)
    bufs, sts = [], []
    for i, order, copy in ((ia, lay.m + lay.k, lay.copies[0]), (ib, lay.k + lay.n, lay.copies[1])):
        buf = ctx.tensor_or_const(node.inputs[i])
        st = dict(zip(terms[i], strides(shapes[i]), strict=True))
        if copy:
            buf, st = _canonical(ctx, node, buf, st, size, lay.batch + order)
        bufs.append(buf)
        sts.append(st)
    st_c = dict(zip(out, strides([size[c] for c in out]), strict=True))
    c_order = lay.batch + lay.m + lay.n
    c_buf, c_st = y, st_c
    if lay.copies[2]:
        c_buf = ctx.scratch(numel(size[c] for c in c_order))
        c_st = dict(zip(c_order, strides([size[c] for c in c_order]), strict=True))
    offs = [
        [sum(i * st[c] for i, c in zip(idx, lay.batch, strict=True)) for st in (*sts, c_st)] + [0]
        for idx in np.ndindex(*[size[c] for c in lay.batch])
    ]
    gemm_launch(
        ctx,
        node,
        M=numel(size[c] for c in lay.m),
        N=numel(size[c] for c in lay.n),
        K=numel(size[c] for c in lay.k),
        A=bufs[0],
        sam=merged(sts[0], size, lay.m),
        sak=merged(sts[0], size, lay.k),
        B=bufs[1],
        sbk=merged(sts[1], size, lay.k),
        sbn=merged(sts[1], size, lay.n),
        C=c_buf,
        ldc=merged(c_st, size, lay.m),
        offs=offs,
        act=no_act(),
    )
    if lay.copies[2]:
        shape = [size[c] for c in c_order]
        copy_launch(ctx, node, c_buf, y, shape, strides(shape), [st_c[c] for c in c_order])


def _canonical(
    ctx: Any, node: Node, buf: Any, st: dict[str, int], size: dict[str, int], order: tuple
) -> tuple[Any, dict[str, int]]:
    """A row-major copy of an operand with its indices in ``order``, and its strides."""
    shape = [size[c] for c in order]
    dst = ctx.scratch(numel(shape))
    copy_launch(ctx, node, buf, dst, shape, [st[c] for c in order], strides(shape))
    return dst, dict(zip(order, strides(shape), strict=True))
