"""``recommend`` over precisions: the fastest plan whose measured error stays within a budget.

Each device runs at each precision it declares (``Capabilities.precisions``, fp32 always),
one precision per device and its queue views; every combination is profiled (the profile
cache keys each device by its precision, ``Device.fingerprint``), its candidates are
scheduled and timed as ``recommend`` does with ``measure`` (``measured.measured_ms``), and each
candidate's first run is checked against plain onnxruntime (``max_rel_err``). The fastest candidate whose error is at
most ``error_budget`` wins; one whose error was not measured is never chosen. The plan
records its devices' precisions (spec §4's ``extra.precision``), so running it runs them at
those precisions.

The measuring (``measure_precisions``, slow) and the choice (``within_budget``, pure and
instant) are apart, so the workbench's budget slider re-chooses without running anything."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from hetlab.calibrate.measured import measured_ms
from hetlab.calibrate.profile import profile
from hetlab.calibrate.recommend import DEFAULT_ALGO, MEASURED_EXTRA, candidate_plans
from hetlab.cost.problem import Problem
from hetlab.devices.base import Device
from hetlab.devices.precision import FP32, PRECISIONS
from hetlab.devices.precision_choice import at_precision
from hetlab.errors import HetlabError
from hetlab.graph.ir import OpGraph
from hetlab.profiling.options import Progress
from hetlab.schedulers.plan import Plan

# combinations of precisions tried at most (devices that declare several multiply them)
MAX_COMBINATIONS = 16


def combinations(devices: Sequence[Device]) -> list[dict[str, str]]:
    """Each choice of one declared precision per device (queue views follow their device),
    the all-fp32 one first, as ``{device: precision}`` naming the devices not at fp32. A
    device already at another precision than fp32 (``--precision``) keeps it."""
    roots = list(dict.fromkeys(d.root for d in devices))
    options = [
        [r.precision]
        if r.precision != FP32
        else [p for p in PRECISIONS if p in r.capabilities().precisions or p == FP32]
        for r in roots
    ]
    out = []
    for pick in itertools.product(*options):
        out.append({r.name: p for r, p in zip(roots, pick, strict=True) if p != FP32})
    if len(out) > MAX_COMBINATIONS:
        raise HetlabError(
            f"{len(out)} combinations of precisions over {', '.join(r.name for r in roots)}; "
            f"at most {MAX_COMBINATIONS}: give fewer devices, or fix some with --precision"
        )
    return out


def label(choice: Mapping[str, str]) -> str:
    """A combination's name: ``fp32``, or ``cuda0=tf32,cl0=fp16``."""
    return ",".join(f"{d}={p}" for d, p in choice.items()) or FP32


@dataclass
class OverPrecisions:
    """Every candidate measured at every combination of precisions, once: ``rows`` (one per
    combination and candidate, spec §4's ``candidates``), ``plans`` by ``"<precision>
    <candidate>"`` and ``problems``, each combination's profile by its ``label``."""

    rows: list[dict[str, Any]]
    plans: dict[str, Plan]
    problems: dict[str, Problem]


def measure_precisions(
    graph: OpGraph,
    devices: Sequence[Device],
    measure: int,
    inputs: Mapping[str, Any] | None = None,
    algo: str = DEFAULT_ALGO,
    profile_options: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
) -> OverPrecisions:
    """The slow part of ``recommend_within``: each combination of precisions profiled, its
    candidates scheduled, timed (``measure`` runs per round) and checked. ``progress(done,
    total, message)`` follows the combinations and each one's profile (it may raise to
    stop); without it, ``profile_options`` may carry the profiler's own."""
    if measure < 1:
        raise HetlabError("--error-budget needs --measure N > 0 (it runs)")
    out = OverPrecisions([], {}, {})
    choices = combinations(devices)
    for i, choice in enumerate(choices):
        name = label(choice)
        opts = dict(profile_options or {})
        if progress is not None:
            opts["progress"] = _step(progress, i, len(choices), name)
        devs = at_precision(list(devices), choice)
        problem = profile(graph, devs, **opts)
        out.problems[name] = problem
        candidates = candidate_plans(problem, algo, MEASURED_EXTRA, {})
        if progress is not None:
            progress(100 * i + 99, 100 * len(choices), f"{name}: timing the candidates")
        got = measured_ms(candidates, graph, {d.name: d for d in devs}, measure, inputs=inputs)
        for cand, plan in candidates.items():
            out.plans[f"{name} {cand}"] = plan
            out.rows.append(
                {
                    "precision": name,
                    "candidate": cand,
                    "measured": got.ms.get(cand),
                    "max_rel_err": got.max_rel_err.get(cand),
                    **({"error": got.errors[cand]} if cand in got.errors else {}),
                }
            )
    if progress is not None:
        progress(len(choices), len(choices), "measured")
    return out


def _step(progress: Progress, i: int, n: int, name: str) -> Progress:
    """The profiler's progress of combination ``i`` of ``n`` as a share of the whole."""

    def report(done: int, total: int, message: str = "") -> None:
        share = int(99 * done / total) if total else 0
        progress(100 * i + share, 100 * n, f"{name}: {message}")

    return report


def recommend_within(
    graph: OpGraph,
    devices: Sequence[Device],
    error_budget: float,
    measure: int,
    inputs: Mapping[str, Any] | None = None,
    algo: str = DEFAULT_ALGO,
    profile_options: Mapping[str, Any] | None = None,
) -> Plan:
    """The fastest candidate over every combination of precisions (see the module doc) whose
    measured ``max_rel_err`` is at most ``error_budget``: ``measure_precisions`` then
    ``within_budget``. ``profile_options``: ``calibrate.profile``'s keywords."""
    if measure < 1 or error_budget <= 0:
        raise HetlabError("--error-budget needs a positive budget and --measure N > 0 (it runs)")
    got = measure_precisions(graph, devices, measure, inputs, algo, profile_options)
    return within_budget(got.rows, got.plans, error_budget)


def within_budget(rows: list[dict[str, Any]], plans: Mapping[str, Plan], budget: float) -> Plan:
    """The plan of the fastest measured row whose ``max_rel_err`` is at most ``budget`` (a
    row without an error is never chosen), a copy whose ``extra["recommended"]`` holds
    ``chosen`` (``"<precision> <candidate>"``), ``basis``, ``error_budget`` and the
    ``candidates`` rows. Pure and instant: a slider re-chooses with it. No row within the
    budget is one line (HetlabError). A larger budget never gives a slower plan."""
    ok = [
        r
        for r in rows
        if r["measured"] is not None and r["max_rel_err"] is not None and r["max_rel_err"] <= budget
    ]
    if not ok:
        worst = min((r["max_rel_err"] for r in rows if r["max_rel_err"] is not None), default=None)
        raise HetlabError(
            f"no candidate ran within the error budget {budget:.1e}"
            + (f" (the smallest error was {worst:.2e})" if worst is not None else "")
            + "; the model needs its ONNX file for the check"
        )
    best = min(ok, key=lambda r: r["measured"])
    chosen = f"{best['precision']} {best['candidate']}"
    recommended = {
        "chosen": chosen,
        "basis": "measured",
        "error_budget": budget,
        "candidates": rows,
    }
    return replace(plans[chosen], extra={**plans[chosen].extra, "recommended": recommended})
