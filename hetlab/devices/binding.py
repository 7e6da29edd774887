"""``bind(plan, graph, devices) -> BoundPlan``: where a plan meets the model and the devices.

The one place a plan is placed, checked and split into the executor's units: against the
model (``bound.check_plan``), against what each device runs (``unsupported_summary``) and
against their memory (``memory.check_fits``), before anything is prepared or allocated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from hetlab.devices.base import Device, is_accelerator, unsupported_summary
from hetlab.devices.bound import BoundPlan, build_units, check_plan
from hetlab.devices.memory import check_fits
from hetlab.errors import HetlabError
from hetlab.graph.ir import OpGraph
from hetlab.schedulers.plan import Plan


def bind(
    plan: Plan | Mapping[str, str] | str | BoundPlan,
    graph: OpGraph,
    devices: Sequence[Device] | Mapping[str, Device],
) -> BoundPlan:
    """``plan`` (a Plan, a node -> device mapping in the graph's topological order, or a
    device name: see ``placement``) bound to ``graph`` on ``devices``; a ``BoundPlan`` is
    returned as it is. One line for a plan that does not fit the model, a node a device
    cannot run, or a tensor its device cannot hold."""
    if isinstance(plan, BoundPlan):
        return plan
    devmap = dict(devices) if isinstance(devices, Mapping) else {d.name: d for d in devices}
    placed = placement(graph, plan, devmap)
    check_plan(graph, placed, list(devmap))
    device_of = placed.device_of
    for dev in devmap.values():  # one line per device, its refusals grouped by op
        mine = [n for n in graph.nodes if device_of[n.id] == dev.name]
        why = unsupported_summary(dev, graph, mine)
        if why:
            raise HetlabError(f"{why}; the plan places them there")
    check_fits(graph, [(v, devmap[d]) for v, d in device_of.items()])
    return BoundPlan(
        graph=graph,
        devices=MappingProxyType(devmap),
        plan=placed,
        device_of=MappingProxyType(device_of),
        order=tuple(placed.order),
        sequential=placed.sequential,
        fused=tuple(tuple(g) for g in placed.fused),
        units=tuple(build_units(graph, placed)),
        device_order=MappingProxyType({d: tuple(v) for d, v in placed.device_order().items()}),
        makespan=placed.makespan,
        algo=plan.algo if isinstance(plan, Plan) else None,
        by_device=plan if isinstance(plan, str) else None,
    )


def placement(graph: OpGraph, plan: Any, devices: Mapping[str, Device]) -> Plan:
    """The Plan that ``plan`` names: a Plan itself, a node -> device mapping (in the graph's
    topological order) or a device name (every node it supports there, the rest on the first
    CPU device); the last two are untimed (no makespan)."""
    if isinstance(plan, Plan):
        return plan
    if isinstance(plan, str):
        if plan not in devices:
            raise HetlabError(
                f"unknown device {plan!r} (devices here: {', '.join(devices)}); "
                "see 'hetlab devices'"
            )
        dev = devices[plan]
        cpus = [d for d in devices.values() if not is_accelerator(d)]
        fb = cpus[0].name if cpus else plan
        device_of = {n.id: plan if dev.supports(n, graph) else fb for n in graph.nodes}
    elif isinstance(plan, Mapping):
        device_of = {str(k): str(v) for k, v in plan.items()}
    else:
        raise HetlabError(
            "a plan must be a Plan, a node -> device mapping or a device name, "
            f"not {type(plan).__name__}"
        )
    return Plan.of(device_of, graph.topo_order())
