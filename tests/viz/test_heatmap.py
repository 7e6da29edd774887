"""Heatmap: log colour scale with decade ticks, speed-up ratios, grouping and sorting."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hetlab.errors import HetlabError
from hetlab.viz import heatmap_figure
from hetlab.viz.common import fmt_ms
from hetlab.viz.scale import STRIP_STEPS
from tests.tiny import tiny_problem
from tests.viz._random import random_problem


def _z(fig):
    return np.asarray([[np.nan if v is None else v for v in row] for row in fig.data[0].z])


def _key(fig):
    strip = [s for s in fig.layout.shapes if s.name == "scale"]
    ticks = [a for a in fig.layout.annotations if a.name == "legend"]
    return strip, [a.text for a in ticks[1:]], ticks[0].text


def test_log_scale_is_a_strip_drawn_in_shapes_labelled_in_ms():
    fig = heatmap_figure(tiny_problem())
    strip, ticks, title = _key(fig)
    assert not fig.data[0].showscale and len(strip) == STRIP_STEPS
    assert title == "ms (log)" and all(t.endswith("ms") for t in ticks)
    z = _z(fig)
    assert fig.data[0].zmin == pytest.approx(np.nanmin(z)) and fig.data[0].zmax == np.nanmax(z)
    assert ticks[0] == fmt_ms(10 ** np.nanmin(z)) and "1.00 ms" in ticks  # ends and a decade
    assert math.isclose(z[1, 0], math.log10(1.0))  # a on gpu
    assert not [a for a in fig.layout.annotations if a.name == "grouping"]


def test_ratio_view_against_a_reference():
    p = tiny_problem()
    fig = heatmap_figure(p, view="ratio", reference="gpu", group=None)
    assert list(fig.data[0].y) == ["cpu"] and fig.data[0].zmin == -fig.data[0].zmax
    z = _z(fig)[0]
    assert math.isclose(z[0], math.log10(4.0 / 1.0))  # a: cpu 4 ms, gpu 1 ms
    assert np.isnan(z[-1])  # h cannot run on the reference
    assert all(t.startswith("×") for t in _key(fig)[1])
    with pytest.raises(HetlabError):
        heatmap_figure(p, view="ratio", reference="npu")


def test_a_thousand_ops_are_grouped_by_op_type():
    p = random_problem(1000)
    fig = heatmap_figure(p)
    types = sorted({n.op_type for n in p.nodes})
    assert len(fig.data[0].x) == len(types)
    assert sorted(fig.layout.xaxis.ticktext) == types
    conv = fig.layout.xaxis.ticktext.index("Conv")
    cpu = sum(n.cost["cpu"] for n in p.nodes if n.op_type == "Conv")
    assert math.isclose(_z(fig)[0, conv], math.log10(cpu))
    marks = fig.data[1]  # 20 ops cannot run on gpu: each group with one of them is marked
    assert set(marks.y) == {"gpu"} and all("cannot run: /block_" in t for t in marks.text)
    assert len(heatmap_figure(p, group="scope").data[0].x) == 50
    (note,) = [a.text for a in fig.layout.annotations if a.name == "grouping"]
    assert f"1000 ops in {len(types)} columns by op type" in note and "group=None" in note
    flat = heatmap_figure(p, group=None)
    assert len(flat.data[0].x) == 1000 and not [
        a for a in flat.layout.annotations if a.name == "grouping"
    ]


@pytest.mark.parametrize("sort", ["name", "op", "cost", "ratio"])
def test_sorting(sort):
    p = random_problem(60, seed=2)
    fig = heatmap_figure(p, sort=sort, group="op" if sort in ("op", "cost") else None)
    z = _z(fig)
    labels = [t.split("<b>")[1].split("</b>")[0] for t in fig.data[0].text[0]]
    if sort == "name":
        assert labels == sorted(labels)
    elif sort == "op":
        assert labels == sorted(labels)  # grouped by op type, so names are the op types
    elif sort == "cost":
        best = np.nanmin(10**z, axis=0)
        assert (np.diff(best) <= 1e-9).all()
    else:
        ok = ~np.isnan(z).any(axis=0)
        r = (z[1] - z[0])[ok]
        assert (np.diff(r) >= -1e-9).all()  # gpu over cpu, gpu's best first
        assert ok.tolist() == sorted(ok.tolist(), reverse=True)  # ops gpu cannot run: last
    with pytest.raises(HetlabError):
        heatmap_figure(p, sort="size")


def test_a_cell_of_one_op_carries_that_op_for_a_click():
    p = tiny_problem()
    fig = heatmap_figure(p, group=None)
    heat = fig.data[0]
    names = [t.split("</b>")[0][3:] for t in heat.text[0]]
    assert all(list(row) == names for row in heat.customdata)
    (marks,) = [t for t in fig.data if t.name == "n/a"]
    assert list(marks.customdata) == ["h"]  # gpu cannot run the head
    grouped = heatmap_figure(p, group="op").data[0]
    assert all(v is None for row in grouped.customdata for v in row)
