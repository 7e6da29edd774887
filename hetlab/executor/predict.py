"""A plan's prediction with the model's inputs and outputs in host memory (issue 6).

spec §3's makespan starts with every model input already on the device that reads it and ends
when the last node finishes, wherever its output lies. A run starts with the inputs in host
memory and ends with the outputs back there, so a device that does not share memory with the
host (a discrete GPU) first receives its inputs over its link and finally sends its outputs.
On the lent H100 machine that is why GPU-only plans measured 1.09-1.29x their makespan.

``end_to_end_ms`` applies §3 unchanged to the model plus two zero-cost nodes on the host
device: a source that produces the model's inputs and a sink that consumes its outputs. An
input goes once to each remote device that reads it (tensor caching), to its first reader
there; the transfers cost the problem's links (``host->d``, ``d->host``). The run report
gives it as ``predicted_io_ms`` beside ``predicted_ms``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from hetlab.cost.problem import PEdge, PNode, Problem
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
    if not into and not out_of:
        return simulate(problem, dict(device_of), list(order), fused, sequential).makespan
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
    )
    dev = {**device_of, SOURCE: host, SINK: host}
    return simulate(aug, dev, [SOURCE, *order, SINK], fused, sequential).makespan
