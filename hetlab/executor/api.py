"""``hetlab.run(graph, plan, devices, repeat=..., check=...) -> RunReport`` .

The report is spec §5's document: ``model_path``, ``latency_ms`` {median, p10, p90} over
the repetitions (after unmeasured warm-up runs: ``warmup``, or by default until
``WARMUP_S`` have passed, see ``warm_up``), ``predicted_ms`` (the plan's own makespan),
``max_rel_err`` against a plain onnxruntime session (with ``check``; beside it onnxruntime's
own ``reference_spread`` and the outputs compared ``tie_aware``, see ``check.Reference``),
``devices`` (node counts) and the ``timeline`` of the median repetition; plus ``fallbacks``
and a few extra keys. The run measures and computes no prediction: ``predicted_ms`` is the
makespan a timed Plan carries (None for a mapping or a device name); the prediction, and
``predicted_ms`` as its total, is ``hetlab.calibrate.run``'s.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hetlab.devices.base import Device
from hetlab.devices.binding import bind
from hetlab.devices.bound import BoundPlan
from hetlab.devices.platform import devices as platform_devices
from hetlab.errors import HetlabError
from hetlab.executor.bad_inputs import inputs_blamed
from hetlab.executor.check import reference
from hetlab.executor.critical import summary
from hetlab.executor.interpreter import Executor, Repetition
from hetlab.executor.left_behind import left_behind
from hetlab.executor.tolerance import precisions_ran, tolerance
from hetlab.executor.trace import Event, node_timeline, write_trace
from hetlab.graph import load
from hetlab.graph.inputs import model_inputs
from hetlab.graph.ir import OpGraph


@dataclass
class RunReport:
    model_path: str | None
    latency_ms: dict[str, float]
    predicted_ms: float | None
    max_rel_err: float | None
    devices: dict[str, int]
    timeline: list[dict[str, Any]]
    fallbacks: list[dict[str, Any]] = field(default_factory=list)
    units: int = 0
    repeat: int = 1
    samples_ms: list[float] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    device_names: list[str] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "model_path": self.model_path,
            "latency_ms": self.latency_ms,
            "predicted_ms": self.predicted_ms,
            "max_rel_err": self.max_rel_err,
            "devices": self.devices,
            "timeline": self.timeline,
            "fallbacks": self.fallbacks,
            "units": self.units,
            "repeat": self.repeat,
            "samples_ms": [round(x, 4) for x in self.samples_ms],
            **self.extra,
        }

    def write_trace(self, path: str | Path) -> Path:
        """Chrome trace-event JSON of the median repetition, one row per device (and one
        of node slices per device that timed its nodes)."""
        return write_trace(path, self.events, self.device_names, timeline=self.timeline)


def run(
    graph: OpGraph | str,
    plan: Any,
    devices: Sequence[Device] | Mapping[str, Device] | None = None,
    repeat: int = 1,
    check: bool = False,
    inputs: Mapping[str, Any] | None = None,
    warmup: int | None = None,
    seed: int = 0,
    trace: str | Path | None = None,
) -> RunReport:
    """Run ``graph`` by ``plan`` (a Plan, a node -> device mapping or a device name, see
    ``binding.placement``; or a ``BoundPlan``, which brings its own graph and devices) on
    ``devices`` (default: this machine's, see ``hetlab.devices.platform``)
    ``repeat`` times; see the module doc for the report. ``inputs``: values of some inputs
    (a number fills its input's shape), seeded random ones for the rest."""
    if isinstance(plan, BoundPlan):
        graph, devices = plan.graph, plan.devices
    if isinstance(graph, (str, Path)):
        graph = load(str(graph))
    devmap = _device_map(platform_devices() if devices is None else devices)
    if repeat < 1:
        raise HetlabError(f"--repeat must be at least 1, got {repeat}")
    bound = bind(plan, graph, devmap)
    graph, devmap, device_of = bound.graph, dict(bound.devices), bound.device_of
    ex = Executor(bound, node_times=trace is not None)
    predicted = bound.makespan
    feed = model_inputs(graph, inputs, seed)
    ref, warmed, reps = _repetitions(graph, ex, feed, check, warmup, repeat)
    walls = np.array([r.wall_ms for r in reps])
    mid = reps[int(np.argsort(walls)[len(walls) // 2])]
    checked = ref.report(mid.outputs) if ref is not None else {}
    if ref is not None:  # the rule of the precisions the run's devices ran at
        checked["tolerance"] = tolerance(graph, device_of, devmap)
    err = checked.pop("max_rel_err", None)
    report = RunReport(
        model_path=str(Path(graph.model_path).resolve()) if graph.model_path else None,
        latency_ms=_latency_ms(walls),
        predicted_ms=None if predicted is None else round(predicted, 4),
        max_rel_err=err,
        devices=dict(Counter(device_of[n.id] for n in graph.nodes)),
        timeline=_timeline(graph, ex, mid),
        fallbacks=sorted(ex.fallbacks.values(), key=lambda f: f["unit"]),
        units=len(ex.specs),
        repeat=repeat,
        samples_ms=[float(w) for w in walls],
        events=mid.events,
        device_names=[d for d in devmap if d in set(device_of.values())],
        outputs=mid.outputs,
        extra={**_extra(graph, bound, warmed, ex, mid, devmap), **checked},
    )
    if trace is not None:
        report.write_trace(trace)
    return report


def _repetitions(
    graph: OpGraph, ex: Executor, feed: dict, check: bool, warmup: int | None, repeat: int
) -> tuple[Any, int, list[Repetition]]:
    """The check's reference (None without ``check``), taken before any device runs; the
    warm-up runs and the measured repetitions. Inputs the model's own onnxruntime run
    rejects are one error (``bad_inputs``), whichever device meets them first."""
    with inputs_blamed(graph, feed):
        try:
            ref = reference(graph, feed) if check else None
            ex.prepare()
            warmed = warm_up(lambda: ex.run_once(feed), warmup)
            return ref, warmed, [ex.run_once(feed) for _ in range(repeat)]
        finally:
            ex.close()


def _timeline(graph: OpGraph, ex: Executor, mid: Repetition) -> list[dict[str, Any]]:
    """Spec §5's ``timeline`` of ``mid``: unit times split over their nodes by flops."""
    units_of = {s.index: s.nodes for s in ex.specs}
    flops = {n.id: n.flops for n in graph.nodes}
    return node_timeline(mid.events, units_of, mid.node_times, flops)


def _device_map(devices: Sequence[Device] | Mapping[str, Device]) -> dict[str, Device]:
    return dict(devices) if isinstance(devices, Mapping) else {d.name: d for d in devices}


def _latency_ms(walls: np.ndarray) -> dict[str, float]:
    return {
        "median": round(float(np.median(walls)), 4),
        "p10": round(float(np.percentile(walls, 10)), 4),
        "p90": round(float(np.percentile(walls, 90)), 4),
    }


def _extra(
    graph: OpGraph,
    bound: BoundPlan,
    warmed: int,
    ex: Executor,
    mid: Repetition,
    devmap: Mapping[str, Device],
) -> dict[str, Any]:
    """The report's ``extra``: the model (and the file it was folded from), the algorithm,
    the warm-up runs, the critical path and each device's share of the nodes; a plan made
    from a device name gets ``left_behind``."""
    folded = graph.source_path and graph.source_path != graph.model_path
    by = bound.by_device
    behind = left_behind(graph, bound.plan, by) if by is not None else None
    return {
        **({"left_behind": behind} if behind else {}),
        "model": graph.name,
        **({"source_path": str(Path(graph.source_path).resolve())} if folded else {}),
        "algo": bound.algo,
        "precision": precisions_ran(bound.device_of, devmap),
        "warmup_runs": warmed,
        "critical_path": summary(ex.specs, mid.events, mid.wall_ms),
        **node_shares(graph, bound.device_of, devmap, ex),
    }


# The first runs of a prepared plan are slower than the rest (pools, caches and allocators
# settle), and a median of 10-20 runs after a single warm-up run keeps part of that. So the
# executor warms up for WARMUP_S seconds by default (at least one run, at most WARMUP_MAX).
# The figures behind it: docs/decisions.md#warm-up.
WARMUP_S = 0.5
WARMUP_MAX = 200


def warm_up(run_once: Callable[[], Any], warmup: int | None = None) -> int:
    """Unmeasured runs: ``warmup`` of them, or (None) until ``WARMUP_S`` s have passed, at
    least one and at most ``WARMUP_MAX``; returns how many ran."""

    if warmup is not None:
        for _ in range(max(0, warmup)):
            run_once()
        return max(0, warmup)
    t0, n = time.perf_counter(), 0
    while n < WARMUP_MAX and (n == 0 or time.perf_counter() - t0 < WARMUP_S):
        run_once()
        n += 1
    return n


def node_shares(
    graph: OpGraph, device_of: Mapping[str, str], devices: Mapping[str, Device], ex: Executor
) -> dict[str, Any]:
    """Where the nodes ran, counted two ways (extra report keys):

    - ``devices`` (spec §5) counts the model's vertices; an ``If`` is one vertex.
    - ``nodes_executed`` counts the nodes that execute on every run, including the nodes of
      the taken ``If`` bodies (recursively) that an OpenCL device runs itself (an ``If`` run
      by onnxruntime stays one node: its bodies are onnxruntime's business).
    - ``host_resolved``: body nodes an OpenCL ``If`` resolves once per input signature on the
      host instead (``shape_arithmetic``; ``constant_folded``: float values computed from
      constants only, such as slicing LSTM weights); they do not execute per run.
    - ``opencl_share`` (the ``share_key`` OpenCL devices declare): the OpenCL devices'
      fraction by ``vertices``, by ``executed`` nodes
      (the count that says how much of the model the OpenCL devices run: the ops that run), and
      ``with_host_resolved`` (host-resolved nodes counted against OpenCL: the strictest).
    """
    executed = Counter(device_of[n.id] for n in graph.nodes)
    shape = folded = 0
    for spec, unit in zip(ex.specs, ex.units, strict=False):
        counts = getattr(unit.handle, "executed_nodes", None)
        if counts is None or spec.index in ex.fallbacks:
            continue
        c = counts()
        executed[spec.device] += c.get("device", 0)
        shape += c.get("shape", 0)
        folded += c.get("folded", 0)
    out: dict[str, Any] = {
        "nodes_executed": dict(executed),
        "host_resolved": {"shape_arithmetic": shape, "constant_folded": folded},
    }
    shares: dict[str, set[str]] = {}  # report key -> the devices it counts
    for d in set(device_of.values()) & set(devices):
        key = devices[d].capabilities().share_key
        if key is not None:
            shares.setdefault(key, set()).add(d)
    for key, mine in sorted(shares.items()):
        on_v = sum(1 for n in graph.nodes if device_of[n.id] in mine)
        on_x = sum(v for d, v in executed.items() if d in mine)
        total_x = sum(executed.values())
        out[key] = {
            "vertices": round(on_v / max(len(graph.nodes), 1), 4),
            "executed": round(on_x / max(total_x, 1), 4),
            "with_host_resolved": round(on_x / max(total_x + shape + folded, 1), 4),
        }
    return out
