"""OverSeer's NeuroPartitioner (Mukherjee, Chen, Sharma & Jain, "OverSeer: Efficient DNN
Execution on Heterogeneous Devices", SOSP'19 AI Systems workshop, §2).

1. Canonicalization: a spanning tree that follows the path of the largest computation cost.
   Every node keeps only its out-edge to the successor with the costliest continuation
   (``ranks.heaviest_successor``, mean compute cost over supported devices), which breaks every
   undirected loop; the kept edges form a converging polytree (one in-tree per exit) that
   contains the costliest path whole.
2. Device selection: the DP of eq. 2 over that tree, top-down in topological order,
   cost(v, i) = f(v, i) + sum over tree parents p of min over j (g(p->v, j->i) + cost(p, j)),
   then a bottom-up backtrack from each exit. We take the min over j per parent: tree parents
   head disjoint subtrees, so this minimises eq. 1 (compute + transfers) over the tree exactly.
   O(|D|^2 |V|) time.

Edges dropped from the tree are ignored by the DP (as in the paper) but are paid by the
simulator (spec §3). The paper executes the partitioned graph sequentially, so plans are
``sequential`` by default; ``parallel=True`` lets independent nodes on different devices overlap.
Order: topological. Times in the problem's units.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.schedulers.base import Param, register
from hetlab.schedulers.plan import Plan
from hetlab.schedulers.ranks import heaviest_successor


def overseer_devices(problem: Problem) -> tuple[list[int], float]:
    """Device index of each node chosen by the tree DP, and the DP's optimum (eq. 1 on the tree)."""
    cost = problem.cost_matrix
    comm = problem.comm_tensor
    n, nd = cost.shape
    keep = heaviest_successor(problem)
    parents: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for p, hs in enumerate(keep):
        if hs is not None:
            parents[hs[0]].append((p, hs[1]))
    dp = np.zeros((n, nd))
    choice: dict[int, np.ndarray] = {}  # tree parent p -> best device of p for each device of v
    for v in problem.topo:
        row = cost[v].copy()
        for p, k in parents[v]:
            m = dp[p][:, None] + comm[k]  # [j (parent device), i (this device)]
            choice[p] = m.argmin(axis=0)
            row += m.min(axis=0)
        dp[v] = row
    dev = [-1] * n
    total = 0.0
    for v in reversed(problem.topo):
        if keep[v] is None:  # a root of one in-tree
            dev[v] = int(dp[v].argmin())
            total += float(dp[v, dev[v]])
        for p, _ in parents[v]:
            dev[p] = int(choice[p][dev[v]])
    return dev, total


@register(
    "overseer",
    "OverSeer (Mukherjee et al., 2019): spanning tree + DP",
    params=[
        Param("parallel", "bool", False, help="let independent nodes overlap (paper: sequential)")
    ],
)
def overseer(problem: Problem, parallel: bool = False, progress: Any = None) -> Plan:
    """Tree DP device choice; topological order, sequential unless ``parallel``."""
    dev, total = overseer_devices(problem)
    ids = [nd.id for nd in problem.nodes]
    return Plan.of(
        {ids[v]: problem.devices[dev[v]] for v in range(len(ids))},
        [ids[v] for v in problem.topo],
        sequential=not parallel,
        algo="overseer",
        extra={"tree_cost": total},
    )
