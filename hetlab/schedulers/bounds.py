"""A makespan lower bound and a plan validator for the standard timing model (spec §3).

``lower_bound`` is max(critical path at each node's best cost with free transfers, total best
work / #devices): every plan takes at least each of the two, so it takes at least their max.
Where the problem has fused groups (PartitionTuner's grouped operators) a node's best cost also
considers ``best group cost / group size`` of each group it is in, so that the bound stays
valid for plans that fuse (a path through any member of a fused group pays the whole group
cost).
"""

from __future__ import annotations

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.errors import HetlabError
from hetlab.schedulers.plan import Assignment, Plan
from hetlab.schedulers.sim import simulate

TOL = 1e-6


def best_costs(problem: Problem) -> np.ndarray:
    """Per-node smallest cost (problem units) over devices, allowing for fused groups."""
    best = problem.cost_matrix.min(axis=1)
    for g in problem.groups:
        gc = [float(c) for c in g.cost.values() if c is not None]
        if not gc:
            continue
        share = min(gc) / len(g.nodes)
        for v in g.nodes:
            i = problem.index[v]
            best[i] = min(best[i], share)
    return best


def tail_lengths(problem: Problem, best: np.ndarray | None = None) -> np.ndarray:
    """Longest best-cost path strictly after each node (free transfers), problem units."""
    best = best_costs(problem) if best is None else best
    tail = np.zeros(len(problem.nodes))
    for v in reversed(problem.topo):
        t = 0.0
        for w, _ in problem.succs[v]:
            t = max(t, best[w] + tail[w])
        tail[v] = t
    return tail


def lower_bound(problem: Problem) -> float:
    """max(critical path at best cost with zero comm, total best work / #devices), in units."""
    if not problem.nodes:
        return 0.0
    best = best_costs(problem)
    tail = tail_lengths(problem, best)
    path = float(np.max(best + tail))
    work = float(best.sum()) / len(problem.devices)
    return max(path, work)


def validate_plan(problem: Problem, plan: Plan, tol: float = TOL) -> None:
    """Raise ``HetlabError`` unless ``plan`` is a valid, exactly timed plan for ``problem``.

    Checks: every node once, supported device, precedence, no overlap on a device (or at all
    when sequential) except members of one fused group, fused groups on one device with a
    known group cost, and times equal to the simulator's within ``tol``.
    """
    seen = _each_node_once(problem, plan)
    group_of = _fused_on_one_device(problem, plan, seen)
    for a in plan.assignments:
        if a.node not in group_of:
            i = problem.index[a.node]
            if not np.isfinite(problem.cost_matrix[i, problem.dev_index[a.device]]):
                raise HetlabError(f"node {a.node!r} cannot run on {a.device!r}")
    for e in problem.edges:
        u, v = seen[e.src], seen[e.dst]
        if e.src in group_of and group_of.get(e.src) == group_of.get(e.dst):
            continue
        if v.start < u.finish - tol:
            raise HetlabError(f"{e.dst!r} starts before its predecessor {e.src!r} finishes")
    _no_overlap(plan, group_of, tol, _sharing(problem, plan))
    t = simulate(problem, plan.device_of, plan.order, plan.fused, plan.sequential)
    for a in plan.assignments:
        if abs(t.start[a.node] - a.start) > tol or abs(t.finish[a.node] - a.finish) > tol:
            raise HetlabError(f"times of {a.node!r} differ from the simulator's")
    if abs(t.makespan - plan.makespan) > tol:
        raise HetlabError(
            f"plan makespan {plan.makespan} differs from the simulator's {t.makespan}"
        )


def _each_node_once(problem: Problem, plan: Plan) -> dict[str, Assignment]:
    """Each node's assignment, checking that every node is assigned once to a known device."""
    ids = {n.id for n in problem.nodes}
    seen: dict[str, Assignment] = {}
    for a in plan.assignments:
        if a.node not in ids:
            raise HetlabError(f"plan assigns unknown node {a.node!r}")
        if a.node in seen:
            raise HetlabError(f"plan assigns node {a.node!r} twice")
        if a.device not in problem.dev_index:
            raise HetlabError(f"plan uses unknown device {a.device!r}")
        seen[a.node] = a
    missing = ids - set(seen)
    if missing:
        raise HetlabError(f"plan misses nodes: {', '.join(sorted(missing)[:3])}")
    return seen


def _fused_on_one_device(
    problem: Problem, plan: Plan, seen: dict[str, Assignment]
) -> dict[str, int]:
    """Each fused node's group index, checking that a group runs on one device that has its
    group cost."""
    group_of: dict[str, int] = {}
    for gi, g in enumerate(plan.fused):
        devs = {seen[v].device for v in g}
        if len(devs) != 1:
            raise HetlabError(f"fused group {g} spans devices {sorted(devs)}")
        if problem.group_cost(g, devs.pop()) is None:
            raise HetlabError(f"fused group {g} has no known cost on its device")
        for v in g:
            group_of[v] = gi
    return group_of


def _sharing(problem: Problem, plan: Plan) -> dict[str, list[str]]:
    """Each device -> the devices that share its cores (spec §3), itself included."""
    occ, devs = problem.occupancy, problem.devices
    if occ is None or plan.sequential:
        return {}
    return {devs[d]: [devs[c] for c in o] for d, o in enumerate(occ) if len(o) > 1}


def _no_overlap(
    plan: Plan, group_of: dict[str, int], tol: float, sharing: dict[str, list[str]]
) -> None:
    """One interval per unit (fused group or node), per device or global if sequential: no
    two overlap by more than ``tol``; nor two on devices that share cores (``sharing``)."""
    units: dict[object, tuple[str, float, float]] = {}
    for a in plan.assignments:
        key = ("g", group_of[a.node]) if a.node in group_of else a.node
        units[key] = ("*" if plan.sequential else a.device, a.start, a.finish)
    by_dev: dict[str, list[tuple[float, float]]] = {}
    for d, s, f in units.values():
        by_dev.setdefault(d, []).append((s, f))
    for d, others in sharing.items():
        for c in others[1:]:
            if c > d and d in by_dev and c in by_dev:
                _disjoint(by_dev[d], by_dev[c], f"{d!r} and {c!r}, which share cores", tol)
    for d, iv in by_dev.items():
        busy_until = -float("inf")
        for s1, f1 in sorted(iv):
            if f1 > s1 and s1 < busy_until - tol:
                raise HetlabError(f"plan overlaps two units on {d!r} at t={s1:g}")
            if f1 > s1:
                busy_until = max(busy_until, f1)


def _disjoint(a: list[tuple[float, float]], b: list[tuple[float, float]], where: str, tol: float):
    """Raise unless no interval of ``a`` overlaps one of ``b`` by more than ``tol``."""
    for s1, f1 in a:
        for s2, f2 in b:
            if min(f1, f2) - max(s1, s2) > tol:
                raise HetlabError(f"plan overlaps two units on {where} at t={max(s1, s2):g}")
