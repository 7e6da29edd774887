"""The node panel and the table of the costliest ops in the workbench, driven without a
browser: a click is the message the slot's click relay sends for a clicked point."""

from __future__ import annotations

import pytest

from hetlab.cost.problem import Problem
from hetlab.widgets import Workbench
from hetlab.widgets.nodepanel import NodePanel, point_node
from tests.tiny import tiny_problem
from tests.viz._random import random_problem


def _click(wb, slot: str, trace_name: str, node: str) -> None:
    """What the browser's click on ``node``'s point of trace ``trace_name`` sends."""
    fig = wb.slots[slot].fig
    (k,) = [i for i, t in enumerate(fig.data) if t.name == trace_name]
    t = fig.data[k]
    i = list(t.customdata).index(node)
    point = {"curveNumber": k, "pointNumber": i, "x": t.x[i], "y": t.y[i], "customdata": node}
    wb.slots[slot].relay._received(None, {"event": "click", "point": point}, None)


@pytest.fixture(scope="module")
def wb():
    w = Workbench(problem=tiny_problem(), devices=[], ilp_time_limit=0.2)
    assert w.wait(60)
    return w


def test_the_table_ranks_the_ops_and_a_row_opens_its_op(wb):
    t = wb.nodes.table
    names = [cells[0].description for cells in t.rows]
    assert names[:2] == ["c", "d"]  # the costliest on their fastest device (gpu)
    assert names[-1] == "h"  # gpu cannot run it: its cpu cost is the smallest
    t.device.value = "cpu"
    assert [cells[0].description for cells in t.rows][:2] == ["c", "d"]
    shares = [float(cells[-1].value.rstrip(" *%")) for cells in t.rows]
    assert sum(shares) == pytest.approx(100, abs=0.5) and shares == sorted(shares, reverse=True)
    header = t.grid.children[: len(t._columns)]
    header[0].click()  # sort by node name
    assert [cells[0].description for cells in t.rows] == list("abcdefgh")
    header[0].click()  # again: the other way round
    assert [cells[0].description for cells in t.rows] == list("hgfedcba")
    t.rows[2][0].click()
    assert wb.nodes.selected == "f" and wb.nodes.picker.value == "f"
    assert "<b>f</b> · Relu" in wb.nodes.details.value


def test_clicking_a_bar_or_a_dag_node_shows_that_op_in_every_plan(wb):
    _click(wb, "ilp_fig", wb.ilp_fig.data[0].name, "e")
    assert wb.nodes.selected == "e"
    html = wb.nodes.details.value
    for plan in (wb.ilp_plan, wb.greedy_plan):
        (a,) = [a for a in plan.assignments if a.node == "e"]
        assert f"<td>{a.device}</td><td>{a.start:.3f}</td><td>{a.finish:.3f}</td>" in html
    _click(wb, "dag_fig", "ops", "b")
    assert wb.nodes.selected == "b" and "<b>b</b> · Relu" in wb.nodes.details.value
    point = {"curveNumber": 0, "pointNumber": [1, 3], "customdata": "d"}  # a heatmap cell
    wb.slots["heat_fig"].relay._received(None, {"event": "click", "point": point}, None)
    assert wb.nodes.selected == "d"
    assert point_node({"customdata": None}) is None and point_node({"customdata": "x"}) == "x"


def test_typing_a_name_selects_it_and_a_new_profile_keeps_what_it_has(wb):
    wb.nodes.picker.value = "g"
    assert wb.nodes.selected == "g" and "Concat" in wb.nodes.details.value
    wb.nodes.picker.value = "not an op"
    assert wb.nodes.selected == "g"  # a partial name selects nothing
    other = tiny_problem("other")
    doc = other.to_json()
    doc["nodes"] = [n for n in doc["nodes"] if n["id"] != "g"]
    doc["edges"] = [e for e in doc["edges"] if "g" not in (e["src"], e["dst"])]
    wb.problem = Problem.from_json(doc)
    assert wb.wait(60)
    assert wb.nodes.selected is None and "g" not in wb.nodes.picker.options
    wb.select_node("c")
    wb.problem = tiny_problem("again")
    assert wb.wait(60)
    assert wb.nodes.selected == "c" and "6.00 ms" in wb.nodes.details.value


def test_the_critical_path_underline_can_be_switched_off(wb):
    wb.critical_toggle.value = False
    assert "critical path" not in {t.name for t in wb.ilp_fig.data}
    wb.critical_toggle.value = True
    assert wb.ilp_fig.data[0].customdata is not None


def test_a_scope_of_a_collapsed_dag_says_what_it_is():
    p = random_problem(60)
    panel = NodePanel()
    panel.update(None, p, {})
    panel.select("/block_1")
    assert "a name scope of 20 ops" in panel.details.value
    panel.select(p.nodes[0].id)
    assert "reads from" not in panel.details.value and "read by" in panel.details.value
