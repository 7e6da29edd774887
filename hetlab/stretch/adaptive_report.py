"""``hetlab run ... --adaptive``: the adaptive loop of ``adaptive.py`` with an optional
interference schedule (``--interfere DEVICE:START:STOP`` runs a CPU burner pinned to that CPU
group, or a busy OpenCL queue, from run START to run STOP) and an optional static run under
the same schedule for comparison. Returns spec §5's report plus ``adaptive`` (the trace) and
``static`` (the non-adaptive trace). Times in ms."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from hetlab.devices.base import Device
from hetlab.errors import HetlabError
from hetlab.executor.check import reference
from hetlab.executor.interpreter import Repetition
from hetlab.fileio import atomic_write_json
from hetlab.graph.ir import OpGraph
from hetlab.schedulers.plan import Plan
from hetlab.stretch.adaptive import AdaptiveConfig, AdaptiveTrace, run_adaptive
from hetlab.stretch.interference import CpuBurner, OpenClBusyQueue, cores_of


def parse_interfere(
    text: str | None, devices: Mapping[str, Device], repeat: int
) -> tuple[str, int, int] | None:
    """``NAME:START:STOP`` (runs, STOP exclusive; STOP defaults to the end)."""
    if not text:
        return None
    parts = text.split(":")
    try:
        name, start = parts[0], int(parts[1])
        stop = int(parts[2]) if len(parts) > 2 and parts[2] else repeat
    except (IndexError, ValueError):
        raise HetlabError(
            f"--interfere: expected DEVICE:START[:STOP] (run numbers), got {text!r}"
        ) from None
    if name not in devices:
        raise HetlabError(
            f"--interfere: unknown device {name!r} (devices here: {', '.join(devices)})"
        )
    if not 0 <= start < stop <= repeat:
        raise HetlabError(
            f"--interfere: need 0 <= START < STOP <= --repeat ({repeat}), got {start}:{stop}"
        )
    return name, start, stop


def interference_hook(
    spec: tuple[str, int, int] | None,
    devices: Mapping[str, Device],
    max_s: float = 300.0,
    procs: int = 3,
):
    """A ``before_run`` callback that starts/stops the generator; returns (hook, stop_all).
    ``procs`` (at least 2 per core) burner processes share the group's cores (a heavy
    contending application; on a shared machine one burner mostly pushes other processes
    to the other cores)."""

    state: dict[str, Any] = {"gen": None}

    def stop_all() -> None:
        if state["gen"] is not None:
            state["gen"].stop()
            state["gen"] = None

    def hook(i: int, trace: AdaptiveTrace) -> None:
        if spec is None:
            return
        name, start, stop = spec
        dev = devices[name]
        if i == start:
            gen = (
                OpenClBusyQueue(dev, max_s)
                if dev.kind == "opencl"
                else CpuBurner(cores_of(dev), max_s, max(procs, 2 * len(cores_of(dev))))
            )
            state["gen"] = gen.start()
            trace.marks.append({"run": i, "event": f"interference on {name}"})
        elif i == stop:
            stop_all()
            trace.marks.append({"run": i, "event": f"interference off {name}"})

    return hook, stop_all


def adaptive_run(
    graph: OpGraph,
    plan: Plan,
    devices: Mapping[str, Device],
    inputs: Mapping[str, Any],
    repeat: int,
    config: AdaptiveConfig,
    problem: Any = None,
    interfere: str | None = None,
    compare: bool = False,
    check: bool = False,
    predicted: float | None = None,
    trace_out: str | Path | None = None,
) -> dict[str, Any]:
    """``graph`` run by ``plan`` in the adaptive loop (and, with ``compare``, the static one) under the ``interfere``
    schedule: spec §5's report with their traces, which ``trace_out`` also gets."""
    spec = parse_interfere(interfere, devices, repeat)
    docs: dict[str, Any] = {}
    reps: list[Repetition] = []
    for mode in ["adaptive", "static"] if compare else ["adaptive"]:
        hook, stop_all = interference_hook(spec, devices)
        try:
            trace, mode_reps = run_adaptive(
                graph,
                plan,
                devices,
                inputs,
                repeat,
                config,
                problem,
                adaptive=mode == "adaptive",
                before_run=hook,
            )
        finally:
            stop_all()
        docs[mode] = trace.to_json()
        if mode == "adaptive":
            reps = mode_reps
    doc = _report(graph, plan.device_of, inputs, reps, repeat, check, predicted, docs["adaptive"])
    if compare:
        doc["static"] = docs["static"]
        doc["static_median_ms"] = round(
            statistics.median(r["latency_ms"] for r in docs["static"]["runs"]), 4
        )
    if trace_out:
        atomic_write_json(
            trace_out, {k: doc[k] for k in ("model", "adaptive", "static") if k in doc}
        )
    return doc


def _report(
    graph: OpGraph,
    device_of: Mapping[str, str],
    inputs: Mapping[str, Any],
    reps: list[Repetition],
    repeat: int,
    check: bool,
    predicted: float | None,
    trace: dict[str, Any],
) -> dict[str, Any]:
    """Spec §5's report of the adaptive loop's runs (its median run checked with ``check``)
    and its ``trace``."""
    walls = np.array([r.wall_ms for r in reps])
    mid = reps[int(np.argsort(walls)[len(walls) // 2])]
    checked = reference(graph, dict(inputs)).report(mid.outputs) if check else {}
    err = checked.pop("max_rel_err", None)
    return {
        "model_path": str(Path(graph.model_path).resolve()) if graph.model_path else None,
        "model": graph.name,
        "latency_ms": {
            "median": round(float(np.median(walls)), 4),
            "p10": round(float(np.percentile(walls, 10)), 4),
            "p90": round(float(np.percentile(walls, 90)), 4),
        },
        "predicted_ms": predicted,
        "max_rel_err": err,
        "devices": dict(Counter(device_of[n.id] for n in graph.nodes)),
        "timeline": [],
        "repeat": repeat,
        "samples_ms": [round(float(w), 4) for w in walls],
        "adaptive": trace,
        **checked,
    }
