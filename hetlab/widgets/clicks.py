"""``ClickRelay``: a tiny anywidget that sends plotly's clicks on a figure back to Python.

Its view is an invisible element inside a figure slot's box (CSS class ``hetlab-figure``):
it hooks ``plotly_click`` on every plot drawn in that box, and again on each plot drawn
later (a figure is re-rendered as a new plot at every update, and after a page reload), so
clicks reach Python whatever drew the figure. It needs no message from Python: its
JavaScript is a few lines, and anywidget drops every message sent to a model whose module
took more than two seconds to load (see docs/decisions.md, "Figures that always draw"),
which never matters here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anywidget

# a clicked point as Python receives it: plotly's event point, without its circular fields
ESM = """
const FIELDS = ['curveNumber', 'pointNumber', 'pointIndex', 'x', 'y', 'z', 'base',
                'customdata', 'text', 'hovertext', 'id', 'label', 'value'];

function point(p) {
  const out = {name: (p.data && p.data.name) || null};
  for (const k of FIELDS) {
    const v = p[k];
    out[k] = v === undefined ? null : (typeof v === 'object' && v !== null
      ? JSON.parse(JSON.stringify(v)) : v);
  }
  return out;
}

function render({ model, el }) {
  el.style.display = 'none';
  const hooked = new WeakSet();
  const hook = () => {
    const box = el.closest('.hetlab-figure');
    if (!box) return;
    for (const gd of box.querySelectorAll('.js-plotly-plot')) {
      if (hooked.has(gd) || typeof gd.on !== 'function') continue;
      hooked.add(gd);
      gd.on('plotly_click', ev => {
        const p = ev && ev.points && ev.points[0];
        if (p) model.send({event: 'click', point: point(p)});
      });
    }
  };
  hook();
  const timer = setInterval(hook, 400);
  return () => clearInterval(timer);
}

export default { render };
"""


class ClickRelay(anywidget.AnyWidget):
    """Calls each callback of ``callbacks`` with the point clicked in its slot's figure (a
    dict: ``curveNumber``, ``pointNumber``, ``x``, ``y``, ``customdata``, ``text``,
    ``hovertext``, ``name`` (the trace's), ...; a field the point lacks is None)."""

    _esm = ESM

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.callbacks: list[Callable[[dict[str, Any]], Any]] = []
        self.on_msg(self._received)

    def _received(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        if not isinstance(content, dict) or content.get("event") != "click":
            return
        point = content.get("point")
        if isinstance(point, dict):
            for callback in list(self.callbacks):
                callback(point)
