"""Collapse a DAG to its ONNX name scopes: one node per scope prefix, up to a depth.

``/cell_6/comb_iter_0_left/bn_sep_2/BatchNormalization`` is in scope ``cell_6`` at depth 1
and ``cell_6/comb_iter_0_left`` at depth 2; a node without a scope stays itself. Scopes that
feed each other both ways (a cycle once collapsed) are merged into one node, so the result is
a DAG that ``dag_layout`` and ``dag_figure`` draw like any other.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hetlab.errors import HetlabError


@dataclass
class ScopeNode:
    id: str
    op_type: str  # a summary such as "41 ops: Conv×14, Relu×9, …"
    members: list[str]
    flops: int = 0


@dataclass
class ScopeGraph:
    """A collapsed DAG: ``nodes``, ``edges`` as (src, dst) scope ids, and with a problem, the
    ``devices`` and ``costs`` ([node, device] summed over members, inf where one cannot run)."""

    name: str
    nodes: list[ScopeNode]
    edges: list[tuple[str, str]]
    devices: list[str] = field(default_factory=list)
    costs: np.ndarray | None = None
    is_scope_graph: bool = True

    @property
    def scope_of(self) -> dict[str, str]:
        return {m: n.id for n in self.nodes for m in n.members}


def scope_of(name: str, depth: int) -> str:
    """The first ``depth`` components of ``name``'s scope (its path without the last part)."""
    parts = [p for p in name.split("/") if p]
    if len(parts) <= 1:
        return name
    return "/".join(parts[: min(depth, len(parts) - 1)])


def _summary(ops: list[str]) -> str:
    top = Counter(ops).most_common(3)
    more = ", …" if len(Counter(ops)) > 3 else ""
    return f"{len(ops)} ops: " + ", ".join(f"{o}×{c}" for o, c in top) + more


def _merge_cycles(names: list[str], pairs: set[tuple[int, int]]) -> list[int]:
    """The strongly connected component of each scope (igraph), as a component index."""
    # lazy: igraph is optional and slow to import
    import igraph

    g = igraph.Graph(n=len(names), edges=sorted(pairs), directed=True)
    return list(g.connected_components(mode="strong").membership)


def collapse_scopes(obj: Any, depth: int = 1, problem: Any = None) -> ScopeGraph:
    """``obj`` (OpGraph or Problem) with each name scope cut at ``depth`` made one node.

    ``problem`` (or ``obj`` itself when it is a Problem) gives each scope the sum of its
    members' costs per device, for hover and ``cost:`` colouring."""
    if not isinstance(depth, int) or depth < 1:
        raise HetlabError(f"collapse depth must be a whole number >= 1, not {depth!r}")
    nodes = list(obj.nodes)
    key = [scope_of(n.id, depth) for n in nodes]
    names = list(dict.fromkeys(key))
    sid = {s: i for i, s in enumerate(names)}
    pairs = {
        (sid[key_of], sid[key_to]) for key_of, key_to in _edge_keys(obj, key) if key_of != key_to
    }
    comp = _merge_cycles(names, pairs)
    groups: dict[int, list[int]] = {}
    for i in range(len(nodes)):
        groups.setdefault(comp[sid[key[i]]], []).append(i)
    label: dict[int, str] = {}
    out_nodes = []
    for c, members in groups.items():
        scopes = list(dict.fromkeys(key[i] for i in members))
        label[c] = " + ".join(scopes) if len(scopes) <= 3 else f"{scopes[0]} + {len(scopes) - 1}"
        ops = [getattr(nodes[i], "op_type", None) or "?" for i in members]
        flops = sum(int(getattr(nodes[i], "flops", 0) or 0) for i in members)
        out_nodes.append(ScopeNode(label[c], _summary(ops), [nodes[i].id for i in members], flops))
    edges = sorted({(label[comp[a]], label[comp[b]]) for a, b in pairs if comp[a] != comp[b]})
    sg = ScopeGraph(f"{getattr(obj, 'name', '')} by scope (depth {depth})", out_nodes, edges)
    problem = problem if problem is not None else (obj if hasattr(obj, "cost_matrix") else None)
    if problem is not None:
        _add_costs(sg, problem)
    return sg


def _edge_keys(obj: Any, key: list[str]):
    idx = {n.id: i for i, n in enumerate(obj.nodes)}
    for e in obj.edges:
        yield key[idx[e.src]], key[idx[e.dst]]


def _add_costs(sg: ScopeGraph, problem: Any) -> None:
    cm = problem.cost_matrix
    pidx = problem.index
    sg.devices = list(problem.devices)
    sg.costs = np.zeros((len(sg.nodes), len(sg.devices)))
    for i, n in enumerate(sg.nodes):
        rows = [pidx[m] for m in n.members if m in pidx]
        sg.costs[i] = cm[rows].sum(axis=0) if rows else math.inf
