"""``dag_figure``: the operator DAG in layers (``viz.layout``), one edge and one node trace,
with labels on small graphs, WebGL on large ones, search, neighbours, scope collapsing and a
plan's subgraphs drawn over it (``viz.dag_overlay``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import plotly.graph_objects as go

from hetlab.errors import HetlabError
from hetlab.viz.common import FONT, color_of, device_colors, fmt_ms
from hetlab.viz.dag_overlay import (
    LABEL_MAX,
    highlight_traces,
    label_annotations,
    neighbour_traces,
    scatter_class,
    subgraph_colors,
    subgraph_shapes,
    subgraphs_of,
)
from hetlab.viz.layout import DagLayout, _is_problem, dag_layout
from hetlab.viz.scopes import collapse_scopes

WEBGL_ABOVE = 1000  # nodes; above this the figure draws with WebGL (Scattergl)


def _costs(obj: Any, problem: Any, lay: DagLayout) -> tuple[list[str], np.ndarray] | None:
    if getattr(obj, "costs", None) is not None:
        return list(obj.devices), obj.costs
    if problem is None:
        return None
    m = np.full((len(lay.ids), len(problem.devices)), np.inf)
    pidx = problem.index
    cm = problem.cost_matrix
    for i, v in enumerate(lay.ids):
        j = pidx.get(v)
        if j is not None:
            m[i] = cm[j]
    return list(problem.devices), m


def _hover(lay: DagLayout, costs: tuple[list[str], np.ndarray] | None) -> list[str]:
    text = []
    for i in range(len(lay.ids)):
        t = f"<b>{lay.ids[i]}</b><br>{lay.op_types[i]} · uprank {int(lay.uprank[i])}"
        if lay.shapes[i]:
            t += f"<br>out {lay.shapes[i]}"
        if lay.flops[i]:
            t += f"<br>{lay.flops[i] / 1e6:.3g} MFLOP"
        if costs is not None:
            t += "<br>" + ", ".join(
                f"{d} {fmt_ms(c) if math.isfinite(c) else 'n/a'}"
                for d, c in zip(costs[0], costs[1][i], strict=True)
            )
        text.append(t)
    return text


def _cost_marker(costs, dev: str) -> tuple[dict[str, Any], str]:
    if costs is None or dev not in costs[0]:
        raise HetlabError(f"no costs for device {dev!r}: pass a problem profiled on it")
    c = costs[1][:, costs[0].index(dev)]
    ok = np.isfinite(c)
    pos = c[ok & (c > 0)]
    floor = float(pos.min()) if pos.size else 1e-3
    z = np.log10(np.where(ok, np.maximum(c, floor), floor))
    marker = {
        "color": z.tolist(),
        "colorscale": "Plasma",
        "showscale": True,
        "symbol": np.where(ok, "circle", "x").tolist(),
        "colorbar": {"title": {"text": f"log10 ms<br>{dev}"}, "thickness": 12},
    }
    return marker, f" — colour: cost on {dev} (x = cannot run)"


def _marker(lay: DagLayout, color: Any, costs, groups) -> tuple[dict[str, Any], str, list[str]]:
    """Marker settings, the title's colour note, and a hover suffix per node."""
    none = [""] * len(lay.ids)
    if isinstance(color, str) and color == "uprank":
        bar = {"title": {"text": "uprank"}, "thickness": 12}
        m = {"color": lay.uprank.tolist(), "colorscale": "Viridis", "showscale": True}
        return {**m, "colorbar": bar}, " — colour: upward rank", none
    if isinstance(color, str) and color == "op":
        return {"color": [color_of(o) for o in lay.op_types]}, " — colour: op type", none
    if isinstance(color, str) and color.startswith("cost:"):
        m, note = _cost_marker(costs, color[5:])
        return m, note, none
    if isinstance(color, str) and color == "subgraph":
        if not groups:
            raise HetlabError("colour by subgraph needs a plan with subgraphs (subgraphs=plan)")
        return {"color": subgraph_colors(lay, groups)}, f" — colour: {len(groups)} subgraphs", none
    if isinstance(color, str):
        raise HetlabError(
            f"unknown colour {color!r}: use uprank, op, cost:DEVICE, subgraph or a plan"
        )
    dmap = color.device_of if hasattr(color, "device_of") else dict(color)
    devs = sorted(set(dmap.values()))
    pal = device_colors(devs)
    keys = " ".join(f"<span style='color:{pal[d]}'>■</span> {d}" for d in devs)
    m = {"color": [pal.get(dmap.get(v, ""), "#999999") for v in lay.ids]}
    return m, f" — colour: device {keys}", [f"<br>on {dmap.get(v, '?')}" for v in lay.ids]


