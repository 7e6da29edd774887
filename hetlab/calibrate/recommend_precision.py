"""``recommend`` over precisions: the fastest plan whose measured error stays within a budget.

Each device runs at each precision it declares (``Capabilities.precisions``, fp32 always),
one precision per device and its queue views; every combination is profiled (the profile
cache keys each device by its precision, ``Device.fingerprint``), its candidates are
scheduled and timed as ``recommend`` does with ``measure`` (``measured.measured_ms``), and each
candidate's first run is checked against plain onnxruntime (``max_rel_err``). The fastest candidate whose error is at
most ``error_budget`` wins; one whose error was not measured is never chosen. The plan
records its devices' precisions (spec §4's ``extra.precision``), so running it runs them at
those precisions."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from hetlab.calibrate.measured import measured_ms
from hetlab.calibrate.profile import profile
from hetlab.calibrate.recommend import DEFAULT_ALGO, MEASURED_EXTRA, candidate_plans
from hetlab.devices.base import Device
from hetlab.devices.precision import FP32, PRECISIONS
from hetlab.devices.precision_choice import at_precision
from hetlab.errors import HetlabError
from hetlab.graph.ir import OpGraph
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
    measured ``max_rel_err`` is at most ``error_budget``; its ``extra["recommended"]`` holds
    ``error_budget``, ``chosen`` (``"<precision> <candidate>"``) and ``candidates``: one row
    per precision and candidate with its ``precision``, ``candidate``, ``measured`` ms,
    ``max_rel_err`` and, where its run failed, ``error``. ``profile_options``:
    ``calibrate.profile``'s keywords."""
    if measure < 1 or error_budget <= 0:
        raise HetlabError("--error-budget needs a positive budget and --measure N > 0 (it runs)")
    rows: list[dict[str, Any]] = []
    plans: dict[str, Plan] = {}
    for choice in combinations(devices):
        devs = at_precision(list(devices), choice)
        problem = profile(graph, devs, **dict(profile_options or {}))
        candidates = candidate_plans(problem, algo, MEASURED_EXTRA, {})
        got = measured_ms(candidates, graph, {d.name: d for d in devs}, measure, inputs=inputs)
        for name, plan in candidates.items():
            plans[f"{label(choice)} {name}"] = plan
            rows.append(
                {
                    "precision": label(choice),
                    "candidate": name,
                    "measured": got.ms.get(name),
                    "max_rel_err": got.max_rel_err.get(name),
                    **({"error": got.errors[name]} if name in got.errors else {}),
                }
            )
    return _chosen(rows, plans, error_budget)


def _chosen(rows: list[dict[str, Any]], plans: Mapping[str, Plan], budget: float) -> Plan:
    """The fastest row within ``budget``'s plan, with the ``recommended`` section."""
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
    plan = plans[chosen]
    plan.extra["recommended"] = {
        "chosen": chosen,
        "basis": "measured",
        "error_budget": budget,
        "candidates": rows,
    }
    return plan
