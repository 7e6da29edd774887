"""What ``dag_figure`` draws over the nodes: labels, search matches, a node's neighbours and
the subgraphs of a plan (``plan.extra["subgraphs"]``, a list of lists of node ids)."""

from __future__ import annotations

import difflib
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from hetlab.errors import HetlabError
from hetlab.viz.common import PALETTE, fmt_ms
from hetlab.viz.layout import DagLayout

LABEL_MAX = 40  # graphs with at most this many nodes get a label on every node


def short_name(name: str, width: int = 18) -> str:
    """The last part of an ONNX name, cut to ``width`` characters."""
    tail = [p for p in name.split("/") if p]
    s = tail[-1] if tail else name
    return s if len(s) <= width else s[: width - 1] + "…"


def label_annotations(
    lay: DagLayout,
    costs: tuple[list[str], np.ndarray] | None,
    only: Sequence[int] | None = None,
) -> list[dict]:
    """One annotation under each node (or each of ``only``): its short name, and its costs
    when known."""
    out = []
    for i in range(len(lay.ids)) if only is None else only:
        text = f"<b>{short_name(lay.ids[i])}</b>"
        if costs is not None:
            text += f"<br><span style='font-size:9px'>{_cost_line(costs, i)}</span>"
        out.append(
            {
                "x": float(lay.x[i]),
                "y": float(lay.y[i]),
                "text": text,
                "showarrow": False,
                "yshift": -16,
                "font": {"size": 10},
            }
        )
    return out


def _cost_line(costs: tuple[list[str], np.ndarray], i: int) -> str:
    """Node ``i``'s costs under its label: one per device, "–" where it cannot run."""
    return " | ".join(
        fmt_ms(c).replace(" ms", "") if math.isfinite(c) else "–" for c in costs[1][i]
    )


def label_box(lay: DagLayout, i: int, px: tuple[float, float], costs) -> tuple:
    """The px box (x0, y0, x1, y1) of node ``i``'s label (``label_annotations``) at ``px``
    px per layer and per slot: centred under the node, about 6.5 px a bold 10 px character
    and 5.5 px a 9 px one, 12 px a line."""
    w = 6.5 * len(short_name(lay.ids[i]))
    if costs is not None:
        w = max(w, 5.5 * len(_cost_line(costs, i)))
    w += 6.0
    h = 24.0 if costs is not None else 12.0
    x, y = float(lay.x[i]) * px[0], -float(lay.y[i]) * px[1] + 16.0
    return x - w / 2, y - h / 2, x + w / 2, y + h / 2


def fitting(
    lay: DagLayout, order: Sequence[int], px: tuple[float, float], costs, most: int
) -> list[int]:
    """The nodes of ``order`` (most wanted first) whose labels overlap no label taken
    before them, at ``px`` px per layer and slot; at most ``most``."""
    taken: list[tuple] = []
    out: list[int] = []
    for i in order:
        b = label_box(lay, i, px, costs)
        if all(b[2] <= t[0] or t[2] <= b[0] or b[3] <= t[1] or t[3] <= b[1] for t in taken):
            taken.append(b)
            out.append(i)
            if len(out) >= most:
                break
    return out


def costliest(lay: DagLayout, costs: tuple[list[str], np.ndarray] | None, k: int) -> list[int]:
    """The ``k`` nodes of largest cost on their fastest device (without costs: of most
    flops; none when neither is known)."""
    if k <= 0:
        return []
    if costs is not None:
        cm = np.where(np.isfinite(costs[1]), costs[1], np.inf)
        key = cm.min(axis=1, initial=np.inf)
        key = np.where(np.isfinite(key), key, -1.0)
    elif any(lay.flops):
        key = np.asarray(lay.flops, dtype=float)
    else:
        return []
    order = sorted(range(len(lay.ids)), key=lambda i: (-key[i], i))
    return [i for i in order[:k] if key[i] > 0]


def match_nodes(
    ids: Sequence[str],
    query: str | Sequence[str],
    members: dict[str, list[str]] | None = None,
) -> list[int]:
    """Indices of the nodes whose name contains ``query`` (case-insensitive, surrounding
    blanks ignored; an empty query matches nothing), or that are named in it when it is a
    list. ``members`` (a collapsed graph's scope -> ops) also matches a scope by its ops."""
    if isinstance(query, str):
        q = query.strip().lower()
        if not q:
            return []

        def hit(v: str) -> bool:
            return q in v.lower() or any(q in m.lower() for m in (members or {}).get(v, ()))

        return [i for i, v in enumerate(ids) if hit(v)]
    want = {str(v) for v in query}
    return [
        i
        for i, v in enumerate(ids)
        if v in want or any(m in want for m in (members or {}).get(v, ()))
    ]


def find_node(lay: DagLayout, name: str, members: dict[str, list[str]] | None = None) -> int:
    """The index of node ``name`` (in a collapsed graph, also of the scope holding op
    ``name``); a clear error naming close matches when there is none."""
    name = str(name).strip()
    if name in lay.index:
        return lay.index[name]
    for sid, ms in (members or {}).items():
        if name in ms:
            return lay.index[sid]
    near = difflib.get_close_matches(name, lay.ids, n=3, cutoff=0.5)
    near = near or [lay.ids[i] for i in match_nodes(lay.ids, name, members)[:3]]
    hint = f"; did you mean {', '.join(repr(v) for v in near)}?" if near else ""
    raise HetlabError(f"no node named {name!r} in this graph{hint}")