def dag_figure(
    obj: Any,
    color: Any = "uprank",
    problem: Any = None,
    height: int = 420,
    *,
    highlight: Any = None,
    neighbors: str | None = None,
    subgraphs: Any = None,
    collapse: int | None = None,
    labels: bool | None = None,
    webgl: bool | None = None,
) -> go.Figure:
    """The DAG of an ``OpGraph``, ``Problem`` or ``ScopeGraph``: x = layer, y = slot.

    ``color``: ``"uprank"`` (with a colour bar), ``"op"``, ``"cost:DEVICE"`` (log scale; an x
    marks a node the device cannot run), ``"subgraph"``, or a ``Plan`` / device map (colour
    by device). ``problem`` supplies costs for the hover when ``obj`` is a graph.
    ``highlight``: a name fragment (or a list of names) whose matches are ringed.
    ``neighbors``: a node whose predecessors and successors are ringed, their edges bold.
    ``subgraphs``: a plan with ``extra["subgraphs"]`` or a list of lists of node ids; each
    subgraph gets a shaded region (a plan given as ``color`` brings its own).
    ``collapse``: draw the graph collapsed to name scopes of this depth (``collapse_scopes``).
    ``labels``: a name (and costs) under each node; by default on graphs of <= 40 nodes.
    ``webgl``: draw with ``Scattergl``; by default above 1000 nodes.
    """
    if problem is None and _is_problem(obj):
        problem = obj
    if collapse is not None:
        obj = collapse_scopes(obj, collapse, problem)
    lay = dag_layout(obj)
    costs = _costs(obj, problem, lay)
    n = len(lay.ids)
    groups = subgraphs_of(subgraphs) or (None if isinstance(color, str) else subgraphs_of(color))
    scatter = scatter_class(n, webgl, WEBGL_ABOVE)
    # one trace for all edges: polylines separated by None (JSON null; a bare NaN is not valid
    # JSON and breaks FigureWidget messages)
    edge = scatter(
        x=lay.ex,
        y=lay.ey,
        mode="lines",
        hoverinfo="skip",
        name="edges",
        line={"width": 0.6, "color": "rgba(120,120,120,0.45)"},
        showlegend=False,
    )
    marker, note, suffix = _marker(lay, color, costs, groups)
    marker.update(size=9 if n <= LABEL_MAX else 7 if n < 400 else 5, line={"width": 0})
    text = [t + s for t, s in zip(_hover(lay, costs), suffix, strict=True)]
    # plain lists, not numpy arrays: FigureWidget ships arrays as binary buffers, which the
    # browser sometimes failed to draw (blank DAG) while list-based figures always drew
    nodes = scatter(
        x=lay.x.tolist(),
        y=lay.y.tolist(),
        mode="markers",
        marker=marker,
        text=text,
        hovertemplate="%{text}<extra></extra>",
        name="ops",
        showlegend=False,
    )
    fig = go.Figure([edge, nodes])
    title = f"{getattr(obj, 'name', '')}: {n} ops, {len(lay.src)} edges, {lay.size[0]} layers"
    title += note + _overlay(fig, lay, scatter, highlight, neighbors, groups)
    if labels if labels is not None else n <= LABEL_MAX:
        fig.update_layout(annotations=label_annotations(lay, costs))
    fig.update_layout(
        title={"text": title, "font": {"size": 13}},
        height=height,
        font=FONT,
        margin={"l": 10, "r": 10, "t": 40, "b": 30},
        plot_bgcolor="white",
        hovermode="closest",
        xaxis={"title": "layer", "showgrid": False, "zeroline": False},
        yaxis={"visible": False},
        uirevision="dag",
    )
    return fig


def _overlay(fig: go.Figure, lay: DagLayout, scatter: type, highlight, neighbors, groups) -> str:
    """Adds the search matches, the neighbours and the subgraph regions; returns the title's
    note on them."""
    note = ""
    if highlight:
        traces, msg = highlight_traces(lay, highlight, scatter)
        fig.add_traces(traces)
        note += f" · {msg} for {highlight!r}"
    if neighbors:
        traces, msg = neighbour_traces(lay, neighbors, scatter)
        fig.add_traces(traces)
        note += f" · {msg}"
    if groups:
        fig.update_layout(shapes=subgraph_shapes(lay, groups))
        note += f" · {len(groups)} subgraphs shaded"
    return note
