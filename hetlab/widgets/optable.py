"""A sortable table of the costliest ops (``viz.costliest``): a header of buttons (a click
sorts by that column, a second click turns the order round), one row per op whose name is a
button that selects it. The row widgets are made once per shape of table and refilled on
every sort, so a sort sends values, not new widgets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as W

from hetlab.viz.common import fmt_ms
from hetlab.viz.costliest import BEST, costliest_ops

TOP = 15  # rows shown by default
CELL = W.Layout(width="auto", margin="0", padding="0 6px")


def _header(label: str, tip: str) -> W.Button:
    return W.Button(
        description=label,
        tooltip=tip,
        layout=W.Layout(width="auto", height="24px", margin="0"),
        style={"font_weight": "bold", "button_color": "#f2f2f2"},
    )


class OpTable(W.VBox):
    """The table; ``on_select(node_id)`` is called when a row's op is clicked. ``update``
    takes a new profile (or None); ``sort_by`` and ``device.value`` drive it from Python."""

    def __init__(self, on_select: Callable[[str], None] | None = None) -> None:
        self.on_select = on_select
        self.problem: Any = None
        self.sort, self.reverse = "cost", False
        self.device = W.Dropdown(
            options=[BEST],
            value=BEST,
            description="cost on",
            tooltip="the device whose costs and shares the table shows (fastest: each op's own)",
            layout=W.Layout(width="220px"),
        )
        self.top = W.BoundedIntText(
            value=TOP, min=1, max=500, description="top", layout=W.Layout(width="130px")
        )
        self.note = W.HTML()
        self.grid = W.GridBox(layout=W.Layout(grid_gap="0px 0px"))
        self.rows: list[list[W.Widget]] = []
        self._columns: tuple[str, ...] = ()
        self.device.observe(lambda _: self.render(), "value")
        self.top.observe(lambda _: self.render(), "value")
        super().__init__([W.HBox([self.device, self.top]), self.note, self.grid])

    def update(self, problem: Any) -> None:
        """Show ``problem``'s ops (None: an empty table with a line saying why)."""
        self.problem = problem
        opts = [BEST, *(problem.devices if problem is not None else [])]
        keep = self.device.value if self.device.value in opts else BEST
        with self.hold_trait_notifications():
            self.device.options = opts
            self.device.value = keep
        if self.sort not in ("cost", "share", "node", "op_type", *opts):
            self.sort, self.reverse = "cost", False
        self.render()

    def sort_by(self, column: str) -> None:
        """Sort by ``column`` (``node``, ``op_type``, ``share`` or a device); the column
        already sorted by turns its order round."""
        if column == self.sort:
            self.reverse = not self.reverse
        else:
            self.sort, self.reverse = column, False
        self.render()

    def shown(self) -> list[dict[str, Any]]:
        """The rows the table shows, in order (``costliest_ops``' rows)."""
        if self.problem is None:
            return []
        return costliest_ops(
            self.problem, self.device.value, self.top.value, self.sort, self.reverse
        )

    def render(self) -> None:
        if self.problem is None:
            self.note.value = "<i style='color:#777'>no profile yet: no costs to rank</i>"
            self.grid.children = ()
            return
        rows = self.shown()
        devices = list(self.problem.devices)
        self._shape(devices, len(rows))
        for cells, r in zip(self.rows, rows, strict=False):
            cells[0].description = r["node"]
            cells[0].tooltip = f"show {r['node']} in the details panel"
            cells[1].value = r["op_type"]
            for k, d in enumerate(devices):
                c = r["costs"][d]
                bold = d == self.device.value
                text = "–" if c is None else fmt_ms(c)
                cells[2 + k].value = f"<b>{text}</b>" if bold else text
            share = "–" if r["share"] is None else f"{r['share']:.1%}"
            cells[-1].value = share + (" *" if r["estimated"] else "")
        order = "↑" if self.reverse else "↓"
        where = "its fastest device" if self.device.value == BEST else self.device.value
        self.note.value = (
            f"<span style='font-size:12px'>{len(rows)} of {len(self.problem.nodes)} ops, "
            f"sorted by {self.sort} {order}; share: of the total on {where}; "
            "* some cost estimated, not measured; click an op for its details</span>"
        )

    def _shape(self, devices: list[str], n: int) -> None:
        """Header and ``n`` rows of widgets for these columns, made again only when the
        columns or the row count change."""
        columns = ("node", "op_type", *devices, "share")
        if columns == self._columns and len(self.rows) == n:
            return
        for cells in self.rows:
            for w in cells:
                w.close()
        head = [_header(c.replace("_", " "), f"sort by {c}") for c in columns]
        for col, b in zip(columns, head, strict=True):
            b.on_click(lambda _, c=col: self.sort_by(c))
        self.rows = [self._row(len(devices)) for _ in range(n)]
        self._columns = columns
        self.grid.layout.grid_template_columns = "minmax(160px, 2fr) auto " + " ".join(
            ["auto"] * (len(devices) + 1)
        )
        self.grid.children = tuple(head) + tuple(w for cells in self.rows for w in cells)

    def _row(self, devices: int) -> list[W.Widget]:
        name = W.Button(
            layout=W.Layout(width="auto", height="22px", margin="0"),
            style={"button_color": "white"},
        )
        name.on_click(lambda b: self._select(b.description))
        return [name] + [W.HTML(layout=CELL) for _ in range(devices + 2)]

    def _select(self, node: str) -> None:
        if node and self.on_select is not None:
            self.on_select(node)
