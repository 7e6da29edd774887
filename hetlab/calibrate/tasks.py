"""The plan as priced tasks, with each term of ``prediction`` on or off.

``setting`` reads what does not depend on the terms once: the plan with the host's source
and sink added, its tasks (a node, or a fused group at its last member's place), the
executor's units, the device families and their calibrations. ``edge_costs`` prices each
edge's blocking receive for one set of terms. ``plain_units`` gives the tasks as units of
spec §3's engine (``schedulers.sim.walk``), which times them when no term needs the host, a
shared rate or a graph's launch; ``build_tasks`` gives them as ``events.EventSim``'s tasks
and lanes, where a task on a device that shares cores with others (spec §3) also waits for
the tasks before it in the plan's order on those devices.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

import numpy as np

from hetlab.calibrate.events import Task
from hetlab.cost.calibration import families
from hetlab.cost.problem import PEdge, PNode, Problem
from hetlab.devices.bound import BoundPlan, build_units
from hetlab.errors import HetlabError
from hetlab.graph.ir import OpGraph
from hetlab.schedulers.plan import Plan

SOURCE, SINK = "__host_inputs__", "__host_outputs__"


@dataclass
class Setting:
    p: Problem  # with the source and sink where the host is one of its devices
    dev_of: dict[str, str]
    lane_of: dict[int, str]  # task -> lane
    members: list[list[int]]  # task -> its nodes (indices into ``p``)
    task_of: dict[str, int]
    model_nodes: list[str]
    io_edges: set[int] = field(default_factory=set)  # edges to the source or from the sink
    unit_start: dict[int, list[int]] = field(default_factory=dict)  # task -> tasks it waits on
    host_ms: dict[int, float] = field(default_factory=dict)  # unit-starting task -> dispatch
    fam: dict[str, str] = field(default_factory=dict)
    share: dict[str, tuple[float, int]] = field(default_factory=dict)  # family used -> (s, q)
    graphs: dict[str, float] = field(default_factory=dict)  # family run as one graph -> run_ms
    surcharge: float = 0.0
    fused: set[int] = field(default_factory=set)  # tasks that are fused groups
    sequential: bool = False
    dev: list[int] = field(default_factory=list)  # node index -> its device's index in ``p``

    def applies(self, term: str) -> bool:
        cal = self.p.calibration
        return {
            "boundary": any(cal.latency.values()),
            "host_io": bool(self.io_edges),
            "host_dispatch": bool(self.host_ms),
            "concurrency": bool(self.host_ms) and self.surcharge > 0.0,
            "queue_sharing": bool(self.share),
            "graph_run": bool(self.graphs),
        }.get(term, True)


def setting(
    problem: Problem,
    graph: OpGraph,
    plan: Plan | BoundPlan,
    host: str | None,
    remote: Collection[str],
    surcharge: float | None,
) -> Setting:
    """``plan``'s tasks and what its terms need (see the module doc). A bound plan brings
    its units, and its order is already checked against the model."""
    ids = [n.id for n in problem.nodes]
    device_of, order = plan.device_of, plan.order
    _check(problem, graph, device_of, None if isinstance(plan, BoundPlan) else order)
    p, dev_of, order, io = _with_host_io(problem, graph, device_of, order, host, remote)
    members, task_of, lane_of, fused = _tasks(p, dev_of, order, plan.fused, plan.sequential)
    cal = problem.calibration
    st = Setting(p, dev_of, lane_of, members, task_of, ids, io, fused=fused)
    st.sequential = plan.sequential
    st.dev = [p.dev_index[dev_of[x.id]] for x in p.nodes]
    st.surcharge = cal.concurrent_ms if surcharge is None else surcharge
    st.fam = families(problem.extra)
    queues = problem.extra.get("queues") or {}
    used = {st.fam[d] for d in device_of.values() if d in st.fam}
    for root in used:
        q = queues[root]
        st.share[root] = (float(q.get("slowdown", 1.0)), len(q.get("views", [])) + 1)
        if "run_ms" in q and _kept_to_itself(problem, device_of, st.fam, root):
            st.graphs[root] = float(q.get("run_ms") or 0.0)
    if cal.per_unit:
        _units(st, graph, plan)
    return st


def _check(problem: Problem, graph: OpGraph, device_of: Mapping[str, str], order) -> None:
    """One line for a plan that does not fit the problem and the model; ``order`` None: a
    bound plan's, checked when it was bound."""
    ids = {n.id for n in problem.nodes}
    if set(device_of) != ids or {n.id for n in graph.nodes} != ids:
        raise HetlabError("the plan, the model and the problem do not have the same nodes")
    bad = sorted({d for d in device_of.values() if d not in problem.dev_index})
    if bad:
        raise HetlabError(f"plan uses unknown device {bad[0]!r}")
    if order is None:
        return
    if len(order) != len(ids) or set(order) != ids:
        raise HetlabError(f"plan order must list each of the {len(ids)} nodes exactly once")
    pos = {v: i for i, v in enumerate(order)}
    for e in problem.edges:
        if pos[e.src] > pos[e.dst]:
            raise HetlabError(f"plan order runs {e.dst!r} before its predecessor {e.src!r}")


