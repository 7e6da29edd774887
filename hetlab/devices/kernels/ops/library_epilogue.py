"""Which epilogues a library GEMM applies in its own call (``library.py``'s fused path):
a bias, as a constant plane of the product's shape, and a ReLU."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

FMAX = float(np.finfo(np.float32).max)


def in_call(p: Any, epi: list[Any], resid: Any) -> tuple[bool, np.ndarray | None] | None:
    """(ReLU or not, the bias plane or None) of an epilogue the library can apply in the
    GEMM's own call: one batch matrix, no residual, alpha 1, no activation or a ReLU, a
    bias whose values are known; None where it cannot or there is nothing to apply."""
    if resid is not None or len(p.offs) != 1 or float(epi[3]) != 1.0:
        return None
    slope, lo, hi = (float(v) for v in epi[6:9])
    relu = hi == FMAX and ((slope == 0.0 and lo <= 0.0) or lo == 0.0)
    if not relu and not no_activation(epi[6:9]):
        return None
    if not int(epi[5]):
        return (True, None) if relu else None
    if p.bias_host is None:
        return None
    rows, cols = np.arange(p.M)[:, None] * int(epi[1]), np.arange(p.N)[None, :] * int(epi[2])
    bias = np.asarray(p.bias_host, dtype=np.float32).reshape(-1)
    plane = float(epi[4]) * bias[int(p.offs[0][3]) + rows + cols]
    return relu, plane.astype(np.float32)


def no_activation(act: Sequence[Any]) -> bool:
    """Whether the epilogue bounds (slope, lo, hi) are those of no activation."""
    return float(act[0]) == 1.0 and float(act[1]) == -FMAX and float(act[2]) == FMAX
