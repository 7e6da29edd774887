"""``heatmap_figure``: profiled cost per op (columns, by upward rank) and device (rows)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from hetlab.viz.common import FONT, fmt_ms
from hetlab.viz.layout import dag_layout


def heatmap_figure(problem, height: int | None = None) -> go.Figure:
    """Ops x devices on a log10 colour scale, ops sorted by upward rank then model order.

    A device that cannot run an op leaves a grey cell marked with an x ('n/a' in the hover).
    """
    lay = dag_layout(problem)
    order = sorted(range(len(lay.ids)), key=lambda i: (lay.uprank[i], i))
    cm = problem.cost_matrix[order]  # [n, D], ops of layout == problem order
    ok = np.isfinite(cm)
    pos = cm[ok & (cm > 0)]
    floor = float(pos.min()) if pos.size else 1e-3
    zlog = np.log10(np.maximum(np.where(ok, cm, floor), floor))
    # unsupported cells are gaps: None (JSON null), never NaN (invalid JSON in widget messages)
    z = [
        [float(zlog[k, j]) if ok[k, j] else None for k in range(len(cm))]
        for j in range(cm.shape[1])
    ]
    devs = list(problem.devices)
    ids = [lay.ids[i] for i in order]
    ops = [lay.op_types[i] for i in order]
    text = [
        [
            f"<b>{ids[k]}</b> ({ops[k]})<br>{d}: "
            + (fmt_ms(cm[k, j]) if ok[k, j] else "n/a: cannot run")
            for k in range(len(ids))
        ]
        for j, d in enumerate(devs)
    ]
    xs = list(range(len(ids)))
    heat = go.Heatmap(
        z=z,
        x=xs,
        y=devs,
        text=text,
        hovertemplate="%{text}<extra></extra>",
        hoverongaps=True,
        colorscale="Viridis",
        colorbar={"title": {"text": "log10 ms"}, "thickness": 12},
        name="cost",
    )
    traces = [heat]
    bad = np.argwhere(~ok)
    if bad.size:
        traces.append(
            go.Scatter(
                x=[int(k) for k, _ in bad],
                y=[devs[j] for _, j in bad],
                mode="markers",
                marker={"symbol": "x-thin", "size": 8, "line": {"width": 1.5, "color": "#444"}},
                text=[f"<b>{ids[k]}</b> ({ops[k]})<br>{devs[j]}: n/a: cannot run" for k, j in bad],
                hovertemplate="%{text}<extra></extra>",
                name="n/a",
                showlegend=False,
            )
        )
    fig = go.Figure(traces)
    tick = (
        {
            "tickmode": "array",
            "tickvals": xs,
            "ticktext": ops,
            "tickangle": -60,
            "tickfont": {"size": 9},
        }
        if len(ids) <= 40
        else {"title": f"{len(ids)} ops, sorted by upward rank (hover for names)"}
    )
    fig.update_layout(
        title={
            "text": f"profiled cost per op and device (log colour: dark {fmt_ms(float(pos.min()) if pos.size else None)}"
            f" → yellow {fmt_ms(float(pos.max()) if pos.size else None)}; x = cannot run)",
            "font": {"size": 13},
        },
        height=height or 140 + 40 * len(devs),
        font=FONT,
        plot_bgcolor="#d9d9d9",
        margin={"l": 10, "r": 10, "t": 40, "b": 40},
        xaxis=dict(showgrid=False, zeroline=False, **tick),
        yaxis={"showgrid": False},
    )
    return fig