def _kept_to_itself(problem: Problem, device_of, fam: dict[str, str], root: str) -> bool:
    """Whether no model edge joins ``root``'s family to another device."""
    for e in problem.edges:
        a, b = fam.get(device_of[e.src]), fam.get(device_of[e.dst])
        if a != b and root in (a, b):
            return False
    return True


def _with_host_io(problem, graph, device_of, order, host, remote):
    """(problem, placement, order, the io edges' indices) with the source and sink on
    ``host`` (``prediction``'s ``host_io``); unchanged where ``host`` is not a device."""
    if host not in problem.dev_index:
        return problem, dict(device_of), list(order), set()
    pos = {v: i for i, v in enumerate(order)}
    first: dict[tuple[str, str], str] = {}  # (input tensor, device) -> its first reader there
    for n in sorted(graph.nodes, key=lambda x: pos[x.id]):
        for t in n.inputs:
            d = device_of[n.id]
            if t in graph.inputs and t not in graph.consts and d in remote:
                first.setdefault((t, d), n.id)
    into: dict[str, float] = {}
    for (t, _), v in first.items():
        into[v] = into.get(v, 0.0) + (graph.tensors[t].nbytes if t in graph.tensors else 0.0)
    out_of: dict[str, float] = {}
    for n in graph.nodes:
        for t in n.outputs if device_of[n.id] in remote else ():
            if t in graph.outputs and t in graph.tensors:
                out_of[n.id] = out_of.get(n.id, 0.0) + graph.tensors[t].nbytes
    only_host = {d: (0.0 if d == host else None) for d in problem.devices}
    io = [PEdge(SOURCE, v, b) for v, b in into.items()] + [
        PEdge(v, SINK, b) for v, b in out_of.items()
    ]
    aug = Problem(
        problem.name,
        list(problem.devices),
        [*problem.nodes, PNode(SOURCE, dict(only_host)), PNode(SINK, dict(only_host))],
        [*problem.edges, *io],
        problem.comm,
        problem.groups,
        problem.units,
        problem.extra,
        problem.calibration,
    )
    n = len(problem.edges)
    dev = {**device_of, SOURCE: host, SINK: host}
    return aug, dev, [SOURCE, *order, SINK], set(range(n, n + len(io)))


def _tasks(p: Problem, dev_of, order, fused, sequential):
    """(members per task, node -> task, task -> lane, fused tasks), tasks in plan order."""
    group_of = {v: tuple(g) for g in fused for v in g}
    last = {g: max(order.index(v) for v in g) for g in set(group_of.values())}
    members: list[list[int]] = []
    task_of: dict[str, int] = {}
    lane_of: dict[int, str] = {}
    fused_tasks: set[int] = set()
    for i, v in enumerate(order):
        g = group_of.get(v)
        if g is not None and last[g] != i:
            continue
        names = list(g) if g is not None else [v]
        if len({dev_of[m] for m in names}) > 1:
            raise HetlabError(f"fused group {names} spans devices")
        t = len(members)
        members.append([p.index[m] for m in names])
        task_of.update(dict.fromkeys(names, t))
        lane_of[t] = "all" if sequential else dev_of[v]
        if g is not None:
            fused_tasks.add(t)
    return members, task_of, lane_of, fused_tasks


