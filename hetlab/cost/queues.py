"""A device's queues as devices of the problem, and a problem restricted to some devices.

One OpenCL device can be driven through several in-order queues of one context (``cl0``,
``cl0.q1``, ...; ``devices/platform.py``). To the schedulers each queue is a device: a node
costs on a queue what it costs on the device, times ``slowdown`` on every queue but the
first (kernels running at once share the device), and a tensor passing between two queues
of one context moves no bytes: the link costs only ``latency``, an event wait between
queues. Every other link of a queue is its device's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hetlab.cost.problem import Group, Link, Problem
from hetlab.errors import HetlabError


def queue_names(device: str, queues: int) -> list[str]:
    """The names of ``device``'s queues: the device itself, then ``<device>.q1``..."""
    return [device] + [f"{device}.q{k}" for k in range(1, queues)]


def queues_pay(slowdown: float, queues: int, min_gain: float = 1.5) -> bool:
    """Whether ``queues`` queues of a device run more work than one: ``slowdown`` is how much
    longer one copy of the model takes beside copies on the others (``model_slowdown``), so
    ``queues / slowdown`` copies finish in the time of one alone. Copies of a whole model
    overlap better than a plan's branches do (no dependencies between them), so the queues
    must run ``min_gain`` times the work of one before a plan is offered them."""
    return queues / max(slowdown, 1.0) >= min_gain


def with_queues(
    problem: Problem,
    views: Mapping[str, Sequence[str]],
    latency: float = 0.0,
    slowdown: float = 1.0,
) -> Problem:
    """``problem`` with each device ``d`` of ``views`` joined by its queue views
    ``views[d]`` (see the module doc). ``problem.extra["queues"]`` records what was added."""
    if slowdown < 1.0 or latency < 0.0:
        raise HetlabError("queue slowdown must be at least 1 and latency at least 0")
    out = problem.copy()
    parent_of = {v: d for d, vs in views.items() for v in vs}
    for d, vs in views.items():
        if d not in problem.devices:
            raise HetlabError(f"cannot add queues to {d!r}: the problem has no such device")
        clash = [v for v in vs if v in problem.devices]
        if clash:
            raise HetlabError(f"the problem already has a device named {clash[0]!r}")
    devices: list[str] = []
    for d in problem.devices:
        devices += [d, *views.get(d, ())]
    out.devices = devices

    def scaled(c: float | None) -> float | None:
        return None if c is None else c * slowdown

    for node in out.nodes:
        for v, d in parent_of.items():
            node.cost[v] = scaled(node.cost.get(d))
    out.groups = [
        Group(g.nodes, {**g.cost, **{v: scaled(g.cost.get(d)) for v, d in parent_of.items()}})
        for g in out.groups
    ]
    out.comm = _links(problem, views, latency)
    for e in out.edges:
        e.comm = _edge_comm(e.comm, views, latency)
    out.extra["queues"] = {
        d: {"views": list(vs), "latency": latency, "slowdown": slowdown} for d, vs in views.items()
    }
    return out


def _family(views: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Queue name -> the device whose links it shares (the device itself included)."""
    fam = {d: d for d in views}
    fam.update({v: d for d, vs in views.items() for v in vs})
    return fam


def _links(problem: Problem, views: Mapping[str, Sequence[str]], latency: float) -> dict[str, Link]:
    fam = _family(views)
    names = [*problem.devices, *fam]
    links = dict(problem.comm)
    for a in names:
        for b in names:
            if a == b or (a in problem.devices and b in problem.devices):
                continue
            fa, fb = fam.get(a, a), fam.get(b, b)
            if fa == fb:
                links[f"{a}->{b}"] = Link(latency, None)
                continue
            base = problem.comm.get(f"{fa}->{fb}") or problem.comm.get("default")
            if base is not None:
                links[f"{a}->{b}"] = Link(base.latency, base.bandwidth)
    for d in views:  # the device and its own queues: an event, no bytes
        for v in views[d]:
            links[f"{d}->{v}"] = links[f"{v}->{d}"] = Link(latency, None)
    return links


def _edge_comm(
    comm: dict[str, float], views: Mapping[str, Sequence[str]], latency: float
) -> dict[str, float]:
    if not comm:
        return comm
    fam = _family(views)
    out = dict(comm)
    for key, value in comm.items():
        a, _, b = key.partition("->")
        for qa in [a] + [q for q, f in fam.items() if f == a and q != a]:
            for qb in [b] + [q for q, f in fam.items() if f == b and q != b]:
                out.setdefault(f"{qa}->{qb}", value)
    for q, f in fam.items():
        for r, g in fam.items():
            if q != r and f == g:
                out[f"{q}->{r}"] = latency
    return out


def only_devices(problem: Problem, keep: Sequence[str]) -> Problem:
    """``problem`` restricted to the devices ``keep`` (in the problem's order); a node none
    of them can run is an error."""
    unknown = [d for d in keep if d not in problem.devices]
    if unknown:
        raise HetlabError(f"the problem has no device {unknown[0]!r}")
    out = problem.copy()
    out.devices = [d for d in problem.devices if d in keep]
    for node in out.nodes:
        node.cost = {d: c for d, c in node.cost.items() if d in keep}
        if all(c is None for c in node.cost.values()):
            raise HetlabError(f"node {node.id!r} has no cost on {', '.join(keep)}")
    out.groups = [
        Group(g.nodes, {d: c for d, c in g.cost.items() if d in keep}) for g in out.groups
    ]
    out.comm = {
        k: v
        for k, v in problem.comm.items()
        if k == "default" or all(x in keep for x in k.split("->"))
    }
    for e in out.edges:
        e.comm = {k: v for k, v in e.comm.items() if all(x in keep for x in k.split("->"))}
    return out
