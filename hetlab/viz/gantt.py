"""Gantt charts of plans and measured runs on a numeric ms axis, and a stacked comparison."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from hetlab.viz.common import FONT, Bars, as_bars, color_of, device_colors, fmt_ms


def lower_bound_of(problem: Any) -> float | None:
    """The scheduler bound (``hetlab.schedulers.bounds.lower_bound``) if it is available."""
    if problem is None:
        return None
    try:
        from hetlab.schedulers.bounds import lower_bound
    except ImportError:
        return None
    try:
        return float(lower_bound(problem))
    except Exception:  # noqa: BLE001  a bound is a nicety in a title; never fail a figure for it
        return None


def _title(b: Bars, problem: Any) -> str:
    parts = [f"<b>{b.label}</b>", f"makespan {fmt_ms(b.makespan)}"]
    if b.measured:
        parts[1] = f"measured {fmt_ms(b.makespan)}"
        if b.predicted:
            err = (b.makespan - b.predicted) / b.predicted
            parts.append(f"predicted {fmt_ms(b.predicted)} ({err:+.0%})")
    else:
        lb = lower_bound_of(problem)
        if lb is not None:
            parts.append(f"lower bound {fmt_ms(lb)}")
        if b.solve_seconds is not None:
            parts.append(f"solve {b.solve_seconds:.2f} s")
    return " · ".join(parts)


def _bar(b: Bars, problem: Any, color: str, devices: list[str]) -> go.Bar:
    op_of = {n.id: n.op_type for n in problem.nodes} if problem is not None else {}
    pal = device_colors(devices)
    rows = b.rows
    cols = [
        pal.get(r[1], "#999") if color == "unit" else color_of(op_of.get(r[0], "?")) for r in rows
    ]
    text = [
        f"<b>{r[0]}</b> ({op_of.get(r[0], '?')})<br>{r[1]}: {r[2]:.3f} → {r[3]:.3f} ms"
        f" ({r[3] - r[2]:.3f} ms)"
        for r in rows
    ]
    return go.Bar(
        orientation="h",
        base=[r[2] for r in rows],
        x=[r[3] - r[2] for r in rows],
        y=[r[1] for r in rows],
        customdata=[r[0] for r in rows],
        text=text,
        textposition="none",
        hovertemplate="%{text}<extra></extra>",
        name=b.label,
        marker={"color": cols, "line": {"width": 0.5, "color": "white"}},
        showlegend=False,
    )


def _devices(b: Bars, problem: Any) -> list[str]:
    used = list(dict.fromkeys(r[1] for r in b.rows))
    known = list(problem.devices) if problem is not None else (b.devices or [])
    return [d for d in known if d in used] + [d for d in used if d not in known] or known


def gantt_figure(
    plan_or_run: Any,
    problem: Any = None,
    title: str | None = None,
    color: str = "op",
    height: int | None = None,
) -> go.Figure:
    """One row per device, one bar per node (``base`` = start, length = duration, in ms).

    ``plan_or_run``: a ``Plan``, plan JSON, or run report (object with ``timeline`` or spec §5
    dict); ``color``: ``"op"`` (op type) or ``"unit"`` (device); the title shows makespan,
    lower bound (when ``problem`` is given and bounds exist) and solve time.
    """
    b = as_bars(plan_or_run, title)
    devs = _devices(b, problem)
    fig = go.Figure([_bar(b, problem, color, devs)])
    fig.update_layout(
        title={"text": _title(b, problem), "font": {"size": 13}},
        barmode="overlay",
        font=FONT,
        height=height or 110 + 45 * max(1, len(devs)),
        margin={"l": 10, "r": 10, "t": 40, "b": 40},
        xaxis={"title": "time (ms)", "type": "linear", "rangemode": "tozero"},
        yaxis={"categoryorder": "array", "categoryarray": devs[::-1], "type": "category"},
        plot_bgcolor="#fafafa",
    )
    return fig


def compare_figure(
    items: Sequence[Any],
    titles: Sequence[str] | None = None,
    problem: Any = None,
    color: str = "op",
    height: int | None = None,
) -> go.Figure:
    """Several Gantts stacked on one shared ms axis (e.g. ILP | greedy | measured)."""
    bars = [as_bars(it, titles[i] if titles else None) for i, it in enumerate(items)]
    devs = [_devices(b, problem) for b in bars]
    fig = make_subplots(
        rows=len(bars),
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.12,
        subplot_titles=[_title(b, problem) for b in bars],
        row_heights=[max(1, len(d)) for d in devs],
    )
    for i, b in enumerate(bars):
        fig.add_trace(_bar(b, problem, color, devs[i]), row=i + 1, col=1)
        fig.update_yaxes(
            categoryorder="array", categoryarray=devs[i][::-1], type="category", row=i + 1, col=1
        )
    fig.update_xaxes(title_text="time (ms)", row=len(bars), col=1)
    fig.update_annotations(font={"size": 12})
    fig.update_layout(
        font=FONT,
        barmode="overlay",
        plot_bgcolor="#fafafa",
        height=height or 90 + sum(60 + 40 * len(d) for d in devs),
        margin={"l": 10, "r": 10, "t": 40, "b": 40},
    )
    return fig
