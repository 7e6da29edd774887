"""``op_scatter_figure``: each op's predicted duration against its measured one; a unit the run
measured as a whole is one point, against the sum of its ops' predictions."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import plotly.graph_objects as go

from hetlab.errors import HetlabError
from hetlab.viz.common import FONT, as_bars, device_colors, fmt_ms


def op_durations(predicted: Any, measured: Any) -> list[tuple[str, str, float, float, int]]:
    """(node or unit, measured device, predicted ms, measured ms, ops) for each node the run
    timed on its own and each unit it measured as a whole (predicted: its ops' sum), when
    the plan has them all."""
    pred = {r.name: r.length for r in as_bars(predicted).rows}
    run = as_bars(measured, "measured")
    out = []
    for r in run.rows:
        nodes = run.nodes_of(r.name)
        if all(v in pred for v in nodes):
            p = float(sum(pred[v] for v in nodes))
            out.append((r.name, r.device, p, float(r.length), len(nodes)))
    return out


def op_scatter_figure(
    predicted: Any, measured: Any, problem: Any = None, height: int = 420
) -> go.Figure:
    """Log-log scatter, one point per op the run timed on its own and one square per unit it
    measured as a whole (against its ops' summed prediction), coloured by the device it ran
    on, with the line where measured = predicted. ``predicted``: a plan; ``measured``: a run of it (report
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
    traces = _points(pts, pc, mc, p, m, op_of)
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
            "text": f"per-op duration: {_counts(pts)} · median measured/predicted ×{ratio:.2f}"
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


def _hover(pt: tuple, op_of: dict[str, str], p: float, m: float) -> str:
    what = f"{pt[4]} ops, predicted as their sum" if pt[4] > 1 else op_of.get(pt[0], "?")
    return f"<b>{pt[0]}</b> ({what})<br>predicted {fmt_ms(p)}, measured {fmt_ms(m)}"


def _counts(pts: list[tuple]) -> str:
    ops = sum(1 for x in pts if x[4] == 1)
    units = len(pts) - ops
    return f"{ops} ops" + (f", {units} units measured as a whole" if units else "")


def _points(pts, pc, mc, p, m, op_of) -> list[go.Scatter]:
    """One trace per device of the ops it timed, and one of the units it timed whole."""
    devs = list(dict.fromkeys(x[1] for x in pts))
    pal = device_colors(devs)
    traces = []
    for d, unit in [(d, u) for d in devs for u in (False, True)]:
        k = [i for i, x in enumerate(pts) if x[1] == d and (x[4] > 1) == unit]
        if not k:
            continue
        name = f"{d}: units measured as a whole" if unit else d
        traces.append(
            go.Scatter(
                x=[float(pc[i]) for i in k],
                y=[float(mc[i]) for i in k],
                mode="markers",
                marker={
                    "size": 10 if unit else 7,
                    "color": pal[d],
                    "opacity": 0.75,
                    "symbol": "square" if unit else "circle",
                },
                name=name,
                text=[_hover(pts[i], op_of, p[i], m[i]) for i in k],
                hovertemplate="%{text}<extra>" + name + "</extra>",
            )
        )
    return traces
