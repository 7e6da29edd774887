"""Chapter 6 on a real model: which devices to run on, and a plan that crosses devices.

A plan that keeps every operator on one device teaches nothing about transfers, and on a
small machine the schedulers often choose exactly that. ``crossing_plan`` takes the best
plan of a few schedulers that moves at least one tensor between two devices, and, when none
does, splits the model in two at its middle operator. ``devices_to_run`` degrades to replay
devices of a shipped profile on a machine with a single device, and says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hetlab.cost.datasets import load_measured_profile
from hetlab.cost.problem import Problem
from hetlab.cost.queues import only_devices
from hetlab.course.live import fallback_note, measured_or_shipped
from hetlab.devices.platform import devices
from hetlab.devices.replay import graph_from_problem, replay_devices
from hetlab.graph import load
from hetlab.schedulers.base import schedule
from hetlab.schedulers.plan import Plan

SHIPPED = ("xeon-2core-pocl", "squeezenet")
CANDIDATES = ("greedy", "heft", "peft", "dmda")


def crossings(problem: Problem, plan: Plan) -> int:
    """How many edges of ``problem`` join operators that ``plan`` puts on two devices."""
    return sum(1 for e in problem.edges if plan.device_of[e.src] != plan.device_of[e.dst])


def split_plan(problem: Problem) -> Plan:
    """The model's operators in topological order, the first half on the device that runs them
    fastest and the rest on the next one: a plan that crosses devices by construction."""
    order = [problem.nodes[v].id for v in problem.topo]
    half = len(order) // 2
    total = {
        d: sum(c for n in problem.nodes if (c := n.cost.get(d)) is not None)
        for d in problem.devices
    }
    usable = [d for d in problem.devices if all(n.cost.get(d) is not None for n in problem.nodes)]
    first, second = sorted(usable, key=lambda d: total[d])[:2]
    device_of = {v: (first if i < half else second) for i, v in enumerate(order)}
    return Plan.build(problem, "split", device_of, order)


def crossing_plan(problem: Problem, algos: Sequence[str] = CANDIDATES) -> tuple[Plan, str]:
    """The plan to run, and one line saying how it was chosen: the least predicted makespan
    among ``algos``' plans that cross devices, or ``split_plan`` when none does."""
    plans = [schedule(problem, a) for a in algos]
    crossing = [p for p in plans if crossings(problem, p) > 0]
    if crossing:
        best = min(crossing, key=lambda p: p.makespan)
        alone = [p.algo for p in plans if p not in crossing]
        note = f"{best.algo}: the best plan that crosses devices"
        if alone:
            note += f" ({', '.join(alone)} kept the model on one device)"
        return best, note
    plan = split_plan(problem)
    used = " then ".join(dict.fromkeys(plan.device_of[v] for v in plan.order))
    return plan, f"every scheduler kept the model on one device; split in two: {used}"


def devices_to_run(with_opencl: bool) -> tuple[Any, list, Problem | None]:
    """The graph and the devices to run on, and None; or, on a machine with fewer than two
    devices, the shipped profile's graph, its replay devices and the profile itself (the
    runs are then a replay, which the printed line says)."""
    devs = [d for d in devices() if with_opencl or d.kind != "opencl"]
    if len(devs) < 2:
        devs = list(devices())  # one CPU group: the OpenCL device is the second
    if len(devs) >= 2:
        return load("squeezenet"), devs, None
    platform, model = SHIPPED
    shipped = load_measured_profile(platform, model)
    print(
        fallback_note(
            "running on this machine's devices",
            f"it has {len(devs)} device(s), a plan that crosses devices needs two",
            f"replay devices of data/profiles/{platform}/{model} (a replay, not a measurement)",
        )
    )
    return graph_from_problem(shipped), replay_devices(shipped), shipped


def profile_here(graph: Any, devs: list) -> tuple[Problem, list]:
    """``graph`` profiled on ``devs``; when that gives no usable result, the shipped profile
    restricted to the devices both have (and those devices), after one printed line."""
    from hetlab.calibrate import profile  # lazy: the profiler loads onnxruntime

    names = [d.name for d in devs]
    problem, measured = measured_or_shipped(
        lambda: profile(graph, devs), names, SHIPPED, what="profiling squeezenet here"
    )
    if measured:
        return problem, devs
    both = [d for d in names if d in problem.devices]
    if len(both) < 2:
        raise RuntimeError("neither this machine nor the shipped profile gives two devices")
    return only_devices(problem, both), [d for d in devs if d.name in both]
