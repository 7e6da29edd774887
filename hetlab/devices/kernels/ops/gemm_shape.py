"""Launch shapes of the GEMM kernels: ``gemm_cpu.cl``'s grid (the GEMM and convolution
kernel of a CPU device) and the implicit-im2col table of a convolution.

A work-item owns ``CPU_ROWS`` rows x 16 columns of C: 2 x CPU_ROWS float8 accumulators, two
vectors of B and a broadcast of A fit AVX2's 16 vector registers. Why a CPU gets a kernel of
its own, and what it changed: docs/decisions.md#gemm-on-a-cpu-device.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

CPU_ROWS = 6
COLUMNS = 16  # columns of C per work-item (NBLK in gemm_cpu.cl)


def cpu_grid(M: int, N: int, batch: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(global size, work-group size) of gemm_cpu for C[batch] of M x N. A PoCL work-group
    runs on one thread and costs some microseconds to start, so a group takes four column
    blocks where the product has them; without a given size PoCL makes one group of the
    whole grid, which leaves all but one core idle."""
    blocks = math.ceil(N / COLUMNS)
    return (blocks, math.ceil(M / min(M, CPU_ROWS)), batch), (4 if blocks > 3 else 1, 1, 1)


def conv_table(conv: Sequence[int], K: int) -> np.ndarray:
    """Per-k im2col offsets [K, 4]: (ci*H*W + kh*DH*W + kw*DW, kh*DH, kw*DW, 0)."""
    H, W, _, KH, KW, _, _, _, _, DH, DW = conv
    k = np.arange(K)
    ci, r = np.divmod(k, KH * KW)
    kh, kw = np.divmod(r, KW)
    return np.stack([ci * H * W + kh * DH * W + kw * DW, kh * DH, kw * DW, 0 * k], axis=1).astype(
        np.int32
    )
