"""Figure of an adaptive-execution latency trace: per-run latency (ms), coloured
by the plan that ran, probes marked, switch points as dashed vertical lines and interference
on/off marks as dotted ones; the static (non-adaptive) run under the same schedule in grey.
Pure: trace JSON in (``AdaptiveTrace.to_json()`` or the ``--adaptive-trace`` file), figure out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go


def _doc(trace: Any) -> Mapping[str, Any]:
    return trace.to_json() if hasattr(trace, "to_json") else trace


def adaptive_figure(trace: Any, static: Any = None, title: str = "adaptive execution") -> go.Figure:
    """``trace``: an adaptive trace (or a file's document with ``adaptive``/``static`` keys)."""
    doc = _doc(trace)
    if "adaptive" in doc and "runs" not in doc:
        static = static if static is not None else doc.get("static")
        doc = doc["adaptive"]
    fig = go.Figure()
    if static is not None:
        st = _doc(static)
        fig.add_trace(
            go.Scatter(
                x=[r["run"] for r in st["runs"]],
                y=[r["latency_ms"] for r in st["runs"]],
                mode="lines+markers",
                name=f"static (median {st.get('median_ms', 0):.1f} ms)",
                line={"color": "#aaaaaa"},
                marker={"size": 5},
            )
        )
    fig.add_trace(
        go.Scatter(
            x=[r["run"] for r in doc["runs"]],
            y=[r["latency_ms"] for r in doc["runs"]],
            mode="lines",
            name=f"adaptive (median {doc.get('median_ms', 0):.1f} ms)",
            line={"color": "#1f77b4"},
        )
    )
    _plan_markers(fig, doc["runs"])
    _switch_lines(fig, doc)
    fig.update_layout(
        title=title,
        xaxis_title="run",
        yaxis_title="latency (ms)",
        template="plotly_white",
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def _plan_markers(fig: go.Figure, runs: list[dict[str, Any]]) -> None:
    """One marker trace per plan that ran, probes as larger diamonds."""
    plans: dict[str, list[dict[str, Any]]] = {}
    for r in runs:
        plans.setdefault(r["plan"], []).append(r)
    for label, rs in plans.items():
        fig.add_trace(
            go.Scatter(
                x=[r["run"] for r in rs],
                y=[r["latency_ms"] for r in rs],
                mode="markers",
                name=f"plan {label}",
                marker={
                    "size": [11 if r["probe"] else 7 for r in rs],
                    "symbol": ["diamond" if r["probe"] else "circle" for r in rs],
                },
                text=[
                    f"devices {', '.join(r['devices'])}<br>slowdown {r['slowdown']}<br>{r['note']}"
                    for r in rs
                ],
                hovertemplate="run %{x}: %{y:.1f} ms<br>%{text}<extra></extra>",
            )
        )


def _switch_lines(fig: go.Figure, doc: Mapping[str, Any]) -> None:
    """Switches as dashed vertical lines, marks (interference on/off) as dotted ones."""
    for s in doc.get("switches", []):
        fig.add_vline(
            x=s["run"] - 0.5,
            line_dash="dash",
            line_color="crimson",
            annotation_text=f"→ {s['to']}",
            annotation_position="top",
        )
    for m in doc.get("marks", []):
        fig.add_vline(
            x=m["run"] - 0.5,
            line_dash="dot",
            line_color="gray",
            annotation_text=m["event"],
            annotation_position="bottom right",
        )
