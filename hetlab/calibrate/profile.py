"""The profile a user asks for, in two steps: the profiler's measurements
(``profiling.profile``, a Problem), then ``calibrate``: the executor's calibrations of the
problem's links (``boundary``, ``handoff``) and of units that run beside each other
(``concurrency``), which only real runs of plans can measure, as a new Problem."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from hetlab.calibrate.boundary import calibrate_boundaries
from hetlab.calibrate.concurrency import calibrate_concurrency
from hetlab.calibrate.graph_run import run_cost_ms
from hetlab.cost.cache import ProfileCache
from hetlab.cost.calibration import Calibration
from hetlab.cost.problem import Problem
from hetlab.cost.queues import queues_pay, with_queues
from hetlab.devices.base import Device, is_accelerator
from hetlab.devices.capabilities import GRAPH
from hetlab.devices.choice import select
from hetlab.devices.precision_choice import PrecisionChoice, precisions_of
from hetlab.errors import HetlabError
from hetlab.graph import load
from hetlab.graph.ir import OpGraph
from hetlab.profiling import profiler
from hetlab.profiling.in_context import windows
from hetlab.profiling.job import profile_cache
from hetlab.profiling.options import ProfileOptions, options_of


def profile(
    graph: OpGraph | str,
    devices: str | Sequence[Device | str],
    options: ProfileOptions | None = None,
    *,
    queues: Mapping[str, int] | None = None,
    whole_cpu: str | None = None,
    platform: Any = None,
    precision: PrecisionChoice = None,
    **overrides: Any,
) -> Problem:
    """``profiling.profile`` (same arguments), then ``calibrate`` on what it returns.
    ``devices`` may be named, as ``hetlab devices`` lists them (``"cpu0,cuda0"`` or a list);
    ``queues`` (``{"cuda0": 4}``: the device as four queues, each of its views profiled
    too), ``whole_cpu`` and ``platform`` are the platform options (``devices.choice``);
    ``precision`` what the devices run at (``"tf32"`` or ``{"cuda0": "tf32"}``,
    ``devices.precision_choice``), recorded in ``extra.precision`` (spec §2)."""
    devs = select(devices, platform, queues, whole_cpu, precision)
    graph = load(graph) if isinstance(graph, str) else graph
    views = [d for d in devs if d.root is not d]
    measured = [d for d in devs if d not in views]
    opts = options_of(options, overrides)
    p = profiler.profile(graph, measured, opts)
    p = calibrate(p, graph, measured, profile_cache(graph, opts), opts)
    if views:
        p = add_queues(p, graph, measured, views)
    sets = exclusive_sets(devs)
    if sets:
        p.extra["exclusive"] = sets
    if precisions_of(devs):
        p.extra["precision"] = precisions_of(devs)
    return p


def add_queues(p: Problem, graph: OpGraph, measured: list[Device], views: list[Device]) -> Problem:
    """The queue views as devices of ``p``: each costs what its device measured, times how
    much slower one copy of the model runs beside copies on the other queues
    (``model_slowdown`` of the device's ``queue_measures``), and a tensor between two queues
    costs the measured event latency (``queue_costs``); a CUDA device
    also records what a run of the model through its graph costs beyond the prediction
    (``run_ms``, ``graph_run.run_cost_ms``). ``extra.queues[device].pay`` says whether the queues
    run more work than one (``queues_pay``); where not, plans are better off without them."""
    for root in {v.root.name: v.root for v in views}.values():
        if root not in measured:
            raise HetlabError(f"profile {root.name} too: its queues share its measurements")
        mine = [v for v in views if v.root is root]
        measure = root.queue_measures()
        costs = measure.queue_costs(root)
        slow = measure.model_slowdown([root, *mine], graph)
        p = with_queues(p, {root.name: [v.name for v in mine]}, costs["event_ms"], slow["slowdown"])
        p.extra["queues"][root.name].update(
            {**costs, **slow, "pay": queues_pay(slow["slowdown"], len(mine) + 1)}
        )
        if root.capabilities().runner == GRAPH:  # its runs go through one graph (graph_run.py)
            host = next((d.name for d in measured if not is_accelerator(d)), None)
            p.extra["queues"][root.name]["run_ms"] = run_cost_ms(root, p, graph, host)
    return p


def exclusive_sets(devs: Sequence[Device]) -> list[list[str]]:
    """``[[whole CPU], [its groups]]`` for a whole-CPU device profiled beside its groups."""
    names = {d.name for d in devs}
    out = []
    for d in devs:
        groups = [g for g in d.capabilities().covers if g in names]
        if groups:
            out += [[d.name], groups]
    return out


def calibrate(
    problem: Problem,
    graph: OpGraph,
    devices: Sequence[Device],
    cache: ProfileCache,
    options: ProfileOptions | None = None,
) -> Problem:
    """``problem`` with the executor's calibrations, as a new Problem: with links and several
    devices, what a unit boundary costs in the executor goes on each link (``handoff``), and
    what a unit costs more beside another device's run (``concurrent``); the measurements
    are kept in ``cache`` (the profile's, ``profiling.profile_cache``)."""
    opts = options or ProfileOptions()
    devs = list(devices)
    if not (opts.comm and len(devs) > 1 and opts.handoff):
        return problem
    section = problem.extra.get("profile") or {}
    total = int(section.get("total_tasks") or 0)
    if opts.progress is not None:
        opts.progress(total, total, "calibrating unit boundaries on the executor")
    fps = {d.name: d.fingerprint() for d in devs}
    context = opts.context

    def memo_put(a: str, b: str, v: Any) -> None:
        store = cache.device(fps[a])
        store.put("boundary", f"{fps[b]}|{context}", v)
        store.flush()

    done = calibrate_boundaries(
        problem,
        graph,
        devs,
        windows(graph, context),
        dict(section.get("unit_overhead_ms") or {}),
        inputs=opts.inputs,
        memo=(lambda a, b: cache.device(fps[a]).get("boundary", f"{fps[b]}|{context}"), memo_put),
    )
    problem = replace(problem, calibration=Calibration.of(done))
    if not opts.concurrent:
        return problem
    if opts.progress is not None:
        opts.progress(total, total, "calibrating concurrent units on the executor")
    together = "|".join(fps[d.name] for d in devs)
    store = cache.device(fps[devs[0].name])

    def conc_put(key: str, ms: Any) -> None:
        store.put("concurrent", f"{together}|{key}", ms)
        store.flush()

    out = calibrate_concurrency(
        problem,
        graph,
        devs,
        inputs=opts.inputs,
        memo=(lambda key: store.get("concurrent", f"{together}|{key}"), conc_put),
    )
    return replace(problem, calibration=problem.calibration.with_part("concurrent", out))
