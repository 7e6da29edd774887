"""HOPE Algorithm 1: recursive bisection of a DAG by level into subgraphs of <= NT vertices.

Xia et al., "HOPE: a heterogeneity-oriented parallel execution engine for inference on
mobiles", HPC Chinese Journal 2022, §2.2, eqs. 7-8 and Algorithm 1.

Each bisection counts the levels (eq. 8, the paper's "upward rank" ``uprank``;
``graph/levels.py``) *within the current subgraph* and cuts at a level ``r``:
V0 = {level <= r}, V1 = {level > r}. Edges only go up in level, so the cut is acyclic and V0's
pieces precede V1's. Among the levels whose cut is *balanced* we keep the one with the
smallest vertex cut (the number of vertices at level ``r``, the paper's ``uprankCount[r]``),
ties to the better balance.

Balance: eq. 7 as printed divides the weight of V_i itself by k, which no non-empty part can
meet; we read it as the standard k-way balance constraint with unit weights,
``max(|V0|, |V1|) <= (1 + eps) * |V| / 2``. When no level satisfies it, eps grows by 0.1 until
one does (the paper's rule); a subgraph whose vertices all share one level (an antichain) has no
level cut and is split into consecutive chunks, which is acyclic too.
"""

from __future__ import annotations

from collections.abc import Sequence

from hetlab.cost.problem import Problem
from hetlab.graph.levels import hope_levels
from hetlab.schedulers.base import param


def levels(nodes: Sequence[int], preds: Sequence[Sequence[tuple[int, int]]]) -> dict[int, int]:
    """Eq. 8 restricted to ``nodes`` (given in topological order)."""
    return hope_levels(nodes, lambda v: (u for u, _ in preds[v]))


def bisect(nodes: list[int], preds, eps: float) -> tuple[list[int], list[int], float]:
    """One Algorithm-1 cut of ``nodes`` (topological order); returns (V0, V1, eps used)."""
    level = levels(nodes, preds)
    lo, hi = min(level.values()), max(level.values())
    n = len(nodes)
    if lo == hi:  # antichain: any split is acyclic
        half = (n + 1) // 2
        return nodes[:half], nodes[half:], eps
    count = [0] * (hi + 2)
    for r in level.values():
        count[r] += 1
    acc = [0] * (hi + 2)
    for r in range(lo, hi + 1):
        acc[r] = acc[r - 1] + count[r]
    e = eps
    while True:
        best = None
        limit = (1.0 + e) * n / 2.0
        for r in range(lo, hi):  # both sides non-empty
            w0, w1 = acc[r], n - acc[r]
            if max(w0, w1) <= limit + 1e-9:
                key = (count[r], abs(w0 - w1))
                if best is None or key < best[0]:
                    best = (key, r)
        if best is not None:
            r = best[1]
            return [v for v in nodes if level[v] <= r], [v for v in nodes if level[v] > r], e
        e += 0.1


def partition(problem: Problem, nt: int, epsilon: float | None = None) -> list[list[int]]:
    """Node-index subgraphs of at most ``nt`` vertices, in topological order of the pieces,
    each listed in topological order; together they cover every node once. ``epsilon`` None:
    the ``ilp`` algorithm's default."""
    if epsilon is None:
        epsilon = float(param("ilp", "epsilon").default)
    if nt < 1:
        raise ValueError("nt must be >= 1")
    pos = {v: i for i, v in enumerate(problem.topo)}
    out: list[list[int]] = []
    stack = [list(problem.topo)]
    while stack:  # depth first, V0 before V1, keeps the pieces in topological order
        part = stack.pop()
        if len(part) <= nt:
            if part:
                out.append(sorted(part, key=pos.__getitem__))
            continue
        v0, v1, _ = bisect(part, problem.preds, epsilon)
        stack.append(v1)
        stack.append(v0)
    return out
