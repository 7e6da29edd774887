"""What spec §6 calls a bad problem, found: each finding is one ``HetlabError`` line naming
the source, the part and what is wrong with it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

from hetlab.cost.problem_parts import Group, Link, PEdge, PNode
from hetlab.errors import HetlabError


class Problem(Protocol):
    """The parts of a problem (``problem.Problem``) that the checks read; a protocol, so
    the problem's module can call the checks without the two importing each other."""

    devices: Sequence[str]
    nodes: Sequence[PNode]
    edges: Sequence[PEdge]
    comm: dict[str, Link]
    groups: Sequence[Group]

    @property
    def topo(self) -> list[int]: ...


def check(problem: Problem, source: str = "problem") -> None:
    """Raise ``HetlabError`` for anything spec §6 calls a bad problem."""
    if not problem.devices:
        raise HetlabError(f"{source}: the problem lists no devices")
    if len(set(problem.devices)) != len(problem.devices):
        raise HetlabError(f"{source}: duplicate device names in {problem.devices}")
    ids = [n.id for n in problem.nodes]
    if len(set(ids)) != len(ids):
        raise HetlabError(f"{source}: duplicate node ids")
    _check_nodes(problem, source)
    _check_edges(problem, set(ids), source)
    for k, link in problem.comm.items():
        check_cost(link.latency, f"{source}: latency of link {k}", allow_null=False)
        if link.bandwidth is not None and link.bandwidth <= 0:
            raise HetlabError(f"{source}: bandwidth of link {k} must be positive or null")
    _check_groups(problem, set(ids), source)
    try:
        _ = problem.topo  # computing the order is the check
    except ValueError:
        raise HetlabError(f"{source}: the problem graph has a cycle") from None


def _check_nodes(problem: Problem, source: str) -> None:
    dev = set(problem.devices)
    for n in problem.nodes:
        for d, c in n.cost.items():
            if d not in dev:
                raise HetlabError(f"{source}: node {n.id!r} has a cost for unknown device {d!r}")
            check_cost(c, f"{source}: node {n.id!r} on {d!r}")
        if all(n.cost.get(d) is None for d in problem.devices):
            raise HetlabError(
                f"{source}: node {n.id!r} ({n.op_type or '?'}) has no device that can run it"
            )


def _check_edges(problem: Problem, idset: set[str], source: str) -> None:
    seen: set[tuple[str, str]] = set()
    for e in problem.edges:
        for end in (e.src, e.dst):
            if end not in idset:
                raise HetlabError(f"{source}: edge {e.src} -> {e.dst} names unknown node {end!r}")
        if (e.src, e.dst) in seen:
            raise HetlabError(f"{source}: duplicate edge {e.src} -> {e.dst}")
        seen.add((e.src, e.dst))
        if e.bytes < 0 or not math.isfinite(e.bytes):
            raise HetlabError(f"{source}: edge {e.src} -> {e.dst} has invalid bytes {e.bytes}")
        for k, v in e.comm.items():
            check_cost(v, f"{source}: comm {k} of edge {e.src} -> {e.dst}", allow_null=False)


def _check_groups(problem: Problem, idset: set[str], source: str) -> None:
    dev = set(problem.devices)
    for g in problem.groups:
        for v in g.nodes:
            if v not in idset:
                raise HetlabError(f"{source}: group {g.nodes} names unknown node {v!r}")
        for d, c in g.cost.items():
            if d not in dev:
                raise HetlabError(f"{source}: group {g.nodes} has a cost for unknown device {d!r}")
            check_cost(c, f"{source}: group {g.nodes} on {d!r}")


def check_cost(c: Any, where: str, allow_null: bool = True) -> None:
    """A cost is a finite non-negative number (or ``None``, "cannot run", where allowed)."""
    if c is None and allow_null:
        return
    if isinstance(c, bool) or not isinstance(c, (int, float)):
        raise HetlabError(
            f"{where}: cost must be a number{' or null' if allow_null else ''}, got {c!r}"
        )
    if not math.isfinite(c) or c < 0:
        raise HetlabError(f"{where}: cost must be a finite non-negative number, got {c!r}")
