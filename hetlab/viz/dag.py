"""``dag_figure``: the operator DAG in layers of upward rank, one edge and one node trace."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import plotly.graph_objects as go

from hetlab.errors import HetlabError
from hetlab.viz.common import FONT, color_of, device_colors, fmt_ms
from hetlab.viz.layout import _is_problem, dag_layout


def _costs(problem: Any, lay) -> tuple[list[str], np.ndarray] | None:
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


def dag_figure(
    obj: Any, color: Any = "uprank", problem: Any = None, height: int = 420
) -> go.Figure:
    """The DAG of an ``OpGraph`` or ``Problem``; x = upward rank, nodes ordered by barycentre.

    ``color``: ``"uprank"``, ``"op"``, ``"cost:DEVICE"`` (log scale; an x marks a node the
    device cannot run), or a ``Plan`` / device map (colour by device). ``problem`` supplies
    costs for the hover and ``cost:`` colouring when ``obj`` is a graph.
    """
    lay = dag_layout(obj)
    if problem is None and _is_problem(obj):
        problem = obj
    costs = _costs(problem, lay)
    n = len(lay.ids)
    # one trace for all edges: segments separated by gaps (None, which plotly's JSON writes as
    # null, as it does NaN; a bare NaN is not valid JSON and breaks FigureWidget messages)
    ex: list[float | None] = [None] * (len(lay.src) * 3)
    ey: list[float | None] = [None] * (len(lay.src) * 3)
    ex[0::3], ex[1::3] = lay.x[lay.src].tolist(), lay.x[lay.dst].tolist()
    ey[0::3], ey[1::3] = lay.y[lay.src].tolist(), lay.y[lay.dst].tolist()
    edge = go.Scatter(
        x=ex,
        y=ey,
        mode="lines",
        hoverinfo="skip",
        name="edges",
        line={"width": 0.6, "color": "rgba(120,120,120,0.45)"},
        showlegend=False,
    )
    text = []
    for i in range(n):
        t = f"<b>{lay.ids[i]}</b><br>{lay.op_types[i]} · uprank {int(lay.uprank[i])}"
        if lay.shapes[i]:
            t += f"<br>out {lay.shapes[i]}"
        if lay.flops[i]:
            t += f"<br>{lay.flops[i] / 1e6:.3g} MFLOP"
        if costs is not None:
            t += "<br>" + ", ".join(
                f"{d} {fmt_ms(c) if math.isfinite(c) else 'n/a'}"
                for d, c in zip(costs[0], costs[1][i], strict=False)
            )
        text.append(t)
    marker: dict[str, Any] = {"size": 7 if n < 400 else 5, "line": {"width": 0}}
    title = f"{getattr(obj, 'name', '')}: {n} ops, {len(lay.src)} edges, depth {int(lay.uprank.max(initial=0))}"
    if isinstance(color, str) and color == "uprank":
        marker.update(
            color=lay.uprank.tolist(),
            colorscale="Viridis",
            showscale=True,
            colorbar={"title": {"text": "uprank"}, "thickness": 12},
        )
        title += " — colour: upward rank"
    elif isinstance(color, str) and color == "op":
        marker.update(color=[color_of(o) for o in lay.op_types])
        title += " — colour: op type"
    elif isinstance(color, str) and color.startswith("cost:"):
        dev = color[5:]
        if costs is None or dev not in costs[0]:
            raise HetlabError(f"no costs for device {dev!r}: pass a problem profiled on it")
        c = costs[1][:, costs[0].index(dev)]
        ok = np.isfinite(c)
        pos = c[ok & (c > 0)]
        floor = float(pos.min()) if pos.size else 1e-3
        z = np.log10(np.where(ok, np.maximum(c, floor), floor))
        marker.update(
            color=z.tolist(),
            colorscale="Plasma",
            showscale=True,
            symbol=np.where(ok, "circle", "x").tolist(),
            colorbar={"title": {"text": f"log10 ms<br>{dev}"}, "thickness": 12},
        )
        title += f" — colour: cost on {dev} (x = cannot run)"
    else:
        dmap = color.device_of if hasattr(color, "device_of") else dict(color)
        devs = sorted(set(dmap.values()))
        pal = device_colors(devs)
        marker.update(color=[pal.get(dmap.get(v, ""), "#999999") for v in lay.ids])
        keys = " ".join(f"<span style='color:{pal[d]}'>■</span> {d}" for d in devs)
        title += f" — colour: device {keys}"
        text = [t + f"<br>on {dmap.get(v, '?')}" for t, v in zip(text, lay.ids, strict=False)]
    # plain lists, not numpy arrays: FigureWidget ships arrays as binary buffers, which the
    # browser sometimes failed to draw (blank DAG) while list-based figures always drew
    nodes = go.Scatter(
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
    fig.update_layout(
        title={"text": title, "font": {"size": 13}},
        height=height,
        font=FONT,
        margin={"l": 10, "r": 10, "t": 40, "b": 30},
        plot_bgcolor="white",
        hovermode="closest",
        xaxis={"title": "upward rank", "showgrid": False, "zeroline": False},
        yaxis={"visible": False},
        uirevision="dag",
    )
    return fig
