"""Figures in the workbench: a ``FigureSlot`` shows a one-line message until there is something
to draw, then the figure, redrawn whole at every change.

A figure is an ipywidgets ``Output`` holding one display of the figure's plotly mime bundle
(``application/vnd.plotly.v1+json``), drawn by the plotly renderer of the front end: the
jupyterlab-plotly extension that plotly ships (JupyterLab, Notebook 7) or VS Code's own. The
figure is part of the Output's state, which the kernel holds: a view created later (a cell
scrolled back into a windowed notebook, a second view, a page reload with the kernel still
running) draws the figure as it is now, and plotly.js is loaded once per page by the
extension, never sent with a widget. plotly's ``FigureWidget`` is not used: it is an
anywidget whose 5 MB module misses anywidget's two-second start-up limit on a busy page,
after which anywidget drops every update of it (charts frozen after a reload, empty after
Run All); docs/decisions.md, "Figures that always draw", says what was seen.

An update sends the whole figure, as plain JSON (lists, not binary arrays, so the browser's
``p.data`` reads as plotly's own), and only when it differs from the one shown.

Clicks: ``slot.on_click(callback)`` calls ``callback(point)`` with each point clicked in the
slot's figure, whatever figure the slot shows now or later; ``point`` is a dict of plotly's
event point: ``curveNumber`` and ``pointNumber`` (the trace and its point), ``x``, ``y``,
``customdata``, ``text``, ``hovertext``, ``name`` (the trace's name), ... (None where the
point has no such field). The callback runs in the kernel's comm handler: keep it short,
and catch what it may raise (an exception there is logged by the kernel, not shown)."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from html import escape
from typing import Any

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go
from plotly.utils import PlotlyJSONEncoder

from hetlab.widgets.clicks import ClickRelay

MIME = "application/vnd.plotly.v1+json"
CONFIG = {"displaylogo": False}


def plain(obj: Any) -> Any:
    """``obj`` with numpy arrays, plotly's base64 arrays (``{"dtype", "bdata"}``) and numpy
    scalars as Python lists and numbers: plotly.js draws base64 arrays, but the browser's
    ``p.data`` keeps them encoded, unreadable to anything that reads the plot."""
    if isinstance(obj, dict):
        if "bdata" in obj and "dtype" in obj:
            arr = np.frombuffer(base64.b64decode(obj["bdata"]), dtype=np.dtype(obj["dtype"]))
            if obj.get("shape"):
                arr = arr.reshape([int(n) for n in str(obj["shape"]).split(",")])
            return arr.tolist()
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return plain(obj.tolist())
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def figure_json(fig: go.Figure) -> dict[str, Any]:
    """The figure as strict JSON data (NaN as null), as plotly's renderer takes it."""
    spec = json.loads(json.dumps(plain(fig.to_plotly_json()), cls=PlotlyJSONEncoder))
    return {"data": spec.get("data", []), "layout": spec.get("layout", {}), "config": CONFIG}


def display_data(spec: dict[str, Any]) -> dict[str, Any]:
    """One display output of the figure; a line of text where no plotly renderer exists."""
    title = (spec["layout"].get("title") or {}).get("text") or "figure"
    text = f"<plotly figure: {title}>"
    return {"output_type": "display_data", "data": {MIME: spec, "text/plain": text}, "metadata": {}}


class FigureSlot:
    """One figure's place in the layout (``box``); ``fig`` is the figure shown, None while
    the slot shows a message."""

    def __init__(self, width: int | None = None) -> None:
        self.width = width
        self.note = W.HTML(layout=W.Layout(min_height="1.6em"))
        self.out = W.Output()
        self.box = W.Box([self.note], layout=W.Layout(width=f"{width + 10}px" if width else ""))
        self.box.add_class("hetlab-figure")
        self.fig: go.Figure | None = None
        self.relay: ClickRelay | None = None
        self._sent: dict[str, Any] | None = None

    def message(self, text: str) -> None:
        """Show ``text`` (why there is nothing to draw) instead of the figure."""
        self.note.value = f"<i style='color:#777;font-size:12px'>{escape(text)}</i>"
        self.fig, self._sent = None, None
        self.out.outputs = ()
        self._place()

    def show(self, fig: go.Figure) -> go.Figure:
        """Draw ``fig`` (at the slot's width, if it has one) in place of what was shown."""
        if self.width:
            fig.update_layout(width=self.width)
        self.fig = fig
        spec = figure_json(fig)
        if spec != self._sent:
            self._sent = spec
            height = spec["layout"].get("height")
            # the Output keeps the figure's height while the renderer replaces the plot
            minimum = f"{height}px" if height else ""
            if self.out.layout.min_height != minimum:
                self.out.layout.min_height = minimum
            self.out.outputs = (display_data(spec),)
        self._place()
        return fig

    def set_range(self, xrange: list[float]) -> None:
        """Move the x axis only (a shared range that another figure changed)."""
        if self.fig is not None and list(self.fig.layout.xaxis.range or []) != list(xrange):
            self.fig.layout.xaxis.range = xrange
            self.show(self.fig)

    def on_click(self, callback: Callable[[dict[str, Any]], Any]) -> None:
        """Call ``callback(point)`` for every point clicked in this slot's figure, now and
        after every redraw (see the module doc for ``point``)."""
        if self.relay is None:
            self.relay = ClickRelay()
            self._place()
        self.relay.callbacks.append(callback)

    def _place(self) -> None:
        if self.fig is None:
            children: tuple[W.Widget, ...] = (self.note,)
        else:
            children = (self.out,) + ((self.relay,) if self.relay is not None else ())
        if self.box.children != children:
            self.box.children = children
