"""A device that replays a problem's costs: a profile measured on other hardware "runs" on
it in the workbench (labelled a replay), and the executor and widget tests run anywhere.

``run`` sleeps for the unit's cost (the problem's fused-group cost when the unit is exactly a
group, else the sum of its nodes' costs; ms in the problem, scaled by ``time_scale``) and
returns zero arrays of the outputs' shapes, or opaque tokens when a shape is unknown.
``graph_from_problem`` makes an ``OpGraph`` whose tensors carry each edge's bytes, so a
problem file alone is enough to drive the executor.

A replay's host timing is this host's: its threads, sleeps and wake-ups add to every unit,
which a fast device's sub-ms units cannot absorb. ``virtual_clock`` gives the units the
profiled devices' own durations instead: each unit starts when its device is free and the
units it reads from have finished (spec §3's rule, at the executor's unit granularity),
and lasts its profiled cost plus its blocking receives.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.devices.base import Device
from hetlab.devices.capabilities import Capabilities
from hetlab.devices.unit import RunResult, Unit, now
from hetlab.errors import HetlabError
from hetlab.graph.ir import Edge, Node, OpGraph, Tensor
from hetlab.schedulers.sim import walk

# How far a replay may miss its own prediction and still rank plans: the virtual clock
# reproduces the profile's compute and transfers, not the profiled host's dispatch and
# hand-offs, which the prediction adds; beyond this the replay says little the prediction
# does not say better (``calibrate.recommend`` then ranks by the prediction).
REPLAY_TOLERANCE = 0.25

# what a replay device of these kinds declares: the executor treats it as an accelerator
# (never the fallback device) and the run report counts it as the real device is counted;
# it runs its units one at a time, with nothing to group, time per node or write in place
REPLAYED_AS = {
    "opencl": Capabilities(accelerator=True, share_key="opencl_share"),
    "cuda": Capabilities(accelerator=True),
}


class DeviceFailure(RuntimeError):
    """What a ReplayDevice raises when told to fail (to test fallbacks)."""


class ReplayDevice(Device):
    """Replays ``problem``'s costs for device ``name`` (the problem's device of that name,
    or ``as_device``). ``fail_on``: node ids whose unit raises ``DeviceFailure``."""

    def __init__(
        self,
        name: str,
        problem: Problem,
        kind: str = "replay",
        as_device: str | None = None,
        time_scale: float = 1.0,
        fail_on: Sequence[str] = (),
    ) -> None:
        self.name = name
        self.kind = kind
        self.problem = problem
        self.pdev = as_device or name
        if self.pdev not in problem.dev_index:
            raise HetlabError(
                f"fake device {name!r}: problem {problem.name!r} has no device {self.pdev!r}"
            )
        self.time_scale = float(time_scale)
        self.fail_on = set(fail_on)
        self.copies_in = 0  # host -> device transfers made (the tensor cache test reads it)
        self.copied: list[Any] = []
        self._lock = threading.Lock()

    def capabilities(self) -> Capabilities:
        return REPLAYED_AS.get(self.kind, Capabilities())

    def info(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "replays": self.problem.name, "as": self.pdev}

    def supports(self, node: Node, graph: OpGraph) -> bool:
        i = self.problem.index.get(node.id)
        return i is not None and self.problem.nodes[i].cost.get(self.pdev) is not None

    def copy_in(self, array: Any) -> Any:
        with self._lock:
            self.copies_in += 1
            self.copied.append(array)
        return array

    def cost_ms(self, nodes: Sequence[str]) -> float:
        """Replayed duration of a unit (ms, before ``time_scale``)."""
        return unit_cost_ms(self.problem, self.pdev, nodes)

    def prepare(self, graph: OpGraph, nodes: Sequence[str]) -> Unit:
        inside = set(nodes)
        produced = {t for v in nodes for t in graph.node(v).outputs if t}
        inputs: list[str] = []
        for v in nodes:
            n = graph.node(v)
            for t in list(n.inputs) + list(n.outer_inputs):
                if t and t not in produced and t not in graph.consts and t not in inputs:
                    inputs.append(t)
        read_outside = {
            t
            for n in graph.nodes
            if n.id not in inside
            for t in list(n.inputs) + list(n.outer_inputs)
        }
        outputs = [t for t in produced if t in read_outside or t in graph.outputs]
        outputs.sort()
        handle = {
            "ms": self.cost_ms(nodes),
            "fail": bool(self.fail_on & inside),
            "shapes": {t: graph.tensors[t] for t in outputs if t in graph.tensors},
        }
        return Unit(
            device=self.name, nodes=list(nodes), inputs=inputs, outputs=outputs, handle=handle
        )

    def run(self, unit: Unit, inputs: dict[str, Any], node_times: bool | None = None) -> RunResult:
        missing = [t for t in unit.inputs if t not in inputs]
        if missing:
            raise HetlabError(f"{self.name}: unit {unit.nodes[0]} is missing input {missing[0]!r}")
        t0 = now()
        if unit.handle["fail"]:
            raise DeviceFailure(f"{self.name}: simulated device failure")
        sleep_until(t0 + unit.handle["ms"] * self.time_scale / 1000.0)
        outs: dict[str, Any] = {}
        for t in unit.outputs:
            ten = unit.handle["shapes"].get(t)
            if ten is not None and ten.shape is not None:
                outs[t] = np.zeros(ten.shape, dtype=ten.dtype)
            else:
                outs[t] = ("token", t)
        return RunResult(outputs=outs, start=t0, finish=now())


def unit_cost_ms(problem: Problem, device: str, nodes: Sequence[str]) -> float:
    """A unit's profiled cost on ``device`` (ms): the problem's fused-group cost when the
    unit is exactly a fused group, else the sum of its nodes' costs."""
    g = problem.group_cost(list(nodes), device) if len(nodes) > 1 else None
    if g is not None:
        return float(g)
    j = problem.dev_index[device]
    return float(sum(problem.cost_matrix[problem.index[v], j] for v in nodes))


