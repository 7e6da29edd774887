"""Launch shapes of the GEMM kernels: the tiling and split-K of ``gemm.cl``,
``gemm_cpu.cl``'s grid (the GEMM and convolution kernel of a CPU device) and the
implicit-im2col table of a convolution; and where the slopes of a PRelu fused into a
product's epilogue lie.

A work-item owns ``CPU_ROWS`` rows x 16 columns of C: 2 x CPU_ROWS float8 accumulators, two
vectors of B and a broadcast of A fit AVX2's 16 vector registers; or, where C's rows (a
convolution's output rows) are short, twice the rows x 8 columns. Why a CPU gets a kernel of
its own, and what it changed: docs/decisions.md#gemm-on-a-cpu-device.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetlab.graph.ir import Node

TK = 16
CPU_ROWS = 6
COLUMNS = 16  # columns of C per work-item (NBLK in gemm_cpu.cl)


def cpu_grid(
    M: int, N: int, batch: int, columns: int = COLUMNS, rows: int = CPU_ROWS
) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(global size, work-group size) of gemm_cpu for C[batch] of M x N in blocks of
    ``rows`` x ``columns``. A PoCL work-group runs on one thread and costs some microseconds
    to start, so a group takes four column blocks where the product has them; without a
    given size PoCL makes one group of the whole grid, which leaves all but one core idle."""
    blocks = math.ceil(N / columns)
    return (blocks, math.ceil(M / min(M, rows)), batch), (4 if blocks > 3 else 1, 1, 1)


