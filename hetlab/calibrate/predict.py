"""A plan's prediction with the model's inputs and outputs in host memory.

spec §3's makespan starts with every model input already on the device that reads it and ends
when the last node finishes, wherever its output lies. A run starts with the inputs in host
memory and ends with the outputs back there, so a device that does not share memory with the
host (a discrete GPU) first receives its inputs over its link and finally sends its outputs
(docs/measurements.md#host-io).

``end_to_end_ms`` applies §3 unchanged to the model plus two zero-cost nodes on the host
device: a source that produces the model's inputs and a sink that consumes its outputs. An
input goes once to each remote device that reads it (tensor caching), to its first reader
there; the transfers cost the problem's links (``host->d``, ``d->host``). The run report
gives it as ``predicted_io_ms`` beside ``predicted_ms``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from hetlab.calibrate.boundary import without_latency
from hetlab.cost.problem import PEdge, PNode, Problem
from hetlab.executor.units import UnitSpec, build_units
from hetlab.graph.ir import OpGraph
from hetlab.schedulers.sim import simulate

SOURCE, SINK = "__host_inputs__", "__host_outputs__"


def end_to_end_ms(
    problem: Problem,
    graph: OpGraph,
    device_of: Mapping[str, str],
    order: Sequence[str],
    host: str,
    remote: Collection[str],
    sequential: bool = False,
    fused: Sequence[Sequence[str]] = (),
) -> float | None:
    """§3's makespan of the plan with the model's inputs coming from and its outputs going
    to ``host`` (ms); only devices in ``remote`` pay for them. None when ``host`` is not one
    of the problem's devices or the plan does not cover the problem."""
    aug = with_host_io(problem, graph, device_of, order, host, remote)
    if aug is None:
        return None
    p, dev, seq = aug
    return simulate(p, dev, seq, fused, sequential).makespan


def with_host_io(
    problem: Problem,
    graph: OpGraph,
    device_of: Mapping[str, str],
    order: Sequence[str],
    host: str,
    remote: Collection[str],
) -> tuple[Problem, dict[str, str], list[str]] | None:
    """(problem, placement, order) with the source and sink added (see the module doc)."""
    if host not in problem.devices or set(device_of) != {n.id for n in problem.nodes}:
        return None
    pos = {v: i for i, v in enumerate(order)}
    first: dict[tuple[str, str], str] = {}  # (input tensor, device) -> its first reader there
    for n in sorted(graph.nodes, key=lambda x: pos[x.id]):
        d = device_of[n.id]
        for t in n.inputs:
            if t in graph.inputs and t not in graph.consts and d in remote:
                first.setdefault((t, d), n.id)
    into: dict[str, float] = {}
    for (t, _), v in first.items():
        into[v] = into.get(v, 0.0) + (graph.tensors[t].nbytes if t in graph.tensors else 0.0)
    out_of: dict[str, float] = {}
    for n in graph.nodes:
        if device_of[n.id] in remote:
            for t in n.outputs:
                if t in graph.outputs and t in graph.tensors:
                    out_of[n.id] = out_of.get(n.id, 0.0) + graph.tensors[t].nbytes
    only_host = {d: (0.0 if d == host else None) for d in problem.devices}
    aug = Problem(
        name=problem.name,
        devices=list(problem.devices),
        nodes=[*problem.nodes, PNode(SOURCE, dict(only_host)), PNode(SINK, dict(only_host))],
        edges=[*problem.edges]
        + [PEdge(SOURCE, v, b) for v, b in into.items()]
        + [PEdge(v, SINK, b) for v, b in out_of.items()],
        comm=problem.comm,
        groups=problem.groups,
        units=problem.units,
        extra=problem.extra,
    )
    return aug, {**device_of, SOURCE: host, SINK: host}, [SOURCE, *order, SINK]


def per_unit_ms(problem: Problem) -> dict[str, float]:
    """Each device's host cost per unit (ms) from the boundary calibration (mean over the
    device's pairs; a model too small to alternate: its one-unit cost, ``boundary.single_unit``);
    empty when the problem has none."""
    got: dict[str, list[float]] = {}
    cal = problem.extra.get("boundary") or {}
    for key, v in cal.items():
        if "->" in key and isinstance(v, dict) and v.get("per_unit_ms") is not None:
            for d in key.split("->", 1):
                got.setdefault(d, []).append(float(v["per_unit_ms"]))
    for d, v in (cal.get("single_unit") or {}).items():
        if d not in got and isinstance(v, dict) and v.get("per_unit_ms") is not None:
            got[d] = [float(v["per_unit_ms"])]
    return {d: sum(v) / len(v) for d, v in got.items()}


def concurrent_ms(problem: Problem) -> float:
    """What a unit costs more (ms) when it starts while another device is running
    (``concurrency.calibrate_concurrency``); 0 when the problem has no such calibration."""
    got = (problem.extra.get("boundary") or {}).get("concurrent") or {}
    return float(got.get("per_unit_ms") or 0.0) if isinstance(got, dict) else 0.0


