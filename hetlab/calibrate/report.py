"""The executor's run with the calibrated prediction added to its report.

The report's one prediction is ``prediction``: ``prediction.predict``'s total and breakdown
by term for the plan that ran, from the problem (spec §5); the executor predicts nothing.
The older keys stay as deprecated aliases of it (spec §5): ``predicted_ms`` (the total;
the executor's report has the plan's own makespan there), and the breakdown's partial
sums ``predicted_io_ms`` (up to the host's inputs and outputs), ``predicted_host_ms`` (up
to the concurrency surcharge, on a problem with a per-unit calibration) and
``predicted_shared_ms`` (the total, on a problem with a device's queues).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hetlab.calibrate.prediction import predict
from hetlab.calibrate.replayed import replay_report, replays
from hetlab.devices.base import Device, is_accelerator
from hetlab.devices.binding import bind
from hetlab.devices.bound import BoundPlan, UnitSpec
from hetlab.devices.choice import implied_queues, platform_devices
from hetlab.devices.precision_choice import at_precision
from hetlab.errors import HetlabError
from hetlab.executor.api import RunReport
from hetlab.executor.api import run as execute
from hetlab.executor.critical import summary
from hetlab.graph import load
from hetlab.graph.ir import OpGraph
from hetlab.schedulers.plan import Plan


def run(graph: OpGraph | str, plan: Any, devices: Any = None, **kw: Any) -> RunReport:
    """``hetlab.executor.run`` with ``with_predictions`` applied when ``problem`` is given
    (the model is loaded, the devices found and the plan bound once, for both); on the
    problem's replay devices, the report is the replay's on the virtual clock
    (``replayed.replay_report``). ``devices``
    defaults to this machine's, with the queues that the plan's device names need and the
    whole CPU where the problem has one (``plan_devices``). ``precision`` (``"tf32"``,
    ``{"cuda0": "tf32"}``): what the devices run at, by default what the plan or the
    problem records (``extra.precision``, spec §4, §2)."""
    if isinstance(plan, BoundPlan):
        graph, devices = plan.graph, plan.devices
    graph = load(str(graph)) if isinstance(graph, (str, Path)) else graph
    problem, precision = kw.pop("problem", None), kw.pop("precision", None)
    if devices is None:
        devices = plan_devices(plan, problem, precision=precision)
    elif not isinstance(plan, BoundPlan):
        devices = at_recorded(devices, plan, problem, precision)
    bound = bind(plan, graph, devices)
    report = execute(graph, bound, devices, **kw)
    if problem is not None:
        with_predictions(report, graph, bound, devices, problem)
        if replays(bound.devices, problem, unscaled=True):  # its report on the profiled clock
            report = replay_report(report, problem, graph, bound.plan)
    return report


def plan_devices(
    plan: Any,
    problem: Any = None,
    platform: Any = None,
    queues: Mapping[str, int] | None = None,
    whole_cpu: str | None = None,
    precision: Any = None,
) -> list[Device]:
    """This machine's devices as ``plan`` needs them: the queue views it names (``cuda0.q2``)
    and the whole-CPU device of ``problem``'s exclusive sets, besides the options given, at
    ``precision`` or else at what the plan or the problem records (``recorded_precision``)."""
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
    found = platform_devices(platform, need, whole_cpu or _whole_cpu(problem))
    return at_precision(found, precision or recorded_precision(plan, problem))


def recorded_precision(plan: Any, problem: Any) -> dict[str, str] | None:
    """The precision of each device that ``plan`` (spec §4) or else ``problem`` (spec §2)
    records in ``extra.precision``; None where neither records one (fp32)."""
    for doc in (plan, problem):
        got = getattr(doc, "extra", {}).get("precision") if doc is not None else None
        if got:
            return dict(got)
    return None


def at_recorded(devices: Any, plan: Any, problem: Any, precision: Any = None) -> list[Device]:
    """``devices`` (a list or a mapping) at ``precision``, else at what ``plan`` or
    ``problem`` records for those of them it names; devices that replay ``problem`` are left
    as they are (its costs are already the recorded precision's)."""
    named = dict(devices) if isinstance(devices, Mapping) else {d.name: d for d in devices}
    devs = list(named.values())
    if precision is None and problem is not None and replays(named, problem):
        return devs
    names = {d.name for d in devs}
    recorded = {k: v for k, v in (recorded_precision(plan, problem) or {}).items() if k in names}
    return at_precision(devs, precision or recorded)


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
    """Set ``report``'s ``predicted_ms`` to the prediction of ``plan`` and add its breakdown
    (``run_prediction``) to ``report.extra``; a problem that does not fit the plan leaves
    the report as it was."""
    if isinstance(graph, str):
        graph = load(graph)
    if devices is None:
        devices = plan.devices if isinstance(plan, BoundPlan) else plan_devices(plan, problem)
    devmap = dict(devices) if isinstance(devices, Mapping) else {d.name: d for d in devices}
    bound = bind(plan, graph, devmap)
    _profiled_path(report, bound, problem)
    got = run_prediction(problem, graph, bound, devmap)
    if got:
        report.predicted_ms = got.pop("predicted_ms")
        report.extra.update(got)
    return report


def _profiled_path(report: RunReport, bound: BoundPlan, problem: Any) -> None:
    """``critical_path.predicted_run_ms``: the profile's cost of the measured critical path's
    units, where it prices every one of them."""
    cp = report.extra.get("critical_path")
    if not cp:
        return
    specs = list(bound.units)
    priced = summary(specs, report.events, 0.0, _unit_ms(problem, specs))
    if "predicted_run_ms" in priced:
        cp["predicted_run_ms"] = priced["predicted_run_ms"]


def _unit_ms(problem: Any, specs: list[UnitSpec]) -> dict[int, float]:
    """Unit -> the profile's cost of its nodes on its device (ms); units with an unpriced
    node are left out."""
    out: dict[int, float] = {}
    cost = {n.id: n.cost for n in problem.nodes}
    for s in specs:
        vals = [cost.get(v, {}).get(s.device) for v in s.nodes]
        if all(x is not None for x in vals):
            out[s.index] = float(sum(vals))
    return out


def run_prediction(
    problem: Any,
    graph: OpGraph,
    plan: Plan | BoundPlan,
    devices: Mapping[str, Device],
) -> dict[str, Any]:
    """``predicted_ms`` and ``prediction`` of ``plan`` (``prediction.predict``, with the first CPU device
    of the problem as the host and the accelerators without host-unified memory as remote),
    and the earlier keys as its partial sums (see the module doc); empty where the problem
    does not fit the plan."""
    host, remote = host_and_remote(problem, devices)
    try:
        got = predict(problem, graph, plan, host=host, remote=remote)
    except HetlabError:  # a profile that does not fit this plan: the run itself still goes on
        return {}
    out: dict[str, Any] = {"predicted_ms": round(got.total_ms, 4), "prediction": got.to_json()}
    if host is not None:
        out["predicted_io_ms"] = round(got.upto("host_io"), 4)
        if problem.calibration.per_unit:
            out["predicted_host_ms"] = round(got.upto("concurrency"), 4)
    one_device = len(set(plan.device_of.values())) == 1  # runs through that device's queue runner
    if problem.extra.get("queues") and (one_device or not plan.sequential):
        out["predicted_shared_ms"] = round(got.total_ms, 4)
    return out


def host_and_remote(problem: Any, devices: Mapping[str, Device]) -> tuple[str | None, set[str]]:
    """The prediction's host (the problem's first CPU device, None if it has none) and its
    remote devices (accelerators whose memory is not the host's: ``unified_memory`` False)."""
    used = [devices[d] for d in problem.devices if d in devices]
    host = next((d.name for d in used if not is_accelerator(d)), None)
    remote = {
        d.name for d in used if is_accelerator(d) and d.capabilities().unified_memory is False
    }
    return host, remote
