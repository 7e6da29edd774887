"""The executor's run with the calibrated predictions added to its report.

``predicted_io_ms`` (``predict.end_to_end_ms``: the inputs and outputs moved between host
memory and a discrete GPU too), ``predicted_host_ms`` (``predict.host_serial_ms``: each
unit's host dispatch served one at a time) and, where the problem has a device's queues,
``predicted_shared_ms`` (``shared.shared_ms``: the queues sharing their device), for the plan
that ran, from the problem.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hetlab.calibrate.predict import end_to_end_ms, host_serial_ms
from hetlab.calibrate.shared import shared_ms
from hetlab.devices.base import Device, is_accelerator
from hetlab.devices.choice import implied_queues, platform_devices
from hetlab.errors import HetlabError
from hetlab.executor.api import RunReport, placement
from hetlab.executor.api import run as execute
from hetlab.graph import load
from hetlab.graph.ir import OpGraph
from hetlab.schedulers.plan import Plan


def run(graph: OpGraph | str, plan: Any, devices: Any = None, **kw: Any) -> RunReport:
    """``hetlab.executor.run`` with ``with_predictions`` applied when ``problem`` is given
    (the model is loaded and the devices found once, for both). ``devices`` defaults to
    this machine's, with the queues that the plan's device names need and the whole CPU
    where the problem has one (``plan_devices``)."""
    graph = load(str(graph)) if isinstance(graph, (str, Path)) else graph
    devices = plan_devices(plan, kw.get("problem")) if devices is None else devices
    report = execute(graph, plan, devices, **kw)
    problem = kw.get("problem")
    if problem is not None:
        with_predictions(report, graph, plan, devices, problem)
    return report


def plan_devices(
    plan: Any,
    problem: Any = None,
    platform: Any = None,
    queues: Mapping[str, int] | None = None,
    whole_cpu: str | None = None,
) -> list[Device]:
    """This machine's devices as ``plan`` needs them: the queue views it names (``cuda0.q2``)
    and the whole-CPU device of ``problem``'s exclusive sets, besides the options given."""
    names = set(problem.devices if problem is not None else ())
    if isinstance(plan, str):
        names.add(plan)
    elif isinstance(plan, Plan):
        names.update(plan.device_of.values())
    elif isinstance(plan, Mapping):
        names.update(str(v) for v in plan.values())
    need = implied_queues(names)
    for dev, n in (queues or {}).items():
        need[dev] = max(n, need.get(dev, 1))
    return platform_devices(platform, need, whole_cpu or _whole_cpu(problem))


def problem_devices(problem: Any, platform: Any = None, **options: Any) -> list[Device]:
    """The devices ``problem`` names, found on this machine (``plan_devices``, with the
    platform ``options``: ``queues``, ``whole_cpu``); one clear line for a device that is
    not here."""
    have = {d.name: d for d in plan_devices(None, problem, platform, **options)}
    missing = [d for d in problem.devices if d not in have]
    if missing:
        raise HetlabError(
            f"the profile names {missing[0]!r}, which is not a device here "
            f"({', '.join(have)}); profile this machine, or pass a platform that names it"
        )
    return [have[d] for d in problem.devices]


def problem_graph(problem: Any) -> OpGraph:
    """The model ``problem`` was profiled from, with its input shapes."""
    model = problem.extra.get("model") or {}
    path = model.get("path")
    if not path or not Path(path).exists():
        raise HetlabError(
            f"the profile does not name a model file that exists here ({path!r}); "
            "pass the model too"
        )
    shapes = {k: tuple(v) for k, v in (model.get("input_shapes") or {}).items()}
    return load(str(path), shapes)


def _whole_cpu(problem: Any) -> str | None:
    """The whole-CPU device of ``problem``'s exclusive sets (spec §2), if it has one."""
    for s in (problem.extra.get("exclusive") or []) if problem is not None else []:
        if len(s) == 1:
            return s[0]
    return None


def with_predictions(
    report: RunReport, graph: OpGraph | str, plan: Any, devices: Any, problem: Any
) -> RunReport:
    """Add ``predicted_io_ms`` and ``predicted_host_ms`` for ``plan`` to ``report.extra``."""
    if isinstance(graph, str):
        graph = load(graph)
    if devices is None:
        devices = plan_devices(plan, problem)
    devmap = dict(devices) if isinstance(devices, Mapping) else {d.name: d for d in devices}
    device_of, order, sequential, _ = placement(graph, plan, devmap)
    fused = getattr(plan, "fused", ())
    report.extra.update(io_prediction(problem, graph, device_of, order, sequential, devmap, fused))
    return report


def io_prediction(
    problem: Any,
    graph: OpGraph,
    device_of: Mapping[str, str],
    order: Sequence[str] | None,
    sequential: bool,
    devices: Mapping[str, Device],
    fused: Sequence[Sequence[str]] = (),
) -> dict[str, float]:
    """``predicted_io_ms`` (``predict.end_to_end_ms``), ``predicted_host_ms``
    (``predict.host_serial_ms``) and ``predicted_shared_ms`` (``shared.shared_ms``, for a
    problem with queues and a plan that is not sequential or is all on one device, which the
    executor runs as that device's group), with the first CPU device of the
    problem as the host and the accelerators without host-unified memory as remote; those
    that cannot be had are left out."""
    host, remote = host_and_remote(problem, devices)
    if host is None:
        return {}
    order = order or graph.topo_order()
    try:
        got = {
            "predicted_io_ms": end_to_end_ms(
                problem, graph, device_of, order, host, remote, sequential, fused
            ),
            "predicted_host_ms": host_serial_ms(
                problem, graph, device_of, order, host, remote, sequential
            ),
        }
        one_device = len(set(device_of.values())) == 1  # runs as that device's group
        if problem.extra.get("queues") and (one_device or not sequential):
            got["predicted_shared_ms"] = shared_ms(problem, graph, device_of, order, host, remote)
    except HetlabError:  # a profile that does not fit this plan: the run itself still goes on
        return {}
    return {k: round(v, 4) for k, v in got.items() if v is not None}


def host_and_remote(problem: Any, devices: Mapping[str, Device]) -> tuple[str | None, set[str]]:
    """The prediction's host (the problem's first CPU device, None if it has none) and its
    remote devices (accelerators whose memory is not the host's: ``unified_memory`` False)."""
    used = [devices[d] for d in problem.devices if d in devices]
    host = next((d.name for d in used if not is_accelerator(d)), None)
    remote = {
        d.name for d in used if is_accelerator(d) and d.capabilities().unified_memory is False
    }
    return host, remote
