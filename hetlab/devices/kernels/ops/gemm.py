"""Gemm and MatMul on the tiled GEMM kernel (gemm.cl), plus ``gemm_launch``, shared with Conv.
At a precision other than fp32, Gemm, MatMul and Conv run on the device's library GEMM
instead (``library.py``: cuBLAS on the tensor cores).

Skinny products (M <= 4: FC layers, LSTM steps at batch 1) use the ``gemv`` kernel instead.
On a CPU device (PoCL) every product runs on ``gemm_cpu.cl`` (its shape: ``gemm_shape.py``).
Tile choice: 64x64 tiles (4x4 outputs per work-item) when they give at least two work-groups
per compute unit, else 32x32 (2x2); when the tiles still leave compute units short of work
(``gemm_shape.SplitRule``, which depends on what a launch costs the device), K is split across
work-groups and a second launch sums the partials (split-K).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import Op, register
from hetlab.devices.kernels.ops.common import attr, bcast_strides, f32, i32, is_const
from hetlab.devices.kernels.ops.gemm_pack import cpu_pack_b, cpu_packed
from hetlab.devices.kernels.ops.gemm_shape import (
    NARROW,
    choose_tiling,
    conv_table,
    launch_shape,
    narrow_rows,
    prelu_slopes,
)
from hetlab.devices.kernels.ops.library import Product, library_launch, wanted
from hetlab.devices.kernels.ops.operand_strides import view_operands
from hetlab.graph.ir import Node, OpGraph


def gemm_launch(
    ctx: Any,
    node: Node,
    *,
    M: int,
    N: int,
    K: int,
    A: Any,
    sam: int,
    sak: int,
    B: Any,
    sbk: int,
    sbn: int,
    C: Any,
    ldc: int,
    offs: Sequence[Sequence[int]],
    bias: Any = None,
    sbias_m: int = 0,
    sbias_n: int = 0,
    alpha: float = 1.0,
    beta: float = 1.0,
    act: Sequence[Any] = (),
    conv: Sequence[int] | None = None,
    resid: tuple[Any, int] | None = None,
    pre_relu: bool = False,
    library: bool = False,
    hosts: tuple[Any, ...] = (None, None, None),
) -> None:
    """Add the launch(es) of C[b] = act(alpha * A[b] @ B[b] + beta * bias[b] + R[b]) to
    ``ctx``. ``resid`` = (R, shift): a tensor of C's shape, read at C's element index less
    ``shift`` (C may be a slice of a larger buffer). ``pre_relu``: B is read through a Relu.
    ``library``: through the device's library GEMM where its precision asks for one
    (``library.py``), ``hosts`` the values of a constant A, B and bias (None where not)."""
    prelu = _prelu(ctx, node)
    epi = _epilogue(ctx, node, bias, sbias_m, sbias_n, alpha, beta, no_act() if prelu else act)
    p = Product(M, N, K, A, sam, sak, B, sbk, sbn, C, ldc, offs, conv, pre_relu, *hosts)
    if library and wanted(ctx.device):
        library_launch(ctx, node, p, epi, resid, _plain)
    else:
        _own_launch(ctx, node, p, epi, resid, prelu)


def _prelu(ctx: Any, node: Node) -> list[Any]:
    """gemm_cpu's PRELU arguments (slopes, their strides along m and n) where fusion put a
    PRelu into this product's epilogue (``gemm_shape.prelu_slopes``), else none."""
    a = ctx.act_of.get(node.id)
    if a is None or a.op_type != "PRelu":
        return []
    slopes, sm, sn = prelu_slopes(ctx, node, a)
    return [ctx.upload(slopes, key=("prelu", node.id)), i32(sm), i32(sn)]


def _plain(ctx: Any, node: Node, p: Product) -> None:
    """The device's own GEMM of ``p`` with no epilogue (the library path's stand-in)."""
    _own_launch(ctx, node, p, _epilogue(ctx, node, None, 0, 0, 1.0, 1.0, no_act()), None)


