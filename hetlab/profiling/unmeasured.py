"""Costs of nodes that a device runs but whose measurement failed: estimates from their work.

Some nodes run inside a whole-model session yet fail as a one-node unit: shape arithmetic on
scalars, views, constants that onnxruntime resolves on the host, ops whose isolated inputs
cannot be rebuilt. The executor still computes them, on whichever device the plan puts them,
so a missing time must not make the problem unschedulable. Such a node gets, on each device
that supports it, an estimate that scales with its own work, at the throughput the device
showed on the nodes it did measure:

- nodes of the same op type measured there: their median ms per FLOP times the node's FLOPs
  (ms per byte times its bytes where the op counts no FLOPs);
- else every node measured there: the larger of its FLOPs times the device's median ms per
  FLOP and its bytes times the median ms per byte (whichever its work is bound by);
- else (nothing measured on the device) the floor; the profiler refuses such a device
  instead (``assemble``).

A node's bytes are those it reads and writes (inputs, weights included, and outputs). The
profile counts the estimated costs (``extra.profile.estimated_costs``) and marks each node
(``nodes[].estimated``, ``nodes[].no_measure``: device -> basis, ``nodes[].estimate_reason``:
device -> why the measurement failed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

Costs = dict[str, dict[str, float | None]]  # node id -> device -> ms (None: no time)


@dataclass(frozen=True)
class Work:
    """What a node computes and moves: its FLOPs and the bytes it reads and writes."""

    op_type: str
    flops: float
    bytes: float


def fill_unmeasured(
    iso: Costs,
    work: Mapping[str, Work],
    supports: Callable[[str, str], bool],
    floor: float,
) -> dict[str, dict[str, str]]:
    """Give every (node, device) pair that ``supports`` but that has no time in ``iso`` the
    estimate of the module docstring, in place; returns, per node filled, the device and the
    basis of its estimate."""
    measured: dict[str, list[tuple[float, Work]]] = {}  # device -> (cost, work)
    for v, by_dev in iso.items():
        for d, c in by_dev.items():
            if c is not None:
                measured.setdefault(d, []).append((c, work[v]))
    filled: dict[str, dict[str, str]] = {}
    for v, by_dev in iso.items():
        for d, c in by_dev.items():
            if c is not None or not supports(v, d):
                continue
            ms, basis = estimate(work[v], measured.get(d, []))
            by_dev[d] = round(max(ms, floor), 6)
            filled.setdefault(v, {})[d] = basis
    return filled


def estimate(w: Work, measured: list[tuple[float, Work]]) -> tuple[float, str]:
    """(ms, basis) for a node of work ``w`` from a device's measured (cost, work) pairs."""
    same = [(c, m) for c, m in measured if m.op_type == w.op_type]
    if same:
        by_flops = w.flops > 0 and all(m.flops > 0 for _, m in same)
        rate = _median_rate(same, "flops" if by_flops else "bytes")
        if rate is not None:
            unit, amount = ("FLOP", w.flops) if by_flops else ("byte", w.bytes)
            return rate * amount, (
                f"{rate:.3g} ms per {unit} (median of {len(same)} measured {w.op_type} "
                f"node(s)) x {amount:.3g} {unit}s"
            )
    per_flop = _median_rate(measured, "flops")
    per_byte = _median_rate(measured, "bytes")
    if per_flop is None and per_byte is None:
        return 0.0, "nothing measured on this device: the floor"
    f_ms = (per_flop or 0.0) * w.flops
    b_ms = (per_byte or 0.0) * w.bytes
    if f_ms >= b_ms and w.flops > 0:
        return f_ms, (
            f"{per_flop:.3g} ms per FLOP (median of the device's {len(measured)} measured "
            f"nodes) x {w.flops:.3g} FLOPs"
        )
    return b_ms, (
        f"{per_byte or 0.0:.3g} ms per byte (median of the device's {len(measured)} measured "
        f"nodes) x {w.bytes:.3g} bytes"
    )


def _median_rate(pairs: list[tuple[float, Work]], field: str) -> float | None:
    """Median cost per unit of ``field`` over the pairs where that work is positive."""
    rates = [c / getattr(m, field) for c, m in pairs if getattr(m, field) > 0]
    return float(np.median(rates)) if rates else None