def host_serial_ms(
    problem: Problem,
    graph: OpGraph,
    device_of: Mapping[str, str],
    order: Sequence[str],
    host: str,
    remote: Collection[str],
    sequential: bool = False,
) -> float | None:
    """The plan's time when every unit also needs the host for its device's ``per_unit_ms``
    before it runs, one unit at a time (Python dispatch and thread hand-offs hold the GIL),
    instead of paying the boundary latency calibrated with it on each cross-device edge
    (pairs calibrated by the probe keep theirs); a unit that starts while another device
    runs also takes ``concurrent_ms`` longer. A plan that is one unit on a device with a
    one-unit calibration (``boundary.single_unit``) is charged its ``excess_ms``. Units are
    the executor's (``units.build_units``); a unit takes the host as soon as its inputs and
    its device are ready, the earliest first. With the inputs and outputs in host memory as
    in ``end_to_end_ms``. None without a boundary calibration."""
    got = host_serial(problem, graph, device_of, order, host, remote, sequential)
    return None if got is None else got[0]


def host_serial(
    problem: Problem,
    graph: OpGraph,
    device_of: Mapping[str, str],
    order: Sequence[str],
    host: str,
    remote: Collection[str],
    sequential: bool = False,
    concurrent: float | None = None,
) -> tuple[float, int] | None:
    """``host_serial_ms`` and how many units started while another device ran;
    ``concurrent``: the surcharge to use instead of the problem's (ms)."""

    h = per_unit_ms(problem)
    aug = with_host_io(problem, graph, device_of, order, host, remote) if h else None
    if aug is None:
        return None
    extra = concurrent_ms(problem) if concurrent is None else concurrent
    p, dev_of, _ = aug
    # the boundary latency fitted on the same run as the per-unit cost is replaced by it; a
    # pair that could not alternate keeps its probe's handoff (silero_vad split over cpu0 and
    # cpu1 measured 0.23-0.30 ms where dropping it predicted 0.145)
    cal = {
        k: v["ms"]
        for k, v in problem.extra["boundary"].items()
        if isinstance(v, dict) and v.get("ms") and v.get("per_unit_ms") is not None
    }
    p = without_latency(p, cal, "host-serial prediction")
    idx, dix, comm, preds = p.index, p.dev_index, p.comm_tensor, p.preds
    units = build_units(graph, device_of, order)
    whole = (
        (problem.extra["boundary"].get("single_unit") or {}).get(units[0].device)
        if len(units) == 1
        else None
    )
    if isinstance(whole, dict) and whole.get("excess_ms") is not None:  # the calibration's own plan
        h = {**h, units[0].device: float(whole["excess_ms"])}
    unit_of = {v: u.index for u in units for v in u.nodes}
    dur = _unit_durations(p, units, dev_of)
    got = _host_replay(units, dur, h, extra, sequential)
    if got is None:  # cannot happen for the executor's units (acyclic, ordered)
        return None
    fin, overlapped = got
    end = max(fin.values(), default=0.0)
    for a, k in preds[idx[SINK]]:
        src = p.nodes[a].id
        if dev_of[src] != host:
            end = max(end, fin[unit_of[src]] + float(comm[k, dix[dev_of[src]], dix[host]]))
    return end, overlapped


def _unit_durations(
    p: Problem, units: Sequence[UnitSpec], dev_of: Mapping[str, str]
) -> dict[int, float]:
    """Each unit's time on its device: its nodes' costs and the transfers into them (ms)."""
    idx, dix, cost, comm, preds = p.index, p.dev_index, p.cost_matrix, p.comm_tensor, p.preds
    dur = {}
    for u in units:
        d = dix[u.device]
        t = 0.0
        for v in u.nodes:
            t += float(cost[idx[v], d])
            t += sum(
                float(comm[k, dix[dev_of[p.nodes[a].id]], d])
                for a, k in preds[idx[v]]
                if dev_of[p.nodes[a].id] != u.device
            )
        dur[u.index] = t
    return dur


def _host_replay(
    units: Sequence[UnitSpec],
    dur: Mapping[int, float],
    h: Mapping[str, float],
    extra: float,
    sequential: bool,
) -> tuple[dict[int, float], int] | None:
    """Replay the units with the host serialising their dispatch: each unit's finish time and
    how many started while another device ran; None when no unit can start."""
    by_dev: dict[str, list[int]] = {}
    for u in units:
        by_dev.setdefault("all" if sequential else u.device, []).append(u.index)
    spec = {u.index: u for u in units}
    nxt = dict.fromkeys(by_dev, 0)
    fin: dict[int, float] = {}
    free = dict.fromkeys(by_dev, 0.0)
    host_free = 0.0
    overlapped = 0
    default = sorted(h.values())[len(h) // 2]
    while len(fin) < len(units):
        best = None
        for d, lst in by_dev.items():
            if nxt[d] < len(lst):
                u = spec[lst[nxt[d]]]
                if all(q in fin for q in u.deps):
                    ready = max([free[d], *(fin[q] for q in u.deps)])
                    if best is None or (ready, u.index) < best[:2]:
                        best = (ready, u.index, d)
        if best is None:
            return None
        ready, ui, d = best
        s = max(ready, host_free)
        host_free = s + h.get(spec[ui].device, default)
        busy = any(f > host_free for o, f in free.items() if o != d)
        overlapped += busy
        fin[ui] = host_free + dur[ui] + (extra if busy else 0.0)
        free[d] = fin[ui]
        nxt[d] += 1
    return fin, overlapped
