"""HOPE GS: node merging into super-ops, then top-K greedy search over all |D|^K mappings.

Xia et al., "HOPE: a heterogeneity-oriented parallel execution engine for inference on
mobiles", HPC Chinese Journal 2022, §3.1 (Algorithm 2) and §3.2 (node merging).

Merging (§3.2): a *short* op -- its cost on every device that can run it is below
``merge_threshold`` (problem units; default 0.1 ms, the paper's example of a ReLU on the Redmi
"less than 0.1 ms" beside Conv2D's 3 ms) -- with exactly one predecessor joins that
predecessor's super-op, so they always share a device; merging is skipped when no device could
run the merged super-op. A super-op runs its members back to back.

Search (§3.1, Algorithm 2): the ready super-ops are sorted by their earliest start (the latest
finish of their predecessors); the top K are mapped by trying all |D|^K device maps, each timed
in that order under the spec §3 model (blocking receives) on top of the committed prefix, and
the map with the smallest completion time of the K ops (ties: smallest sum of completions) is
committed -- all K of them, as Algorithm 2 does; then their successors that became ready join
the queue (the pseudo-code's ``opsQueue <- kOps.successors`` read as "add", since the ready ops
not picked must stay queued). K defaults to 4 for 2 devices and 3 for 3 or more (§3.1).
Ties between maps of equal completion time go to the smaller sum of completions (the paper
leaves ties open). Nothing else is added: this is Algorithm 2 as published.
"""

from __future__ import annotations

import itertools

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.errors import HetlabError
from hetlab.schedulers.base import Param, register
from hetlab.schedulers.incremental import Timeline
from hetlab.schedulers.plan import Plan

MAX_MAPPINGS = 1 << 16


def default_k(problem: Problem) -> int:
    """HOPE's K: 4 for two devices, 3 for three or more (§3.1)."""
    return 4 if len(problem.devices) <= 2 else 3


PARAMS = [
    Param(
        "k",
        "int",
        None,
        1,
        8,
        "ops mapped jointly per step (default 4 for 2 devices, 3 for more, as in HOPE)",
        rule=default_k,
    ),
    Param(
        "merge_threshold",
        "float",
        0.1,
        0.0,
        1e9,
        "a short op (cost below this on every device, problem units) with one predecessor joins it",
    ),
]


def merge_superops(problem: Problem, threshold: float) -> list[list[int]]:
    """Super-ops (node-index lists in topological order) after HOPE's node merging."""
    cost = problem.cost_matrix
    finite = np.isfinite(cost)
    worst = np.where(finite, cost, -np.inf).max(axis=1)
    sop_of: dict[int, int] = {}
    sops: list[list[int]] = []
    ok: list[np.ndarray] = []  # devices that can run every member of the super-op
    for v in problem.topo:
        p = problem.preds[v]
        if threshold > 0 and len(p) == 1 and worst[v] < threshold:
            s = sop_of[p[0][0]]
            both = ok[s] & finite[v]
            if both.any():
                sops[s].append(v)
                ok[s] = both
                sop_of[v] = s
                continue
        sop_of[v] = len(sops)
        sops.append([v])
        ok.append(finite[v].copy())
    return sops


def search_min_end_time(tl: Timeline, batch, mp, est, scost, ext_preds) -> tuple[int, float]:
    """Algorithm 2's ``searchMiniEndTime``: time every device map ``mp`` of the super-ops in
    ``batch`` (in that order, on top of ``tl``); returns the index of the map whose latest
    finish is smallest (ties: smallest sum of finishes) and that finish."""
    comm, nd = tl.comm, len(tl.dev_free)
    free = np.tile(tl.dev_free, (len(mp), 1))
    rows = np.arange(len(mp))
    worst = np.zeros(len(mp))
    total = np.zeros(len(mp))
    shares = _share_matrix(tl.occ, nd)
    for j, s in enumerate(batch):
        recv = np.zeros(nd)
        for u, e in ext_preds[s]:
            recv += comm[e, tl.dev[u]]
        d = mp[:, j]
        start = np.maximum(est[s], free[rows, d])
        fin = start + scost[s, d] + recv[d]
        if shares is None:
            free[rows, d] = fin
        else:  # the devices sharing its cores wait for it too
            free = np.where(shares[d], np.maximum(free, fin[:, None]), free)
        worst = np.maximum(worst, fin)
        total += fin
    best = int(np.lexsort((total, worst))[0])
    return best, float(worst[best])