def cpu_block(M: int, width: int) -> tuple[int, int, int]:
    """(rows, float8 vectors per row, columns of C in all) of a gemm_cpu work-item whose
    column blocks lie in rows of ``width`` outputs (a convolution's output row; N of a plain
    product): 16 columns, or 8 columns and twice the rows where 8 waste less of the row's
    last block (a 7 x 7 map: 7 of 8 outputs used, not 7 of 16)."""
    used16 = width / (16 * math.ceil(width / 16))
    used8 = width / (8 * math.ceil(width / 8))
    nv = 1 if used8 > used16 + 0.1 else 2
    rows = min(M, CPU_ROWS * (2 // nv))
    blocks = math.ceil(width / (8 * nv))
    return rows, nv, blocks


def conv_table(conv: Sequence[int], K: int) -> np.ndarray:
    """Per-k im2col offsets [K, 4]: (ci*H*W + kh*DH*W + kw*DW, kh*DH, kw*DW, 0)."""
    H, W, _, KH, KW, _, _, _, _, DH, DW = conv
    k = np.arange(K)
    ci, r = np.divmod(k, KH * KW)
    kh, kw = np.divmod(r, KW)
    return np.stack([ci * H * W + kh * DH * W + kw * DW, kh * DH, kw * DW, 0 * k], axis=1).astype(
        np.int32
    )


@dataclass(frozen=True)
class SplitRule:
    """Split-K: a GEMM of fewer than ``below`` tiles per compute unit splits K into slices of
    at least ``min_k``, aiming at ``target`` work-groups per compute unit (at most ``most``
    slices). Batch-1 convolutions at 8x8 to 35x35 are such GEMMs: a few dozen tiles, K in the
    thousands."""

    below: int
    target: int
    min_k: int
    most: int


# Where the host issues every launch (an OpenCL queue), the partial sums' extra launch costs
# microseconds of host time: split only GEMMs of fewer tiles than compute units. Where a
# captured graph replays the launches (CUDA), a launch costs the GPU about a microsecond:
# split far more (docs/decisions.md#split-k).
SPLIT_HOST = SplitRule(below=1, target=2, min_k=256, most=16)
SPLIT_GRAPH = SplitRule(below=4, target=16, min_k=32, most=64)


def choose_tiling(
    M: int,
    N: int,
    K: int,
    batch: int,
    cu: int,
    force_splits: int | None = None,
    rule: SplitRule = SPLIT_HOST,
) -> tuple[int, int, int]:
    """(tile edge, K splits, K elements per split) for a GEMM on ``cu`` compute units."""
    tiles64 = math.ceil(M / 64) * math.ceil(N / 64) * batch
    ts = 64 if tiles64 >= 2 * cu and min(M, N) > 32 else 32
    tiles = math.ceil(M / ts) * math.ceil(N / ts) * batch
    splits = 1
    if force_splits:
        splits = force_splits
    elif tiles < rule.below * cu and 2 * rule.min_k <= K:
        splits = max(1, min(math.ceil(rule.target * cu / tiles), K // rule.min_k, rule.most))
    klen = math.ceil(math.ceil(K / splits) / TK) * TK
    splits = max(1, math.ceil(K / klen))
    return ts, splits, klen


NARROW = 4  # columns of C at most for gemm_cpu.cl's gemv_cpu


def narrow_rows(M: int, N: int) -> int:
    """Rows of C per gemv_cpu work-item (its packed A's row block): RV float8 vectors, with
    RV * N accumulators in AVX2's 16 vector registers beside the RV vectors of A."""
    return 8 * max(1, min(4 if N < 4 else 3, math.ceil(M / 8)))


def narrow_grid(
    M: int, N: int, batch: int, units: int
) -> tuple[tuple[int, int, int], tuple[int, int, int], str]:
    """(global size, work-group size, build options) of gemv_cpu for C[batch] of M x N: a
    work-group takes up to four row blocks where there are two per compute unit besides."""
    rows = narrow_rows(M, N)
    blocks = math.ceil(M / rows)
    group = max(1, min(4, blocks // (2 * units)))
    return (1, blocks, batch), (1, group, 1), f"-DMB={rows} -DRV={rows // 8} -DNC={N} "


def launch_shape(
    M: int, N: int, K: int, nb: int, dev: Any, cpu: bool, conv: Any, narrow: bool
) -> tuple:
    """(K splits, K per split, global size, work-group size, (file, kernel, option)) of a
    product of M x N x K over ``nb`` batch entries on ``dev``: gemv_cpu (``narrow``),
    gemm_cpu (``cpu``; ``conv``: its geometry) or the tiled gemm with split-K."""
    if narrow:  # few columns: gemv_cpu, vectors along M
        gsize, lsize, opts = narrow_grid(M, N, nb, int(dev.dev.max_compute_units))
        return 1, K, gsize, lsize, ("gemm_cpu.cl", "gemv_cpu", opts)
    if cpu:  # gemm_cpu.cl: a block of C per work-item (of one output row), all of K
        width = conv[2] if conv else N
        rows, nv, blocks = cpu_block(M, width)
        grid = cpu_grid(M, blocks * (N // width) * 8 * nv, nb, 8 * nv, rows)
        return (1, K, *grid, ("gemm_cpu.cl", "gemm_cpu", f"-DMB={rows} -DNV={nv} "))
    rule = SPLIT_GRAPH if dev.launches_from_graph else SPLIT_HOST
    ts, splits, klen = choose_tiling(
        M, N, K, nb, int(dev.dev.max_compute_units), dev.gemm_splits, rule
    )
    gsize = (math.ceil(N / ts) * 16, math.ceil(M / ts) * 16, nb * splits)
    return splits, klen, gsize, (16, 16, 1), ("gemm.cl", "gemm", f"-DTS={ts} ")


def prelu_slopes(ub: Any, n: Node, a: Node) -> tuple[np.ndarray, int, int] | None:
    """(slopes, stride along m, stride along n) of PRelu ``a`` after the product of Conv,
    Gemm or MatMul ``n`` (a Conv's m: its output channels): None where its slope is not constant or
    varies along other axes."""
    s, ys = ub.const(a.inputs[1]), tuple(ub.shape(a.outputs[0]))
    try:
        full = np.broadcast_to(np.asarray(s, dtype=np.float32), ys)
    except (TypeError, ValueError):  # no constant slope, or one of another shape
        return None
    for axis, sm, sn in ((1, 1, 0),) if n.op_type == "Conv" else ((1, 0, 1), (0, 1, 0)):
        along = full[tuple(slice(None) if i == axis else 0 for i in range(len(ys)))]
        shape = [-1 if i == axis else 1 for i in range(len(ys))]
        if np.array_equal(np.broadcast_to(along.reshape(shape), ys), full):
            return np.ascontiguousarray(along), sm, sn
    return None
