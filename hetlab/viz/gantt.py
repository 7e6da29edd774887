"""Gantt charts of plans and measured runs on a numeric ms axis: one row per device with the
ops, one row per link with the transfers (trace "transfers"), idle gaps (trace "idle"), the
critical path outlined where it is not every op (trace "critical path"), a plan's subgraph
boundaries, ops placed differently from another plan (trace "moved"), and several timelines
stacked on one shared x axis. A measured unit is one bar (trace "measured units"); its
per-op split is drawn only on request, hatched (trace "estimated (not measured)").

Sizes follow the content: ``ROW_PX`` per row, the title wrapped to the width, the legend in
the top margin under the title, where it never covers an axis."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from hetlab.viz.common import FONT, Bars, as_bars
from hetlab.viz.gantt_overlays import critical_path, idle_gaps, transfers
from hetlab.viz.gantt_parts import (
    CRITICAL,
    approx_bar,
    boundaries,
    devices_of,
    moved_trace,
    op_bar,
    outlined,
    segments,
    share_bar,
    title_parts,
    unit_bar,
)
from hetlab.viz.scale import title_layout, wrap_title

ROW_PX = 34  # px per device or link row
MIN_ROWS = 2
TITLE_LINE_PX = 17
LEGEND_PX = 24
BOTTOM_PX = 46
MODEBAR_PX = 160  # px of the title's first line left to plotly's toolbar
# the critical path: a thin strip along the bottom edge of each bar on it (bars span
# -0.4..0.4 of a row), so the ops' colours stay visible
STRIP = {"width": 0.1, "offset": -0.43}
# what the Gantts keep of the toolbar: save, zoom, pan, reset (zooming acts on time only)
MODEBAR = {"remove": ["select2d", "lasso2d", "zoomIn2d", "zoomOut2d", "autoScale2d"]}
# a bar's name is drawn inside it only where it fits at 9 px or more, at any zoom
UNIFORMTEXT = {"mode": "hide", "minsize": 9}


def _critical(b: Bars, problem: Any, critical: bool | None, legend: bool):
    """The critical path's outline trace, and a note when it is left out because it would
    outline every op (one device, no gap: the path says nothing)."""
    chain = critical_path(b, problem) if critical is not False else []
    if not chain or (critical is None and len(chain) >= len(b.rows)):
        note = "critical path: every op" if chain and len(chain) > 1 else ""
        return [], note
    row = {r.name: r for r in b.rows}
    total = sum(row[v].length for v in chain)
    what = f"on the critical path ({len(chain)} of {len(b.rows)} bars)"
    cp = [
        (
            row[v].device,
            row[v].start,
            row[v].finish,
            f"<b>{v}</b>: {row[v].start:.3f} → {row[v].finish:.3f} ms<br>{what}",
        )
        for v in chain
    ]
    strip = segments(
        "critical path", cp, legend, chain, trace=STRIP, color=CRITICAL, line={"width": 0}
    )
    return [strip], f"red underline: the critical path, {len(chain)} bars, {total:.3g} ms busy"


def _traces(b: Bars, problem: Any, devs: list[str], opts: dict[str, Any], legend: bool = True):
    """The traces of ``b``, the rows they use, and notes for the title."""
    moves = transfers(b, problem)
    links = list(dict.fromkeys(t.device for t in moves))
    tx = [
        (t.device, t.start, t.finish, f"{t.args['src']} → {t.args['dst']}: {t.length:.3f} ms")
        for t in moves
    ]
    gaps = [(d, s, f, f"{d} idle {f - s:.3f} ms") for d, s, f in idle_gaps(b, devs)]
    traces = [op_bar(b, problem, opts["color"], devs, outlined(b, opts.get("width")))]
    approx = approx_bar(b, legend)
    traces += [approx] if approx is not None else []
    if b.members:
        traces.append(unit_bar(b, devs, legend))
    if b.shares and opts["estimates"]:
        traces.append(share_bar(b, problem, legend))
    pattern = {"shape": "/"}
    traces += [
        segments("transfers", tx, legend, color="#7f7f7f", pattern=pattern, line={"width": 0}),
        segments("idle", gaps, legend, color="rgba(255,200,80,0.25)", line={"width": 0}),
    ]
    cp, note = _critical(b, problem, opts["critical"], legend)
    traces += cp
    notes = [note] if note else []
    if opts.get("moved"):
        traces.append(moved_trace(b, opts["moved"], legend))
    return traces, devs + links, notes


def _axis(rows: list[str]) -> dict[str, Any]:
    """The rows' axis: fixed, so that a zoom or a pan moves along time only."""
    return {
        "categoryorder": "array",
        "categoryarray": rows[::-1],
        "type": "category",
        "fixedrange": True,
    }


