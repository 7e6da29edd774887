"""PartitionTuner (Yu, Kwon, Park, Lee & Kim, "PartitionTuner: An operator scheduler for
deep-learning compilers supporting multiple heterogeneous processing units", ETRI Journal
45(2), 2023, §2-3), generalised from CPU+NPU to any number of devices.

1. Branch extractor (§3.2, Definitions 1-2): the DAG is cut into branches, maximal runs of
   sequential nodes (inside a branch every node has one predecessor and one successor);
   branches with the same input node and output node are parallel (same *level*).
2. Backend finder (§3.3): per branch, in topological order of branches, a DP over the
   branch's nodes chooses devices from the individual costs and the grouped costs
   (``problem.groups`` lying as a contiguous run inside the branch, emitted as fused units),
   minimising the branch's time: compute + transfers between its units + transfers into its
   head from the (already mapped) branches before it.
3. Graph partitioner and partition scheduler (§3.4-3.5): consecutive nodes on one device form
   a partition; sequential branches run in order and parallel branches mapped to different
   devices run in parallel.

The plan is not ``sequential``: the simulator (spec §3) runs it ASAP in topological order, so
parallel branches on different devices overlap. It may also overlap independent nodes that
PartitionTuner's partition scheduler would have serialised (ones not in sibling branches), so
the reported makespan can be a little better than the paper's scheduler would give.
Times in the problem's units.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.schedulers.base import register
from hetlab.schedulers.plan import Plan


def extract_branches(problem: Problem) -> list[list[int]]:
    """Maximal chains of sequential nodes, in topological order of their heads."""
    branch_of = [-1] * len(problem.nodes)
    out: list[list[int]] = []
    for v in problem.topo:
        preds = problem.preds[v]
        if len(preds) == 1 and len(problem.succs[preds[0][0]]) == 1:
            b = branch_of[preds[0][0]]
            out[b].append(v)
        else:
            b = len(out)
            out.append([v])
        branch_of[v] = b
    return out


def parallel_levels(problem: Problem, branches: list[list[int]]) -> list[list[int]]:
    """Sets (of 2 or more branch numbers) of parallel branches: same input and output node."""
    key: dict[tuple[int, int], list[int]] = {}
    for i, br in enumerate(branches):
        ins, outs = problem.preds[br[0]], problem.succs[br[-1]]
        if len(ins) == 1 and len(outs) == 1:
            key.setdefault((ins[0][0], outs[0][0]), []).append(i)
    return [v for v in key.values() if len(v) > 1]


GroupRuns = dict[int, list[tuple[int, np.ndarray]]]  # run end j -> (run start i, cost per device)


def branch_groups(problem: Problem, branches: list[list[int]]) -> list[GroupRuns]:
    """For each branch, the groups lying in it as a contiguous run ``br[i..j]``, by ``j``."""
    where = {v: (b, i) for b, br in enumerate(branches) for i, v in enumerate(br)}
    out: list[GroupRuns] = [{} for _ in branches]
    for g in problem.groups:
        at = [where[problem.index[x]] for x in g.nodes]
        span = sorted(i for _, i in at)
        if (
            len(at) < 2
            or len({b for b, _ in at}) != 1
            or span != list(range(span[0], span[-1] + 1))
        ):
            continue
        c = np.array(
            [np.inf if g.cost.get(d) is None else float(g.cost[d]) for d in problem.devices]
        )
        if np.isfinite(c).any():
            out[at[0][0]].setdefault(span[-1], []).append((span[0], c))
    return out


def _map_branch(
    problem: Problem, br: list[int], groups: GroupRuns, dev: list[int]
) -> list[tuple[int, int, int]]:
    """Backend finder DP on one branch: units as (first position, last position, device)."""
    cost, comm = problem.cost_matrix, problem.comm_tensor
    m, nd = len(br), cost.shape[1]
    entry = np.zeros(nd)  # transfers into the head from branches already mapped
    for u, k in problem.preds[br[0]]:
        entry += comm[k, dev[u]]
    link = [problem.preds[br[i]][0][1] if i else -1 for i in range(m)]  # edge br[i-1] -> br[i]
    best = np.full((m + 1, nd), np.inf)
    back: list[list[tuple[int, int]]] = [[(0, 0)] * nd for _ in range(m + 1)]  # (start, prev dev)

    def arrive(i: int) -> tuple[np.ndarray, np.ndarray]:
        """Cheapest way to start a unit at position ``i`` on each device, and the device before."""
        if i == 0:
            return entry, np.zeros(nd, dtype=int)
        t = best[i][:, None] + comm[link[i]]
        return t.min(axis=0), t.argmin(axis=0)

    for j in range(m):
        units = [(j, cost[br[j]])] + groups.get(j, [])
        for i, c in units:
            a, via = arrive(i)
            total = a + c
            for d in np.flatnonzero(total < best[j + 1]):
                best[j + 1, d] = total[d]
                back[j + 1][d] = (i, int(via[d]))
    units_out: list[tuple[int, int, int]] = []
    j, d = m, int(best[m].argmin())
    while j > 0:
        i, p = back[j][d]
        units_out.append((i, j - 1, d))
        j, d = i, p
    return units_out[::-1]


@register("partitiontuner", "PartitionTuner (Yu et al., 2023): branches + grouped-cost DP")
def partitiontuner(problem: Problem, progress: Any = None) -> Plan:
    """Map each branch by DP over individual and grouped costs; parallel branches overlap."""
    branches = extract_branches(problem)
    dev = [-1] * len(problem.nodes)
    fused: list[list[str]] = []
    for br, groups in zip(branches, branch_groups(problem, branches), strict=True):
        for i, j, d in _map_branch(problem, br, groups, dev):
            for v in br[i : j + 1]:
                dev[v] = d
            if j > i:
                fused.append([problem.nodes[v].id for v in br[i : j + 1]])
    levels = parallel_levels(problem, branches)
    split = sum(1 for lv in levels if len({dev[branches[b][0]] for b in lv}) > 1)
    ids = [nd.id for nd in problem.nodes]
    return Plan.of(
        {ids[v]: problem.devices[dev[v]] for v in range(len(ids))},
        [ids[v] for v in problem.topo],
        fused=fused,
        algo="partitiontuner",
        extra={"branches": len(branches), "parallel_sets": len(levels), "parallel_split": split},
    )
