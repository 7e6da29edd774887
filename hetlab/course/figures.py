"""Figures of hand-sized problems: every node labelled with its name and its cost on each
device, every edge with its transfer time, so the numbers of an exercise are on the picture."""

from __future__ import annotations

from collections.abc import Mapping

import plotly.graph_objects as go

from hetlab.cost.problem import Problem
from hetlab.graph.levels import hope_levels

ROW = 1.5  # vertical distance between nodes of one level: room for a three-line label


def levels(problem: Problem) -> dict[str, int]:
    """HOPE's level (eq. 8, the paper's upward rank): 1 for a source, else 1 + the largest
    level of a predecessor (``graph/levels.py``)."""
    lvl = hope_levels(problem.topo, lambda v: (u for u, _ in problem.preds[v]))
    return {problem.nodes[v].id: lvl[v] for v in problem.topo}


def _positions(problem: Problem) -> dict[str, tuple[float, float]]:
    lvl = levels(problem)
    rows: dict[int, list[str]] = {}
    for n in problem.nodes:
        rows.setdefault(lvl[n.id], []).append(n.id)
    pos = {}
    for x, ids in rows.items():
        for i, v in enumerate(ids):
            pos[v] = (float(x), ROW * ((len(ids) - 1) / 2.0 - i))
    return pos


def _fmt(c: float | None) -> str:
    return "–" if c is None else f"{c:g}"


def hand_dag(
    problem: Problem,
    values: Mapping[str, float] | None = None,
    value_name: str = "",
    device_of: Mapping[str, str] | None = None,
    title: str = "",
    height: int | None = None,
) -> go.Figure:
    """The DAG drawn by level (x), each node labelled ``name`` and its costs per device; edges
    labelled with the transfer time between distinct devices. ``values`` (e.g. a rank) are
    printed under each node; ``device_of`` colours the nodes by device."""
    pos = _positions(problem)
    fig = go.Figure()
    _draw_edges(fig, problem, pos)
    palette = ["#4C78A8", "#F58518", "#54A24B", "#B279A2"]
    colour = {d: palette[i % len(palette)] for i, d in enumerate(problem.devices)}
    xs, ys, texts, colours, hover = _node_marks(problem, pos, values, value_name, device_of, colour)
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="markers+text",
            text=texts,
            textposition="bottom center",
            marker={"size": 26, "color": colours, "line": {"width": 1, "color": "#333"}},
            hovertext=hover,
            hoverinfo="text",
            showlegend=False,
        )
    )
    if device_of:
        for d, c in colour.items():
            fig.add_trace(
                go.Scatter(
                    x=[None], y=[None], mode="markers", name=d, marker={"size": 12, "color": c}
                )
            )
    fig.update_xaxes(title="HOPE level (eq. 8)", dtick=1, showgrid=False, zeroline=False)
    fig.update_yaxes(visible=False, range=[min(ys) - 1.2, max(ys) + 0.6])
    note = f"costs in {problem.units}; edge labels: transfer between devices"
    fig.update_layout(
        title=(title + "<br>" if title else "") + f"<sup>{note}</sup>",
        height=height or 150 + 110 * max(xs.count(x) for x in xs),
        margin={"l": 20, "r": 20, "t": 60, "b": 30},
        plot_bgcolor="white",
    )
    return fig


def _draw_edges(fig: go.Figure, problem: Problem, pos: Mapping[str, tuple[float, float]]) -> None:
    """An arrow per edge, labelled with its transfer time between distinct devices."""
    for e in problem.edges:
        (x0, y0), (x1, y1) = pos[e.src], pos[e.dst]
        fig.add_annotation(
            x=x1,
            y=y1,
            ax=x0,
            ay=y0,
            xref="x",
            yref="y",
            axref="x",
            ayref="y",
            showarrow=True,
            arrowhead=2,
            arrowsize=1.2,
            standoff=22,
            startstandoff=22,
            arrowcolor="#999",
        )
        t = problem.comm_cost(e.src, e.dst, problem.devices[0], problem.devices[-1])
        if t:
            fig.add_annotation(
                x=(x0 + x1) / 2,
                y=(y0 + y1) / 2,
                text=f"{t:g}",
                showarrow=False,
                font={"size": 10, "color": "#777"},
                bgcolor="white",
            )


def _node_marks(
    problem: Problem,
    pos: Mapping[str, tuple[float, float]],
    values: Mapping[str, float] | None,
    value_name: str,
    device_of: Mapping[str, str] | None,
    colour: Mapping[str, str],
) -> tuple[list[float], list[float], list[str], list[str], list[str]]:
    """Each node's position, label (costs, and its value), colour and hover text."""
    xs, ys, texts, colours, hover = [], [], [], [], []
    for n in problem.nodes:
        x, y = pos[n.id]
        costs = " · ".join(f"{d} {_fmt(n.cost.get(d))}" for d in problem.devices)
        label = f"<b>{n.id}</b><br>{costs}"
        if values is not None and n.id in values:
            label += f"<br>{value_name} = {values[n.id]:g}"
        xs.append(x)
        ys.append(y)
        texts.append(label)
        hover.append(f"{n.id} {n.op_type}".strip())
        colours.append(colour[device_of[n.id]] if device_of else "#ddd")
    return xs, ys, texts, colours, hover
