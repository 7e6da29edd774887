"""The profiler: a model's measured per-op, grouped-op and transfer costs as a Problem (spec §2).

HOPE §4.1 (benchmarking engine), PartitionTuner §3.1 (individual and grouped operators) and
OverSeer's Calibrator, on hetlab's devices. For each vertex and each device that supports it,
the vertex runs alone on real inputs of its real shapes (``tensor_values.py``): warm-up, then up to
``repeat`` timed runs (fewer for slow ops, see ``measure.Budget``), MAD outlier rejection; the
cost is the median minus the device's per-call overhead (``measure.probe_overhead``), because
a whole-model run pays that dispatch once and not once per node. Ops of one signature
(``signature.py``) are measured once. Unsupported -> ``null``; supported but nothing to
measure alone -> an estimate (``unmeasured.py``). Everything measured goes to the cache
(``cache.py``) as it is measured, so Ctrl-C keeps it and the next call resumes.

The stages, in order: ``job.plan_job`` (what to measure: signatures, groups, context windows,
spans, edge shapes), ``stages.measure_devices`` (isolated ops, groups and windows, per
device), ``stages.measure_links``, ``assemble.node_costs`` (isolated costs, estimates and
the in-context correction), and ``assemble.build_problem``. The executor's calibrations
are a second step, in the layer above (``hetlab.calibrate.calibrate``), on the Problem this
returns, in the same cache (``job.profile_cache``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from hetlab.cost.problem import Problem
from hetlab.devices.base import Device, one_hardware_twice
from hetlab.errors import HetlabError
from hetlab.graph.ir import OpGraph
from hetlab.profiling import assemble, stages
from hetlab.profiling.assemble import FLOOR_MS
from hetlab.profiling.job import plan_job
from hetlab.profiling.options import ProfileOptions, Progress, options_of

__all__ = ["FLOOR_MS", "ProfileOptions", "Progress", "profile"]


def profile(
    graph: OpGraph | str,
    devices: Sequence[Device | str],
    options: ProfileOptions | None = None,
    **overrides: Any,
) -> Problem:
    """Measure ``graph`` on ``devices`` (Device objects; ``hetlab.profile`` takes names) and return the Problem.
    ``options`` (see ``ProfileOptions``), with any of its fields given as keywords instead:
    ``profile(g, [cpu0], repeat=5, comm=False)``. The links keep the calibrator's transfer
    fits alone: the executor's calibrations are ``hetlab.calibrate.calibrate``'s."""
    t_start = time.perf_counter()
    opts = options_of(options, overrides)
    if isinstance(graph, str):
        from hetlab.graph.onnx_io import load

        graph = load(graph)
    job = plan_job(graph, _resolve(devices), opts)
    meas = stages.Measured()
    affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    try:
        stages.measure_devices(job, meas)
        stages.measure_links(job, meas)
    finally:
        job.cache.flush()
        if affinity is not None:
            os.sched_setaffinity(0, affinity)
        for d in job.devs:  # sessions profiling ran were slower afterwards (ort_cpu.forget)
            d.forget()
    costs = assemble.node_costs(job, meas)
    p = assemble.build_problem(job, meas, costs, round(time.perf_counter() - t_start, 3))
    p.validate(f"profile of {graph.name}")
    return p


def _resolve(devices: Sequence[Device | str]) -> list[Device]:
    if not devices:
        raise HetlabError(
            "no devices to profile on; name some with --devices (see 'hetlab devices')"
        )
    out: list[Device] = []
    for d in devices:
        if isinstance(d, str):  # the platform is a layer above: hetlab.calibrate.profile
            raise HetlabError(f"profile {d!r} through hetlab.profile, which knows the devices")
        out.append(d)
    names = [d.name for d in out]
    if len(set(names)) != len(names):
        raise HetlabError(f"a device is named twice in {names}")
    twice = one_hardware_twice(out)
    if twice is not None:
        a, b = twice
        keep = [d.name for d in out if d.root is not a.root]
        raise HetlabError(
            f"{a.name} and {b.name} are one GPU ({a.hardware_id()}) through two drivers, and a "
            f"plan would use them as two devices; profile one of them, e.g. --devices "
            f"{','.join(keep)}"
        )
    return out