def _units(st: Setting, graph: OpGraph, plan: Plan | BoundPlan) -> None:
    """The executor's units: each unit's first task waits for the last task of every unit
    it depends on and takes the host for its device's per-unit cost (``host_dispatch``)."""
    cal = st.p.calibration
    h = cal.per_unit
    default = sorted(h.values())[len(h) // 2]
    units = plan.units if isinstance(plan, BoundPlan) else build_units(graph, plan)
    last = {u.index: st.task_of[u.nodes[-1]] for u in units}
    for u in units:
        ms = h.get(u.device, default)
        if len(units) == 1 and cal.excess_ms(u.device) is not None:
            ms = cal.excess_ms(u.device)  # the calibration's own plan: the whole model
        t = st.task_of[u.nodes[0]]
        st.unit_start[t] = [last[q] for q in u.deps]
        st.host_ms[t] = float(ms)  # type: ignore[arg-type]


def edge_costs(st: Setting, on: frozenset[str]) -> np.ndarray:
    """``[n_edges, n_devices, n_devices]`` each edge's blocking receive between devices with
    the terms ``on``: its transfer (a model edge with ``transfer``, an io edge with
    ``host_io``) plus, with ``boundary``, its pair's latency unless a later term on prices it
    (``host_dispatch`` the pairs calibrated per unit, ``graph_run`` a graph's links). With
    the scheduled terms alone it is the problem's ``comm_tensor``."""
    p = st.p
    io = np.zeros(len(p.edges), dtype=bool)
    io[sorted(st.io_edges)] = True
    keep = np.where(io, "host_io" in on, "transfer" in on)
    cost = p.link_tensor
    if "boundary" in on:
        per_unit = p.calibration.priced_per_unit if "host_dispatch" in on else frozenset()
        graphs = set(st.graphs) if "graph_run" in on else set()
        root = [st.fam.get(d, d) for d in p.devices]
        mask = [[f"{a}->{b}" not in per_unit and not {a, b} & graphs for b in root] for a in root]
        cost = cost + (p.boundary_matrix * np.array(mask, dtype=bool))[None, :, :]
    return cost * keep[:, None, None]


def plain_units(st: Setting, on: frozenset[str]) -> list[tuple[list[int], int, float]]:
    """The tasks as ``schedulers.sim.walk``'s units ``(members, device, compute)``."""
    return [
        (ms, st.dev[ms[0]], _work(st, t, st.p.devices[st.dev[ms[0]]]) if "compute" in on else 0.0)
        for t, ms in enumerate(st.members)
    ]


def build_tasks(
    st: Setting, on: frozenset[str], comm: np.ndarray
) -> tuple[list[Task], dict[str, list[int]], dict]:
    """(tasks, lane -> its tasks in order, the shared families) with the terms ``on`` and
    the edges' receives ``comm`` (``edge_costs``)."""
    p = st.p
    share = st.share if "queue_sharing" in on else {}
    graphs = st.graphs if "graph_run" in on else {}
    tasks: list[Task] = []
    lanes: dict[str, list[int]] = {}
    occ, last_on = p.occupancy, {}  # devices sharing cores: the last task of each so far
    for t, ms in enumerate(st.members):
        d = st.dev_of[p.nodes[ms[0]].id]
        root = st.fam.get(d)
        shared = root if root in share else None
        waits = {st.task_of[p.nodes[u].id] for m in ms for u, _ in p.preds[m]} - {t}
        if occ is not None:  # spec §3: after the earlier tasks of devices sharing its cores
            di = p.dev_index[d]
            waits |= {last_on[o] for o in occ[di][1:] if o in last_on}
            last_on[di] = t
        task = Task(
            lane=st.lane_of[t],
            work=_work(st, t, shared or d) if "compute" in on else 0.0,
            recv=_recv(st, ms, comm),
            family=shared,
            not_before=graphs.get(root, 0.0) if root is not None else 0.0,
            name=p.nodes[ms[-1]].id,
        )
        if "host_dispatch" in on and t in st.host_ms and root not in graphs:
            waits |= set(st.unit_start[t])
            task.host = st.host_ms[t]
        task.waits = sorted(waits)
        tasks.append(task)
        lanes.setdefault(task.lane, []).append(t)
    return tasks, lanes, share


def _work(st: Setting, t: int, device: str) -> float:
    """The task's compute on ``device`` (a fused group's joint cost)."""
    p, ms = st.p, st.members[t]
    names = [p.nodes[m].id for m in ms]
    c = (
        p.group_cost(names, device)
        if t in st.fused
        else float(p.cost_matrix[ms[0], p.dev_index[device]])
    )
    if c is None or c == float("inf"):
        raise HetlabError(f"no cost for {names[-1]!r} on {device!r}")
    return float(c)


def _recv(st: Setting, ms: list[int], comm: np.ndarray) -> float:
    """The task's blocking receives: each input from another device, priced by ``comm``,
    summed as ``schedulers.sim.unit_times`` sums them."""
    dev, inside = st.dev, set(ms)
    d = dev[ms[0]]
    out = 0.0
    for m in ms:
        for u, k in st.p.preds[m]:
            if u not in inside and dev[u] != d:
                out += comm[k, dev[u], d]
    return float(out)