def _legend(height: int, top_px: float) -> dict[str, Any]:
    """A one-line legend in the top margin, ``top_px`` below the figure's top."""
    y = max(0.0, 1.0 - top_px / height)
    return {
        "orientation": "h",
        "yref": "container",
        "y": y,
        "yanchor": "top",
        "x": 0.0,
        "xanchor": "left",
        "font": {"size": 10},
        "bgcolor": "rgba(255,255,255,0)",
    }


def gantt_figure(
    plan_or_run: Any,
    problem: Any = None,
    title: str | None = None,
    color: str = "op",
    height: int | None = None,
    measured: Any = None,
    *,
    width: int | None = None,
    estimates: bool = False,
    critical: bool | None = None,
    moved: dict[str, tuple[str, str]] | None = None,
) -> go.Figure:
    """One row per device, one bar per node (``base`` = start, length = duration, in ms).

    ``plan_or_run``: a ``Plan``, plan JSON, or run report (object with ``timeline`` or spec §5
    dict); ``color``: ``"op"`` (op type), ``"unit"`` (device) or ``"subgraph"``. With
    ``problem``, a predicted plan's transfers get one row per link (trace "transfers") and
    the critical path is outlined (``critical``: None outlines it unless it is every op,
    True always, False never); idle gaps are shaded; a plan's subgraphs end at dotted lines.
    A run's unit measured as a whole is one bar; ``estimates`` adds its per-op split,
    hatched and named an estimate. ``moved``: node -> (its device in another plan, its
    device here) of the ops placed differently (``viz.diff.moved_ops``), outlined.
    ``measured``: a run of the plan, stacked under it on the same x axis.
    ``height``: by default ``ROW_PX`` per row; ``width``: the title wraps to it.
    """
    opts = {"color": color, "estimates": estimates, "critical": critical, "moved": moved}
    opts["width"] = width
    if measured is not None:
        return compare_figure(
            [plan_or_run, measured],
            [title or "predicted", "measured"],
            problem,
            color,
            height,
            width=width,
            estimates=estimates,
            critical=critical,
        )
    b = as_bars(plan_or_run, title)
    traces, rows, notes = _traces(b, problem, devices_of(b, problem), opts)
    fig = go.Figure(traces)
    for x in boundaries(b):
        fig.add_vline(x=x, line={"dash": "dot", "width": 1, "color": "#555"})
    text, lines = wrap_title(title_parts(b, problem) + notes, width, reserve_px=MODEBAR_PX)
    top = 8 + TITLE_LINE_PX * lines + LEGEND_PX
    h = height or top + BOTTOM_PX + ROW_PX * max(MIN_ROWS, len(rows))
    fig.update_layout(
        title=title_layout(text, lines, h),
        barmode="overlay",
        font=FONT,
        height=h,
        width=width,
        margin={"l": 10, "r": 10, "t": top, "b": BOTTOM_PX},
        xaxis={"title": "time (ms)", "type": "linear", "rangemode": "tozero"},
        yaxis=_axis(rows),
        plot_bgcolor="#fafafa",
        legend=_legend(h, 8 + TITLE_LINE_PX * lines),
    )
    return fig.update_layout(uniformtext=UNIFORMTEXT, modebar=MODEBAR)


