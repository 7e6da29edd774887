"""A replay's report, on the profiled devices' clock and labelled so (spec §5, ``replay``).

A replay runs the plan through the executor on devices that sleep for each unit's profiled
cost (``devices.replay``). Its host timing adds this host's thread hand-offs and wake-ups to
every unit, which on a profile of a fast device (sub-ms units) is most of what it measures.
``replay_report`` therefore times the executor's units on the virtual clock
(``replay.virtual_clock``: profiled costs, real dependencies) and keeps the host's timing
beside it, with the figure that says how far apart they are: the host's median overhead per
unit against the median profiled unit. ``replay_times`` is the same virtual clock for
candidate plans, which needs no run: the clock depends on the units and their order only.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from typing import Any

from hetlab.cost.problem import Problem
from hetlab.devices.base import Device
from hetlab.devices.replay import ReplayDevice, VirtualRun, unit_cost_ms, virtual_clock
from hetlab.executor import RunReport, build_units
from hetlab.executor.trace import Event
from hetlab.graph.ir import OpGraph
from hetlab.schedulers.plan import Plan

REPLAY_CLOCK = "virtual"  # the clock a replay's latency and timeline are on


def plan_clock(problem: Problem, graph: OpGraph, plan: Plan) -> VirtualRun:
    """``plan`` as the executor's units (``build_units``) on the virtual clock."""
    specs = build_units(graph, plan)
    return virtual_clock(problem, [(s.device, s.nodes) for s in specs], plan.sequential)


def replays(devices: Mapping[str, Device], problem: Problem, unscaled: bool = False) -> bool:
    """Whether ``devices`` replay ``problem`` (each its own device of it) rather than run it;
    with ``unscaled``, at the profiled durations (a replay sped up by ``time_scale`` times
    the executor, not the profile)."""
    return bool(devices) and all(
        isinstance(d, ReplayDevice)
        and d.problem is problem
        and d.pdev == name
        and (not unscaled or d.time_scale == 1.0)
        for name, d in devices.items()
    )


def replay_times(
    candidates: Mapping[str, Plan], graph: OpGraph, problem: Problem
) -> dict[str, float]:
    """Each candidate's replay on the virtual clock (ms)."""
    return {n: round(plan_clock(problem, graph, p).makespan, 4) for n, p in candidates.items()}


def replay_report(report: RunReport, problem: Problem, graph: OpGraph, plan: Plan) -> RunReport:
    """``report`` (a replay of ``plan``) on the virtual clock: its ``latency_ms``,
    ``samples_ms``, ``timeline`` and events are the virtual clock's, the executor's host
    timing moves under ``replay`` (see the module doc). Each unit's nodes share its
    interval in proportion to their profiled costs."""
    vr = plan_clock(problem, graph, plan)
    host_units = [e for e in report.events if e.kind == "unit"]
    costs = [unit_cost_ms(problem, d, nodes) for d, nodes, _s, _f in vr.units]
    over = [
        e.finish - e.start - costs[int(e.args["unit"])]
        for e in host_units
        if int(e.args.get("unit", -1)) in range(len(costs))
    ]
    info: dict[str, Any] = {
        "clock": REPLAY_CLOCK,
        "of": problem.name,
        "virtual_ms": round(vr.makespan, 4),
        "host_ms": report.latency_ms.get("median"),
        "host_overhead_ms_per_unit": round(statistics.median(over), 4) if over else None,
        "profiled_unit_ms": round(statistics.median(costs), 4) if costs else None,
        "units": len(vr.units),
    }
    host_cp = report.extra.pop("critical_path", None)
    if host_cp:
        info["host_critical_path"] = host_cp
    ms = round(vr.makespan, 4)
    report.latency_ms = {"median": ms, "p10": ms, "p90": ms}
    report.samples_ms = [ms] * len(report.samples_ms)
    report.timeline = _timeline(problem, vr)
    report.events = [
        Event("unit", d, f"unit {i} on {d}", s, f, {"unit": i, "nodes": len(nodes)})
        for i, (d, nodes, s, f) in enumerate(vr.units)
    ]
    report.extra["replay"] = info
    return report


def _timeline(problem: Problem, vr: VirtualRun) -> list[dict[str, Any]]:
    """Spec §5's ``timeline`` of a virtual run: each unit's interval over its nodes."""
    out: list[dict[str, Any]] = []
    for i, (d, nodes, start, finish) in enumerate(vr.units):
        w = [unit_cost_ms(problem, d, [v]) for v in nodes]
        total = sum(w)
        w = w if total > 0 else [1.0] * len(nodes)
        total = sum(w)
        t = start
        for v, x in zip(nodes, w, strict=True):
            f = t + (finish - start) * x / total
            out.append(
                {
                    "node": v,
                    "device": d,
                    "start": round(t, 4),
                    "finish": round(f, 4),
                    "unit": i,
                }
            )
            t = f
    out.sort(key=lambda r: (r["start"], r["device"]))
    return out


def replay_line(doc: Mapping[str, Any]) -> str | None:
    """What a replay's report says of its clock, in one line; None for a measured run."""
    info = doc.get("replay")
    if not info:
        return None
    host, over, unit = (
        info.get("host_ms"),
        info.get("host_overhead_ms_per_unit"),
        info.get("profiled_unit_ms"),
    )
    line = f"replay of {info.get('of')}'s profiled costs on a virtual clock, not a measurement"
    if host is not None and over is not None and unit is not None:
        line += (
            f"; this host's threads took {host:.3f} ms (+{over:.3f} ms per unit against a "
            f"median profiled unit of {unit:.3f} ms)"
        )
    return line
