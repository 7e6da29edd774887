"""The workbench's node panel: one op's details (``viz.node_details``) beside the table of the
costliest ops (``optable``). An op is selected by clicking a DAG node, a heatmap cell or a Gantt
bar (the figures carry the node id in ``customdata``), a row of the table, or by typing its name.
``wire(wb)`` keeps the panel on the workbench's model, profile and plans."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

import ipywidgets as W

from hetlab.errors import HetlabError
from hetlab.viz.node_details import node_details, node_details_html
from hetlab.widgets.optable import OpTable

CLICKABLE = ("dag_fig", "heat_fig", "ilp_fig", "greedy_fig", "rec_fig", "run_fig")
WATCHED = ["graph", "problem", "ilp_plan", "greedy_plan", "rec_plan"]


def point_node(point: Any) -> str | None:
    """The node id a clicked point carries (its ``customdata``), or None."""
    cd = (
        point.get("customdata")
        if isinstance(point, Mapping)
        else getattr(point, "customdata", None)
    )
    if isinstance(cd, (list, tuple)):
        cd = cd[0] if cd else None
    return str(cd) if cd not in (None, "") else None


class NodePanel(W.HBox):
    """Details of the selected op (``selected``) on the left, the costliest ops on the right."""

    def __init__(self) -> None:
        self.graph: Any = None
        self.problem: Any = None
        self.plans: dict[str, Any] = {}
        self.selected: str | None = None
        self.picker = W.Combobox(
            options=[],
            placeholder="type an op name, or click a node or a bar",
            description="op",
            ensure_option=False,
            layout=W.Layout(width="420px"),
        )
        self.details = W.HTML(layout=W.Layout(max_height="420px", overflow="auto"))
        self.table = OpTable(on_select=self.select)
        self.picker.observe(lambda ch: self._typed(ch["new"]), "value")
        left = W.VBox([self.picker, self.details], layout=W.Layout(width="480px"))
        super().__init__(
            [left, self.table], layout=W.Layout(flex_flow="row wrap", align_items="flex-start")
        )
        self._render()

    def update(self, graph: Any, problem: Any, plans: Mapping[str, Any]) -> None:
        """New sources: the op names offered, the table and the selected op's details (kept
        when the new model or profile has it)."""
        source_changed = graph is not self.graph or problem is not self.problem
        self.graph, self.problem, self.plans = graph, problem, dict(plans)
        if source_changed:
            ids = [n.id for n in (graph or problem).nodes] if (graph or problem) else []
            self.picker.options = ids
            if self.selected not in set(ids):
                self.selected = None
            self.table.update(problem)
        self._render()

    def select(self, node_id: str | None) -> None:
        """Show ``node_id``'s details (a name neither the model nor the profile has says
        so; a collapsed scope is not an op)."""
        self.selected = str(node_id) if node_id else None
        if self.selected and self.picker.value != self.selected:
            self.picker.value = self.selected
        self._render()

    def _typed(self, text: str) -> None:
        ids = self.picker.options
        if text and text in ids and text != self.selected:
            self.select(text)

    def _render(self) -> None:
        if self.graph is None and self.problem is None:
            self.details.value = "<i style='color:#777'>load a model or a profile</i>"
            return
        if self.selected is None:
            self.details.value = (
                "<i style='color:#777'>click a DAG node, a Gantt bar or a row of the table, "
                "or type an op name</i>"
            )
            return
        try:
            d = node_details(self.graph, self.problem, self.plans, self.selected)
        except HetlabError as e:
            inside = [v for v in self.picker.options if v.startswith(self.selected + "/")]
            why = escape(str(e))
            if inside:  # a node of the DAG collapsed by name scope
                why = (
                    f"{escape(self.selected)} is a name scope of {len(inside)} ops: type one "
                    "(its name starts with the scope), or show every op in the DAG"
                )
            self.details.value = f"<i style='color:#9a6700'>{why}</i>"
            return
        self.details.value = node_details_html(d)


def plans_of(wb: Any) -> dict[str, Any]:
    """The plans the workbench compares, by the labels the details panel shows."""
    return {
        f"plan ({wb.ilp_select.value})": wb.ilp_plan,
        f"compared ({wb.algo_select.value})": wb.greedy_plan,
        "recommended": wb.rec_plan,
    }


def wire(wb: Any) -> None:
    """Keep ``wb.nodes`` on the workbench's model, profile and plans, and select an op
    from a click on any of its figures (``FigureSlot.on_click``)."""

    def follow(_: Any = None) -> None:
        wb.nodes.update(wb.graph, wb.problem, plans_of(wb))

    wb.observe(follow, WATCHED)
    for name in CLICKABLE:
        wb.slots[name].on_click(lambda point: _clicked(wb, point))
    follow()


def _clicked(wb: Any, point: Any) -> None:
    node = point_node(point)
    if node is not None:
        wb.select_node(node)
