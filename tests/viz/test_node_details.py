"""One op's details (tensors, work, costs, placements) and the table of the costliest ops."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hetlab.errors import HetlabError
from hetlab.schedulers.plan import Plan
from hetlab.viz.costliest import BEST, costliest_ops
from hetlab.viz.node_details import ATTR_CHARS, node_details, node_details_html
from tests.tiny import tiny_graph, tiny_problem
from tests.viz._random import random_plan, random_problem


def _plans(p):
    split = Plan.build(
        p, "two", {v: "gpu" if v in "ce" else "cpu" for v in "abcdefgh"}, list("abcdefgh")
    )
    return {"plan (two)": split, "compared (random)": random_plan(p), "recommended": None}


def test_details_of_a_known_op_in_the_tiny_model():
    g, p = tiny_graph(), tiny_problem()
    plans = _plans(p)
    d = node_details(g, p, plans, "c")
    assert d["op_type"] == "Conv" and d["flops"] == 3000  # the third op: 1000 * 3
    (out,) = d["outputs"]
    assert out["name"] == "t_c" and out["shape"] == [1, 8, 4, 4] and out["dtype"] == "float32"
    assert out["bytes"] == 1 * 8 * 4 * 4 * 4 and d["bytes"]["written"] == out["bytes"]
    assert d["preds"] == ["b"] and d["succs"] == ["e"]
    cost = {c["device"]: c for c in d["costs"]}
    assert cost["cpu"]["ms"] == 6.0 and cost["gpu"]["ms"] == 1.5
    assert cost["gpu"]["best"] and not cost["cpu"]["best"]
    assert not any(c["estimated"] for c in d["costs"])
    # one placement per plan given (a plan still missing is left out), as the plan has it
    assert [x["plan"] for x in d["placements"]] == ["plan (two)", "compared (random)"]
    for x in d["placements"]:
        (a,) = [a for a in plans[x["plan"]].assignments if a.node == "c"]
        assert (x["device"], x["start"], x["finish"]) == (a.device, a.start, a.finish)
    h = node_details(g, p, plans, "h")
    assert {c["device"]: c["ms"] for c in h["costs"]} == {"cpu": 0.2, "gpu": None}


def test_an_estimated_cost_is_marked_with_its_basis():
    p = tiny_problem()
    n = p.nodes[p.index["d"]]
    n.extra.update(estimated=True, no_measure={"gpu": "Conv ms per FLOP"}, estimate_reason={})
    d = node_details(None, p, {}, "d")
    cost = {c["device"]: c for c in d["costs"]}
    assert cost["gpu"]["estimated"] and cost["gpu"]["basis"] == "Conv ms per FLOP"
    assert not cost["cpu"]["estimated"]
    html = node_details_html(d)
    assert "estimated (Conv ms per FLOP)" in html and "1.20 ms*" in html
    assert "edges:" in html  # without the model, what the profile knows of its edges


def test_either_source_alone_and_an_unknown_name():
    g, p = tiny_graph(), tiny_problem()
    alone = node_details(g, None, None, "a")
    assert alone["costs"] == [] and alone["outputs"][0]["shape"] == [1, 8, 4, 4]
    assert "no profile" in node_details_html(alone)
    with pytest.raises(HetlabError, match="no op named 'zz'"):
        node_details(g, p, {}, "zz")


def test_attributes_are_short_and_tensors_show_their_shape():
    g = tiny_graph()
    g.node("a").attrs = {
        "kernel_shape": [3, 3],
        "value": np.zeros((64, 3, 7, 7), dtype=np.float32),
        "name": "x" * 200,
    }
    d = node_details(g, tiny_problem(), {}, "a")
    assert d["attrs"]["kernel_shape"] == "[3, 3]"
    assert d["attrs"]["value"] == "array 64x3x7x7 float32"
    assert len(d["attrs"]["name"]) == ATTR_CHARS
    html = node_details_html(d)
    assert "kernel_shape=[3, 3]" in html and "1×8×4×4" in html and "cannot run" not in html


@pytest.mark.parametrize("seed", range(4))
def test_shares_sum_to_one_and_rows_follow_the_sort(seed):
    p = random_problem(120, seed=seed)
    for device in [BEST, *p.devices]:
        rows = costliest_ops(p, device, top=None)
        assert len(rows) == len(p.nodes)
        assert sum(r["share"] for r in rows if r["share"] is not None) == pytest.approx(1.0)
        costs = [r["cost"] for r in rows]
        have = [c for c in costs if c is not None]
        assert have == sorted(have, reverse=True) and costs[len(have) :] == [None] * (
            len(costs) - len(have)
        )
        up = [r["cost"] for r in costliest_ops(p, device, top=None, reverse=True)]
        assert up[: len(have)] == sorted(have) and up[len(have) :] == costs[len(have) :]
        assert costliest_ops(p, device, top=7) == rows[:7]
    best = {r["node"]: r["cost"] for r in costliest_ops(p, top=None)}
    for n in p.nodes:
        assert best[n.id] == min(c for c in n.cost.values() if c is not None and math.isfinite(c))
    by_gpu = [r["costs"]["gpu"] for r in costliest_ops(p, "cpu", top=None, sort="gpu")]
    known = [c for c in by_gpu if c is not None]
    assert known == sorted(known, reverse=True) and by_gpu[-1] is None  # gpu cannot run some
    names = [r["node"] for r in costliest_ops(p, top=None, sort="node")]
    assert names == sorted(names, key=str.lower)


def test_a_bad_device_or_column_is_one_clear_error():
    p = tiny_problem()
    with pytest.raises(HetlabError, match="no device 'tpu'"):
        costliest_ops(p, "tpu")
    with pytest.raises(HetlabError, match="cannot sort by 'size'"):
        costliest_ops(p, sort="size")
