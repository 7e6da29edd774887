"""MOSAIC model slicing (Han, Hyun, Park, Park & Baek, "MOSAIC: Heterogeneity-, communication-,
and constraint-aware model slicing and execution for accurate and efficient inference",
PACT 2019), as HOPE (§1, §6) describes and compares against it.

The DAG is treated as a linear model: its nodes in the model's layer order (the problem's node
order, kept wherever it is topological: ``model_chain``) form a chain, which a
dynamic program cuts into contiguous slices, one device per slice, minimising the sequential
time = compute of every slice + the transfers at slice boundaries. The slices then run one
after another (``sequential=True``); no inter-operator parallelism.

Boundary transfers: an edge that crosses into a slice from an earlier one is charged at the
link between the *previous* slice's device and this slice's device (the chain view: the
activations flow through the cut); consecutive slices are on different devices. On a chain
this is exact, and the DP is optimal over all segmentations; on a DAG, an edge from two
slices back may in truth come from another device, and the simulator (spec §3) reports what
the plan really costs.

O(n^2 D^2) time with numpy, n = nodes, D = devices. Times in the problem's units.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.schedulers.base import register
from hetlab.schedulers.plan import Plan
from hetlab.schedulers.ranks import priority_order


def model_chain(problem: Problem) -> list[int]:
    """Node indices in the problem's own order where that is topological, else the topological
    order that always takes the ready node listed first."""
    return priority_order(problem, -np.arange(len(problem.nodes), dtype=float))


def mosaic_slices(problem: Problem) -> tuple[float, list[tuple[int, int, int]]]:
    """The DP: (its sequential time, slices as (first position, end position, device))."""
    chain = model_chain(problem)
    n, nd = len(chain), len(problem.devices)
    pos = {v: i for i, v in enumerate(chain)}
    cost = problem.cost_matrix[chain]  # [n, D] in chain order
    finite = np.isfinite(cost)
    work = np.vstack([np.zeros(nd), np.cumsum(np.where(finite, cost, 0.0), axis=0)])
    bad = np.vstack([np.zeros(nd), np.cumsum(~finite, axis=0)])
    comm = problem.comm_tensor
    into: list[list[tuple[int, int]]] = [[] for _ in range(n)]  # by dst position: (src pos, edge)
    for k, e in enumerate(problem.edges):
        into[pos[problem.index[e.dst]]].append((pos[problem.index[e.src]], k))

    best = np.full((n + 1, nd), np.inf)
    best[0] = 0.0
    cut = np.zeros((n + 1, nd), dtype=int)  # slice start a of the best slice ending at b on d
    prev = np.zeros((n + 1, nd), dtype=int)  # device of the slice before it
    same = np.arange(nd)
    diff = np.zeros((n + 1, nd, nd))  # cross[a] = cumsum(diff)[a]: comm into [a, b) from < a
    for b in range(1, n + 1):
        for s, k in into[b - 1]:  # edges s -> b-1 now end inside [a, b) for s < a <= b-1
            diff[s + 1] += comm[k]
            diff[b] -= comm[k]
        cross = np.cumsum(diff[:b], axis=0)  # [b, D(prev), D(this)]
        cross[1:, same, same] = np.inf  # a slice follows one on another device
        enter = best[:b, :, None] + cross  # via previous device d'
        via = enter.argmin(axis=1)  # [b, D]
        entry = np.take_along_axis(enter, via[:, None, :], axis=1)[:, 0, :]
        seg = work[b] - work[:b]
        seg[(bad[b] - bad[:b]) > 0] = np.inf
        total = entry + seg  # [b (slice start), D]
        a = total.argmin(axis=0)
        best[b] = total[a, np.arange(nd)]
        cut[b] = a
        prev[b] = via[a, np.arange(nd)]

    slices: list[tuple[int, int, int]] = []
    b, d = n, int(best[n].argmin()) if n else 0
    value = float(best[n].min()) if n else 0.0
    while b > 0:
        a = int(cut[b, d])
        slices.append((a, b, d))
        b, d = a, int(prev[b, d])
    return value, slices[::-1]


@register(
    "mosaic", "MOSAIC (Han et al., 2019): DP slicing of the topological chain", sequential=True
)
def mosaic(problem: Problem, progress: Any = None) -> Plan:
    """Slice the topological chain into per-device segments; run them sequentially."""
    value, slices = mosaic_slices(problem)
    ids = [problem.nodes[v].id for v in model_chain(problem)]
    device_of = {ids[i]: problem.devices[d] for a, b, d in slices for i in range(a, b)}
    extra = {"slices": len(slices), "dp_time": value}
    return Plan.of(device_of, ids, sequential=True, algo="mosaic", extra=extra)