def compare_figure(
    items: Sequence[Any],
    titles: Sequence[str] | None = None,
    problem: Any = None,
    color: str = "op",
    height: int | None = None,
    *,
    width: int | None = None,
    estimates: bool = False,
    critical: bool | None = None,
    moved: Sequence[dict[str, tuple[str, str]] | None] | None = None,
    title: str | None = None,
) -> go.Figure:
    """Several Gantts stacked on one shared ms axis (e.g. ILP | greedy | measured), each
    panel ``ROW_PX`` per row with its wrapped title above it; ``moved``: one map per panel
    (see ``gantt_figure``); ``title``: a line above them all."""
    bars = [as_bars(it, titles[i] if titles else None) for i, it in enumerate(items)]
    built = []
    for i, b in enumerate(bars):
        opts = {
            "color": color,
            "estimates": estimates,
            "critical": critical,
            "moved": moved[i] if moved else None,
            "width": width,
        }
        built.append(_traces(b, problem, devices_of(b, problem), opts, i == 0))
    heads = [
        wrap_title(title_parts(b, problem) + notes, width)
        for b, (_, _, notes) in zip(bars, built, strict=True)
    ]
    main = wrap_title([title], width, reserve_px=MODEBAR_PX) if title else ("", 0)
    fig = make_subplots(rows=len(bars), cols=1, shared_xaxes=True, vertical_spacing=0.01)
    for i, (traces, rows, _) in enumerate(built):
        for t in traces:
            fig.add_trace(t, row=i + 1, col=1)
        fig.update_yaxes(**_axis(rows), row=i + 1, col=1)
        for x in boundaries(bars[i]):
            fig.add_vline(x=x, line={"dash": "dot", "width": 1, "color": "#555"}, row=i + 1, col=1)
    _one_legend_entry_each(fig)
    h = _stack(fig, [rows for _, rows, _ in built], heads, main, height)
    fig.update_xaxes(title_text="time (ms)", row=len(bars), col=1)
    fig.update_layout(font=FONT, barmode="overlay", plot_bgcolor="#fafafa", width=width)
    fig.update_layout(uniformtext=UNIFORMTEXT, modebar=MODEBAR)
    if title:
        fig.update_layout(title=title_layout(main[0], main[1], h))
    return fig


def _one_legend_entry_each(fig: go.Figure) -> None:
    """The first trace of each overlay (whichever panel has it) carries its legend entry."""
    seen: set[str] = set()
    for t in fig.data:
        if t.legendgroup:
            t.showlegend = t.name not in seen
            seen.add(t.name)


def gaps_of(heads) -> list[int]:
    """px above each panel: its title's lines and a little air."""
    return [TITLE_LINE_PX * lines + (6 if k == 0 else 16) for k, (_, lines) in enumerate(heads)]


def _stack(fig: go.Figure, rows: list[list[str]], heads, main, height: int | None) -> int:
    """Sets each panel's domain (``ROW_PX`` per row, its title's lines above it), the
    titles, the legend under the main title and the height; returns the height."""
    legend_top = 8 + TITLE_LINE_PX * main[1]
    top = legend_top + LEGEND_PX + gaps_of(heads)[0]
    plots = [ROW_PX * max(MIN_ROWS, len(r)) for r in rows]
    gaps = gaps_of(heads)
    inner = sum(plots) + sum(gaps[1:])
    h = height or top + inner + BOTTOM_PX
    frac = 1.0 / inner  # paper per px of the design: an explicit height scales it all
    y = 1.0
    ann = []
    for k, (p, g) in enumerate(zip(plots, gaps, strict=True)):
        y_top = y - g * frac if k else y
        y_bot = max(0.0, y_top - p * frac)
        fig.layout[f"yaxis{'' if k == 0 else k + 1}"].domain = [y_bot, y_top]
        ann.append(
            {
                "x": 0.0,
                "y": y_top,
                "xref": "paper",
                "yref": "paper",
                "xanchor": "left",
                "yanchor": "bottom",
                "showarrow": False,
                "text": heads[k][0],
                "font": {"size": 12},
                "align": "left",
                "name": "panel title",
            }
        )
        y = y_bot
    fig.update_layout(
        annotations=ann,
        height=h,
        margin={"l": 10, "r": 10, "t": top, "b": BOTTOM_PX},
        legend=_legend(h, legend_top),
    )
    return h
