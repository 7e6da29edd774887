"""Gantt properties: transfers between producer and consumer, idle gaps, the critical path,
stacking on a shared axis, subgraph boundaries, the Chrome trace and the per-op scatter."""

from __future__ import annotations

import itertools
import json

import pytest

from hetlab.viz import compare_figure, critical_path, gantt_figure, op_scatter_figure, plan_trace
from hetlab.viz.common import as_bars
from hetlab.viz.timeline import idle_gaps
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
    cp = _trace(gantt_figure(plan, p), "critical path")
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
    fig = compare_figure([plan, plan], ["A", "B"], problem=p)
    shown = [t.name for t in fig.data if t.showlegend]
    assert sorted(shown) == ["critical path", "idle", "transfers"]