def _share_matrix(occ: list[list[int]] | None, nd: int) -> np.ndarray | None:
    """``[D, D]`` whether a node on the row's device keeps the column's from computing."""
    if occ is None:
        return None
    m = np.zeros((nd, nd), dtype=bool)
    for d, o in enumerate(occ):
        m[d, o] = True
    return m


def greedy_timeline(
    problem: Problem, k: int | None = None, merge_threshold: float | None = None
) -> Timeline:
    """Run Algorithm 2 and return the committed timeline (order, devices, times); ``None``
    takes the parameter's default."""
    nd = len(problem.devices)
    k = int(PARAMS[0].default_for(problem) if k is None else k)
    if merge_threshold is None:
        merge_threshold = float(PARAMS[1].default)
    if nd**k > MAX_MAPPINGS:
        raise HetlabError(f"greedy: {nd}^{k} device maps is too many; use a smaller --k")
    sops = merge_superops(problem, merge_threshold)
    cost = problem.cost_matrix
    sop_of = np.empty(len(problem.nodes), dtype=int)
    for i, s in enumerate(sops):
        sop_of[s] = i
    scost = np.array([cost[s].sum(axis=0) for s in sops]) if sops else np.zeros((0, nd))
    ext_preds = [
        [(u, e) for u, e in problem.preds[s[0]]] for s in sops
    ]  # only heads have outside preds
    indeg = np.array([len(p) for p in ext_preds])
    topo_pos = np.empty(len(sops), dtype=int)
    topo_pos[:] = np.arange(len(sops))  # super-ops are created in topological order
    maps = {
        j: np.array(list(itertools.product(range(nd), repeat=j)), dtype=int)
        for j in range(1, k + 1)
    }
    tl = Timeline(problem)
    ready = [i for i in range(len(sops)) if indeg[i] == 0]
    est = np.zeros(len(sops))
    while ready:
        ready.sort(key=lambda s: (est[s], topo_pos[s]))
        batch, ready = ready[:k], ready[k:]
        mp = maps[len(batch)]
        best, worst = search_min_end_time(tl, batch, mp, est, scost, ext_preds)
        if not np.isfinite(worst):
            raise HetlabError(
                f"greedy: no device can run super-op of {problem.nodes[sops[batch[0]][0]].id!r}"
            )
        for j, s in enumerate(batch):
            d = int(mp[best, j])
            for m in sops[s]:
                tl.place([m], d)
            for m in sops[s]:
                for w, _ in problem.succs[m]:
                    t = sop_of[w]
                    if t == s:
                        continue
                    indeg[t] -= 1
                    est[t] = max(est[t], tl.finish[m])
                    if indeg[t] == 0:
                        ready.append(t)
    return tl


@register(
    "greedy", "HOPE GS: node merging + top-K greedy search (Xia et al., 2022, Alg. 2)", PARAMS
)
def greedy(problem: Problem, k: int | None = None, merge_threshold: float | None = None) -> Plan:
    k = int(PARAMS[0].default_for(problem) if k is None else k)
    merge_threshold = float(PARAMS[1].default if merge_threshold is None else merge_threshold)
    tl = greedy_timeline(problem, k, merge_threshold)
    device_of, order, _ = tl.decision_parts()
    sops = merge_superops(problem, merge_threshold)
    merged = sum(len(s) - 1 for s in sops)
    extra = {"k": k, "superops": len(sops), "merged": merged}
    return Plan.of(device_of, order, algo="greedy", extra=extra)
