"""A plan's prediction where the queues (streams) of one device share it.

§3's makespan prices a node on a queue view at its device's cost times the measured slowdown
of copies of the model side by side (``extra.queues[device].slowdown``), and a node on the
device itself at its cost alone, whatever runs beside it. On a GPU, every kernel running at
once shares the device. ``shared_ms`` simulates that instead: a node of a device family (the
device and its queue views) has the device's cost as its work, and while k of the family's
nodes run, each advances at rate 1 / (1 + (k - 1)(s - 1)/(q - 1)): alone at full speed, and
with all q queues busy at 1 / s, s being the slowdown measured with a copy of the model on
each of the q queues. In between the slowdown grows linearly, as a GPU trace of the
kernels showed (docs/measurements.md#what-the-shared-model-misses-on-pnasnet_mobile).
Nodes of other devices run at their own cost. A tensor from another device arrives after
its transfer (the problem's links), and a tensor between queues of one family after the
family's event latency. The model's inputs start in host memory and its outputs end there
(``predict.with_host_io``); a family whose runs go through one captured graph adds what such
a run costs the executor beyond that (``run_ms``, from ``run_cost_ms``), and where the plan
keeps it to itself, its links to the host carry no calibrated unit boundary
(``_graph_links``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from hetlab.calibrate.boundary import without_latency
from hetlab.calibrate.predict import with_host_io
from hetlab.cost.problem import Problem
from hetlab.errors import HetlabError
from hetlab.executor import run
from hetlab.graph import load
from hetlab.graph.ir import OpGraph

EPS = 1e-12
PROBE = Path(__file__).parents[1] / "cost" / "probe.onnx"


def families(problem: Problem) -> dict[str, str]:
    """Each queue view and its device -> the device (``extra.queues``)."""
    out: dict[str, str] = {}
    for root, q in (problem.extra.get("queues") or {}).items():
        out[root] = root
        out.update(dict.fromkeys(q.get("views", []), root))
    return out


def slowdowns(problem: Problem) -> dict[str, tuple[float, int]]:
    """Each family's measured slowdown and number of queues (``s`` and ``q`` above)."""
    got = {}
    for root, q in (problem.extra.get("queues") or {}).items():
        got[root] = (float(q.get("slowdown", 1.0)), len(q.get("views", [])) + 1)
    return got


def shared_ms(
    problem: Problem,
    graph: OpGraph,
    device_of: Mapping[str, str],
    order: Sequence[str],
    host: str,
    remote: Collection[str],
    with_run_ms: bool = True,
) -> float | None:
    """The plan's end-to-end time (ms) with each family's nodes sharing its device (see the
    module doc), ``run_ms`` included unless ``with_run_ms`` is off; None where ``host`` is
    not one of the problem's devices."""
    problem = _graph_links(problem, device_of)
    aug = with_host_io(problem, graph, device_of, order, host, remote)
    if aug is None:
        return None
    p, dev, seq = aug
    fam = families(p)
    t = _FluidRun(p, dev, seq, fam, slowdowns(p)).run()
    if not with_run_ms:
        return t
    runs = (p.extra.get("queues") or {}).items()
    used = {fam[d] for d in dev.values() if d in fam}
    return t + sum(float(q.get("run_ms") or 0.0) for r, q in runs if r in used)


def _graph_links(problem: Problem, device_of: Mapping[str, str]) -> Problem:
    """``problem`` without the calibrated unit boundary (``calibrate/boundary.py``) on the
    links of a family that the plan keeps to itself (no edge to or from another device) and
    whose runs go through one captured graph (``run_ms``): the boundary is measured where
    CPU units feed the device, which then cannot run as a graph; a graph's only edges are
    the model's copies in and out, and ``run_ms`` holds what they cost."""
    bound = problem.extra.get("boundary") or {}
    fam = families(problem)
    graphs = {r for r, q in (problem.extra.get("queues") or {}).items() if "run_ms" in q}
    for e in problem.edges:
        a, b = fam.get(device_of.get(e.src, "")), fam.get(device_of.get(e.dst, ""))
        if a != b:
            graphs -= {a, b}
    undo: dict[str, float] = {}
    for key, cal in bound.items():
        x, _, y = key.partition("->")
        ms = cal.get("ms") if isinstance(cal, dict) else None
        for root in graphs & {x, y}:
            for m in (d for d, r in fam.items() if r == root):
                undo[f"{m}->{y}" if x == root else f"{x}->{m}"] = float(ms or 0.0)
    if not any(undo.values()):
        return problem
    return without_latency(problem, undo, "shared prediction")


