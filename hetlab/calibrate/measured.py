"""Candidate plans timed on the real devices, for a choice that predictions cannot settle.

Plans are timed in interleaved rounds (each round runs every distinct plan once, in an
order that reverses from round to round), so slow drift of the host lands on all plans
alike. Each round of a plan is one ``hetlab.executor.run``, which builds the plan's
executor and closes it before it returns: one plan's executor is alive at a time, because
idle onnxruntime pools spin and a plan timed beside another's idle executor runs slower.
Names whose plans run the same program (``program_key``) share one measurement.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hetlab.devices.base import Device
from hetlab.errors import HetlabError
from hetlab.executor import build_units, run
from hetlab.executor.check import max_rel_err, random_inputs, reference_outputs
from hetlab.graph.ir import OpGraph
from hetlab.schedulers.plan import Plan


@dataclass
class Timings:
    """Per candidate name: ``ms``, its median latency (None where a run raised HetlabError);
    ``errors``, the message of each such run; ``max_rel_err``, its first round's outputs
    against plain onnxruntime (only where the graph has its ONNX file)."""

    ms: dict[str, float | None]
    errors: dict[str, str] = field(default_factory=dict)
    max_rel_err: dict[str, float] = field(default_factory=dict)


# Interleaved rounds per choice: enough that two devices a few per cent apart are ordered by
# their medians rather than by the host's spread between rounds (docs/corpus.md).
ROUNDS = 5


def program_key(graph: OpGraph, plan: Plan) -> tuple:
    """Equal for two plans exactly when the executor runs the same program: the units of
    each device (``build_units``), plus their global order for a sequential plan. A plan on
    one device is one unit, so it is keyed by its device alone."""
    device_of = plan.device_of
    used = sorted(set(device_of.values()))
    if len(used) == 1:
        return ("one-device", used[0])
    specs = build_units(graph, plan)
    if plan.sequential:
        return ("sequential", tuple((s.device, tuple(sorted(s.nodes))) for s in specs))
    return (
        "parallel",
        tuple((d, tuple(tuple(sorted(s.nodes)) for s in specs if s.device == d)) for d in used),
    )


def measured_ms(
    candidates: Mapping[str, Plan],
    graph: OpGraph,
    devices: Mapping[str, Device],
    repeat: int = 5,
    rounds: int = ROUNDS,
    inputs: Mapping[str, Any] | None = None,
) -> Timings:
    """Each candidate's latency (ms): the median over ``rounds`` interleaved rounds of each
    round's median of ``repeat`` runs, on ``inputs`` (default: seeded random ones). A
    candidate whose run raises HetlabError leaves the rounds with no time; the others go on.
    The first round's outputs are checked against plain onnxruntime, computed once."""
    if repeat < 1 or rounds < 1:
        raise HetlabError(f"measuring needs at least one run and one round, got {repeat}, {rounds}")
    feed = dict(inputs) if inputs is not None else random_inputs(graph)
    owner: dict[tuple, str] = {}  # each distinct program -> the first name that has it
    key_of = {}
    for name, plan in candidates.items():
        key_of[name] = program_key(graph, plan)
        owner.setdefault(key_of[name], name)
    ref = _reference(graph, feed)
    samples: dict[tuple, list[float]] = {k: [] for k in owner}
    failed: dict[tuple, str] = {}
    checked: dict[tuple, float] = {}
    for r in range(rounds):
        for k in list(owner) if r % 2 == 0 else list(reversed(owner)):
            if k in failed:
                continue
            try:
                rep = run(graph, candidates[owner[k]], devices, repeat=repeat, inputs=feed)
            except HetlabError as e:
                failed[k] = str(e)
                continue
            samples[k].append(float(rep.latency_ms["median"]))
            if ref is not None and k not in checked:
                checked[k] = max_rel_err(rep.outputs, ref)
    return Timings(
        ms={
            n: None if k in failed else round(statistics.median(samples[k]), 4)
            for n, k in key_of.items()
        },
        errors={n: failed[k] for n, k in key_of.items() if k in failed},
        max_rel_err={n: checked[k] for n, k in key_of.items() if k in checked},
    )


def _reference(graph: OpGraph, feed: Mapping[str, Any]) -> dict[str, Any] | None:
    """Plain onnxruntime's outputs on ``feed``, or None where there is no ONNX file to run
    or onnxruntime cannot run it (the times are then unchecked, not refused)."""
    if not graph.model_path:
        return None
    try:
        return reference_outputs(graph.model_path, feed, list(graph.outputs))
    except HetlabError:
        return None
