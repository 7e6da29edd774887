"""Spec §3's timing engine: the one rule of a unit's start and finish (``unit_times``), the
walk of a plan's units through it (``walk``), and the simulator every reported makespan
comes from (``simulate``), which checks a whole plan and walks it. The schedulers'
incremental timelines (``incremental.py``) apply the same rule unit by unit; the prediction
walks the plan with its terms' edge costs (``calibrate/prediction.py``), and adds the host,
shared rates and graph launches to the rule where those terms are on (``calibrate/events.py``);
a replay's virtual clock walks the executor's units (``devices/replay.py``).

A schedule is a device per node, a global order (each device's order is its subsequence;
any deadlock-free set of per-device orders has such a topological merge), optional fused
groups and a ``sequential`` flag. Receives are blocking: a unit occupies its device for its
compute time plus the transfer time of every input edge that comes from another device.
Devices that share cores (``problem.occupancy``) are one resource: a unit starts after every
unit placed earlier in the order on its device or on one sharing its cores has finished.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.cost.shared import occupy
from hetlab.errors import HetlabError

INF = float("inf")


@dataclass
class Timing:
    start: dict[str, float]
    finish: dict[str, float]
    makespan: float


def simulate(
    problem: Problem,
    device_of: dict[str, str],
    order: Sequence[str],
    fused: Sequence[Sequence[str]] = (),
    sequential: bool = False,
) -> Timing:
    """ASAP start and finish times (in the problem's units) of every node.

    ``order`` must list every node once, in an order where each node follows its
    predecessors; a fused group runs at the position of its last member.
    """
    n = len(problem.nodes)
    if len(order) != n or len(set(order)) != n:
        raise HetlabError(f"plan order must list each of the {n} nodes exactly once")
    dev = _devices(problem, device_of)
    start, finish = walk(
        problem,
        dev,
        _units(problem, dev, order, fused),
        sequential,
        on_inf=lambda members, finish: _placed_inputs(problem, members, finish),
    )
    names = [x.id for x in problem.nodes]
    return Timing(
        start=dict(zip(names, start, strict=False)),
        finish=dict(zip(names, finish, strict=False)),
        makespan=max(finish, default=0.0),
    )


def walk(
    problem: Problem,
    dev: Sequence[int],
    units: Iterable[tuple[list[int], int, float]],
    sequential: bool = False,
    comm: np.ndarray | None = None,
    on_inf: Callable[[list[int], list[float]], None] | None = None,
    shared: bool = True,
) -> tuple[list[float], list[float]]:
    """(start, finish) of every node of ``problem`` (by index) when ``units`` run in their
    order, each ``(members, device index, cost)``, through ``unit_times``. ``dev``: each
    node's device index; ``comm``: each edge's receive cost between devices (the problem's
    ``comm_tensor`` unless given: the prediction passes its terms' own); ``on_inf``: called
    with a unit's members and the finishes so far when the unit finishes at inf (an input
    not placed yet, or an infinite cost); ``shared``: whether devices that share cores are
    one resource (a replay's devices only sleep, and share nothing). A node of no unit keeps
    finish inf."""
    preds, occ = problem.preds, problem.occupancy if shared else None
    comm = problem.comm_tensor if comm is None else comm
    n = len(problem.nodes)
    start = [0.0] * n
    finish = [INF] * n  # INF until placed: a unit reading such a node finishes at INF
    dev_free = [0.0] * len(problem.devices)  # when each device may next start
    clock = 0.0
    for members, d, c in units:
        free = clock if sequential else dev_free[d]
        s, f = unit_times(preds, comm, dev, finish, members, d, free, c)
        if f == INF and on_inf is not None:
            on_inf(members, finish)
        for m in members:
            start[m], finish[m] = s, f
        occupy(dev_free, d, f, occ)
        clock = f
    return start, finish


def _units(problem: Problem, dev: list[int], order: Sequence[str], fused):
    """``simulate``'s units in run order, each ``(members, device, cost)``, checked as they
    come: a fused group runs at the position of its last member, on one device."""
    idx = problem.index
    group_of, groups = _groups(problem, fused)
    pos = {idx[v]: i for i, v in enumerate(order)}
    last_pos = [max(pos[m] for m in g) for g in groups]
    for i, v in enumerate(order):
        vi = idx[v]
        gi = group_of.get(vi)
        if gi is not None and last_pos[gi] != i:
            continue
        members = groups[gi] if gi is not None else [vi]
        d = dev[vi]
        if gi is not None:
            _same_device(problem, members, dev, d)
        yield members, d, _unit_cost(problem, members, d, gi is not None)


def unit_times(preds, comm, dev, finish, members: list[int], d: int, free: float, cost):
    """(start, finish) of the unit ``members`` appended on device ``d`` (spec §3): ``preds``,
    ``comm`` as a problem's, ``dev`` and ``finish`` of the nodes placed so far (indexable
    by node; all of the unit's inputs from outside it placed), ``free``: when ``d`` may next
    start (the clock, for a sequential plan); ``cost``: the unit's compute on ``d``."""
    inside = members if len(members) == 1 else set(members)  # one node: no set to build
    ready = 0.0
    recv = 0.0
    for m in members:
        for u, k in preds[m]:
            if u in inside:
                continue
            ready = max(ready, finish[u])
            if dev[u] != d:
                recv += comm[k, dev[u], d]
    s = max(ready, free)
    return float(s), float(s + cost + recv)


def _groups(problem: Problem, fused: Sequence[Sequence[str]]):
    """(group index of each fused node, members of each group as node indices)."""
    group_of: dict[int, int] = {}
    groups: list[list[int]] = []
    for g in fused:
        members = [problem.index[v] for v in g]
        for m in members:
            if m in group_of:
                raise HetlabError(f"node {problem.nodes[m].id!r} is in two fused groups")
            group_of[m] = len(groups)
        groups.append(members)
    return group_of, groups


def _devices(problem: Problem, device_of: dict[str, str]) -> list[int]:
    """The device index of every node; unknown nodes or devices, or a missing one, fail."""
    dev = [0] * len(problem.nodes)
    for v, d in device_of.items():
        if v not in problem.index:
            raise HetlabError(f"plan places unknown node {v!r}")
        if d not in problem.dev_index:
            raise HetlabError(
                f"plan uses unknown device {d!r} (devices: {', '.join(problem.devices)})"
            )
        dev[problem.index[v]] = problem.dev_index[d]
    if len(device_of) != len(problem.nodes):
        missing = [x.id for x in problem.nodes if x.id not in device_of][:3]
        raise HetlabError(f"plan leaves nodes without a device: {', '.join(missing)}")
    return dev


def _placed_inputs(problem: Problem, members: list[int], finish) -> None:
    """That every input of the unit from outside it is placed."""
    inside = set(members)
    for m in members:
        for u, _ in problem.preds[m]:
            if u not in inside and finish[u] == INF:
                raise HetlabError(
                    f"plan order runs {problem.nodes[m].id!r} before its predecessor "
                    f"{problem.nodes[u].id!r}"
                )


def _same_device(problem: Problem, members: list[int], dev, d: int) -> None:
    if any(dev[m] != d for m in members):
        raise HetlabError(f"fused group {[problem.nodes[x].id for x in members]} spans devices")


def _unit_cost(problem: Problem, members: list[int], d: int, fused: bool) -> float:
    """The compute cost of a unit (a node, or a fused group's joint cost) on device ``d``."""
    if fused:
        names = [problem.nodes[m].id for m in members]
        c = problem.group_cost(names, problem.devices[d])
        if c is None:
            raise HetlabError(f"no fused cost for group {names} on {problem.devices[d]!r}")
        return c
    c = problem.cost_matrix[members[0], d]
    if c == float("inf"):
        v = problem.nodes[members[0]].id
        raise HetlabError(f"node {v!r} cannot run on {problem.devices[d]!r}")
    return c
