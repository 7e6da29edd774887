"""What a unit costs more when another device is running, calibrated on a plan of the model.

The boundary calibration (``boundary.py``) runs the model's windows alternately on two
devices, so one device is busy at a time. A heuristic plan keeps several busy at once, and its
units then run slower than profiled: a worker returns from onnxruntime to a GIL that another
worker holds, the groups share the memory system, and a pool that slept while the device
waited for another device must be woken (docs/decisions.md#concurrent-units).

So the profiler also runs the plan ``heft`` makes from the profile (with the boundary
calibration) for real, and fits one surcharge ``per_unit_ms``: what each unit that starts
while another device runs costs more, such that the prediction (``prediction.predict``) of
that plan equals its measured median (bisection; the prediction grows with the surcharge).
It is stored as the calibration's ``concurrent`` part (``boundary.concurrent``). A plan in which fewer than
``MIN_OVERLAPPED`` units overlap another device says too little, and leaves it out. The
plan's run is measured beside a whole-model run on one device and cached only when that
reference says the machine was not busy (``busy.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hetlab.calibrate.busy import cached_or_guarded, evidence, expected_ms, reference_device
from hetlab.calibrate.prediction import predict as prediction
from hetlab.calibrate.report import host_and_remote
from hetlab.cost.cache import digest
from hetlab.cost.problem import Problem
from hetlab.devices.base import Device
from hetlab.executor import api
from hetlab.graph.inputs import model_inputs
from hetlab.graph.ir import OpGraph
from hetlab.schedulers import schedule
from hetlab.schedulers.plan import Plan

MIN_OVERLAPPED = 4
ALGO = "heft"
CacheHooks = tuple[Callable[[str], Any], Callable[[str, Any], None]]


def fit_surcharge(predict: Callable[[float], float], measured_ms: float, iters: int = 30) -> float:
    """The surcharge ``x`` (ms, >= 0) with ``predict(x) == measured_ms``; 0 when ``predict(0)``
    is already at least that, and at most ``measured_ms``."""
    if predict(0.0) >= measured_ms:
        return 0.0
    lo, hi = 0.0, measured_ms
    if predict(hi) < measured_ms:
        return round(hi, 6)
    for _ in range(iters):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if predict(mid) < measured_ms else (lo, mid)
    return round(hi, 6)


def placement_digest(plan: Plan) -> str:
    """A short digest of ``plan``'s placement in its order: the profile cache's key for the
    plan's measured run."""
    device_of = plan.device_of
    return digest([[v, device_of[v]] for v in plan.order])


def calibrate_concurrency(
    problem: Problem,
    graph: OpGraph,
    devices: Sequence[Device],
    repeat: int = 11,
    memo: CacheHooks | None = None,
    inputs: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Fit the surcharge on ``ALGO``'s plan of ``problem`` (see the module doc); returns
    the calibration's ``concurrent`` part (``problem`` is left as it was), with
    ``per_unit_ms`` None and a ``why`` when the plan says too little. ``memo``: ``(get(key)
    -> the measurement or None, put(key, measurement))``, keyed by the plan, e.g. the
    profile cache."""

    devs = {d.name: d for d in devices}
    plan = schedule(problem, ALGO)
    host, remote = host_and_remote(problem, devs)
    out: dict[str, Any] = {"plan": ALGO, "per_unit_ms": None}

    def predict(x: float) -> tuple[float, int]:
        got = prediction(
            problem, graph, plan, host=host, remote=remote, surcharge=x, breakdown=False
        )
        return got.total_ms, got.overlapped

    first = predict(0.0) if problem.calibration.per_unit else None
    if first is None:
        out["why"] = "no host-serial prediction (no per-unit boundary calibration)"
    elif first[1] < MIN_OVERLAPPED:
        out["why"] = f"{ALGO}'s plan starts {first[1]} unit(s) beside another device's run"
    else:
        hit = _measured(problem, graph, plan, devs, repeat, memo, inputs)
        measured = float(hit["ms"])
        x = fit_surcharge(lambda v: predict(v)[0], measured)
        out.update(
            per_unit_ms=x,
            measured_ms=round(measured, 4),
            overlapped=first[1],
            predicted_before_ms=round(first[0], 4),
            **evidence(hit),
        )
    return out


def _measured(
    problem: Problem,
    graph: OpGraph,
    plan: Plan,
    devs: dict[str, Device],
    repeat: int,
    memo: CacheHooks | None,
    inputs: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The plan's measured median ``{"ms"}``, cached or measured beside a whole-model run on
    one device (``busy.cached_or_guarded``)."""
    key = placement_digest(plan)
    ref = reference_device(graph, list(devs.values()))
    name = ref.name if ref is not None else ""
    feed = model_inputs(graph, inputs) if inputs else None

    def run_ms(placed: Any) -> float:
        rep = api.run(graph, placed, devs, repeat=repeat, inputs=feed)
        return float(rep.latency_ms["median"])

    return cached_or_guarded(
        memo[0](key) if memo else None,
        (lambda hit: memo[1](key, hit)) if memo else None,
        lambda: {"ms": run_ms(plan)},
        lambda: run_ms(dict.fromkeys(plan.device_of, name)),
        expected_ms(problem, name) if ref is not None else None,
        name,
    )
