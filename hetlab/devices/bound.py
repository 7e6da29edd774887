"""A plan bound to a model and the devices it runs on: one value, checked once.

``binding.bind(plan, graph, devices)`` makes a ``BoundPlan`` at the edge (the command line,
``hetlab.run``): the placement, the global and per-device orders, the fused units and the
executor's dispatches (``UnitSpec``, ``build_units``), after the plan has been checked
against the model (``check_plan``) and the devices. Everything below the edge (the executor,
its workers, the device runners) takes this value and works nothing of it out again.

It sits in ``devices/`` below the device interface, since the runners a device offers read
it, and it reads a device only through its name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hetlab.errors import HetlabError
from hetlab.graph.ir import OpGraph
from hetlab.schedulers.plan import Plan


@dataclass(frozen=True)
class UnitSpec:
    """One dispatch of the executor: ``index`` its position in the global order, ``seq``
    its position on its device, ``deps`` the units on other devices it waits for."""

    index: int
    device: str
    nodes: tuple[str, ...]
    seq: int = 0
    deps: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "nodes", tuple(self.nodes))
        object.__setattr__(self, "deps", tuple(self.deps))

    @property
    def label(self) -> str:
        first, last = self.nodes[0], self.nodes[-1]
        span = first if first == last else f"{first}..{last} ({len(self.nodes)} nodes)"
        return f"unit {self.index} on {self.device} [{span}]"


@dataclass(frozen=True, eq=False)
class BoundPlan:
    """A plan checked against ``graph`` and ``devices`` (``binding.bind``); immutable.

    ``device_of`` and ``order`` are the placement and the plan's global (topological) order;
    ``device_order`` each device's part of it; ``fused`` the node groups that run as one
    kernel; ``units`` the executor's dispatches in global order; ``makespan`` the plan's own
    spec §3 time, None for an untimed plan (a mapping, a device name, ``Plan.of``).
    ``plan`` is the ``Plan`` it was made from (for its ``extra``); ``algo`` its algorithm,
    None where the caller gave a mapping or a device name; ``by_device`` that name."""

    graph: OpGraph
    devices: Mapping[str, Any]  # name -> Device, read only
    plan: Plan
    device_of: Mapping[str, str]
    order: tuple[str, ...]
    sequential: bool
    fused: tuple[tuple[str, ...], ...]
    units: tuple[UnitSpec, ...]
    device_order: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    makespan: float | None = None
    algo: str | None = None
    by_device: str | None = None

    def used(self) -> list[str]:
        """The devices of ``devices`` that run a unit, in ``devices``' order."""
        return [d for d in self.devices if d in self.device_order]


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


def build_units(graph: OpGraph, plan: Plan | BoundPlan) -> list[UnitSpec]:
    """Split ``plan``'s placement into units, in the plan's order (which ``check_plan`` holds
    to be topological), numbered in global order of their first node.

    A unit is a run of consecutive nodes in one device's order that waits for other devices
    only before it starts (every input from another device comes from a unit it waits for)
    and holds back no tensor another device could use sooner; since the global order is
    topological, the unit graph is acyclic. A node with an input from another device joins
    the open unit only if that input's unit is one the open unit already waits for; otherwise
    it starts a unit. A unit closes after a node whose output another device reads, unless
    each such reader also waits for a later node of this device (then closing early would not
    let the reader start any sooner)."""
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
    open_unit: dict[str, int] = {}  # device -> unit still accepting nodes
    units: list[tuple[str, list[str], int, list[int]]] = []  # device, nodes, seq, deps
    unit_of: dict[str, int] = {}
    seq: dict[str, int] = {}
    for v in order:
        d = device_of[v]
        deps = {unit_of[p] for p in graph.preds(v) if device_of[p] != d}
        u = open_unit.get(d)
        if u is None or not deps <= set(units[u][3]):
            u = open_unit[d] = len(units)
            units.append((d, [], seq.get(d, 0), sorted(deps)))
            seq[d] = units[u][2] + 1
        units[u][1].append(v)
        unit_of[v] = u
        if v in close_after:
            open_unit.pop(d, None)
    return [UnitSpec(i, d, tuple(ns), s, tuple(ds)) for i, (d, ns, s, ds) in enumerate(units)]
