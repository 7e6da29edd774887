"""Constant GEMM operands packed for ``gemm_cpu.cl`` at build time: A (a convolution's or a
Gemm's weights) as [row blocks][K][rows], so that a work-item's A values for one k are
adjacent, and a plain product's B (a MatMul's weights) as [column blocks][K][columns], so
that its B is one contiguous stream instead of a row K apart per k. Each distinct matrix of
the batch (offsets' A or B) is packed once and the offsets point into the packed buffer.
Why: docs/decisions.md#packed-operands-on-a-cpu-device."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from hetlab.devices.kernels.ops.common import i32
from hetlab.devices.kernels.ops.gemm_shape import cpu_block
from hetlab.devices.kernels.ops.library import Product
from hetlab.graph.ir import Node

PACK_TAPS = 32  # taps (rows of B) per work-item of pack_b (KC in conv_cpu.cl)
PACK_MOST = 1 << 26  # floats of a packed B at most (256 MB); a larger B is read in place
PACK_LEAST = 1 << 21  # multiply-adds of a product at least, for its launch to pay


def cpu_packed(ctx: Any, p: Product, narrow: int | None = None) -> tuple[Product, str]:
    """``p`` with its constant operands packed for gemm_cpu (A always, B where the product
    is not a convolution), and the build options that say so. ``narrow``: for gemv_cpu, A
    alone in blocks of that many rows."""
    rows, nv, _ = cpu_block(p.M, p.conv[2] if p.conv else p.N)
    rows = narrow or rows
    opts = ""
    if p.a_host is not None:
        a, xs = pack(np.asarray(p.a_host).reshape(-1), [o[0] for o in p.offs], p, rows, True)
        offs = [(x, *o[1:]) for x, o in zip(xs, p.offs, strict=True)]
        p = dataclasses.replace(p, A=ctx.upload(a), offs=offs)
        opts += " -DA_PACKED"
    if p.b_host is not None and not p.conv and not narrow:
        b, ys = pack(np.asarray(p.b_host).reshape(-1), [o[1] for o in p.offs], p, 8 * nv, False)
        offs = [(o[0], y, *o[2:]) for y, o in zip(ys, p.offs, strict=True)]
        p = dataclasses.replace(p, B=ctx.upload(b), offs=offs)
        opts += " -DB_PACKED"
    return p, opts


def cpu_pack_b(ctx: Any, node: Node, p: Product, cp: Any, ktab: Any) -> tuple[Product, str]:
    """``p`` with a B that is not constant packed by a launch of conv_cpu.cl's ``pack_b``
    into a scratch buffer (a convolution's implicit im2col, each tap once per column block,
    or a plain B), where its rows are read by enough row blocks of A and the product is large
    enough for the launch to pay; else ``p`` as it is."""
    rows, nv, blocks = cpu_block(p.M, p.conv[2] if p.conv else p.N)
    nb, width = len(p.offs), 8 * nv
    if p.conv:
        blocks *= p.N // p.conv[2]
    size = nb * blocks * p.K * width
    small = p.M * p.N * p.K * nb < PACK_LEAST
    if not (p.conv or 4 * rows <= p.M) or small or size > PACK_MOST or p.sbn != 1:
        return p, ""
    P = ctx.scratch(size)
    offs = [(o[0], b * blocks * p.K * width, *o[2:]) for b, o in enumerate(p.offs)]
    opts = f"-DNBLK={width}" + (" -DCONV" if p.conv else "")
    k = ctx.kernel("conv_cpu.cl", "pack_b", opts)
    offs_in = ctx.upload(np.asarray(p.offs, dtype=np.int32).reshape(nb, 4), dtype="int32")
    args = [p.B, i32(p.sbk), i32(p.N), i32(p.K), offs_in, P, cp, ktab]
    ctx.launch(node, k, (blocks, -(-p.K // PACK_TAPS), nb), (1, 4 if p.K > 64 else 1, 1), args)
    return dataclasses.replace(p, B=P, offs=offs), " -DB_PACKED"


def pack_b(
    flat: np.ndarray, starts: list[int], mnk: tuple[int, int, int], width: int
) -> tuple[np.ndarray, list[int]]:
    """``pack`` of a B (K x N, row-major, at each distinct offset of ``starts``) in its
    own element type: the integer products' constant weights."""
    M, N, K = mnk
    p = Product(M, N, K, None, 0, 0, None, N, 1, None, 0, [])
    return pack(flat, starts, p, width, False, flat.dtype)


def pack(
    flat: np.ndarray, starts: list[int], p: Product, width: int, is_a: bool, dtype: Any = np.float32
) -> tuple[np.ndarray, list[int]]:
    """The packed matrices of ``flat`` beginning at each distinct offset of ``starts``
    (A: M x K at strides sam, sak, in blocks of ``width`` rows; B: K x N at sbk, sbn, in
    blocks of ``width`` columns, transposed to columns x K first), zero past M or N, and
    each start's offset in the result."""
    outer, s_out, s_k = (p.M, p.sam, p.sak) if is_a else (p.N, p.sbn, p.sbk)
    blocks = -(-outer // width)
    parts, where = [], {}
    for s in dict.fromkeys(starts):
        idx = s + np.arange(outer)[:, None] * s_out + np.arange(p.K)[None, :] * s_k
        m = np.zeros((blocks * width, p.K), dtype)
        m[:outer] = flat[idx]
        where[s] = len(parts) * blocks * width * p.K
        parts.append(m.reshape(blocks, width, p.K).transpose(0, 2, 1).reshape(-1))
    return np.concatenate(parts), [where[s] for s in starts]
