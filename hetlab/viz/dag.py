"""``dag_figure``: the operator DAG in layers (``viz.layout``), one edge and one node trace,
a drawn colour key (``viz.dag_color``), labels on small graphs and on the costliest nodes of
large ones, WebGL on large ones, search, neighbours, scope collapsing (by default above
``COLLAPSE_ABOVE`` nodes) and a plan's subgraphs drawn over it (``viz.dag_overlay``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import plotly.graph_objects as go

from hetlab.viz.common import FONT, fmt_ms
from hetlab.viz.dag_color import Colouring, colouring
from hetlab.viz.dag_overlay import (
    LABEL_MAX,
    costliest,
    fitting,
    highlight_traces,
    label_annotations,
    neighbour_traces,
    scatter_class,
    subgraph_shapes,
    subgraphs_of,
)
from hetlab.viz.layout import DagLayout, dag_layout, is_problem
from hetlab.viz.scale import LINE_PX, STRIP_MARGIN, title_layout, wrap_title
from hetlab.viz.scopes import collapse_scopes, scope_of

WEBGL_ABOVE = 1000  # nodes; above this the figure draws with WebGL (Scattergl)
COLLAPSE_ABOVE = 400  # nodes; above this the default draws the graph collapsed by scope
COLLAPSE_TARGET = 120  # the deepest scope depth with at most this many scopes is chosen
FIT_MAX = 20  # labels at most per first view's width of layers where they fit (labels=None)
MATCH_LABELS = 12  # labelled matches and neighbours at most (all are ringed)
ROW_PX = 24  # px of height per slot of the widest layer
VISIBLE_LAYERS = 80  # layers shown at first; the rest is a pan away
HEIGHT = (320, 1000)  # px: the automatic height's bounds
MODEBAR_PX = 240  # px of the title's first line left to plotly's toolbar
MODEBAR = {"remove": ["select2d", "lasso2d", "autoScale2d"]}  # nothing here to select


def _costs(obj: Any, problem: Any, lay: DagLayout) -> tuple[list[str], np.ndarray] | None:
    if getattr(obj, "costs", None) is not None:
        return list(obj.devices), obj.costs
    if problem is None:
        return None
    m = np.full((len(lay.ids), len(problem.devices)), np.inf)
    pidx = problem.index
    cm = problem.cost_matrix
    for i, v in enumerate(lay.ids):
        j = pidx.get(v)
        if j is not None:
            m[i] = cm[j]
    return list(problem.devices), m


def _hover(lay: DagLayout, costs: tuple[list[str], np.ndarray] | None) -> list[str]:
    text = []
    for i in range(len(lay.ids)):
        t = f"<b>{lay.ids[i]}</b><br>{lay.op_types[i]} · level {int(lay.level[i])}"
        if lay.shapes[i]:
            t += f"<br>out {lay.shapes[i]}"
        if lay.flops[i]:
            t += f"<br>{lay.flops[i] / 1e6:.3g} MFLOP"
        if costs is not None:
            t += "<br>" + ", ".join(
                f"{d} {fmt_ms(c) if math.isfinite(c) else 'n/a'}"
                for d, c in zip(costs[0], costs[1][i], strict=True)
            )
        text.append(t)
    return text


def auto_depth(obj: Any, above: int = COLLAPSE_ABOVE, target: int = COLLAPSE_TARGET) -> int | None:
    """The scope depth ``dag_figure`` collapses ``obj`` to by default: none at or below
    ``above`` nodes, else the deepest depth (up to 6) whose scopes number from 2 to
    ``target``; None when no depth does."""
    if getattr(obj, "is_scope_graph", False) or len(obj.nodes) <= above:
        return None
    best = None
    for depth in range(1, 7):
        k = len({scope_of(n.id, depth) for n in obj.nodes})
        if 2 <= k <= target:
            best = depth
        if k > target:
            break
    return best


def _collapse(obj: Any, collapse: Any, problem: Any) -> tuple[Any, str]:
    if collapse == "auto":
        collapse = auto_depth(obj)
        if collapse is None:
            return obj, ""
        sg = collapse_scopes(obj, collapse, problem)
        note = f"{len(obj.nodes)} ops collapsed by name scope (depth {collapse}; collapse=None draws every op)"
        return sg, note
    if collapse is None:
        return obj, ""
    return collapse_scopes(obj, collapse, problem), ""


def dag_figure(
    obj: Any,
    color: Any = "op",
    problem: Any = None,
    height: int | None = None,
    *,
    highlight: Any = None,
    neighbors: str | None = None,
    subgraphs: Any = None,
    collapse: int | str | None = "auto",
    labels: bool | int | None = None,
    webgl: bool | None = None,
    width: int | None = None,
) -> go.Figure:
    """The DAG of an ``OpGraph``, ``Problem`` or ``ScopeGraph``: x = layer, y = slot.

    ``color``: ``"op"`` (op type), ``"best"`` (the device that runs a node fastest),
    ``"cost:DEVICE"`` (log scale; an x marks a node the device cannot run), ``"level"``
    (HOPE's level; ``"uprank"``, the paper's name for it, is the same colour),
    ``"subgraph"``, or a ``Plan`` / plan JSON / node -> device map (colour by device). A
    continuous colour gets a drawn colour strip, categories a line of swatches with counts.
    ``problem`` supplies costs for the hover when ``obj`` is a graph.
    ``highlight``: a name fragment (or a list of names) whose matches are ringed and labelled.
    ``neighbors``: a node whose predecessors and successors are ringed, their edges bold.
    ``subgraphs``: a plan with ``extra["subgraphs"]`` or a list of lists of node ids; each
    subgraph gets a shaded region (a plan given as ``color`` brings its own).
    ``collapse``: draw the graph collapsed to name scopes of this depth; ``"auto"`` (the
    default) collapses a graph of more than ``COLLAPSE_ABOVE`` nodes (``auto_depth``); None
    draws every node. Op names in ``highlight``, ``neighbors``, subgraphs and plans find
    their scopes.
    ``labels``: True (every node), False, an int k (the k costliest), None: every node up to
    40 nodes, else up to ``MATCH_LABELS`` matched or selected nodes and then the costliest
    nodes, as many (up to ``FIT_MAX`` per ``VISIBLE_LAYERS`` layers) as fit at the first
    view's scale without overlapping.
    ``height``: by default ``ROW_PX`` per slot of the widest layer; a graph of more than
    ``VISIBLE_LAYERS`` layers opens on its first ones (drag to pan).
    ``webgl``: draw with ``Scattergl``; by default above 1000 nodes.
    """
    if problem is None and is_problem(obj):
        problem = obj
    obj, cnote = _collapse(obj, collapse, problem)
    members = {n.id: list(n.members) for n in obj.nodes} if _is_scopes(obj) else None
    lay = dag_layout(obj)
    costs = _costs(obj, problem, lay)
    n = len(lay.ids)
    groups = subgraphs_of(subgraphs) or (None if isinstance(color, str) else subgraphs_of(color))
    scatter = scatter_class(n, webgl, WEBGL_ABOVE)
    col = colouring(lay, color, costs, groups, members)
    fig = go.Figure(_base_traces(lay, costs, col, scatter))
    what = "scopes" if members else "ops"
    parts = [f"<b>{getattr(obj, 'name', '')}</b>", f"{n} {what}, {len(lay.src)} edges"]
    parts[-1] += f", {lay.size[0]} layers"
    parts += [cnote] if cnote else []
    parts.append(col.note.removeprefix(" — "))
    shown = _overlay(fig, lay, scatter, highlight, neighbors, groups, members, parts)
    ann = _labels(lay, costs, labels, shown, parts, width)
    fig.update_layout(annotations=ann + col.annotations)
    _frame(fig, lay, parts, col, height, width)
    return fig


def _base_traces(lay: DagLayout, costs, col: Colouring, scatter: type) -> list:
    """The edges (one trace) and the nodes (one trace)."""
    n = len(lay.ids)
    # one trace for all edges: polylines separated by None (JSON null; a bare NaN is not valid
    # JSON and breaks FigureWidget messages)
    edge = scatter(
        x=lay.ex,
        y=lay.ey,
        mode="lines",
        hoverinfo="skip",
        name="edges",
        line={"width": 0.6, "color": "rgba(120,120,120,0.45)"},
        showlegend=False,
    )
    col.marker.update(size=9 if n <= LABEL_MAX else 7 if n < 400 else 5, line={"width": 0})
    text = [t + s for t, s in zip(_hover(lay, costs), col.suffix, strict=True)]
    # plain lists, not numpy arrays: FigureWidget ships arrays as binary buffers, which the
    # browser sometimes failed to draw (blank DAG) while list-based figures always drew
    nodes = scatter(
        x=lay.x.tolist(),
        y=lay.y.tolist(),
        mode="markers",
        marker=col.marker,
        text=text,
        customdata=list(lay.ids),
        hovertemplate="%{text}<extra></extra>",
        name="ops",
        showlegend=False,
    )
    return [edge, nodes]


def _is_scopes(obj: Any) -> bool:
    return bool(getattr(obj, "is_scope_graph", False))


def px_per_unit(lay: DagLayout, width: int | None) -> tuple[float, float]:
    """px per layer and per slot in the first view (``_frame``'s size, ``VISIBLE_LAYERS``
    layers across ``width``, 900 px when unknown)."""
    cols, rows = lay.size
    across = min(max(cols, 1), VISIBLE_LAYERS) + 0.4
    # the axis pads its range, and a range slider takes a share of the plot's height
    squeeze = 0.7 if cols > VISIBLE_LAYERS else 0.85
    return ((width or 900) - 100) / across, squeeze * min(ROW_PX, (HEIGHT[1] - 120) / max(rows, 1))


def _labels(lay, costs, labels, shown: list[int], parts: list[str], width) -> list[dict]:
    """Every node's label up to ``LABEL_MAX`` nodes; above, the matched and selected nodes'
    and then the costliest nodes' labels that fit in the first view without overlapping."""
    n = len(lay.ids)
    if labels is True or (labels is None and n <= LABEL_MAX):
        return label_annotations(lay, costs)
    if labels is False:
        return []
    if isinstance(labels, int):
        return label_annotations(lay, costs, costliest(lay, costs, labels))
    want = list(dict.fromkeys(shown[:MATCH_LABELS] + costliest(lay, costs, n)))
    views = -(-lay.size[0] // VISIBLE_LAYERS)  # a pan shows each view's own labels
    idx = fitting(lay, want, px_per_unit(lay, width), costs, FIT_MAX * views)
    if idx:
        parts.append(f"labels: {len(idx)} that fit, costliest first (hover for the rest)")
    return label_annotations(lay, costs, idx)


def _frame(fig, lay: DagLayout, parts: list[str], col: Colouring, height, width) -> None:
    """Title, size, axes and the first view of the layers."""
    cols, rows = lay.size
    xaxis: dict[str, Any] = {"title": "layer", "showgrid": False, "zeroline": False}
    if cols > VISIBLE_LAYERS:
        # the whole graph in a slider under the plot: drag its window to move along it
        xaxis["range"] = [-0.7, VISIBLE_LAYERS - 0.3]
        xaxis["rangeslider"] = {"visible": True, "thickness": 0.08, "range": [-0.7, cols - 0.3]}
        parts.append(
            f"layers 0–{VISIBLE_LAYERS - 1} of {cols} shown: drag to pan, or the slider below"
        )
    title, lines = wrap_title(parts, width, reserve_px=MODEBAR_PX)
    top = 18 + LINE_PX * lines + (18 if col.annotations and not col.strip else 0)
    auto = min(HEIGHT[1], max(HEIGHT[0], top + 50 + ROW_PX * rows))
    fig.update_layout(
        title=title_layout(title, lines, height or auto),
        height=height or auto,
        width=width,
        font=FONT,
        margin={"l": 10, "r": STRIP_MARGIN if col.strip else 10, "t": top, "b": 40},
        plot_bgcolor="white",
        hovermode="closest",
        dragmode="pan",
        xaxis=xaxis,
        yaxis={"visible": False},
        modebar=MODEBAR,
        shapes=list(fig.layout.shapes) + col.shapes,
        uirevision="dag",
    )


def _lift_groups(groups: list[list[str]], members) -> list[list[str]]:
    if not members:
        return groups
    of = {m: sid for sid, ms in members.items() for m in ms}
    return [list(dict.fromkeys(of.get(v, v) for v in g)) for g in groups]


def _overlay(fig, lay, scatter, highlight, neighbors, groups, members, parts) -> list[int]:
    """Adds the search matches, the neighbours and the subgraph regions and their notes to
    ``parts``; returns the indices of the matched and selected nodes."""
    shown: list[int] = []
    if highlight is not None and not (isinstance(highlight, str) and not highlight.strip()):
        traces, msg, idx = highlight_traces(lay, highlight, scatter, members)
        fig.add_traces(traces)
        parts.append(msg)
        shown += idx
    if neighbors:
        traces, msg, idx = neighbour_traces(lay, neighbors, scatter, members)
        fig.add_traces(traces)
        parts.append(msg)
        shown = idx + shown
    if groups:
        fig.update_layout(shapes=subgraph_shapes(lay, _lift_groups(groups, members)))
        parts.append(f"{len(groups)} subgraphs shaded")
    return shown
