"""``op_scatter_figure``: each op's predicted duration against its measured one."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import plotly.graph_objects as go

from hetlab.errors import HetlabError
from hetlab.viz.common import FONT, as_bars, device_colors, fmt_ms


def op_durations(predicted: Any, measured: Any) -> list[tuple[str, str, float, float]]:
    """(node, measured device, predicted ms, measured ms) for each node in both timelines."""
    pred = {r[0]: r[3] - r[2] for r in as_bars(predicted).rows}
    out = []
    for node, dev, s, f in as_bars(measured, "measured").rows:
        if node in pred:
            out.append((node, dev, float(pred[node]), float(f - s)))
    return out


def op_scatter_figure(
    predicted: Any, measured: Any, problem: Any = None, height: int = 420
) -> go.Figure:
    """Log-log scatter, one point per op, coloured by the device it ran on, with the line
    where measured = predicted. ``predicted``: a plan; ``measured``: a run of it (report
    object or spec §5 dict). Durations of 0 are drawn at the smallest positive one."""
    pts = op_durations(predicted, measured)
    if not pts:
        raise HetlabError("the plan and the run share no op: was the run made from this plan?")
    op_of = {n.id: n.op_type for n in problem.nodes} if problem is not None else {}
    p = np.array([x[2] for x in pts])
    m = np.array([x[3] for x in pts])
    pos = np.concatenate([p[p > 0], m[m > 0]])
    floor = float(pos.min()) if pos.size else 1e-3
    pc, mc = np.maximum(p, floor), np.maximum(m, floor)
    devs = list(dict.fromkeys(x[1] for x in pts))
    pal = device_colors(devs)
    traces = []
    for d in devs:
        k = [i for i, x in enumerate(pts) if x[1] == d]
        traces.append(
            go.Scatter(
                x=[float(pc[i]) for i in k],
                y=[float(mc[i]) for i in k],
                mode="markers",
                marker={"size": 7, "color": pal[d], "opacity": 0.75},
                name=d,
                text=[
                    f"<b>{pts[i][0]}</b> ({op_of.get(pts[i][0], '?')})<br>predicted "
                    f"{fmt_ms(p[i])}, measured {fmt_ms(m[i])}"
                    for i in k
                ],
                hovertemplate="%{text}<extra>" + d + "</extra>",
            )
        )
    lo, hi = floor, float(max(pc.max(), mc.max()))
    traces.append(
        go.Scatter(
            x=[lo, hi],
            y=[lo, hi],
            mode="lines",
            line={"dash": "dash", "color": "#888", "width": 1},
            name="measured = predicted",
            hoverinfo="skip",
        )
    )
    both = (p > 0) & (m > 0)
    ratio = float(np.median(m[both] / p[both])) if both.any() else math.nan
    r = float(np.corrcoef(np.log(p[both]), np.log(m[both]))[0, 1]) if both.sum() > 2 else math.nan
    fig = go.Figure(traces)
    fig.update_layout(
        title={
            "text": f"per-op duration: {len(pts)} ops · median measured/predicted ×{ratio:.2f}"
            f" · log-log correlation {r:.2f}",
            "font": {"size": 13},
        },
        height=height,
        font=FONT,
        xaxis={"title": "predicted (ms)", "type": "log"},
        yaxis={"title": "measured (ms)", "type": "log"},
        plot_bgcolor="#fafafa",
        margin={"l": 10, "r": 10, "t": 40, "b": 40},
    )
    return fig
