"""DAG figure: labels, WebGL, search, neighbours, scope collapsing, subgraph overlay."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from hetlab.cost.problem import Link, PEdge, PNode, Problem
from hetlab.errors import HetlabError
from hetlab.schedulers.plan import Plan
from hetlab.viz import collapse_scopes, dag_figure, dag_layout, match_nodes
from hetlab.viz.dag import FIT_MAX, VISIBLE_LAYERS, auto_depth, px_per_unit
from hetlab.viz.dag_color import MIXED
from hetlab.viz.dag_overlay import label_box
from hetlab.viz.scale import STRIP_STEPS
from tests.tiny import tiny_problem
from tests.viz._random import random_plan, random_problem


def _trace(fig, name):
    (t,) = [t for t in fig.data if t.name == name]
    return t


def _labels(fig):
    return [a for a in fig.layout.annotations if a.xref != "paper"]


def _strip(fig):
    return [s for s in fig.layout.shapes if s.name == "scale"]


def test_small_graph_has_labels_with_costs_and_a_level_scale_drawn_in_shapes():
    p = tiny_problem()
    fig = dag_figure(p, color="level")
    ann = _labels(fig)
    assert len(ann) == 8
    a = next(x for x in ann if x.text.startswith("<b>a</b>"))
    assert "4.00 | 1.00" in a.text  # cpu | gpu costs under the name
    nodes = fig.data[1]
    assert not nodes.marker.showscale and nodes.marker.colorbar.title.text is None
    assert list(nodes.marker.color) == dag_layout(p).level.tolist()
    strip = _strip(fig)
    assert len(strip) == STRIP_STEPS and all(
        s.xsizemode == "pixel" and s.xanchor == 1 for s in strip
    )
    assert [s.y0 for s in strip] == sorted(s.y0 for s in strip)  # bottom = low
    ticks = [a.text for a in fig.layout.annotations if a.xref == "paper"]
    assert "level" in ticks and {"1", "6"} <= set(ticks)
    assert fig.layout.margin.r >= 60  # room for the strip
    old = dag_figure(p, color="uprank")  # HOPE's name for the level, kept as an alias
    assert list(old.data[1].marker.color) == list(nodes.marker.color)


def test_cost_colour_has_a_log_ms_strip_and_categories_have_swatches():
    p = tiny_problem()
    fig = dag_figure(p, color="cost:gpu")
    assert len(_strip(fig)) == STRIP_STEPS
    assert any("ms" in a.text for a in fig.layout.annotations if a.xref == "paper")
    for color in ("op", "best", random_plan(p)):
        f = dag_figure(p, color=color)
        assert not _strip(f) and not any(t.marker.showscale for t in f.data)
        (key,) = [a for a in f.layout.annotations if a.xref == "paper"]
        counts = [int(c) for c in re.findall(r"\((\d+)\)", key.text)]
        assert sum(counts) == len(p.nodes)  # every node counted under one swatch
    best = dag_figure(p, color="best").data[1].marker.color
    col = dict(zip(dag_layout(p).ids, best, strict=True))
    assert col["a"] == col["c"] != col["h"]  # a, c fastest on gpu; h runs on cpu only


def test_large_graph_labels_the_match_and_the_costliest_that_fit_without_overlap():
    p = random_problem(200)
    lay = dag_layout(p)
    fig = dag_figure(p, highlight=p.nodes[3].id)
    at = {(lay.x[i], lay.y[i]): i for i in range(len(lay.ids))}
    shown = [at[a.x, a.y] for a in _labels(fig)]
    views = -(-lay.size[0] // VISIBLE_LAYERS)
    assert lay.index[p.nodes[3].id] in shown and 1 < len(shown) <= FIT_MAX * views
    best = {n.id: min(c for c in n.cost.values() if c is not None) for n in p.nodes}
    assert lay.index[max(best, key=best.get)] in shown  # the costliest node, unless matched
    px = px_per_unit(lay, None)
    costs = (p.devices, np.array([[n.cost[d] or np.inf for d in p.devices] for n in p.nodes]))
    boxes = [label_box(lay, i, px, costs) for i in shown]
    for a, b in itertools.combinations(boxes, 2):  # no two labels overlap in the first view
        assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
    assert len(_labels(dag_figure(p, labels=3))) == 3 and not _labels(dag_figure(p, labels=False))
    assert len(_labels(dag_figure(p, labels=True))) == len(lay.ids)


def test_every_node_carries_its_id_for_a_click():
    p = tiny_problem()
    fig = dag_figure(p, highlight="c")
    assert list(_trace(fig, "ops").customdata) == dag_layout(p).ids
    assert list(_trace(fig, "matches").customdata) == ["c"]


def test_height_grows_with_the_widest_layer_and_long_graphs_open_on_their_first_layers():
    chain = random_problem(30)  # a chain with skips: few rows
    wide = Problem(
        "wide",
        ["cpu"],
        [PNode(f"n{i}", {"cpu": 1.0}, "Relu") for i in range(31)],
        [PEdge("n0", f"n{i}") for i in range(1, 31)],
        {"default": Link()},
    )
    assert dag_figure(wide).layout.height > dag_figure(chain).layout.height
    long = random_problem(300)
    fig = dag_figure(long, collapse=None)
    assert dag_layout(long).size[0] > VISIBLE_LAYERS
    assert (
        list(fig.layout.xaxis.range)[1] < VISIBLE_LAYERS and "drag to pan" in fig.layout.title.text
    )
    slider = fig.layout.xaxis.rangeslider  # the whole graph stays one drag away
    assert slider.visible and list(slider.range)[1] >= dag_layout(long).size[0] - 1


def test_large_graphs_collapse_by_scope_by_default():
    p = random_problem(1001, scope=20)  # 51 blocks
    assert auto_depth(p) == 1 and auto_depth(random_problem(200)) is None
    fig = dag_figure(p)
    assert len(fig.data[1].x) == 51 and "collapse=None" in fig.layout.title.text
    assert len(dag_figure(p, collapse=None).data[1].x) == 1001


def test_webgl_above_threshold_only():
    big = dag_figure(random_problem(1001), collapse=None)
    assert big.data[1].type == "scattergl" and big.data[0].type == "scattergl"
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


def test_search_and_neighbours_are_robust_and_find_ops_inside_scopes():
    p = random_problem(100, scope=20)
    assert not [t for t in dag_figure(p, highlight="  ").data if t.name == "matches"]
    assert len(_trace(dag_figure(p, highlight="no such op"), "matches").x) == 0
    op = p.nodes[45].id  # in block_2
    fig = dag_figure(p, collapse=1, highlight=op.upper(), neighbors=op)
    assert list(_trace(fig, "matches").text) == ["block_2"]
    assert list(_trace(fig, "selected").text) == ["block_2"]
    assert sorted(_trace(fig, "neighbours").text) == ["block_1", "block_3"]
    assert list(_trace(dag_figure(p, collapse=1, highlight=[op]), "matches").text) == ["block_2"]
    with pytest.raises(HetlabError, match="did you mean"):
        dag_figure(p, neighbors=p.nodes[3].id + "x")


def test_a_plan_colours_a_collapsed_graph_by_its_scopes_devices():
    p = random_problem(60, scope=20)
    dev = {
        n.id: ("gpu" if i < 20 else "cpu" if i < 40 else ["cpu", "gpu"][i % 2])
        for i, n in enumerate(p.nodes)
    }
    dev[p.nodes[49].id] = "cpu"  # gpu cannot run it
    plan = Plan.build(p, "hand", dev, [n.id for n in p.nodes])
    fig = dag_figure(p, color=plan, collapse=1)
    names = [t.split("</b>")[0][3:] for t in fig.data[1].text]
    col = dict(zip(names, fig.data[1].marker.color, strict=True))
    assert col["block_0"] != col["block_1"] and col["block_2"] == MIXED
    groups = [[n.id for n in p.nodes[:30]], [n.id for n in p.nodes[30:]]]
    shaded = dag_figure(p, collapse=1, subgraphs=groups).layout.shapes
    assert len([s for s in shaded if s.type == "path"]) == 2
