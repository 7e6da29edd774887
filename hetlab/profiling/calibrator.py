"""Link calibration (OverSeer's Calibrator) and per-shape transfers (HOPE §4.1).

The real transfer of a tensor from device ``a`` to ``b`` is what the executor does:
``a.copy_out`` (device buffer -> host array, blocking) then ``b.copy_in`` (host array ->
``b``'s buffer, including any layout transform ``b`` makes). The source buffer is made once
with ``a.copy_in`` beforehand and is not timed; each destination buffer is freed after use.
CPU groups share host memory: both hooks are (near) no-ops there and the measurement says so.

``calibrate_link`` times NCHW float32 tensors of 1 KB .. 16 MB and fits
``latency + bytes / bandwidth`` (ms, bytes/ms) by non-negative, relative least squares.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hetlab.cost.stats import fit_link, robust_stats
from hetlab.devices.base import Device
from hetlab.devices.unit import now
from hetlab.graph.inputs import random_arrays
from hetlab.graph.ir import Tensor

DEFAULT_SIZES: tuple[int, ...] = tuple(1 << k for k in range(10, 25, 2))  # 1 KB .. 16 MB, x4 steps
REPEAT, WARMUP, SECONDS = 15, 2, 0.1


def settings(sizes: Sequence[int] = DEFAULT_SIZES) -> dict[str, Any]:
    return {"sizes": list(sizes), "repeat": REPEAT, "warmup": WARMUP, "seconds": SECONDS, "v": 1}


def size_tensor(nbytes: int) -> Tensor:
    """A float32 NCHW tensor of about ``nbytes`` (channels x 8 x 8)."""
    c = max(1, int(nbytes) // (4 * 64))
    return Tensor(f"calib_{nbytes}", (1, c, 8, 8), "float32")


def transfer_stats(src: Device, dst: Device, arrays: Sequence[np.ndarray]) -> dict[str, Any]:
    """Robust statistics (ms) of moving ``arrays`` together from ``src`` to ``dst``."""
    bufs = [src.copy_in(a) for a in arrays]

    def once() -> float:
        t0 = now()
        outs = [dst.copy_in(src.copy_out(b)) for b in bufs]
        dt = now() - t0
        for o in outs:
            dst.free(o)
        return dt

    try:
        warm = [once() for _ in range(WARMUP)]
        n = REPEAT if min(warm) <= 0 else min(REPEAT, max(5, int(SECONDS / min(warm))))
        st = robust_stats([once() * 1e3 for _ in range(n)])
    finally:
        for b in bufs:
            src.free(b)
    return {k: round(v, 6) if isinstance(v, float) else v for k, v in st.items()}


def calibrate_link(
    src: Device,
    dst: Device,
    sizes: Sequence[int] = DEFAULT_SIZES,
    tick: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Measure ``sizes`` and fit the link: ``latency`` (ms), ``bandwidth`` (bytes/ms or None),
    ``r2``, ``max_rel_err`` and the measured ``points`` ([bytes, median ms])."""
    points: list[list[float]] = []
    for s in sizes:
        t = size_tensor(s)
        a = random_arrays([t], seed=1)[t.name]
        points.append([float(a.nbytes), transfer_stats(src, dst, [a])["median"]])
        if tick:
            tick(f"link {src.name}->{dst.name} {a.nbytes} B")
    fit = fit_link([p[0] for p in points], [p[1] for p in points])
    return {**fit, "points": points}


def shape_key(tensors: Sequence[Tensor]) -> str:
    """The key of an edge's tensors for per-shape transfers: ``1x64x56x56:float32+...``."""
    return "+".join(f"{'x'.join(map(str, t.shape or ()))}:{t.dtype}" for t in tensors)


def measure_shape(src: Device, dst: Device, tensors: Sequence[Tensor]) -> float:
    """Median ms of moving one edge's tensors (seeded values of their shapes)."""
    arrs = random_arrays([Tensor(f"t{i}", t.shape, t.dtype) for i, t in enumerate(tensors)], seed=2)
    return float(transfer_stats(src, dst, list(arrs.values()))["median"])