class _FluidRun:
    """The event-driven simulation behind ``shared_ms``: each device (queue) runs its nodes in
    the plan's order, a node once its inputs have arrived."""

    def __init__(self, p: Problem, dev, order, fam: dict[str, str], slow: dict[str, tuple]):
        self.p, self.dev, self.fam, self.slow = p, dev, fam, slow
        self.queues: dict[str, list[int]] = {}
        for v in order:
            self.queues.setdefault(dev[v], []).append(p.index[v])
        self.head = dict.fromkeys(self.queues, 0)
        self.arrive = [0.0] * len(p.nodes)  # when its last input arrives, once known
        self.done = [False] * len(p.nodes)
        self.left: dict[str, tuple[int, float]] = {}  # device -> (node running, work left)
        self.now = 0.0

    def run(self) -> float:
        self._start_ready()
        while self.left or self._pending():
            wake = self._next_arrival()
            if not self.left:
                self.now = wake
                self._start_ready()
                continue
            rates = self._rates()
            dt = min(w / rates[d] for d, (_, w) in self.left.items())
            dt = min(dt, wake - self.now)
            self.now += dt
            for d, (v, w) in list(self.left.items()):
                w -= dt * rates[d]
                if w <= EPS:
                    del self.left[d]
                    self._finish(v, d)
                else:
                    self.left[d] = (v, w)
            self._start_ready()
        return self.now

    def _rates(self) -> dict[str, float]:
        busy: dict[str, int] = {}
        for d in self.left:
            f = self.fam.get(d)
            if f is not None:
                busy[f] = busy.get(f, 0) + 1
        out = {}
        for d in self.left:
            f = self.fam.get(d)
            if f is None:
                out[d] = 1.0
                continue
            s, q = self.slow[f]
            out[d] = 1.0 / (1.0 + (busy[f] - 1) * (s - 1.0) / max(1, q - 1))
        return out

    def _pending(self) -> bool:
        return any(self.head[d] < len(q) for d, q in self.queues.items())

    def _next_arrival(self) -> float:
        later = [
            self.arrive[q[self.head[d]]]
            for d, q in self.queues.items()
            if d not in self.left and self.head[d] < len(q) and self._inputs_made(q[self.head[d]])
        ]
        later = [a for a in later if a > self.now]
        return min(later) if later else float("inf")

    def _inputs_made(self, v: int) -> bool:
        return all(self.done[u] for u, _ in self.p.preds[v])

    def _start_ready(self) -> None:
        moved = True
        while moved:
            moved = False
            for d, q in self.queues.items():
                if d in self.left or self.head[d] >= len(q):
                    continue
                v = q[self.head[d]]
                if not self._inputs_made(v) or self.arrive[v] > self.now + EPS:
                    continue
                self.head[d] += 1
                work = float(self._cost(v, d))
                if work <= 0.0:
                    self._finish(v, d)
                else:
                    self.left[d] = (v, work)
                moved = True

    def _cost(self, v: int, d: str) -> float:
        """The node's work: its cost on the family's device (the views' costs carry §3's
        slowdown, which the shared rate replaces)."""
        return self.p.cost_matrix[v, self.p.dev_index[self.fam.get(d, d)]]

    def _finish(self, v: int, d: str) -> None:
        self.done[v] = True
        p = self.p
        for w, k in p.succs[v]:
            dw = self.dev[p.nodes[w].id]
            lag = 0.0 if dw == d else float(p.comm_tensor[k, p.dev_index[d], p.dev_index[dw]])
            self.arrive[w] = max(self.arrive[w], self.now + lag)


def graph_run_ms(device: Any, repeat: int = 50) -> float:
    """What one run through the executor costs on ``device`` beyond its kernels (ms): the
    median run of a one-Relu model (``cost/probe.onnx``), whose kernel takes microseconds."""
    graph = load(str(PROBE))
    report = run(graph, device.name, {device.name: device}, repeat=repeat)
    return float(report.latency_ms["median"])


def model_run_ms(
    device: Any, problem: Problem, graph: OpGraph, host: str, repeat: int = 20
) -> float | None:
    """What a run of this model through the executor costs on ``device`` beyond its
    prediction (ms): the model's run on the device alone, one captured graph with its inputs
    from host memory and its outputs back, less that plan's ``shared_ms`` without
    ``run_ms``. Unlike the probe's (``graph_run_ms``), it holds the host copies and hand-offs
    as this model makes them. None where the device cannot run the whole model."""
    if device.name not in (problem.extra.get("queues") or {}):
        return None
    alone = {n.id: device.name for n in problem.nodes}
    remote = set(families(problem))
    try:
        pred = shared_ms(problem, graph, alone, graph.topo_order(), host, remote, False)
        report = run(graph, device.name, {device.name: device}, repeat=repeat)
    except HetlabError:
        return None
    if pred is None:
        return None
    return max(0.0, float(report.latency_ms["median"]) - pred)


def run_cost_ms(device: Any, problem: Problem, graph: OpGraph, host: str | None) -> float:
    """``run_ms`` for ``device`` (a CUDA device with its queues in ``problem``): the model's
    own run (``model_run_ms``) where the problem has a host to price its copies and the
    device runs the whole model, else the probe's run (``graph_run_ms``)."""
    got = model_run_ms(device, problem, graph, host) if host else None
    return graph_run_ms(device) if got is None else got
