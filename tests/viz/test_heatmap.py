"""Heatmap: log colour scale with decade ticks, speed-up ratios, grouping and sorting."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hetlab.errors import HetlabError
from hetlab.viz import heatmap_figure
from tests.tiny import tiny_problem
from tests.viz._random import random_problem


def _z(fig):
    return np.asarray([[np.nan if v is None else v for v in row] for row in fig.data[0].z])


def test_log_scale_ticks_are_decades_labelled_in_ms():
    fig = heatmap_figure(tiny_problem())
    bar = fig.data[0].colorbar
    assert all(float(v).is_integer() for v in bar.tickvals)
    assert [t.endswith("ms") for t in bar.ticktext] == [True] * len(bar.ticktext)
    assert math.isclose(_z(fig)[1, 0], math.log10(1.0))  # a on gpu


def test_ratio_view_against_a_reference():
    p = tiny_problem()
    fig = heatmap_figure(p, view="ratio", reference="gpu", group=None)
    assert list(fig.data[0].y) == ["cpu"] and fig.data[0].zmid == 0
    z = _z(fig)[0]
    assert math.isclose(z[0], math.log10(4.0 / 1.0))  # a: cpu 4 ms, gpu 1 ms
    assert np.isnan(z[-1])  # h cannot run on the reference
    assert fig.data[0].colorbar.ticktext[0].startswith("×")
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
