"""The executor's own cost of handing a tensor from one device to another, measured for real.

The calibrator (``cost.calibrator``) times ``copy_out`` + ``copy_in``; a real cross-device edge
also ends a unit on one worker and starts one on another (a wake-up, a dispatch, a device
sync). spec §3 charges a transfer as edge communication, so that measured handoff is added to
each link's ``latency``. Measured on a two-node chain (``handoff.onnx``, a 1 KB tensor):
``handoff(a->b) = median(first@a, second@b) - (median(both@a) + median(both@b)) / 2`` (ms).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from hetlab.cost.problem import Link, Problem
from hetlab.devices.base import Device

MODEL = Path(__file__).with_name("handoff.onnx")


def measure_handoff(devices: Sequence[Device], repeat: int = 25) -> dict[str, float]:
    """``{"a->b": ms}`` for every ordered pair of ``devices`` (0 where nothing is measurable)."""
    from hetlab.executor.api import run
    from hetlab.graph import load

    g = load(str(MODEL))
    devs = {d.name: d for d in devices}
    base = {
        n: float(
            run(g, {"first": n, "second": n}, devs, repeat=repeat, warmup=3).latency_ms["median"]
        )
        for n in devs
    }
    out: dict[str, float] = {}
    for a in devs:
        for b in devs:
            if a != b:
                r = run(g, {"first": a, "second": b}, devs, repeat=repeat, warmup=3)
                out[f"{a}->{b}"] = round(
                    max(0.0, r.latency_ms["median"] - (base[a] + base[b]) / 2), 6
                )
    return out


def apply_handoff(problem: Problem, handoff: dict[str, float]) -> Problem:
    """Add each pair's handoff to its link latency and to edges' own measured ``comm``."""
    default = problem.comm.get("default") or Link()
    for key, ms in handoff.items():
        link = problem.comm.get(key) or Link(default.latency, default.bandwidth)
        problem.comm[key] = Link(round(link.latency + ms, 6), link.bandwidth)
    for e in problem.edges:
        for key in list(e.comm):
            if key in handoff:
                e.comm[key] = round(e.comm[key] + handoff[key], 6)
    problem.extra["handoff_ms"] = handoff
    for k in ("comm_tensor",):  # drop cached views built from the old links
        problem.__dict__.pop(k, None)
    return problem


def add_unit_overhead(problem: Problem, per_unit: dict[str, float]) -> Problem:
    """Add each receiving device's per-unit cost (ms, ``cost.context.unit_overhead``) to the
    latency of every link into it and to edges' own measured ``comm`` into it: a tensor that
    changes device starts a new unit there."""
    default = problem.comm.get("default") or Link()
    for a in problem.devices:
        for b in problem.devices:
            ms = per_unit.get(b, 0.0)
            if a == b or not ms:
                continue
            key = f"{a}->{b}"
            link = problem.comm.get(key) or Link(default.latency, default.bandwidth)
            problem.comm[key] = Link(round(link.latency + ms, 6), link.bandwidth)
    for e in problem.edges:
        for key in list(e.comm):
            ms = per_unit.get(key.split("->", 1)[1], 0.0)
            e.comm[key] = round(e.comm[key] + ms, 6)
    problem.extra["unit_overhead_ms"] = dict(per_unit)
    problem.__dict__.pop("comm_tensor", None)
    return problem
