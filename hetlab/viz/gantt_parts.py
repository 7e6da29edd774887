"""The traces and title parts a Gantt chart (``viz.gantt``) is built from."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from hetlab.schedulers.bounds import lower_bound
from hetlab.timeline import Interval
from hetlab.viz.common import PALETTE, Bars, color_of, device_colors, fmt_ms

CRITICAL = "#d62728"
MOVED = "#111111"
OUTLINE_PX = 6  # px per bar on average below which bars lose their white edges
LABEL_CHARS = 24  # characters of an op's name inside its bar


def lower_bound_of(problem: Any) -> float | None:
    """The scheduler bound (``hetlab.schedulers.bounds.lower_bound``) if it is available."""
    if problem is None:
        return None
    try:
        return float(lower_bound(problem))
    except Exception:  # noqa: BLE001  a bound is a nicety in a title; never fail a figure for it
        return None


def breakdown(cp: dict[str, Any] | None) -> str:
    """A run's critical-path terms (the report's ``critical_path``) as one line of positive
    parts; a term below zero (two threads' clocks disagree) is left out and named."""
    if not cp:
        return ""
    names = [("run_ms", "run"), ("copies_ms", "copies"), ("dispatch_ms", "dispatch")]
    names.append(("tail_ms", "tail"))
    vals = [(label, cp.get(k)) for k, label in names if cp.get(k) is not None]
    if not vals:
        return ""
    clipped = [label for label, v in vals if v < 0]
    text = " + ".join(f"{label} {fmt_ms(v)}" for label, v in vals if v > 0)
    why = " below 0, left out"
    note = f" ({', '.join(clipped)}{why})" if clipped else ""
    return f"latency along the run's critical path: {text or '0 ms'}{note}"


def title_parts(b: Bars, problem: Any) -> list[str]:
    """The parts of a timeline's title, for ``viz.scale.wrap_title``."""
    parts = [f"<b>{b.label}</b>", f"makespan {fmt_ms(b.makespan)}"]
    if b.measured:
        parts[1] = f"measured {fmt_ms(b.makespan)}"
        if b.replay:
            parts[1] = f"replayed {fmt_ms(b.makespan)} on a virtual clock (not measured)"
        if b.predicted:
            err = (b.makespan - b.predicted) / b.predicted
            parts.append(f"predicted {fmt_ms(b.predicted)} ({err:+.0%})")
        if b.members:
            n = sum(len(m) for m in b.members.values())
            how = "replayed" if b.replay else "measured"
            parts.append(f"{len(b.members)} unit(s) of {n} ops {how} as a whole: one bar each")
        if b.replay:
            parts.append("transfers inside the units' times")
        else:
            parts.append(
                "copies as measured" if b.moves is not None else "copies not in this report"
            )
        cp = breakdown(b.breakdown)
        if cp:
            parts.append(cp)
    else:
        lb = lower_bound_of(problem)
        if lb is not None:
            parts.append(f"lower bound {fmt_ms(lb)}")
        if b.solve_seconds is not None:
            parts.append(f"solve {b.solve_seconds:.2f} s")
    if b.subgraphs:
        parts.append(f"{len(b.subgraphs)} subgraphs")
    return parts


def _op_of(problem: Any) -> dict[str, str]:
    return {n.id: n.op_type for n in problem.nodes} if problem is not None else {}


def _colors(
    rows: list[Interval], b: Bars, problem: Any, color: str, devices: list[str]
) -> list[str]:
    if color == "unit":
        pal = device_colors(devices)
        return [pal.get(r.device, "#999") for r in rows]
    if color == "subgraph" and b.subgraphs:
        of = {v: k for k, g in enumerate(b.subgraphs) for v in g}
        return [PALETTE[of[r.name] % len(PALETTE)] if r.name in of else "#bbb" for r in rows]
    op_of = _op_of(problem)
    return [color_of(op_of.get(r.name, "?")) for r in rows]


def outlined(b: Bars, width: int | None) -> bool:
    """Whether op bars get a white edge: only where a row's bars are OUTLINE_PX wide on
    average, or the edges would whiten a dense row."""
    per_row: dict[str, int] = {}
    for r in b.rows:
        per_row[r.device] = per_row.get(r.device, 0) + 1
    return max(per_row.values(), default=0) * OUTLINE_PX <= (width or 900)


def op_bar(b: Bars, problem: Any, color: str, devices: list[str], edges: bool = True) -> go.Bar:
    """One bar per op that has its own interval (every op of a plan), with white edges
    where ``edges`` (``outlined``)."""
    op_of = _op_of(problem)
    rows = [r for r in b.rows if r.name not in b.members]
    what = "measured" if b.measured else "predicted"
    hover = [
        f"<b>{r.name}</b> ({op_of.get(r.name, '?')})<br>{r.device}: {r.start:.3f} →"
        f" {r.finish:.3f} ms ({r.length:.3f} ms, {what}"
        f"{', end approximate' if r.name in b.approx else ''})"
        for r in rows
    ]
    return row_bar(
        rows,
        text=[bar_label(r.name) for r in rows],
        textposition="inside",
        insidetextanchor="start",
        textfont={"size": 10},
        hovertext=hover,
        hovertemplate="%{hovertext}<extra></extra>",
        name=b.label,
        marker={
            "color": _colors(rows, b, problem, color, devices),
            "line": {"width": 0.5 if edges else 0, "color": "white"},
        },
        showlegend=False,
    )


def approx_bar(b: Bars, legend: bool) -> go.Bar | None:
    """A dotted fill over each op bar whose end is approximate (None: there is none). It is
    its own trace: plotly.js warns once per bar for a pattern on bars of several colours."""
    rows = [r for r in b.rows if r.name in b.approx and r.name not in b.members]
    if not rows:
        return None
    segs = [(r.device, r.start, r.finish, f"<b>{r.name}</b>: end approximate") for r in rows]
    return segments(
        "end approximate",
        segs,
        legend,
        [r.name for r in rows],
        color="rgba(0,0,0,0)",
        line={"width": 0},
        pattern={"shape": ".", "fgcolor": "#333", "solidity": 0.25},
    )


def unit_bar(b: Bars, devices: list[str], legend: bool) -> go.Bar:
    """One bar per unit measured as a whole, in its device's colour, named inside; a
    dotted fill marks an approximate end."""
    pal = device_colors(devices)
    rows = [r for r in b.rows if r.name in b.members]
    hover = []
    for r in rows:
        ms = b.members[r.name]
        names = ", ".join(ms[:6]) + (f" and {len(ms) - 6} more" if len(ms) > 6 else "")
        end = (
            "<br>end approximate: the host saw it only when the device's work ended"
            if r.name in b.approx
            else ""
        )
        hover.append(
            f"<b>{r.name}</b>: {len(ms)} ops measured as a whole<br>{r.device}: {r.start:.3f} →"
            f" {r.finish:.3f} ms ({r.length:.3f} ms){end}<br>{names}<br>the time of each op"
            " inside was not measured"
        )
    return row_bar(
        rows,
        text=[f"{r.name} · {len(b.members[r.name])} ops" for r in rows],
        textposition="inside",
        insidetextanchor="middle",
        textfont={"size": 10, "color": "white"},
        hovertext=hover,
        hovertemplate="%{hovertext}<extra></extra>",
        name="measured units",
        legendgroup="measured units",
        showlegend=legend,
        marker={
            "color": [pal.get(r.device, "#777") for r in rows],
            "line": {"width": 1, "color": "white"},
            "pattern": {  # every colour given, as in ``op_bar``
                "shape": ["." if r.name in b.approx else "" for r in rows],
                "fillmode": "replace",
                "bgcolor": [pal.get(r.device, "#777") for r in rows],
                "fgcolor": "white",
            },
        },
    )


def share_bar(b: Bars, problem: Any, legend: bool) -> go.Bar:
    """The per-op split of the units measured as a whole, hatched: an estimate."""
    op_of = _op_of(problem)
    rows = b.shares
    return row_bar(
        rows,
        text=[
            f"<b>{r.name}</b> ({op_of.get(r.name, '?')})<br>estimated {r.length:.3f} ms: its"
            " unit's measured time split by flops, not measured per op"
            for r in rows
        ],
        textposition="none",
        hovertemplate="%{text}<extra>estimated</extra>",
        name="estimated (not measured)",
        legendgroup="estimated",
        showlegend=legend,
        marker={
            "color": "rgba(255,255,255,0.35)",
            "line": {"width": 0.5, "color": "#333"},
            "pattern": {"shape": "/", "fgcolor": "#333", "solidity": 0.3},
        },
    )


def row_bar(rows: list[Interval], **trace: Any) -> go.Bar:
    """A horizontal bar per row on its device's row, keyed by its name (``customdata``)."""
    return go.Bar(
        orientation="h",
        base=[r.start for r in rows],
        x=[r.length for r in rows],
        y=[r.device for r in rows],
        customdata=[r.name for r in rows],
        **trace,
    )


def bar_label(name: str, width: int = LABEL_CHARS) -> str:
    """The text inside an op's bar: the last two parts of its name, cut to ``width``."""
    tail = [p for p in name.split("/") if p][-2:]
    s = "/".join(tail) or name
    return s if len(s) <= width else "…" + s[-(width - 1) :]


def segments(
    name: str,
    segs: list[tuple[str, float, float, str]],
    legend: bool,
    keys: list[str] | None = None,
    trace: dict[str, Any] | None = None,
    **marker: Any,
) -> go.Bar:
    """A bar trace of (row, start, finish, hover) segments; ``keys``: the node of each
    segment (``customdata``, what a click selects); ``trace``: more of the trace's keys."""
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
        **({"customdata": keys} if keys is not None else {}),
        **(trace or {}),
    )


