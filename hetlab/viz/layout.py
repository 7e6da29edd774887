"""The layered layout of a DAG (an ``OpGraph`` or a ``Problem``) by upward rank, cached.

Columns are upward ranks (HOPE eq. 8); inside a column nodes are ordered by the barycentre
of their predecessors' rows (one downward sweep), which keeps most edges short.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetlab.errors import HetlabError


@dataclass
class DagLayout:
    """Plain arrays for drawing: node ``ids``/``op_types``, ``uprank`` per node, ``x``/``y``
    positions, and edges as index pairs ``src``/``dst``."""

    ids: list[str]
    op_types: list[str]
    uprank: np.ndarray
    x: np.ndarray
    y: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    shapes: list[str]
    flops: list[int]

    @property
    def index(self) -> dict[str, int]:
        return {v: i for i, v in enumerate(self.ids)}


def _is_problem(obj: Any) -> bool:
    return hasattr(obj, "cost_matrix") and hasattr(obj, "devices")


def _extract(obj: Any) -> tuple[list[str], list[str], list[tuple[int, int]], list[str], list[int]]:
    if _is_problem(obj):
        ids = [n.id for n in obj.nodes]
        ops = [n.op_type or "?" for n in obj.nodes]
        idx = obj.index
        edges = [(idx[e.src], idx[e.dst]) for e in obj.edges]
        shapes = [""] * len(ids)
        for e in obj.edges:  # HOPE profiles carry the tensor shape on the edge
            s = e.extra.get("shape")
            if s and not shapes[idx[e.src]]:
                shapes[idx[e.src]] = str(s).replace(",", "x")
        return ids, ops, edges, shapes, [0] * len(ids)
    if hasattr(obj, "nodes") and hasattr(obj, "edges") and hasattr(obj, "tensors"):
        ids = [n.id for n in obj.nodes]
        idx = {v: i for i, v in enumerate(ids)}
        edges = [(idx[e.src], idx[e.dst]) for e in obj.edges]
        shapes = []
        for n in obj.nodes:
            parts = []
            for t in n.outputs:
                tt = obj.tensors.get(t)
                if tt is not None and tt.shape is not None:
                    parts.append("x".join(str(d) for d in tt.shape) or "scalar")
            shapes.append(", ".join(parts))
        return ids, [n.op_type for n in obj.nodes], edges, shapes, [int(n.flops) for n in obj.nodes]
    raise HetlabError(f"cannot draw a {type(obj).__name__}: pass an OpGraph or a Problem")


def upranks(n: int, edges: list[tuple[int, int]]) -> np.ndarray:
    """Upward rank of every node (1 for a source); raises ``HetlabError`` on a cycle."""
    preds: list[list[int]] = [[] for _ in range(n)]
    succs: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for s, d in edges:
        preds[d].append(s)
        succs[s].append(d)
        indeg[d] += 1
    rank = np.ones(n, dtype=int)
    ready = [i for i in range(n) if indeg[i] == 0]
    seen = 0
    while ready:
        v = ready.pop()
        seen += 1
        for w in succs[v]:
            rank[w] = max(rank[w], rank[v] + 1)
            indeg[w] -= 1
            if indeg[w] == 0:
                ready.append(w)
    if seen != n:
        raise HetlabError("the graph has a cycle; it cannot be drawn in layers")
    return rank


def dag_layout(obj: Any) -> DagLayout:
    """The layout of ``obj`` (OpGraph or Problem), computed once and cached on the object."""
    key = (len(obj.nodes), len(obj.edges))
    cached = getattr(obj, "_hetlab_layout", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    ids, ops, edges, shapes, flops = _extract(obj)
    n = len(ids)
    rank = upranks(n, edges)
    preds: list[list[int]] = [[] for _ in range(n)]
    for s, d in edges:
        preds[d].append(s)
    y = np.zeros(n)
    layers: dict[int, list[int]] = {}
    for i in range(n):
        layers.setdefault(int(rank[i]), []).append(i)
    for r in sorted(layers):
        members = layers[r]
        keys = []
        for pos, v in enumerate(members):
            ps = preds[v]
            keys.append((float(np.mean([y[p] for p in ps])) if ps else pos - len(members) / 2, pos))
        order = [members[k] for k in sorted(range(len(members)), key=lambda k: keys[k])]
        for pos, v in enumerate(order):
            y[v] = pos - (len(order) - 1) / 2
    src = np.array([s for s, _ in edges], dtype=int)
    dst = np.array([d for _, d in edges], dtype=int)
    lay = DagLayout(ids, ops, rank, rank.astype(float), y, src, dst, shapes, flops)
    with contextlib.suppress(AttributeError, TypeError):
        object.__setattr__(obj, "_hetlab_layout", (key, lay))
    return lay