def _ring(lay: DagLayout, idx: list[int], name: str, color: str, scatter: type, size: int):
    return scatter(
        x=[float(lay.x[i]) for i in idx],
        y=[float(lay.y[i]) for i in idx],
        mode="markers",
        marker={
            "size": size,
            "color": "rgba(0,0,0,0)",
            "line": {"width": 2.5, "color": color},
        },
        text=[lay.ids[i] for i in idx],
        customdata=[lay.ids[i] for i in idx],
        hovertemplate="%{text}<extra>" + name + "</extra>",
        name=name,
        showlegend=False,
    )


def highlight_traces(
    lay: DagLayout, query: Any, scatter: type, members=None
) -> tuple[list, str, list[int]]:
    """A ring around every match of ``query``; the title's note says how many matched; and
    the matches' indices."""
    idx = match_nodes(lay.ids, query, members)
    what = repr(query) if isinstance(query, str) else f"{len(list(query))} name(s)"
    return (
        [_ring(lay, idx, "matches", "#d62728", scatter, 15)],
        f"{len(idx)} match(es) for {what}",
        idx,
    )


def neighbour_traces(
    lay: DagLayout, node: str, scatter: type, members=None
) -> tuple[list, str, list[int]]:
    """``node`` and its direct predecessors and successors ringed, their edges drawn bold;
    the title's note; the indices of the node and its neighbours."""
    v = find_node(lay, node, members)
    ins = [int(k) for k in np.flatnonzero(lay.dst == v)]
    outs = [int(k) for k in np.flatnonzero(lay.src == v)]
    ex: list[float | None] = []
    ey: list[float | None] = []
    for k in ins + outs:
        ex += [float(lay.x[lay.src[k]]), float(lay.x[lay.dst[k]]), None]
        ey += [float(lay.y[lay.src[k]]), float(lay.y[lay.dst[k]]), None]
    edges = scatter(
        x=ex,
        y=ey,
        mode="lines",
        line={"width": 2.5, "color": "#ff7f0e"},
        hoverinfo="skip",
        name="neighbour edges",
        showlegend=False,
    )
    near = [int(lay.src[k]) for k in ins] + [int(lay.dst[k]) for k in outs]
    rings = [
        edges,
        _ring(lay, near, "neighbours", "#ff7f0e", scatter, 13),
        _ring(lay, [v], "selected", "#d62728", scatter, 17),
    ]
    return rings, f"{lay.ids[v]}: {len(ins)} in, {len(outs)} out", [v, *near]


def subgraphs_of(obj: Any) -> list[list[str]] | None:
    """``plan.extra["subgraphs"]`` (or the key of a plan JSON), or ``obj`` when it is already
    a list of lists of node ids; ``None`` when there is none."""
    if obj is None:
        return None
    extra = getattr(obj, "extra", None)
    if isinstance(extra, dict):
        obj = extra.get("subgraphs")
    elif isinstance(obj, dict):
        obj = obj.get("subgraphs")
    if not obj:
        return None
    return [[str(v) for v in g] for g in obj]


def _hull(points: np.ndarray) -> np.ndarray:
    """Convex hull (Andrew's monotone chain), counter-clockwise."""
    pts = sorted(set(map(tuple, points.tolist())))
    if len(pts) <= 2:
        return np.array(pts)

    def half(seq):
        out: list = []
        for p in seq:
            while len(out) >= 2:
                (ax, ay), (bx, by) = out[-2], out[-1]
                if (bx - ax) * (p[1] - ay) - (by - ay) * (p[0] - ax) > 0:
                    break
                out.pop()
            out.append(p)
        return out

    lower, upper = half(pts), half(pts[::-1])
    return np.array(lower[:-1] + upper[:-1])


def subgraph_shapes(lay: DagLayout, groups: list[list[str]], pad: float = 0.4) -> list[dict]:
    """One translucent region around each subgraph's nodes (below the nodes)."""
    idx = lay.index
    shapes = []
    for k, g in enumerate(groups):
        pts = np.array([(lay.x[idx[v]], lay.y[idx[v]]) for v in g if v in idx], dtype=float)
        if not len(pts):
            continue
        ring = np.array([(dx, dy) for dx in (-pad, pad) for dy in (-pad, pad)])
        h = _hull((pts[:, None, :] + ring[None, :, :]).reshape(-1, 2))
        path = "M " + " L ".join(f"{x:.3f},{y:.3f}" for x, y in h) + " Z"
        color = PALETTE[k % len(PALETTE)]
        shapes.append(
            {
                "type": "path",
                "path": path,
                "layer": "below",
                "fillcolor": color,
                "opacity": 0.18,
                "line": {"color": color, "width": 1},
            }
        )
    return shapes


def scatter_class(n: int, webgl: bool | None, threshold: int) -> type:
    """WebGL (``Scattergl``) above ``threshold`` nodes unless ``webgl`` says otherwise."""
    use = n > threshold if webgl is None else webgl
    return go.Scattergl if use else go.Scatter