def moved_trace(b: Bars, moved: dict[str, tuple[str, str]], legend: bool) -> go.Bar:
    """A black outline, crossed, on each op of ``moved`` (node -> (its device in the other
    plan, its device here))."""
    segs = [
        (
            r.device,
            r.start,
            r.finish,
            f"<b>{r.name}</b>: on {moved[r.name][1]} here, on {moved[r.name][0]} in the other plan",
        )
        for r in b.rows
        if r.name in moved
    ]
    keys = [r.name for r in b.rows if r.name in moved]
    pattern = {"shape": "x", "fgcolor": MOVED, "solidity": 0.15}
    line = {"width": 2, "color": MOVED}
    return segments("moved", segs, legend, keys, color="rgba(0,0,0,0)", line=line, pattern=pattern)


def boundaries(b: Bars) -> list[float]:
    """When each subgraph of a plan finishes: where its boundary line is drawn."""
    if not b.subgraphs:
        return []
    fin = {r.name: r.finish for r in b.rows}
    return sorted(
        {max(fin[v] for v in g if v in fin) for g in b.subgraphs if any(v in fin for v in g)}
    )


def devices_of(b: Bars, problem: Any) -> list[str]:
    """The device rows: the problem's order (or the run's), then any other used."""
    used = list(dict.fromkeys(r.device for r in b.rows))
    known = list(problem.devices) if problem is not None else (b.devices or [])
    return [d for d in known if d in used] + [d for d in used if d not in known] or known
