"""In-place updates of a plotly ``FigureWidget`` from a freshly built ``go.Figure``."""

from __future__ import annotations

import plotly.graph_objects as go

# imported with the package, not at the first figure: plotly's widget module pulls in nbformat
# and jsonschema, seconds of start-up that belong to the import cell, not to the widget's
FigureWidget = go.FigureWidget


def new_widget(fig: go.Figure | dict | None = None, height: int = 300) -> FigureWidget:
    fw = FigureWidget(fig) if fig is not None else FigureWidget()
    if fig is None:
        fw.update_layout(height=height, margin={"l": 10, "r": 10, "t": 40, "b": 30})
    return fw


def placeholder(fw: FigureWidget, message: str) -> None:
    """Empty the figure and show ``message`` in its title (why there is nothing to draw)."""
    with fw.batch_update():
        if fw.data:
            fw.data = []
        fw.layout.title = {"text": f"<i>{message}</i>", "font": {"size": 12, "color": "#777"}}
        fw.layout.height = 70  # a one-line message, not an empty plot area
        fw.layout.plot_bgcolor = "white"


def no_colorbar(fig: go.Figure) -> go.Figure:
    """plotly 7.1's FigureWidget draws nothing at all for a trace with a colour bar (seen in
    JupyterLab 4.6 + Chromium): widgets show the scale in the title instead."""
    for t in fig.data:
        if "showscale" in t:
            t.showscale = False
        if "marker" in t and "showscale" in t.marker:
            t.marker.showscale = False
    return fig


def update_in_place(fw: FigureWidget, fig: go.Figure) -> None:
    """Make ``fw`` show ``fig``: traces updated in place when the trace types match (the
    usual case: new costs, a new plan), else replaced; layout overwritten; one batch."""
    fig = no_colorbar(go.Figure(fig))
    with fw.batch_update():
        same = len(fw.data) == len(fig.data) and all(
            a.type == b.type for a, b in zip(fw.data, fig.data, strict=False)
        )
        if same:
            for old, new in zip(fw.data, fig.data, strict=False):
                nj = new.to_plotly_json()
                for k in list(old.to_plotly_json()):
                    if k not in nj and k not in ("type", "uid"):
                        old[k] = None
                nj.pop("type", None)
                old.update(nj, overwrite=True)
        else:
            if fw.data:
                fw.data = []
            fw.add_traces(list(fig.data))
        # one relayout: setting 'xaxis.visible' and 'xaxis' in one batch makes plotly.js
        # refuse the whole state ("cannot set yaxis.visible and a parent attribute")
        lj = fig.layout.to_plotly_json()
        lj.pop("template", None)
        lj.setdefault("annotations", [])
        lj.setdefault("shapes", [])
        fw.layout.update(lj, overwrite=True)