def _own_launch(
    ctx: Any, node: Node, p: Product, epi: list[Any], resid: Any, prelu: Sequence[Any] = ()
) -> None:
    """``p`` on the device's own kernels: gemv (M <= 4), gemm_cpu (a CPU; gemv_cpu where C
    has at most NARROW columns and A is constant) or the tiled gemm with split-K, the epilogue ``epi`` in the same launch (or split-K's sum)."""
    M, N, K, nb, dev = p.M, p.N, p.K, len(p.offs), ctx.device
    res_opt, res_args = ("", []) if resid is None else (" -DRESID", [resid[0], i32(resid[1])])
    in_opt = (" -DPRE_RELU" if p.pre_relu else "") + (" -DPRELU" if prelu else "")
    cpu = dev.cpu_kernels and not dev.gemm_splits
    narrow = cpu and N <= NARROW and not p.conv and p.a_host is not None  # gemv_cpu
    cp = ctx.ints(list(p.conv) if p.conv else [0] * 11)
    ktab = ctx.upload(conv_table(p.conv, K), dtype="int32") if p.conv else ctx.ints([0, 0, 0, 0])
    if cpu:  # operands packed for gemm_cpu: the constant ones now, B by a launch
        p, pk_opt = cpu_packed(ctx, p, narrow_rows(M, N) if narrow else None)
        if "B_PACKED" not in pk_opt and not narrow:
            p, b_opt = cpu_pack_b(ctx, node, p, cp, ktab)
            pk_opt += b_opt
        in_opt += pk_opt
    offs_buf = ctx.upload(np.asarray(p.offs, dtype=np.int32).reshape(nb, 4), dtype="int32")
    if M <= 4 and p.sak == 1 and p.sbn == 1 and not p.conv and not dev.gemm_splits and not cpu:
        k = ctx.kernel("gemm.cl", "gemv", "-DTS=32 -DA_KC=1 -DB_NC=1" + res_opt + in_opt)
        args = [i32(M), i32(N), i32(K), p.A, i32(p.sam), p.B, i32(p.sbk), p.C, i32(p.ldc)]
        ctx.launch(
            node,
            k,
            (math.ceil(N / 16) * 16, 16, nb),
            (16, 16, 1),
            [*args, offs_buf, *epi, *res_args],
        )
        return
    splits, klen, gsize, lsize, prog = launch_shape(M, N, K, nb, dev, cpu, p.conv, narrow)
    opts = f"-DA_KC={int(p.sak == 1)} -DB_NC={int(p.sbn == 1)}" + (" -DCONV" if p.conv else "")
    k = ctx.kernel(prog[0], prog[1], prog[2] + opts + res_opt + in_opt)
    dst, csplit = (p.C, 0) if splits == 1 else (ctx.scratch(splits * nb * M * N), M * N)
    args = [i32(M), i32(N), i32(K), p.A, i32(p.sam), i32(p.sak), p.B, i32(p.sbk), i32(p.sbn)]
    args += [dst, i32(p.ldc), i32(csplit), offs_buf, i32(splits), i32(klen), *epi, cp, ktab]
    ctx.launch(node, k, gsize, lsize, [*args, *res_args, *prelu])
    if splits > 1:  # a second launch sums the partials
        r = ctx.kernel("gemm.cl", "gemm_splitk", res_opt.strip())
        args = [i32(M), i32(N), i32(splits), i32(nb), dst, p.C, i32(p.ldc), offs_buf, *epi]
        ctx.launch(node, r, (N, M, nb), (16, 16, 1), [*args, *res_args])


def _epilogue(
    ctx: Any,
    node: Node,
    bias: Any,
    sbias_m: int,
    sbias_n: int,
    alpha: float,
    beta: float,
    act: Sequence[Any],
) -> list[Any]:
    """The epilogue's arguments, the same for every kernel of gemm.cl: the bias (a scratch
    buffer where there is none) and its strides, alpha, beta, whether there is a bias, and
    the activation's bounds (the node's fused activation unless ``act`` gives them)."""
    has_bias = bias is not None
    bias_buf = bias if has_bias else ctx.scratch(1)
    act = tuple(act) or ctx.act(node)
    return [bias_buf, i32(sbias_m), i32(sbias_n), f32(alpha), f32(beta), i32(has_bias), *act]


def no_act() -> tuple[np.float32, np.float32, np.float32]:
    """The epilogue arguments of no activation, for a GEMM that is part of a larger op (an
    RNN step, an Einsum), whatever activation fusion gave the node."""
    m = float(np.finfo(np.float32).max)
    return f32(1.0), f32(-m), f32(m)


def _fused_bias(ctx: Any, node: Node, N: int) -> tuple[Any, int, int]:
    """(buffer, stride along m, stride along n) of the Add folded into this GEMM."""
    row, tensor = ctx.bias_of[node.id]
    if row is not None:
        return ctx.upload(row, key=("bias", node.id)), 0, 1
    return ctx.tensor_or_const(tensor), N, 1


def _fused_bias_values(ctx: Any, node: Node) -> np.ndarray | None:
    """The values of the Add folded into this GEMM where they are constant, else None."""
    row, tensor = ctx.bias_of[node.id]
    return row if row is not None else ctx.const(tensor)


