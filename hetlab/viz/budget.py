"""``budget_figure``: the candidates measured over precisions, speed against error, with the
error budget as a vertical line; the plan chosen within it is ringed. Points left of the line
may be chosen, the lowest of them is; moving the line shows what a looser check buys."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from hetlab.errors import HetlabError
from hetlab.viz.common import FONT, color_of

ZERO_ERR = 1e-9  # where an error of exactly 0 is drawn on the log axis


def budget_figure(
    rows: Sequence[dict[str, Any]],
    budget: float,
    chosen: str | None = None,
    height: int = 340,
) -> go.Figure:
    """Log-log scatter of ``rows`` (spec §4's ``recommended.candidates``: ``precision``,
    ``candidate``, ``measured`` ms, ``max_rel_err``), one colour per precision, filled within
    ``budget`` and open over it, the budget a dashed vertical line, ``chosen``
    (``"<precision> <candidate>"``) ringed. Rows that failed or have no error are left out
    (their count is in the title)."""
    if budget <= 0:
        raise HetlabError(f"an error budget is positive, got {budget}")
    drawn = [r for r in rows if r.get("measured") is not None and r.get("max_rel_err") is not None]
    fig = go.Figure()
    for prec in dict.fromkeys(r["precision"] for r in drawn):
        mine = [r for r in drawn if r["precision"] == prec]
        fig.add_trace(_points(prec, mine, budget))
    best = [r for r in drawn if f"{r['precision']} {r['candidate']}" == chosen]
    if best:
        fig.add_trace(
            go.Scatter(
                x=[max(best[0]["max_rel_err"], ZERO_ERR)],
                y=[best[0]["measured"]],
                mode="markers",
                marker={"size": 20, "symbol": "circle-open", "color": "#1a7f37", "line_width": 3},
                name=f"chosen: {chosen}",
                hoverinfo="skip",
            )
        )
    fig.add_vline(x=budget, line_dash="dash", line_color="#cf222e")
    fig.add_annotation(
        x=math.log10(budget),  # a log axis places annotations by the exponent
        y=1,
        yref="paper",
        text=f"budget {budget:.1e}",
        showarrow=False,
        xanchor="left",
        yanchor="bottom",
        font={"color": "#cf222e"},
    )
    left = len(rows) - len(drawn)
    title = "candidates over precisions: measured ms against max_rel_err"
    fig.update_layout(
        title_text=title + (f" ({left} failed or unchecked, not shown)" if left else ""),
        xaxis={"type": "log", "title": "max_rel_err against onnxruntime (0 drawn at 1e-9)"},
        yaxis={"type": "log", "title": "measured ms"},
        height=height,
        font=FONT,
        margin={"l": 60, "r": 20, "t": 50, "b": 50},
        legend={"orientation": "v"},
    )
    return fig


def _points(precision: str, rows: list[dict[str, Any]], budget: float) -> go.Scatter:
    """One precision's candidates: filled within the budget, open over it."""
    within = [r["max_rel_err"] <= budget for r in rows]
    return go.Scatter(
        x=[max(r["max_rel_err"], ZERO_ERR) for r in rows],
        y=[r["measured"] for r in rows],
        mode="markers",
        name=precision,
        marker={
            "size": 10,
            "color": color_of(precision),
            "symbol": ["circle" if ok else "circle-open" for ok in within],
            "line_width": 2,
        },
        text=[
            f"{precision} {r['candidate']}<br>{r['measured']:.3f} ms · max_rel_err "
            f"{r['max_rel_err']:.1e} · {'within' if ok else 'over'} the budget"
            for r, ok in zip(rows, within, strict=True)
        ],
        hoverinfo="text",
    )
