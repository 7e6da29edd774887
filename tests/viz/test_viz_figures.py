"""Figure functions on a hand-made problem/plan and on a real HOPE phone profile."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from hetlab.cost.datasets import profiles_dir
from hetlab.cost.problem import Problem
from hetlab.errors import HetlabError
from hetlab.schedulers.plan import Plan
from hetlab.viz import compare_figure, dag_figure, dag_layout, gantt_figure, heatmap_figure
from tests.tiny import tiny_graph, tiny_problem

PROFILES = profiles_dir()
NASNET = (PROFILES or Path("/nonexistent")) / "nasnet-large-huawei_p40.json"


def _plan(p: Problem, gpu_nodes: str = "acdf") -> Plan:
    dev = {n.id: ("gpu" if n.id in gpu_nodes else "cpu") for n in p.nodes}
    return Plan.build(p, "hand", dev, [p.nodes[i].id for i in p.topo], solve_seconds=0.25)


def test_layout_columns_are_levels_and_barycentre_rows():
    p = tiny_problem()
    lay = dag_layout(p)
    assert dict(zip(lay.ids, lay.level.tolist(), strict=False)) == {
        "a": 1,
        "b": 2,
        "c": 3,
        "d": 3,
        "e": 4,
        "f": 4,
        "g": 5,
        "h": 6,
    }
    i = lay.index
    # c and d share a column; e follows c's row and f follows d's (barycentre ordering)
    assert lay.y[i["c"]] != lay.y[i["d"]]
    assert (lay.y[i["e"]] < lay.y[i["f"]]) == (lay.y[i["c"]] < lay.y[i["d"]])
    assert dag_layout(p) is lay  # cached


def test_dag_single_edge_trace_nan_separated():
    p = tiny_problem()
    fig = dag_figure(p)
    assert len(fig.data) == 2
    edge, nodes = fig.data
    assert edge.mode == "lines" and nodes.mode == "markers"
    x = np.asarray([np.nan if v is None else v for v in edge.x], dtype=float)
    assert len(x) == 3 * len(p.edges)
    assert np.isnan(x[2::3]).all() and not np.isnan(x[0::3]).any()  # gap after each segment
    assert len(nodes.x) == len(p.nodes)
    # hover names op, costs; unsupported cost shows n/a
    h = dict(zip([n.id for n in p.nodes], nodes.text, strict=False))
    assert "Softmax" in h["h"] and "gpu n/a" in h["h"] and "cpu 4.00 ms" in h["a"]


def test_dag_color_modes():
    p = tiny_problem()
    cost = dag_figure(p, color="cost:gpu").data[1]
    sym = dict(zip([n.id for n in p.nodes], cost.marker.symbol, strict=False))
    assert sym["h"] == "x" and sym["a"] == "circle"
    c = np.asarray(cost.marker.color)
    assert math.isclose(c[0], math.log10(1.0))
    plan = _plan(p)
    byplan = dag_figure(p, color=plan).data[1].marker.color
    assert byplan[0] != byplan[1]  # a on gpu, b on cpu
    with pytest.raises(HetlabError):
        dag_figure(p, color="cost:npu")


def test_dag_of_graph_has_shapes_and_flops():
    g = tiny_graph()
    fig = dag_figure(g, problem=tiny_problem())
    t = fig.data[1].text[0]
    assert "1x8x4x4" in t and "MFLOP" in t and "gpu 1.00 ms" in t


def test_heatmap_log_scale_and_unsupported_marked():
    p = tiny_problem()
    fig = heatmap_figure(p)
    heat, marks = fig.data
    z = np.asarray([[np.nan if v is None else v for v in row] for row in heat.z], dtype=float)
    assert z.shape == (2, 8)
    assert math.isclose(z[0, 0], math.log10(4.0))  # a on cpu, first by rank
    assert np.isnan(z[1, 7])  # h on gpu: unsupported, sorted last
    assert list(marks.x) == [7] and list(marks.y) == ["gpu"] and "n/a" in marks.text[0]
    assert "n/a" in heat.text[1][7]


def test_heatmap_without_unsupported_has_one_trace():
    p = tiny_problem()
    p.nodes[-1].cost["gpu"] = 0.1
    assert len(heatmap_figure(p).data) == 1


def test_gantt_bases_are_plan_starts():
    p = tiny_problem()
    plan = _plan(p)
    fig = gantt_figure(plan, p)
    # one trace of op bars, then the overlays (transfers, idle gaps, critical path)
    assert [t.name for t in fig.data] == ["hand", "transfers", "idle", "critical path"]
    bar = fig.data[0]
    assert bar.orientation == "h"
    got = {n: (b, x, y) for n, b, x, y in zip(bar.customdata, bar.base, bar.x, bar.y, strict=False)}
    for a in plan.assignments:
        b, x, y = got[a.node]
        assert b == pytest.approx(a.start) and b + x == pytest.approx(a.finish) and y == a.device
    title = fig.layout.title.text
    assert f"{plan.makespan:.2f} ms" in title and "solve 0.25 s" in title
    assert fig.layout.xaxis.type == "linear"


def test_gantt_of_run_report_dict_and_object():
    p = tiny_problem()
    plan = _plan(p)
    tl = [
        {"node": a.node, "device": a.device, "start": a.start + 5, "finish": a.finish + 5}
        for a in plan.assignments
    ]
    doc = {"latency_ms": {"median": 20.0}, "predicted_ms": 16.0, "timeline": tl}
    fig = gantt_figure(doc, p)
    assert min(fig.data[0].base) == pytest.approx(0.0)  # shifted to the run's start
    assert "measured 20.00 ms" in fig.layout.title.text and "+25%" in fig.layout.title.text

    class Report:
        def to_json(self):
            return doc

    assert list(gantt_figure(Report(), p).data[0].base) == list(fig.data[0].base)
    with pytest.raises(HetlabError):
        gantt_figure({"nothing": 1})


def test_compare_figure_shares_x():
    p = tiny_problem()
    a, b = _plan(p), _plan(p, "ab")
    fig = compare_figure([a, b], ["ILP", "greedy"], problem=p)
    ops = [t for t in fig.data if t.name in ("ILP", "greedy")]  # the op bars of each plan
    assert len(ops) == 2
    assert ops[0].xaxis == "x" and ops[1].xaxis == "x2"
    assert fig.layout.xaxis.matches == "x2" or fig.layout.xaxis2.matches == "x"
    titles = [ann.text for ann in fig.layout.annotations]
    assert titles[0].startswith("<b>ILP</b>") and titles[1].startswith("<b>greedy</b>")


@pytest.mark.skipif(
    not NASNET.exists(),
    reason="HOPE phone profiles not found (shared/hope-profiles beside the repo)",
)
def test_nasnet_large_dag_and_heatmap():
    """Every one of the 1049 nodes drawn (how long it takes: benchmarks/figures.py)."""
    p = Problem.load(NASNET)
    assert len(p.nodes) == 1049
    fig = dag_figure(p, collapse=None)
    assert len(fig.data) == 2 and len(fig.data[1].x) == 1049
    overview = dag_figure(p)  # by default: one node per cell, labelled
    assert len(overview.data[1].x) == 24 and "depth 1" in overview.layout.title.text
    assert len([a for a in overview.layout.annotations if a.xref != "paper"]) == 24
    h = heatmap_figure(p)
    assert len(h.data) == 2  # final_layer ops cannot run on the phone GPU
    assert any("final_layer/Mean" in t for t in h.data[1].text)


def test_figures_are_valid_json_for_widgets():
    """FigureWidget messages must be strict JSON: no NaN/Infinity anywhere."""
    import json

    import plotly.io as pio

    p = tiny_problem()
    for fig in (
        dag_figure(p),
        dag_figure(p, color="cost:gpu"),
        heatmap_figure(p),
        gantt_figure(_plan(p), p),
        compare_figure([_plan(p), _plan(p)], ["a", "b"], problem=p),
    ):
        json.loads(
            pio.to_json(fig, validate=False),
            parse_constant=lambda c: pytest.fail(f"{c} in figure JSON"),
        )