@register
class Gemm(Op):
    op_types = ("Gemm",)

    def check(self, node: Node, graph: OpGraph) -> str | None:
        if (
            len(graph.tensors[node.inputs[0]].shape) != 2
            or len(graph.tensors[node.inputs[1]].shape) != 2
        ):
            return "Gemm needs 2-D A and B"
        return None

    def build(self, node: Node, ctx: Any) -> None:
        a, b = node.inputs[0], node.inputs[1]
        c = node.inputs[2] if len(node.inputs) > 2 and node.inputs[2] else ""
        ta, tb = int(attr(node, "transA", 0)), int(attr(node, "transB", 0))
        M, N = ctx.shape(node.outputs[0])
        ashape = ctx.shape(a)
        K = ashape[0] if ta else ashape[1]
        sam, sak = (1, M) if ta else (K, 1)
        bconst = b_host = ctx.const(b)
        if bconst is not None and tb:  # pre-transpose constant weights to row-major [K, N]
            b_host = np.ascontiguousarray(np.asarray(bconst).T)
            B, sbk, sbn = ctx.upload(b_host, key=("T", b)), N, 1
        else:
            B = ctx.tensor_or_const(b)
            sbk, sbn = (1, K) if tb else (N, 1)
        bias, sbm, sbn_, bias_host = None, 0, 0, None
        if node.id in ctx.bias_of:
            bias, sbm, sbn_ = _fused_bias(ctx, node, N)
            bias_host = _fused_bias_values(ctx, node)
        if c:
            cshape = ctx.shape(c) if ctx.const(c) is None else np.shape(ctx.const(c))
            sbm, sbn_ = bcast_strides(cshape, (M, N))
            bias, bias_host = ctx.tensor_or_const(c), ctx.const(c)
        gemm_launch(
            ctx,
            node,
            M=M,
            N=N,
            K=K,
            A=ctx.tensor_or_const(a),
            sam=sam,
            sak=sak,
            B=B,
            sbk=sbk,
            sbn=sbn,
            C=ctx.t(ctx.out(node)),
            ldc=N,
            offs=[(0, 0, 0, 0)],
            bias=bias,
            sbias_m=sbm,
            sbias_n=sbn_,
            alpha=attr(node, "alpha", 1.0),
            beta=attr(node, "beta", 1.0),
            library=True,
            hosts=(ctx.const(a), b_host, bias_host),
        )


@register
class MatMul(Op):
    op_types = ("MatMul",)

    def build(self, node: Node, ctx: Any) -> None:
        a, b = node.inputs
        ash, bsh = list(ctx.shape(a)), list(ctx.shape(b))
        if len(ash) == 1:
            ash = [1] + ash
        if len(bsh) == 1:
            bsh = bsh + [1]
        M, K = ash[-2], ash[-1]
        N = bsh[-1]
        abat, bbat = ash[:-2], bsh[:-2]
        obat = list(np.broadcast_shapes(tuple(abat), tuple(bbat)))
        A, B = ctx.tensor_or_const(a), ctx.tensor_or_const(b)
        C = ctx.t(ctx.out(node))
        bias: dict[str, Any] = {}
        if node.id in ctx.bias_of:
            b_, sm_, sn_ = _fused_bias(ctx, node, N)
            bias = {"bias": b_, "sbias_m": sm_, "sbias_n": sn_}
        full = bool(bias) and bias["sbias_m"] != 0
        kw = view_operands(ctx, node, (ash, bsh), N, full)  # a Transpose or Slice folded in
        if kw is None and all(d == 1 for d in bbat) and list(abat) == obat:  # A's batch in M
            M, offs = M * int(np.prod(abat, dtype=np.int64)), [(0, 0, 0, 0)]
        elif kw is None:
            offs = _batch_offsets(abat, bbat, obat, M, N, K, full)
        kw = kw or {"M": M, "A": A, "sam": K, "sak": 1, "B": B, "sbk": N, "sbn": 1, "offs": offs}
        kw.setdefault("ldc", N)
        gemm_launch(
            ctx,
            node,
            N=N,
            K=K,
            C=C,
            **kw,
            **bias,
            library=True,
            hosts=(ctx.const(a), ctx.const(b), _fused_bias_values(ctx, node) if bias else None),
        )


def _batch_offsets(
    abat: list[int], bbat: list[int], obat: list[int], M: int, N: int, K: int, full: bool
) -> list[tuple[int, int, int, int]]:
    """Per index of the broadcast batch ``obat``: the element offsets of A's, B's and C's
    matrices, and of the bias's where it is a full matrix per batch (``full``)."""
    sa = bcast_strides(abat, obat) if obat else []
    sb = bcast_strides(bbat, obat) if obat else []
    offs = []
    for idx in np.ndindex(*obat) if obat else [()]:
        ia = sum(i * s for i, s in zip(idx, sa, strict=False)) * M * K
        ib = sum(i * s for i, s in zip(idx, sb, strict=False)) * K * N
        ic = int(np.ravel_multi_index(idx, obat)) * M * N if obat else 0
        offs.append((ia, ib, ic, ic if full else 0))
    return offs


__all__ = ["Gemm", "MatMul", "choose_tiling", "gemm_launch", "is_const", "no_act"]
