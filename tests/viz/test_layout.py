"""Properties of the layered layout: distinct slots, forward edges, routed long edges."""

from __future__ import annotations

import time
from collections import Counter

import numpy as np
import pytest

from hetlab.viz import dag_layout
from hetlab.viz.layout import levels
from tests.tiny import tiny_problem
from tests.viz._random import random_problem


def _check(lay) -> None:
    # no two nodes of one layer at the same position
    for layer in set(lay.x.tolist()):
        ys = np.sort(lay.y[lay.x == layer])
        assert (np.diff(ys) >= 1 - 1e-9).all()
    # every edge points to a later layer
    assert (lay.x[lay.dst] > lay.x[lay.src]).all()
    # each edge is one polyline from its source to its target, one point per layer it crosses
    ex, k = lay.ex, 0
    for s, d in zip(lay.src, lay.dst, strict=True):
        end = ex.index(None, k)
        xs = ex[k:end]
        assert xs == [float(v) for v in range(int(lay.x[s]), int(lay.x[d]) + 1)]
        k = end + 1
    assert k == len(ex) == len(lay.ey)


def test_tiny_layout_properties():
    lay = dag_layout(tiny_problem())
    _check(lay)
    assert lay.size[0] == 6  # as many layers as the longest path has nodes


def test_random_layout_properties_and_fewer_long_edges():
    p = random_problem(300, seed=3)
    lay = dag_layout(p)
    _check(lay)
    n = len(lay.ids)
    rank = levels(n, list(zip(lay.src.tolist(), lay.dst.tolist(), strict=True)))
    assert lay.size[0] == int(rank.max())
    # the layering of least total span is never longer in total than sources-first ranks
    span = (lay.x[lay.dst] - lay.x[lay.src]).sum()
    assert span <= (rank[lay.dst] - rank[lay.src]).sum()


def test_layout_of_a_graph_with_isolated_nodes_and_no_edges():
    p = random_problem(5)
    p.edges = []
    lay = dag_layout(p)
    assert len(set(zip(lay.x.tolist(), lay.y.tolist(), strict=True))) == 5
    assert lay.ex == []


def test_nasnet_large_zoo_model_layout():
    """The zoo's NASNet-large (1155 ops): fast, distinct slots, fewer long edges than ranks."""
    from hetlab import zoo
    from hetlab.graph import onnx_io
    from hetlab.viz import dag_figure

    g = onnx_io.load(zoo.stored_path("nasnet_large"))
    t0 = time.perf_counter()
    fig = dag_figure(g, collapse=None)
    dt = time.perf_counter() - t0
    assert dt < 5.0, f"dag_figure took {dt:.2f} s for {len(g.nodes)} nodes"
    lay = dag_layout(g)
    _check(lay)
    edges = list(zip(lay.src.tolist(), lay.dst.tolist(), strict=True))
    rank = levels(len(lay.ids), edges)
    before = int(((rank[lay.dst] - rank[lay.src]) > 3).sum())
    assert lay.long_edges(3) < before
    assert max(Counter(lay.x.tolist()).values()) <= 12
    assert fig.data[1].type == "scattergl" and len(fig.data[1].x) == len(g.nodes)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_layout_is_deterministic(seed):
    a = dag_layout(random_problem(80, seed))
    b = dag_layout(random_problem(80, seed))
    assert a.x.tolist() == b.x.tolist() and a.y.tolist() == b.y.tolist()
