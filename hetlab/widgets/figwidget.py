"""Figures in the workbench: a ``FigureSlot`` shows a one-line message until there is something
to draw, then a plotly ``FigureWidget`` created with that content and updated in place.

Each FigureWidget carries plotly.js (about 5 MB) to the browser, and the workbench appears only
once all its children exist there: creating figures when they first have content keeps the
widget's first view fast, and no figure is ever shown empty first.

A FigureWidget is never shown again once its view has left the page: plotly's browser view
purges its plot on removal but keeps listening to its model, so the next update of that model
fails in the removed view ("Cannot read properties of undefined (reading '_guiEditing')",
reported as "Error setting state") and never reaches the live view. A slot that shows a
message therefore closes its figure, and a figure of another structure (trace count or types)
replaces the old one instead of updating it."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import plotly.graph_objects as go

if TYPE_CHECKING:
    from plotly.graph_objects import FigureWidget


def no_colorbar(fig: go.Figure) -> go.Figure:
    """plotly 7.1's FigureWidget draws nothing at all for a trace with a colour bar (seen in
    JupyterLab 4.6 + Chromium): widgets show the scale in the title instead."""
    for t in fig.data:
        if "showscale" in t:
            t.showscale = False
        if "marker" in t and "showscale" in t.marker:
            t.marker.showscale = False
    return fig


def sync_full_state(fw: FigureWidget) -> None:
    """Refresh the state a browser view draws from when it is created. plotly refreshes it
    only when the figure itself is displayed, never inside a Box, so a view created after an
    in-place update (the figure's module still loading, a notebook reopened) would draw the
    figure as it was first made."""
    fw._repr_mimebundle_()


def same_structure(fw: FigureWidget, fig: go.Figure) -> bool:
    """Whether ``fig`` has the traces of ``fw`` (count and types), so it can update in place."""
    return len(fw.data) == len(fig.data) and all(
        a.type == b.type for a, b in zip(fw.data, fig.data, strict=False)
    )


def update_in_place(fw: FigureWidget, fig: go.Figure) -> None:
    """Make ``fw`` show ``fig``, which has the same structure: traces restyled, layout
    overwritten, in one batch."""
    fig = no_colorbar(go.Figure(fig))
    with fw.batch_update():
        for old, new in zip(fw.data, fig.data, strict=True):
            nj = new.to_plotly_json()
            for k in list(old.to_plotly_json()):
                if k not in nj and k not in ("type", "uid"):
                    old[k] = None
            nj.pop("type", None)
            old.update(nj, overwrite=True)
        # one relayout: setting 'xaxis.visible' and 'xaxis' in one batch makes plotly.js
        # refuse the whole state ("cannot set yaxis.visible and a parent attribute")
        lj = fig.layout.to_plotly_json()
        lj.pop("template", None)
        lj.setdefault("annotations", [])
        lj.setdefault("shapes", [])
        fw.layout.update(lj, overwrite=True)
    sync_full_state(fw)


class FigureSlot:
    """One figure's place in the layout (``box``); ``fig`` is None until ``show``."""

    def __init__(self, width: int | None = None) -> None:
        self.width = width
        self.note = W.HTML(layout=W.Layout(min_height="1.6em"))
        self.box = W.Box([self.note], layout=W.Layout(width=f"{width + 10}px" if width else ""))
        self.fig: FigureWidget | None = None
        self._clicks: list[Callable[[dict[str, Any]], None]] = []

    def on_click(self, callback: Callable[[dict[str, Any]], None]) -> None:
        """Call ``callback(point)`` when a point of the figure is clicked; ``point`` holds
        the trace's ``name``, the point's ``index`` and its ``customdata``."""
        self._clicks.append(callback)
        if self.fig is not None:
            self._listen(self.fig)

    def _listen(self, fw: FigureWidget) -> None:
        for t in fw.data:
            t.on_click(self._clicked)

    def _clicked(self, trace: Any, points: Any, _state: Any) -> None:
        for i in points.point_inds:
            value = trace.customdata  # a heatmap's point is (row, column)
            for k in i if isinstance(i, (list, tuple)) else [i]:
                value = value[k] if value is not None and k < len(value) else None
            point = {"trace": trace.name, "index": i, "customdata": value}
            for cb in self._clicks:
                cb(point)

    def message(self, text: str) -> None:
        """Show ``text`` (why there is nothing to draw) instead of the figure, which is closed:
        the next ``show`` makes a new one (see the module doc)."""
        self.note.value = f"<i style='color:#777;font-size:12px'>{escape(text)}</i>"
        self.box.children = (self.note,)
        self.drop()

    def drop(self) -> None:
        """Close the figure (its browser model and views go with it)."""
        fig, self.fig = self.fig, None
        if fig is not None:
            fig.close()

    def show(self, fig: go.Figure) -> FigureWidget:
        if self.width:
            fig.update_layout(width=self.width)
        if self.fig is not None and same_structure(self.fig, fig):
            update_in_place(self.fig, fig)
        else:
            old = self.fig
            # plotly's widget class is imported here, at the first figure, usually on a worker
            # thread: it pulls in nbformat and jsonschema, seconds the widget need not wait for
            self.fig = go.FigureWidget(no_colorbar(go.Figure(fig)))
            sync_full_state(self.fig)
            if self._clicks:
                self._listen(self.fig)
            self.box.children = (self.fig,)
            if old is not None:
                old.close()
        if self.box.children != (self.fig,):
            self.box.children = (self.fig,)
        return self.fig

    def set_range(self, xrange: list[float]) -> None:
        """Move the x axis only (a shared range that another figure changed)."""
        if self.fig is not None and list(self.fig.layout.xaxis.range or []) != list(xrange):
            self.fig.layout.xaxis.range = xrange
            sync_full_state(self.fig)
