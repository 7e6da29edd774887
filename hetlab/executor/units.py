"""Plan -> units: the dispatches the executor makes.

A unit is a run of consecutive nodes in one device's order that waits for other devices
only before it starts (every input from another device comes from a unit it waits for) and
holds back no tensor another device could use sooner. Each device's order is the plan's global order restricted to
that device; because the global order is topological, the unit graph is acyclic.
``UnitSpec`` is defined with the group runners that run units too (``devices/group.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hetlab.devices.base import is_accelerator
from hetlab.devices.group import UnitSpec
from hetlab.errors import HetlabError
from hetlab.graph.ir import OpGraph
from hetlab.schedulers.plan import Plan


def check_plan(graph: OpGraph, plan: Plan, devices: Sequence[str]) -> None:
    """Refuse a plan that does not match the model: unknown or missing nodes, unknown devices,
    an order that is not topological. One line, before anything runs."""
    device_of = plan.device_of
    # a plan names the nodes of the graph folded (or not) as its profile's was (spec §1)
    other = "with --no-fold" if graph.fold_summary()["enabled"] else "without --no-fold"
    unknown = [v for v in device_of if v not in graph]
    if unknown:
        raise HetlabError(
            f"plan names {len(unknown)} node(s) not in model {graph.name!r} "
            f"(first: {unknown[0]!r}); was the plan made for another model, or for this "
            f"one loaded {other}?"
        )
    missing = [n.id for n in graph.nodes if n.id not in device_of]
    if missing:
        raise HetlabError(
            f"plan leaves {len(missing)} node(s) of model {graph.name!r} without a "
            f"device (first: {missing[0]!r}); re-run the scheduler on this model (a profile "
            f"of it loaded {other} has other nodes)"
        )
    bad = sorted({d for d in device_of.values() if d not in devices})
    if bad:
        raise HetlabError(
            f"plan uses unknown device {bad[0]!r} (devices here: {', '.join(devices)}); "
            "use --platform to name the devices as the plan does"
        )
    pos = {v: i for i, v in enumerate(plan.order)}
    for e in graph.edges:
        if pos[e.src] > pos[e.dst]:
            raise HetlabError(f"plan order runs {e.dst!r} before its predecessor {e.src!r}")


def build_units(graph: OpGraph, plan: Plan) -> list[UnitSpec]:
    """Split ``plan``'s placement into units (see module doc), in the plan's order (which
    ``check_plan`` holds to be topological). Units are numbered in global order of their
    first node.

    A node with an input from another device joins the open unit only if that input's unit
    is one the open unit already waits for; otherwise it starts a unit. A unit closes after
    a node whose output another device reads, unless each such reader also waits for a later
    node of this device (then closing early would not let the reader start any sooner)."""
    device_of, order = plan.device_of, plan.order
    pos = {v: i for i, v in enumerate(order)}
    close_after: set[str] = set()
    for v in order:
        d = device_of[v]
        for w in graph.succs(v):
            if device_of[w] != d and not any(
                device_of[p] == d and pos[p] > pos[v] for p in graph.preds(w)
            ):
                close_after.add(v)
                break
    open_unit: dict[str, UnitSpec] = {}  # device -> unit still accepting nodes
    units: list[UnitSpec] = []
    unit_of: dict[str, int] = {}
    seq: dict[str, int] = {}
    for v in order:
        d = device_of[v]
        deps = {unit_of[p] for p in graph.preds(v) if device_of[p] != d}
        u = open_unit.get(d)
        if u is None or not deps <= set(u.deps):
            u = UnitSpec(index=len(units), device=d, nodes=[], seq=seq.get(d, 0), deps=sorted(deps))
            seq[d] = u.seq + 1
            units.append(u)
            open_unit[d] = u
        u.nodes.append(v)
        unit_of[v] = u.index
        if v in close_after:
            open_unit.pop(d, None)
    return units


HOST = "host"


class RunError(HetlabError):
    """A unit failed during a run (not a bad input): names the unit, its device and nodes."""

    exit_code = 1


@dataclass
class Routes:
    """Where each unit's inputs come from and where its outputs go, per unit index:
    ``recv`` the tensors it receives from another device (or the host), ``publish`` those it
    sends to the host, ``free_after`` those whose last use on its device it is; ``producer``
    maps a tensor to the unit that makes it, ``fixed_in`` a tensor a kernel device reads from
    the host to its first reader there (``fixed_inputs``)."""

    producer: dict[str, int]
    recv: list[list[str]]
    publish: list[list[str]]
    free_after: list[list[str]]
    fixed_in: dict[str, int]


def route(
    graph: OpGraph, specs: Sequence[UnitSpec], units: Sequence[Any], devices: Mapping[str, Any]
) -> Routes:
    """The prepared ``units``' routes (``Routes``): a tensor that changes device goes to the
    host once, from its producer, and into each receiving device once, by its first reader
    there. One line where a unit reads what no unit makes nor the model feeds."""
    producer: dict[str, int] = {}
    for s, u in zip(specs, units, strict=False):
        for t in u.outputs:
            producer[t] = s.index
    n = len(specs)
    recv: list[list[str]] = [[] for _ in range(n)]
    publish: list[list[str]] = [[] for _ in range(n)]
    free_after: list[list[str]] = [[] for _ in range(n)]
    have: dict[tuple[str, str], int] = {}  # (device, tensor) -> unit that brought/made it
    last: dict[tuple[str, str], int] = {}
    published: set[str] = set()
    for s, u in zip(specs, units, strict=False):
        for t in u.inputs:
            p = producer.get(t)
            if p is None and t not in graph.inputs:  # devices hold their own weights (Unit doc)
                what = (
                    "a constant the device should hold" if t in graph.consts else "no unit's output"
                )
                raise RunError(
                    f"{s.label} reads {t!r} as an input: it is {what} and no model input"
                )
            src = HOST if p is None else specs[p].device
            if src != s.device and (s.device, t) not in have:
                recv[s.index].append(t)
                have[s.device, t] = s.index
                if p is not None and t not in published:
                    publish[p].append(t)
                    published.add(t)
            last[s.device, t] = s.index
        for t in u.outputs:
            have[s.device, t] = s.index
            last.setdefault((s.device, t), s.index)
            if t in graph.outputs and t not in published:
                publish[s.index].append(t)
                published.add(t)
    missing = [t for t in graph.outputs if t not in published]
    if missing:
        raise RunError(f"no unit produces model output {missing[0]!r}")
    for (_d, t), i in last.items():
        free_after[i].append(t)
    kernel = {d for d, dev in devices.items() if is_accelerator(dev)}
    return Routes(producer, recv, publish, free_after, fixed_inputs(specs, units, producer, kernel))


def fixed_inputs(
    specs: Sequence[UnitSpec], units: Sequence[Any], producer: Mapping[str, int], kernel: set[str]
) -> dict[str, int]:
    """Each tensor the host hands to a device of ``kernel`` (a model input, or another
    device's output) -> the first unit there that reads it. Kernel units are built for the
    graph's shapes; ``check_fixed`` holds each such tensor to them at run time."""
    out: dict[str, int] = {}
    for s, u in zip(specs, units, strict=False):
        if s.device not in kernel:
            continue
        for t in u.inputs:
            p = producer.get(t)
            if p is None or specs[p].device not in kernel:
                out.setdefault(t, s.index)
    return out


def check_fixed(
    graph: OpGraph, specs: Sequence[UnitSpec], fixed_in: Mapping[str, int], tensor: str, value: Any
) -> None:
    """One line, where ``value`` has another shape than the kernel unit reading ``tensor``
    (``fixed_inputs``) was built for: its shape followed input values the graph's did not."""
    i = fixed_in.get(tensor)
    info = graph.tensors.get(tensor)
    if i is None or info is None or info.shape is None:
        return
    got = tuple(getattr(value, "shape", ()))
    if got != tuple(info.shape):
        raise HetlabError(
            f"{specs[i].label} was built for {tensor!r} of shape {list(info.shape)}, but this "
            f"run gives it shape {list(got)}: its shape depends on the input values, and "
            "kernel devices run the shapes they were built for; place the nodes that read it "
            "on a CPU device"
        )
