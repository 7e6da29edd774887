"""The layered layout of a DAG (an ``OpGraph``, a ``Problem`` or a ``ScopeGraph``), cached.

Layers: the layering of least total edge span (Gansner et al.'s, as a linear programme that
HiGHS solves; its constraint matrix is a graph's incidence matrix, so the optimum is
integral), within as many layers as the longest path has nodes. Order and placement inside a
layer: igraph's Sugiyama layout (barycentre crossing reduction, dummy nodes routing long
edges), then one sweep that keeps every two items of a layer at least one slot apart.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hetlab.errors import HetlabError
from hetlab.graph.levels import index_levels
from hetlab.schedulers.highs import THREADS, without_banner


@dataclass
class DagLayout:
    """Plain arrays for drawing: node ``ids``/``op_types``, ``level`` per node (HOPE eq. 8),
    ``x`` (the layer, left to right) and ``y`` (the slot inside the layer), edges as index
    pairs ``src``/``dst``, and ``ex``/``ey``: every edge as a polyline through its dummy
    nodes, each followed by ``None`` (one trace draws them all)."""

    ids: list[str]
    op_types: list[str]
    level: np.ndarray
    x: np.ndarray
    y: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    shapes: list[str]
    flops: list[int]
    ex: list[float | None] = field(default_factory=list)
    ey: list[float | None] = field(default_factory=list)

    @property
    def index(self) -> dict[str, int]:
        return {v: i for i, v in enumerate(self.ids)}

    @property
    def size(self) -> tuple[int, int]:
        """(columns, rows): layers, and slots spanned by the widest layer, dummies included."""
        ys = [v for v in self.ey if v is not None] + self.y.tolist()
        cols = int(self.x.max(initial=0)) + 1 if len(self.ids) else 0
        return cols, round(max(ys, default=0) - min(ys, default=0)) + 1

    def long_edges(self, span: int = 3) -> int:
        """How many edges span more than ``span`` layers."""
        return int(((self.x[self.dst] - self.x[self.src]) > span).sum())


def is_problem(obj: Any) -> bool:
    return hasattr(obj, "cost_matrix") and hasattr(obj, "devices")


def _extract(obj: Any) -> tuple[list[str], list[str], list[tuple[int, int]], list[str], list[int]]:
    if getattr(obj, "is_scope_graph", False):
        idx = {n.id: i for i, n in enumerate(obj.nodes)}
        edges = [(idx[s], idx[d]) for s, d in obj.edges]
        ops = [n.op_type for n in obj.nodes]
        return [n.id for n in obj.nodes], ops, edges, [""] * len(ops), [n.flops for n in obj.nodes]
    if is_problem(obj):
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


def levels(n: int, edges: list[tuple[int, int]]) -> np.ndarray:
    """HOPE's level of every node (``graph/levels.py``); raises ``HetlabError`` on a cycle."""
    return np.array(index_levels(n, edges), dtype=int)


def min_span_layers(n: int, edges: list[tuple[int, int]], level: np.ndarray) -> np.ndarray:
    """Layers 0.. of least total edge span, no more of them than the longest path has nodes.
    Falls back to ``level - 1`` (sources first) when the solver is missing or fails."""
    fallback = (level - 1).astype(int)
    if not edges:
        return fallback
    try:
        # lazy: highspy is optional and slow to import
        import highspy
    except ImportError:
        return fallback
    without_banner()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", THREADS)  # the process's one HiGHS thread pool (highs.py)
    cost = np.zeros(n)
    for s, d in edges:
        cost[d] += 1.0
        cost[s] -= 1.0
    top = float(level.max() - 1)
    h.addCols(n, cost, np.zeros(n), np.full(n, top), 0, [], [], [])
    m = len(edges)
    cols = np.array([v for e in edges for v in (e[1], e[0])], dtype=np.int32)
    vals = np.tile([1.0, -1.0], m)
    starts = np.arange(0, 2 * m, 2, dtype=np.int32)
    h.addRows(m, np.ones(m), np.full(m, highspy.kHighsInf), 2 * m, starts, cols, vals)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return fallback
    lay = np.rint(np.asarray(h.getSolution().col_value)).astype(int)
    lay -= lay.min(initial=0)
    if any(lay[d] - lay[s] < 1 for s, d in edges):
        return fallback
    return lay


def _separate(items: list[tuple[int, float, int]]) -> dict[int, float]:
    """``items``: (layer, position, key). Keeps each layer's order and moves items apart so
    that two items of one layer are at least one slot apart, then recentres each layer."""
    by: dict[int, list[tuple[float, int]]] = {}
    for layer, pos, key in items:
        by.setdefault(layer, []).append((pos, key))
    out: dict[int, float] = {}
    for members in by.values():
        members.sort()
        want = np.array([p for p, _ in members])
        got = want.copy()
        for i in range(1, len(got)):
            got[i] = max(got[i], got[i - 1] + 1.0)
        got -= np.mean(got - want)
        out.update({k: float(v) for (_, k), v in zip(members, got, strict=True)})
    return out


def _place(n: int, edges: list[tuple[int, int]], layer: np.ndarray):
    """igraph's Sugiyama placement for the given layers: node slots and edge polylines."""
    # lazy: igraph is optional and slow to import
    import igraph

    g = igraph.Graph(n=n, edges=edges, directed=True)
    lay = g.layout_sugiyama(layers=layer.tolist(), maxiter=100)
    coords = np.asarray(lay.coords, dtype=float).reshape(-1, 2)
    routes = [np.asarray(r, dtype=float).reshape(-1, 2) for r in lay.edge_routing]
    items = [(int(layer[v]), float(coords[v, 0]), v) for v in range(n)]
    keys: list[tuple[int, int]] = []
    for k, r in enumerate(routes):
        for j, (px, py) in enumerate(r):
            items.append((round(py), float(px), n + len(keys)))
            keys.append((k, j))
    pos = _separate(items)
    y = np.array([pos[v] for v in range(n)])
    ex: list[float | None] = []
    ey: list[float | None] = []
    bends: dict[int, list[tuple[float, float]]] = {}
    for i, (k, j) in enumerate(keys):
        bends.setdefault(k, []).append((float(routes[k][j, 1]), pos[n + i]))
    for k, (s, d) in enumerate(edges):
        pts = [(float(layer[s]), y[s]), *bends.get(k, []), (float(layer[d]), y[d])]
        ex += [p[0] for p in pts] + [None]
        ey += [float(p[1]) for p in pts] + [None]
    return y, ex, ey


def dag_layout(obj: Any) -> DagLayout:
    """The layout of ``obj`` (OpGraph, Problem or ScopeGraph), computed once and cached."""
    key = (len(obj.nodes), len(obj.edges))
    cached = getattr(obj, "_hetlab_layout", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    ids, ops, edges, shapes, flops = _extract(obj)
    n = len(ids)
    level = levels(n, edges)
    layer = min_span_layers(n, edges, level)
    y, ex, ey = _place(n, edges, layer) if n else (np.zeros(0), [], [])
    src = np.array([s for s, _ in edges], dtype=int)
    dst = np.array([d for _, d in edges], dtype=int)
    lay = DagLayout(ids, ops, level, layer.astype(float), y, src, dst, shapes, flops, ex, ey)
    with contextlib.suppress(AttributeError, TypeError):
        object.__setattr__(obj, "_hetlab_layout", (key, lay))
    return lay
