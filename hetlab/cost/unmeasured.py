"""Costs of nodes that a device runs but that have nothing to measure on their own.

Some nodes run inside a whole-model session yet fail as a one-node unit: shape arithmetic on
scalars, views, constants that onnxruntime resolves on the host, ops whose isolated inputs
cannot be rebuilt. The executor still computes them, on whichever device the plan puts them,
so a missing time must not make the problem unschedulable. Such a node gets, on each device
that supports it, the median isolated cost that device measured for other nodes of its op
type, or else the least cost the device measured for any node (what a tiny op costs there).
The profile counts these nodes (``extra.profile.no_measure``) and marks each one
(``nodes[].extra.no_measure``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

Costs = dict[str, dict[str, float | None]]  # node id -> device -> ms (None: no time)


def fill_unmeasured(
    iso: Costs,
    types: Mapping[str, str],
    supports: Callable[[str, str], bool],
    floor: float,
) -> dict[str, dict[str, str]]:
    """Give every (node, device) pair that ``supports`` but that has no time in ``iso`` the
    estimate of the module docstring, in place; returns, per node filled, the device and the
    basis of its estimate."""
    measured: dict[str, dict[str, list[float]]] = {}  # device -> op type -> costs
    for v, by_dev in iso.items():
        for d, c in by_dev.items():
            if c is not None:
                measured.setdefault(d, {}).setdefault(types[v], []).append(c)
    filled: dict[str, dict[str, str]] = {}
    for v, by_dev in iso.items():
        for d, c in by_dev.items():
            if c is not None or not supports(v, d):
                continue
            same = measured.get(d, {}).get(types[v])
            if same:
                by_dev[d] = round(max(float(np.median(same)), floor), 6)
                basis = f"median of {len(same)} measured {types[v]} node(s)"
            else:
                least = [x for cs in measured.get(d, {}).values() for x in cs]
                by_dev[d] = round(max(min(least, default=floor), floor), 6)
                basis = "the least cost measured on this device"
            filled.setdefault(v, {})[d] = basis
    return filled
