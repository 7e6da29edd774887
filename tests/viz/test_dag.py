"""DAG figure: labels, WebGL, search, neighbours, scope collapsing, subgraph overlay."""

from __future__ import annotations

import numpy as np
import pytest

from hetlab.cost.problem import Link, PEdge, PNode, Problem
from hetlab.errors import HetlabError
from hetlab.schedulers.plan import Plan
from hetlab.viz import collapse_scopes, dag_figure, dag_layout, match_nodes
from tests.tiny import tiny_problem
from tests.viz._random import random_problem


def _trace(fig, name):
    (t,) = [t for t in fig.data if t.name == name]
    return t


def test_small_graph_has_labels_with_costs_and_an_uprank_colour_bar():
    p = tiny_problem()
    fig = dag_figure(p)
    ann = fig.layout.annotations
    assert len(ann) == 8
    a = next(x for x in ann if x.text.startswith("<b>a</b>"))
    assert "4.00 | 1.00" in a.text  # cpu | gpu costs under the name
    nodes = fig.data[1]
    assert nodes.marker.showscale and nodes.marker.colorbar.title.text == "uprank"
    assert list(nodes.marker.color) == dag_layout(p).uprank.tolist()
    assert not dag_figure(random_problem(41)).layout.annotations


def test_webgl_above_threshold_only():
    assert dag_figure(random_problem(1001)).data[1].type == "scattergl"
    assert dag_figure(random_problem(1001)).data[0].type == "scattergl"
    assert dag_figure(random_problem(200)).data[1].type == "scatter"
    assert dag_figure(random_problem(200), webgl=True).data[1].type == "scattergl"


def test_search_rings_every_match_at_its_node():
    p = random_problem(120)
    fig = dag_figure(p, highlight="BLOCK_2/")
    lay = dag_layout(p)
    want = [i for i, v in enumerate(lay.ids) if "/block_2/" in v]
    assert match_nodes(lay.ids, "BLOCK_2/") == want
    ring = _trace(fig, "matches")
    assert list(ring.x) == [lay.x[i] for i in want] and list(ring.y) == [lay.y[i] for i in want]
    assert f"{len(want)} match(es)" in fig.layout.title.text
    assert list(_trace(dag_figure(p, highlight=[lay.ids[3]]), "matches").text) == [lay.ids[3]]


def test_neighbours_are_the_direct_predecessors_and_successors():
    p = tiny_problem()
    fig = dag_figure(p, neighbors="b")
    assert sorted(_trace(fig, "neighbours").text) == ["a", "c", "d"]
    assert list(_trace(fig, "selected").text) == ["b"]
    assert len([v for v in _trace(fig, "neighbour edges").x if v is None]) == 3
    with pytest.raises(HetlabError, match="no node named"):
        dag_figure(p, neighbors="zz")


def test_collapse_by_scope_counts_members_and_sums_costs():
    p = random_problem(100, scope=20)
    sg = collapse_scopes(p, 1)
    assert [n.id for n in sg.nodes] == [f"block_{k}" for k in range(5)]
    assert sum(len(n.members) for n in sg.nodes) == 100
    cpu = sum(n.cost["cpu"] for n in p.nodes[:20])
    assert sg.costs[0, 0] == pytest.approx(cpu)
    # op 49 (in block 2) cannot run on gpu, so neither can block 2 as a whole
    assert np.isfinite(sg.costs[0, 1]) and np.isinf(sg.costs[2, 1])
    fig = dag_figure(p, collapse=1)
    assert len(fig.data[1].x) == 5 and "20 ops" in fig.data[1].text[0]


def test_collapse_merges_scopes_that_feed_each_other():
    ids = ["/A/x", "/B/y", "/A/z"]  # A -> B -> A: one node once collapsed
    nodes = [PNode(v, {"cpu": 1.0}, "Relu") for v in ids]
    edges = [PEdge("/A/x", "/B/y"), PEdge("/B/y", "/A/z")]
    p = Problem("cyc", ["cpu"], nodes, edges, {"default": Link()})
    sg = collapse_scopes(p, 1)
    assert [n.id for n in sg.nodes] == ["A + B"] and sg.edges == []
    assert len(dag_figure(p, collapse=1).data[1].x) == 1
    with pytest.raises(HetlabError):
        collapse_scopes(p, 0)


def test_subgraph_overlay_from_a_plan():
    p = tiny_problem()
    groups = [["a", "b"], ["c", "d", "e", "f"], ["g", "h"]]
    dev = {n.id: "cpu" for n in p.nodes}
    plan = Plan.build(p, "ilp", dev, list("abcdefgh"), extra={"subgraphs": groups})
    fig = dag_figure(p, color="subgraph", subgraphs=plan)
    assert len(fig.layout.shapes) == 3 and all(s.layer == "below" for s in fig.layout.shapes)
    col = dict(zip(dag_layout(p).ids, fig.data[1].marker.color, strict=True))
    assert col["c"] == col["f"] != col["a"] == col["b"]
    # a plan given as the colour brings its subgraphs along
    assert len(dag_figure(p, color=plan).layout.shapes) == 3
    with pytest.raises(HetlabError, match="subgraph"):
        dag_figure(p, color="subgraph")


def test_new_figures_are_strict_json():
    """FigureWidget messages must be strict JSON: no NaN/Infinity in any overlay."""
    import json

    import plotly.io as pio

    from hetlab.viz import gantt_figure, heatmap_figure, op_scatter_figure
    from tests.viz._random import random_plan

    p = random_problem(120, seed=5)
    groups = [[n.id for n in p.nodes[i : i + 30]] for i in range(0, 120, 30)]
    plan = random_plan(p, extra={"subgraphs": groups})
    run = {"timeline": [a.__dict__ for a in plan.assignments], "latency_ms": {"median": 1.0}}
    figs = [
        dag_figure(p, color=plan, highlight="block_1", neighbors=p.nodes[7].id),
        dag_figure(p, collapse=1, color="cost:gpu"),
        heatmap_figure(p, view="ratio", sort="ratio"),
        heatmap_figure(p, group="scope", sort="cost"),
        gantt_figure(plan, p, measured=run, color="subgraph"),
        op_scatter_figure(plan, run, p),
    ]
    for fig in figs:
        json.loads(
            pio.to_json(fig, validate=False),
            parse_constant=lambda c: pytest.fail(f"{c} in figure JSON"),
        )
