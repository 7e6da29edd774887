"""Gantt charts of plans and measured runs on a numeric ms axis: one row per device with the
ops, one row per link with the transfers (trace "transfers"), idle gaps (trace "idle"), the
critical path outlined (trace "critical path"), a plan's subgraph boundaries, and several
timelines stacked on one shared x axis."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from hetlab.schedulers.bounds import lower_bound
from hetlab.viz.common import FONT, PALETTE, Bars, as_bars, color_of, device_colors, fmt_ms
from hetlab.viz.timeline import critical_path, idle_gaps, transfers

CRITICAL = "#d62728"


def lower_bound_of(problem: Any) -> float | None:
    """The scheduler bound (``hetlab.schedulers.bounds.lower_bound``) if it is available."""
    if problem is None:
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
    if b.subgraphs:
        parts.append(f"{len(b.subgraphs)} subgraphs")
    return " · ".join(parts)


def _colors(b: Bars, problem: Any, color: str, devices: list[str]) -> list[str]:
    if color == "unit":
        pal = device_colors(devices)
        return [pal.get(r[1], "#999") for r in b.rows]
    if color == "subgraph" and b.subgraphs:
        of = {v: k for k, g in enumerate(b.subgraphs) for v in g}
        return [PALETTE[of[r[0]] % len(PALETTE)] if r[0] in of else "#bbb" for r in b.rows]
    op_of = {n.id: n.op_type for n in problem.nodes} if problem is not None else {}
    return [color_of(op_of.get(r[0], "?")) for r in b.rows]


def _bar(b: Bars, problem: Any, color: str, devices: list[str]) -> go.Bar:
    op_of = {n.id: n.op_type for n in problem.nodes} if problem is not None else {}
    rows = b.rows
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
        marker={
            "color": _colors(b, problem, color, devices),
            "line": {"width": 0.5, "color": "white"},
        },
        showlegend=False,
    )


def _segments(
    name: str, segs: list[tuple[str, float, float, str]], legend: bool, **marker
) -> go.Bar:
    """A bar trace of (row, start, finish, hover) segments."""
    return go.Bar(
        orientation="h",
        base=[s[1] for s in segs],
        x=[s[2] - s[1] for s in segs],
        y=[s[0] for s in segs],
        text=[s[3] for s in segs],
        textposition="none",
        hovertemplate="%{text}<extra>" + name + "</extra>",
        name=name,
        legendgroup=name,
        showlegend=legend,
        marker=marker,
    )


def _traces(b: Bars, problem: Any, color: str, devs: list[str], legend: bool = True):
    """The bars, transfers, idle gaps and critical path of ``b``, and the rows they use."""
    moves = transfers(b, problem)
    links = list(dict.fromkeys(t.link for t in moves))
    tx = [
        (t.link, t.start, t.finish, f"{t.src} → {t.dst}: {fmt_ms(t.finish - t.start)}")
        for t in moves
    ]
    gaps = [(d, s, f, f"{d} idle {fmt_ms(f - s)}") for d, s, f in idle_gaps(b, devs)]
    chain = critical_path(b, problem)
    row = {r[0]: r for r in b.rows}
    total = sum(row[v][3] - row[v][2] for v in chain)
    note = f"on the critical path ({len(chain)} ops, {fmt_ms(total)})"
    cp = [
        (
            row[v][1],
            row[v][2],
            row[v][3],
            f"<b>{v}</b>: {row[v][2]:.3f} → {row[v][3]:.3f} ms<br>{note}",
        )
        for v in chain
    ]
    traces = [
        _bar(b, problem, color, devs),
        _segments(
            "transfers", tx, legend, color="#7f7f7f", pattern={"shape": "/"}, line={"width": 0}
        ),
        _segments("idle", gaps, legend, color="rgba(255,200,80,0.25)", line={"width": 0}),
        _segments(
            "critical path", cp, legend, color="rgba(0,0,0,0)", line={"width": 2, "color": CRITICAL}
        ),
    ]
    return traces, devs + links


def _boundaries(b: Bars) -> list[float]:
    """When each subgraph of a plan finishes: where its boundary line is drawn."""
    if not b.subgraphs:
        return []
    fin = {r[0]: r[3] for r in b.rows}
    return sorted(
        {max(fin[v] for v in g if v in fin) for g in b.subgraphs if any(v in fin for v in g)}
    )


def _devices(b: Bars, problem: Any) -> list[str]:
    used = list(dict.fromkeys(r[1] for r in b.rows))
    known = list(problem.devices) if problem is not None else (b.devices or [])
    return [d for d in known if d in used] + [d for d in used if d not in known] or known


def _axis(rows: list[str]) -> dict[str, Any]:
    return {"categoryorder": "array", "categoryarray": rows[::-1], "type": "category"}


def gantt_figure(
    plan_or_run: Any,
    problem: Any = None,
    title: str | None = None,
    color: str = "op",
    height: int | None = None,
    measured: Any = None,
) -> go.Figure:
    """One row per device, one bar per node (``base`` = start, length = duration, in ms).

    ``plan_or_run``: a ``Plan``, plan JSON, or run report (object with ``timeline`` or spec §5
    dict); ``color``: ``"op"`` (op type), ``"unit"`` (device) or ``"subgraph"``. With
    ``problem``, a predicted plan's transfers get one row per link (trace "transfers") and
    the critical path is outlined; idle gaps are shaded; a plan's subgraphs end at dotted
    lines. ``measured``: a run of the plan, stacked under it on the same x axis.
    """
    if measured is not None:
        return compare_figure(
            [plan_or_run, measured], [title or "predicted", "measured"], problem, color, height
        )
    b = as_bars(plan_or_run, title)
    traces, rows = _traces(b, problem, color, _devices(b, problem))
    fig = go.Figure(traces)
    for x in _boundaries(b):
        fig.add_vline(x=x, line={"dash": "dot", "width": 1, "color": "#555"})
    fig.update_layout(
        title={"text": _title(b, problem), "font": {"size": 13}},
        barmode="overlay",
        font=FONT,
        height=height or 130 + 40 * max(1, len(rows)),
        margin={"l": 10, "r": 10, "t": 40, "b": 40},
        xaxis={"title": "time (ms)", "type": "linear", "rangemode": "tozero"},
        yaxis=_axis(rows),
        plot_bgcolor="#fafafa",
        legend={"orientation": "h", "x": 1, "xanchor": "right", "y": -0.25, "font": {"size": 10}},
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
    built = [_traces(b, problem, color, _devices(b, problem), i == 0) for i, b in enumerate(bars)]
    fig = make_subplots(
        rows=len(bars),
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.12,
        subplot_titles=[_title(b, problem) for b in bars],
        row_heights=[max(1, len(rows)) for _, rows in built],
    )
    for i, (traces, rows) in enumerate(built):
        for t in traces:
            fig.add_trace(t, row=i + 1, col=1)
        fig.update_yaxes(**_axis(rows), row=i + 1, col=1)
        for x in _boundaries(bars[i]):
            fig.add_vline(x=x, line={"dash": "dot", "width": 1, "color": "#555"}, row=i + 1, col=1)
    fig.update_xaxes(title_text="time (ms)", row=len(bars), col=1)
    fig.update_annotations(font={"size": 12})
    fig.update_layout(
        font=FONT,
        barmode="overlay",
        plot_bgcolor="#fafafa",
        height=height or 90 + sum(60 + 40 * len(rows) for _, rows in built),
        margin={"l": 10, "r": 10, "t": 40, "b": 40},
        legend={"orientation": "h", "x": 1, "xanchor": "right", "y": 1.06, "font": {"size": 10}},
    )
    return fig
