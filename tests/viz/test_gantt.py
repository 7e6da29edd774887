"""Gantt properties: transfers between producer and consumer, idle gaps, the critical path,
stacking on a shared axis, subgraph boundaries, the Chrome trace and the per-op scatter."""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest

from hetlab.cost.problem import Link, PNode, Problem
from hetlab.schedulers.plan import Plan
from hetlab.viz import (
    compare_figure,
    critical_path,
    gantt_figure,
    moved_ops,
    op_scatter_figure,
    plan_diff_figure,
    plan_trace,
)
from hetlab.viz.common import as_bars
from hetlab.viz.gantt import LEGEND_PX, MIN_ROWS, MODEBAR_PX, ROW_PX
from hetlab.viz.gantt_overlays import idle_gaps
from hetlab.viz.gantt_parts import LABEL_CHARS, bar_label
from hetlab.viz.scale import CHAR_PX
from tests.tiny import tiny_problem
from tests.viz._random import random_plan, random_problem

TOL = 1e-9


def _trace(fig, name):
    (t,) = [t for t in fig.data if t.name == name]
    return t


@pytest.fixture(scope="module")
def case():
    p = random_problem(150, seed=4)
    return p, random_plan(p, seed=4)


def test_transfers_lie_between_producer_finish_and_consumer_compute_start(case):
    p, plan = case
    fig = gantt_figure(plan, p)
    tx = _trace(fig, "transfers")
    asg = {a.node: a for a in plan.assignments}
    cross = [e for e in p.edges if asg[e.src].device != asg[e.dst].device]
    assert len(tx.base) == len(cross) > 0
    for base, width, row, text in zip(tx.base, tx.x, tx.y, tx.text, strict=True):
        src, dst = text.split(":")[0].split(" → ")
        u, v = asg[src], asg[dst]
        compute_start = v.finish - p.nodes[p.index[dst]].cost[v.device]
        assert u.finish <= base + TOL and base + width <= compute_start + 1e-6
        assert width == pytest.approx(p.comm_cost(src, dst, u.device, v.device))
        assert row == f"{u.device}→{v.device}"
    rows = list(fig.layout.yaxis.categoryarray)
    assert "cpu→gpu" in rows and "gpu→cpu" in rows and "cpu" in rows


def test_idle_gaps_and_bars_tile_each_device(case):
    p, plan = case
    b = as_bars(plan)
    end = max(a.finish for a in plan.assignments)
    gaps = idle_gaps(b, p.devices)
    for d in p.devices:
        busy = sum(a.finish - a.start for a in plan.assignments if a.device == d)
        idle = sum(f - s for dd, s, f in gaps if dd == d)
        assert busy + idle == pytest.approx(end)
    assert len(_trace(gantt_figure(plan, p), "idle").base) == len(gaps) > 0


def test_critical_path_is_a_chain_as_long_as_the_makespan(case):
    p, plan = case
    chain = critical_path(as_bars(plan), p)
    asg = {a.node: a for a in plan.assignments}
    preds = {v: {p.nodes[u].id for u, _ in p.preds[p.index[v]]} for v in asg}
    assert asg[chain[0]].start == 0.0 and asg[chain[-1]].finish == plan.makespan
    for u, v in itertools.pairwise(chain):
        assert u in preds[v] or asg[u].device == asg[v].device
        assert asg[u].finish == pytest.approx(asg[v].start)
    total = sum(asg[v].finish - asg[v].start for v in chain)
    assert total == pytest.approx(plan.makespan)
    cp = _trace(gantt_figure(plan, p, critical=True), "critical path")
    assert len(cp.base) == len(chain) and critical_path(plan, p) == chain


def test_prediction_and_measurement_share_one_x_axis():
    p = tiny_problem()
    plan = random_plan(p)
    tl = [
        {"node": a.node, "device": a.device, "start": a.start * 1.1, "finish": a.finish * 1.1}
        for a in plan.assignments
    ]
    fig = gantt_figure(plan, p, measured={"timeline": tl, "latency_ms": {"median": 9.0}})
    ops = [t for t in fig.data if t.name in ("predicted", "measured")]
    assert [t.xaxis for t in ops] == ["x", "x2"]
    assert fig.layout.xaxis.matches == "x2" or fig.layout.xaxis2.matches == "x"
    assert all(t.name != "transfers" or t.xaxis in ("x", "x2") for t in fig.data)
    measured_tx = [t for t in fig.data if t.name == "transfers" and t.xaxis == "x2"]
    assert len(measured_tx[0].base) == 0  # a measured timeline carries no transfer times