@dataclass
class VirtualRun:
    """A replay on the virtual clock: per unit (in the order given) its device, nodes,
    start and finish (ms), and the makespan."""

    units: list[tuple[str, list[str], float, float]]
    makespan: float


def virtual_clock(
    problem: Problem, units: Sequence[tuple[str, Sequence[str]]], sequential: bool = False
) -> VirtualRun:
    """The units ``(device, nodes)``, given in the executor's global order, timed by the
    profile alone (see the module doc): a unit starts once its device's previous unit (any
    previous unit, for a ``sequential`` plan) and every unit it reads from have finished,
    and lasts its ``unit_cost_ms`` plus the transfer of each edge entering it from another
    device: spec §3's rule (``schedulers.sim.walk``) on units, with no shared cores (the
    replay's devices only sleep). Raises ``HetlabError`` for a node or device the problem
    lacks, and for a unit that reads a node of no earlier unit."""
    idx, dix = problem.index, problem.dev_index
    for _d, nodes in units:
        for v in nodes:
            if v not in idx:
                raise HetlabError(f"replay: the problem has no node {v!r}")
    dev = [0] * len(problem.nodes)
    walked: list[tuple[list[int], int, float]] = []
    for d, nodes in units:
        if d not in dix:
            raise HetlabError(f"replay: the problem has no device {d!r}")
        members = [idx[v] for v in nodes]
        for m in members:
            dev[m] = dix[d]
        walked.append((members, dix[d], unit_cost_ms(problem, d, nodes)))

    def unplaced(members: list[int], finish: list[float]) -> None:
        inside = set(members)
        for m in members:
            for u, _ in problem.preds[m]:
                if u not in inside and finish[u] == float("inf"):
                    v, w = problem.nodes[m].id, problem.nodes[u].id
                    raise HetlabError(f"replay: unit of {v!r} reads {w!r} before it runs")

    start, finish = walk(problem, dev, walked, sequential, on_inf=unplaced, shared=False)
    out = [
        (d, list(nodes), start[m[0]], finish[m[0]])
        for (d, nodes), (m, _, _) in zip(units, walked, strict=True)
    ]
    return VirtualRun(out, max((f for *_, f in out), default=0.0))


def sleep_until(deadline: float) -> None:
    """Sleep (releasing the GIL, so fake devices overlap) until ``deadline`` on ``now()``'s
    clock; the last ~0.2 ms is a short spin for sub-ms precision."""
    while True:
        left = deadline - now()
        if left <= 0:
            return
        if left > 3e-4:
            time.sleep(left - 2e-4)
        else:
            time.sleep(0)


def graph_from_problem(problem: Problem) -> OpGraph:
    """An OpGraph with the problem's nodes and edges: node ``v`` writes tensor ``v:out``,
    a float32 vector of (largest outgoing edge bytes / 4) elements, read by its successors;
    sources read the one model input ``input``; sinks are model outputs."""
    out_bytes: dict[str, float] = {n.id: 0.0 for n in problem.nodes}
    preds: dict[str, list[str]] = {n.id: [] for n in problem.nodes}
    for e in problem.edges:
        out_bytes[e.src] = max(out_bytes[e.src], e.bytes)
        preds[e.dst].append(e.src)
    has_succ = {e.src for e in problem.edges}
    tensors = {"input": Tensor("input", (1,), "float32")}
    nodes: list[Node] = []
    for i, pn in enumerate(problem.nodes):
        t = f"{pn.id}:out"
        tensors[t] = Tensor(t, (max(1, int(out_bytes[pn.id]) // 4),), "float32")
        ins = [f"{p}:out" for p in preds[pn.id]] or ["input"]
        nodes.append(
            Node(
                id=pn.id,
                op_type=pn.op_type or "Fake",
                inputs=ins,
                outputs=[t],
                index=i,
                out_bytes=tensors[t].nbytes,
            )
        )
    edges = [Edge(e.src, e.dst, int(e.bytes), [f"{e.src}:out"]) for e in problem.edges]
    g = OpGraph(
        name=problem.name,
        nodes=nodes,
        edges=edges,
        tensors=tensors,
        inputs=["input"],
        outputs=[f"{n.id}:out" for n in problem.nodes if n.id not in has_succ],
        input_shapes={"input": (1,)},
    )
    g.compute_levels()
    return g


def replay_devices(problem: Problem, time_scale: float = 1.0) -> list[ReplayDevice]:
    """One ReplayDevice per device of ``problem``, named as the problem names them."""
    return [ReplayDevice(d, problem, time_scale=time_scale) for d in problem.devices]
