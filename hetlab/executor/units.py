"""Plan -> units: the dispatches the executor makes.

A unit is a run of consecutive nodes in one device's order that waits for other devices
only before it starts (every input from another device comes from a unit it waits for) and
holds back no tensor another device could use sooner. Each device's order is the plan's global order restricted to
that device; because the global order is topological, the unit graph is acyclic.
``UnitSpec`` is defined with the group runners that run units too (``devices/group.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hetlab.devices.group import UnitSpec
from hetlab.errors import HetlabError
from hetlab.graph.ir import OpGraph


def check_plan(
    graph: OpGraph,
    device_of: Mapping[str, str],
    devices: Sequence[str],
    order: Sequence[str] | None = None,
) -> None:
    """Refuse a plan that does not match the model: unknown or missing nodes, unknown devices,
    an order that is not topological. One line, before anything runs."""
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
    if order is not None:
        if len(order) != len(graph.nodes) or set(order) != set(device_of):
            raise HetlabError("plan order must list every node of the model exactly once")
        pos = {v: i for i, v in enumerate(order)}
        for e in graph.edges:
            if pos[e.src] > pos[e.dst]:
                raise HetlabError(f"plan order runs {e.dst!r} before its predecessor {e.src!r}")


def build_units(
    graph: OpGraph, device_of: Mapping[str, str], order: Sequence[str] | None = None
) -> list[UnitSpec]:
    """Split a placement into units (see module doc). ``order`` defaults to the graph's
    topological order. Units are numbered in global order of their first node.

    A node with an input from another device joins the open unit only if that input's unit
    is one the open unit already waits for; otherwise it starts a unit. A unit closes after
    a node whose output another device reads, unless each such reader also waits for a later
    node of this device (then closing early would not let the reader start any sooner)."""
    order = list(order) if order is not None else graph.topo_order()
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


def single_device_placement(graph: OpGraph, device: str, fallback: str, supports) -> dict[str, str]:
    """``--device NAME``: every node ``supports(node)`` accepts on ``device``, the rest on
    ``fallback`` (the first CPU device)."""
    return {n.id: device if supports(n) else fallback for n in graph.nodes}
