"""Fusion of ``Pow(x, 2)`` into the ReduceMean or ReduceSum that alone reads it (a mean of
squares: norms, variances): the reduction squares x as it loads it (``reduce_launch``'s sum
of squares) and the Pow has no launch of its own. Planned after ``fusion.plan_fusion``
and before the element-wise chains, which then leave the Pow alone."""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops.pool import reduce_axes

SQUARED = ("ReduceMean", "ReduceSum")


def _is_two(value: Any) -> bool:
    return value is not None and np.size(value) == 1 and float(np.ravel(value)[0]) == 2.0


def plan_squares(ub: Any) -> None:
    """``ub.square_of``: reduction node -> the tensor it squares as it loads; each Pow so
    taken is fused into its reduction (which runs after it)."""
    ub.square_of = {}
    for n in ub.nodes:
        if n.op_type not in SQUARED or n.id in ub.fused or n.id in ub.widened:
            continue
        t = n.inputs[0]
        p = ub.producer.get(t)
        if p is None or p.op_type != "Pow" or p.id in ub.fused or p.id in ub.widened:
            continue
        if ub.consumers.get(t) != [n.id] or t in ub.outputs or t in ub.rounded:
            continue
        x = ub.graph.tensors.get(p.inputs[0])
        if x is None or x.dtype != "float32" or not _is_two(ub.const(p.inputs[1])):
            continue
        if not reduce_axes(n, len(ub.shape(t)), ub.const):
            continue
        ub.square_of[n.id] = p.inputs[0]
        ub.fused[p.id] = n.id
