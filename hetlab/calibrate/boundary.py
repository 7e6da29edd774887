"""What a unit boundary between two devices really costs, calibrated on the model itself.

spec §3 charges a cross-device edge its transfer; the executor pays more at such an edge: it
ends a unit on one worker and starts one on another, whose onnxruntime pool has parked (or
whose OpenCL queue has drained), with cold caches, and copies through the host. The tiny
probe of ``handoff.py`` sees only part of that. So for each pair of devices ``a, b`` the
model's own context windows (``profiling.in_context.windows``) are placed alternately on ``a`` and
``b`` and that plan is run for real; the boundary cost ``L`` is the extra latency on the
links ``a->b`` and ``b->a`` that makes the simulator (spec §3) predict what was measured
(bisection; the makespan grows with ``L``). OverSeer's calibrator fits its link model to
micro-benchmarks the same way (Ahn et al.). ``L`` is stored as the pair's part of the
problem's ``calibration`` (``cost/calibration.py``), apart from the links, and §3 charges it
on every edge between the two devices; a pair whose windows cannot alternate (a device runs
too few of them) gets the probe's handoff plus the receiver's per-unit cost. The same
measurement, read as a cost per unit instead (``per_unit_ms``: measured minus §3's
prediction without ``L``, over the units), is the prediction's ``host_dispatch`` term.

A model too small to alternate (silero_vad: 4 vertices) gets each device's one-unit cost
instead: what the executor adds to a whole-model run on that device (``single_unit``).

Each pair's run is measured beside a whole-model run on one of its devices and is cached
only when that reference says the machine was not busy (``busy.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from hetlab.calibrate import handoff
from hetlab.calibrate.busy import cached_or_guarded, evidence, expected_ms, reference_device
from hetlab.cost.problem import Problem
from hetlab.devices.base import Device
from hetlab.executor import api
from hetlab.graph.inputs import model_inputs
from hetlab.graph.ir import OpGraph
from hetlab.schedulers.plan import Plan
from hetlab.schedulers.sim import simulate

# (get, put) of the profile cache, keyed by (kind, key): a calibration measured once is reused
CacheHooks = tuple[Callable[[str, str], Any], Callable[[str, str, Any], None]]
MIN_BOUNDARIES = 4  # an alternating plan with fewer cross-device edges says too little


def alternating(
    graph: OpGraph, windows: Sequence[Sequence[str]], a: Device, b: Device
) -> dict[str, str] | None:
    """Node -> device with the windows on ``a``, ``b``, ``a``...; None when fewer than
    ``MIN_BOUNDARIES`` windows can alternate (both devices must run every node of a window)."""
    ok = [all(d.supports(graph.node(v), graph) for v in w for d in (a, b)) for w in windows]
    if sum(ok) < MIN_BOUNDARIES + 1:
        return None
    device_of: dict[str, str] = {}
    k = 0
    for w, good in zip(windows, ok, strict=False):
        dev = (a if k % 2 == 0 else b) if good else None
        k += int(good)
        for v in w:
            node = graph.node(v)
            device_of[v] = (dev or (a if a.supports(node, graph) else b)).name
    for n in graph.nodes:  # vertices in no window (a last lone one) stay on a device that runs them
        device_of.setdefault(n.id, a.name if a.supports(n, graph) else b.name)
    return device_of


def _shifted(problem: Problem, pair: tuple[str, str], ms: float) -> Problem:
    """``problem`` with ``ms`` more boundary latency on both of ``pair``'s links."""
    cal = problem.calibration
    for key in (f"{pair[0]}->{pair[1]}", f"{pair[1]}->{pair[0]}"):
        was = cal.latency.get(key, 0.0)
        cal = cal.with_part(key, {**cal.pairs().get(key, {}), "ms": was + ms})
    return replace(problem, calibration=cal)


def fit_latency(
    problem: Problem,
    plan: Plan,
    measured_ms: float,
    pair: tuple[str, str],
    iters: int = 30,
) -> float:
    """The extra link latency (ms) on ``pair``'s two links that makes the simulated makespan
    of ``plan`` equal ``measured_ms`` (0 when it is predicted at least that already)."""

    def pred(ms: float) -> float:
        return plan.timed(_shifted(problem, pair, ms) if ms else problem).makespan

    if pred(0.0) >= measured_ms:
        return 0.0
    lo, hi = 0.0, max(measured_ms, 1e-3)
    while pred(hi) < measured_ms and hi < 1e6:
        lo, hi = hi, hi * 4
    for _ in range(iters):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if pred(mid) < measured_ms else (lo, mid)
    return round(hi, 6)