def test_subgraph_boundaries_and_colours():
    p = tiny_problem()
    groups = [["a", "b"], ["c", "d", "e", "f"], ["g", "h"]]
    plan = random_plan(p, extra={"subgraphs": groups})
    fig = gantt_figure(plan, p, color="subgraph")
    fin = {a.node: a.finish for a in plan.assignments}
    ends = sorted({max(fin[v] for v in g) for g in groups})
    assert sorted(s.x0 for s in fig.layout.shapes) == pytest.approx(ends)
    col = dict(zip(fig.data[0].customdata, fig.data[0].marker.color, strict=True))
    assert col["c"] == col["f"] != col["a"]
    assert "3 subgraphs" in fig.layout.title.text
    # the plan JSON carries them at top level
    assert len(gantt_figure(plan.to_json(), p).layout.shapes) == len(ends)


def test_plan_trace_has_one_event_per_node_and_transfer(case):
    p, plan = case
    doc = json.loads(json.dumps(plan_trace(plan, p)))
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    names = {e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    n_tx = len(_trace(gantt_figure(plan, p), "transfers").base)
    assert len(xs) == len(p.nodes) + n_tx
    assert {"cpu", "gpu", "cpu→gpu"} <= names


def test_op_scatter_pairs_each_op_once_on_log_axes(case):
    p, plan = case
    tl = [
        {"node": a.node, "device": a.device, "start": a.start, "finish": a.finish * 1.0 + 0.1}
        for a in plan.assignments
    ]
    fig = op_scatter_figure(plan, {"timeline": tl}, p)
    pts = [t for t in fig.data if t.mode == "markers"]
    assert sum(len(t.x) for t in pts) == len(p.nodes)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert all(y >= x for t in pts for x, y in zip(t.x, t.y, strict=True))


def test_compare_keeps_one_legend_entry_per_overlay(case):
    p, plan = case
    fig = compare_figure([plan, plan], ["A", "B"], problem=p, critical=True)
    shown = [t.name for t in fig.data if t.showlegend]
    assert sorted(shown) == ["critical path", "idle", "transfers"]


def test_the_critical_path_is_drawn_only_where_it_is_not_every_op():
    p = tiny_problem()
    one = Plan.build(p, "one", dict.fromkeys("abcdefgh", "cpu"), list("abcdefgh"))
    fig = gantt_figure(one, p)
    assert not [t for t in fig.data if t.name == "critical path"]
    assert "critical path: every op" in fig.layout.title.text
    split = Plan.build(
        p, "two", {v: "gpu" if v in "ce" else "cpu" for v in "abcdefgh"}, list("abcdefgh")
    )
    fig = gantt_figure(split, p)
    cp = _trace(fig, "critical path")
    assert 0 < len(cp.base) < len(p.nodes)
    # a thin strip along each bar's bottom edge: the op colours above it stay visible
    ops = fig.data[0]
    assert cp.width <= 0.15 and cp.offset + cp.width < 0 and cp.offset >= -0.5
    assert set(cp.customdata) <= set(ops.customdata)
    assert len(_trace(gantt_figure(one, p, critical=True), "critical path").base) == 8
    assert not [t for t in gantt_figure(split, p, critical=False).data if t.name == "critical path"]


def test_bars_name_their_op_where_it_fits_and_zoom_moves_along_time_only():
    p = tiny_problem()
    plan = random_plan(p)
    fig = gantt_figure(plan, p, width=470)
    ops = fig.data[0]
    assert list(ops.text) == list(ops.customdata) and ops.textposition == "inside"
    assert all(
        h.startswith(f"<b>{v}</b>") for h, v in zip(ops.hovertext, ops.customdata, strict=True)
    )
    assert fig.layout.uniformtext.mode == "hide" and fig.layout.uniformtext.minsize >= 8
    assert fig.layout.yaxis.fixedrange and "lasso2d" in fig.layout.modebar.remove
    assert bar_label("/features/features.3/conv/Conv") == "conv/Conv"
    assert ops.marker.line.width > 0  # 8 bars: each keeps a white edge
    big = random_problem(400, seed=2)  # about 200 bars a row in 470 px: edges would whiten it
    assert gantt_figure(random_plan(big), big, width=470).data[0].marker.line.width == 0
    assert len(bar_label("x" * 80)) == LABEL_CHARS


def test_the_first_title_line_leaves_room_for_the_toolbar(case):
    p, plan = case
    fig = gantt_figure(plan, p, title="a plan with a long name (ε=0.2, NT=12)", width=470)
    first, *rest = fig.layout.title.text.split("<br>")
    assert rest and len(re.sub("<[^>]+>", "", first)) <= (470 - MODEBAR_PX) / CHAR_PX


def _problem(devices: int) -> Problem:
    devs = [f"d{k}" for k in range(devices)]
    nodes = [PNode(f"n{i}", dict.fromkeys(devs, 1.0), "Relu") for i in range(devices)]
    return Problem("par", devs, nodes, [], {"default": Link()})


def test_height_grows_by_a_row_per_device_and_a_panel_per_timeline():
    heights = []
    for k in (1, 3, 6):
        p = _problem(k)
        plan = Plan.build(
            p, "par", {f"n{i}": f"d{i}" for i in range(k)}, [f"n{i}" for i in range(k)]
        )
        fig = gantt_figure(plan, p)
        heights.append(fig.layout.height - fig.layout.margin.t)  # titles may wrap apart
    assert heights[1] - heights[0] == ROW_PX * (3 - MIN_ROWS)
    assert heights[2] - heights[1] == 3 * ROW_PX
    p = tiny_problem()
    plan = random_plan(p)
    two, three = (compare_figure([plan] * n, problem=p).layout.height for n in (2, 3))
    assert three - two >= ROW_PX * MIN_ROWS


def test_titles_wrap_to_the_width_and_the_legend_sits_above_the_plot(case):
    p, plan = case
    narrow = gantt_figure(plan, p, title="a rather long plan name (ε=0.2, NT=12)", width=360)
    wide = gantt_figure(plan, p, title="a rather long plan name (ε=0.2, NT=12)", width=1400)
    lines = narrow.layout.title.text.split("<br>")
    assert len(lines) > 1 and len(wide.layout.title.text.split("<br>")) == 1
    assert all(len(re.sub("<[^>]+>", "", s)) <= 360 / CHAR_PX for s in lines)
    assert narrow.layout.margin.t > wide.layout.margin.t
    for fig in (narrow, wide, compare_figure([plan, plan], problem=p, width=420)):
        h, lg = fig.layout.height, fig.layout.legend
        assert lg.yref == "container" and lg.yanchor == "top"
        plot_top = 1 - fig.layout.margin.t / h  # the legend's row lies in the top margin
        assert lg.y - LEGEND_PX / h >= plot_top - 1e-9 and lg.y <= 1


def test_plan_diff_marks_exactly_the_ops_placed_differently(case):
    p, plan = case
    rng = np.random.default_rng(7)
    dev = dict(plan.device_of)
    flip = [
        v for v in dev if rng.random() < 0.2 and p.nodes[p.index[v]].cost.get("gpu") is not None
    ]
    for v in flip:
        dev[v] = "gpu" if dev[v] == "cpu" else "cpu"
    other = Plan.build(p, "other", dev, [p.nodes[i].id for i in p.topo])
    moved = moved_ops(plan, other)
    assert set(moved) == {v for v in flip if plan.device_of[v] != dev[v]} and moved
    fig = plan_diff_figure(plan, other, p)
    marks = [t for t in fig.data if t.name == "moved"]
    assert [t.xaxis for t in marks] == ["x", "x2"]
    for t, pl in zip(marks, (plan, other), strict=True):
        asg = {a.node: a for a in pl.assignments}
        got = sorted(zip(t.y, t.base, strict=True))
        assert got == sorted((asg[v].device, asg[v].start) for v in moved)
    assert fig.layout.title.text.startswith(
        f"{len(moved)} of {len(p.nodes)} ops placed differently"
    )
    assert "same devices" in plan_diff_figure(plan, plan, p).layout.title.text
