"""Rank code shared by the list schedulers and OverSeer (all times in the problem's units).

- ``upward_rank``: HEFT's rank_u (Topcuoglu, Hariri & Wu, IEEE TPDS 13(3), 2002, eq. 8), with
  the mean cost of a node over the devices that *can* run it and the mean transfer time of an
  edge over all ordered pairs of distinct devices.
- ``optimistic_cost_table`` / ``rank_oct``: PEFT's OCT and rank_oct (Arabnejad & Barbosa,
  IEEE TPDS 25(3), 2014, eqs. 4-5); an unsupported (device, node) pair never gives the minimum.
- ``bottom_level`` / ``heaviest_successor`` / ``costliest_path``: the path of the largest
  computation cost that OverSeer's spanning tree follows (Mukherjee et al., SOSP'19 AI Systems
  workshop, §2 "Canonicalization").
- ``priority_order``: a topological order that always takes the ready node of highest priority.
"""

from __future__ import annotations

import heapq

import numpy as np

from hetlab.cost.problem import Problem


def mean_costs(problem: Problem) -> np.ndarray:
    """``[n]`` mean compute time of each node over the devices that support it."""
    c = problem.cost_matrix
    ok = np.isfinite(c)
    return np.where(ok, c, 0.0).sum(axis=1) / np.maximum(ok.sum(axis=1), 1)


def mean_comm(problem: Problem) -> np.ndarray:
    """``[E]`` mean transfer time of each edge over ordered pairs of distinct devices (0 for one)."""
    nd = len(problem.devices)
    if nd < 2 or not problem.edges:
        return np.zeros(len(problem.edges))
    return problem.comm_tensor.sum(axis=(1, 2)) / (nd * (nd - 1))


def upward_rank(problem: Problem) -> np.ndarray:
    """``[n]`` rank_u(v) = mean cost(v) + max over successors s of (mean comm(v,s) + rank_u(s))."""
    w, c = mean_costs(problem), mean_comm(problem)
    rank = np.zeros(len(problem.nodes))
    for v in reversed(problem.topo):
        tail = max((c[k] + rank[s] for s, k in problem.succs[v]), default=0.0)
        rank[v] = w[v] + tail
    return rank


def optimistic_cost_table(problem: Problem) -> np.ndarray:
    """``[n, D]`` OCT(v, d): the longest optimistic remaining time after ``v`` if ``v`` runs on ``d``.

    OCT(v, d) = max over successors s of min over devices e of OCT(s, e) + cost(s, e)
    + (mean comm(v, s) if e != d else 0); 0 for exit nodes.
    """
    cost = problem.cost_matrix
    c = mean_comm(problem)
    oct_ = np.zeros(cost.shape)
    for v in reversed(problem.topo):
        row = np.zeros(cost.shape[1])
        for s, k in problem.succs[v]:
            m = oct_[s] + cost[s]  # inf where s is unsupported
            # staying on d costs m[d]; moving anywhere costs min(m) + comm
            row = np.maximum(row, np.minimum(m, m.min() + c[k]))
        oct_[v] = row
    return oct_


def rank_oct(problem: Problem, table: np.ndarray | None = None) -> np.ndarray:
    """``[n]`` PEFT's rank_oct: the mean OCT of each node over the devices that support it."""
    t = optimistic_cost_table(problem) if table is None else table
    ok = np.isfinite(problem.cost_matrix)
    return np.where(ok, t, 0.0).sum(axis=1) / np.maximum(ok.sum(axis=1), 1)


def bottom_level(problem: Problem) -> np.ndarray:
    """``[n]`` the largest mean computation cost of a path from each node to an exit (inclusive)."""
    w = mean_costs(problem)
    bl = np.zeros(len(problem.nodes))
    for v in reversed(problem.topo):
        bl[v] = w[v] + max((bl[s] for s, _ in problem.succs[v]), default=0.0)
    return bl


def heaviest_successor(problem: Problem) -> list[tuple[int, int] | None]:
    """For each node, ``(successor, edge index)`` on its costliest continuation, or None at exits."""
    bl = bottom_level(problem)
    pos = {v: i for i, v in enumerate(problem.topo)}
    out: list[tuple[int, int] | None] = []
    for v in range(len(problem.nodes)):
        succ = problem.succs[v]
        out.append(max(succ, key=lambda sk: (bl[sk[0]], -pos[sk[0]])) if succ else None)
    return out


def costliest_path(problem: Problem) -> list[int]:
    """Node indices of the path with the largest total mean computation cost (entry to exit)."""
    if not problem.nodes:
        return []
    bl = bottom_level(problem)
    entries = [v for v in problem.topo if not problem.preds[v]]
    v: int | None = max(entries, key=lambda x: bl[x])
    nxt = heaviest_successor(problem)
    path: list[int] = []
    while v is not None:
        path.append(v)
        hs = nxt[v]
        v = hs[0] if hs else None
    return path


def priority_order(problem: Problem, priority: np.ndarray) -> list[int]:
    """A topological order taking, each step, the ready node of highest priority (ties: topo)."""
    pos = {v: i for i, v in enumerate(problem.topo)}
    indeg = [len(p) for p in problem.preds]
    heap = [(-priority[v], pos[v], v) for v in problem.topo if indeg[v] == 0]
    heapq.heapify(heap)
    out: list[int] = []
    while heap:
        _, _, v = heapq.heappop(heap)
        out.append(v)
        for s, _ in problem.succs[v]:
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(heap, (-priority[s], pos[s], s))
    return out