def calibrate_boundaries(
    problem: Problem,
    graph: OpGraph,
    devices: Sequence[Device],
    windows: Sequence[Sequence[str]],
    per_unit: dict[str, float],
    repeat: int = 7,
    memo: CacheHooks | None = None,
    inputs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Calibrate each device pair's boundary cost (see the module doc); returns what was
    done per ordered pair (``Calibration.of`` it is the calibration; ``problem`` is left
    as it was).
    ``memo``: ``(get(a, b) -> the measurement or None, put(a, b, measurement))``, e.g. the
    profile cache, so that a cached profile does not run the model again (the fit itself is
    recomputed); a measurement on a busy machine is not put (``busy.py``)."""
    devs = {d.name: d for d in devices}
    order = graph.topo_order()
    feed = None
    if inputs:
        feed = model_inputs(graph, inputs)

    def measure(plan: dict[str, str]) -> tuple[float, int, float]:
        """(median ms, units, ms of the median run outside the devices' runs)."""
        # warm-up: the executor default
        rep = api.run(graph, plan, devs, repeat=repeat, inputs=feed)
        median = float(rep.latency_ms["median"])
        return median, int(rep.units), median - float(rep.extra["critical_path"]["run_ms"])

    done: dict[str, Any] = {}
    fallback: list[str] = []
    names = list(devs)
    for i, x in enumerate(names):
        for y in names[i + 1 :]:
            plan = alternating(graph, windows, devs[x], devs[y]) if windows else None
            if plan is None:
                fallback += [f"{x}->{y}", f"{y}->{x}"]
                continue
            ref = reference_device(graph, [devs[x], devs[y]])
            check = (ref.name, expected_ms(problem, ref.name)) if ref else None
            hit = _measured(memo, x, y, measure, plan, check)
            cal = _pair_calibration(problem, graph, order, plan, hit, (x, y))
            for key in (f"{x}->{y}", f"{y}->{x}"):
                done[key] = dict(cal)
    if fallback:
        done.update(_probed(problem, devs, per_unit, fallback))
    if fallback and not any(v.get("per_unit_ms") is not None for v in done.values()):
        single = single_unit(graph, devs, measure, memo, problem)
        if single:
            done["single_unit"] = single
    return done


def _pair_calibration(
    problem: Problem,
    graph: OpGraph,
    order: list[str],
    plan: dict[str, str],
    hit: dict[str, Any],
    pair: tuple[str, str],
) -> dict[str, Any]:
    """One device pair's calibration from the measured run ``hit`` of its alternating
    ``plan``: the latency fitted to it, what was measured, and the excess per unit."""
    measured, units = float(hit["ms"]), hit.get("units")
    ms = fit_latency(problem, Plan.of(plan, order), measured, pair)
    n_cross = sum(1 for e in graph.edges if plan[e.src] != plan[e.dst])
    return {
        "ms": ms,
        "method": "alternating windows",
        "measured_ms": round(measured, 4),
        "units": units,
        "cross_edges": n_cross,
        "per_unit_ms": _excess(problem, order, plan, measured, units),
        **evidence(hit),
    }


def _excess(
    problem: Problem, order: list[str], plan: dict[str, str], measured: float, units: int | None
) -> float | None:
    """Per-unit ms: measured over §3's prediction (without the fitted latency), per unit."""
    if not units:
        return None
    return round(max(0.0, measured - simulate(problem, plan, order).makespan) / units, 6)


def _measured(
    memo: CacheHooks | None,
    x: str,
    y: str,
    measure: Callable[[dict[str, str]], tuple[float, int, float]],
    plan: dict[str, str],
    check: tuple[str, float | None] | None = None,
) -> dict[str, Any]:
    """The pair's run, ``{"ms", "units"}``, cached or measured (``busy.cached_or_guarded``);
    ``check``: a device that runs the whole model and the profile's cost of that run there,
    the reference the run is checked against."""
    dev, expected = check if check is not None else ("", None)

    def run() -> dict[str, Any]:
        got = measure(plan)
        return {"ms": got[0], "units": got[1]}

    return cached_or_guarded(
        memo[0](x, y) if memo else None,
        (lambda hit: memo[1](x, y, hit)) if memo else None,
        run,
        lambda: measure(dict.fromkeys(plan, dev))[0],
        expected,
        dev,
    )


def _probed(
    problem: Problem, devs: dict[str, Device], per_unit: dict[str, float], pairs: list[str]
) -> dict[str, Any]:
    """Links that no plan can alternate over take the handoff probe plus the receiving
    device's per-unit cost; what was done per link."""
    probe = handoff.measure_handoff(list(devs.values()))
    extra = {k: probe.get(k, 0.0) + per_unit.get(k.split("->", 1)[1], 0.0) for k in pairs}
    return {k: {"ms": round(extra[k], 6), "method": "probe handoff + per-unit cost"} for k in pairs}


def single_unit(
    graph: OpGraph,
    devs: dict[str, Device],
    measure: Callable[[dict[str, str]], tuple[float, int, float]],
    memo: CacheHooks | None,
    problem: Problem | None = None,
) -> dict[str, Any]:
    """Each device's one-unit cost (ms): what the executor adds to a whole-model run on it,
    the median run's latency less its time inside the device's run (feeding the inputs,
    dispatch, collecting the outputs; ``critical.py``), as ``per_unit_ms``; and, with
    ``problem``, the latency less the profile's cost of the whole model on the device as
    ``excess_ms``, which the prediction charges a plan that is that one unit: the
    executor's ``session.run`` converts the feed and allocates the outputs, which the
    profiler's bound inputs do not, and on a sub-millisecond model that is a large share
    (docs/decisions.md#one-unit). Devices that cannot run every node are left out."""
    out: dict[str, Any] = {}
    for name, d in devs.items():
        if not all(d.supports(n, graph) for n in graph.nodes):
            continue
        hit = memo[0](name, name) if memo else None
        if not (isinstance(hit, dict) and "own_ms" in hit):
            ms, _, own = measure({n.id: name for n in graph.nodes})
            hit = {"ms": ms, "units": 1, "own_ms": round(max(0.0, own), 6)}
            if memo:
                memo[1](name, name, hit)
        out[name] = {"measured_ms": round(float(hit["ms"]), 4), "per_unit_ms": float(hit["own_ms"])}
        excess = excess_ms(problem, name, float(hit["ms"])) if problem is not None else None
        if excess is not None:
            out[name]["excess_ms"] = excess
    return out


def excess_ms(problem: Problem, device: str, measured_ms: float) -> float | None:
    """A whole-model run's latency on ``device`` above the profile's cost of the model there
    (ms, at least 0); None when a node has no cost on it."""
    costs = [n.cost.get(device) for n in problem.nodes]
    if any(c is None for c in costs):
        return None
    return round(max(0.0, measured_ms - sum(costs)), 6)  # type: ignore[arg-type]
