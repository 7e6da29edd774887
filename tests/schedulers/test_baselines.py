"""Known values of the baseline schedulers on hand-computed tiny problems."""

from __future__ import annotations

import numpy as np
import pytest

from hetlab.cost.problem import Problem
from hetlab.errors import HetlabError
from hetlab.schedulers import schedule
from hetlab.schedulers.partitiontuner import extract_branches, parallel_levels
from hetlab.schedulers.ranks import (
    costliest_path,
    optimistic_cost_table,
    priority_order,
    rank_oct,
    upward_rank,
)
from hetlab.schedulers.sequence_baselines import is_heavy


def make(devices, costs, edges, groups=(), comm=None, op_types=None) -> Problem:
    """``costs``: id -> tuple per device (None = unsupported); ``edges``: (src, dst[, comm])."""
    nodes = []
    for k, c in costs.items():
        nodes.append(
            {
                "id": k,
                "op_type": (op_types or {}).get(k, ""),
                "cost": dict(zip(devices, c, strict=False)),
            }
        )
    es = [
        {"src": e[0], "dst": e[1], "bytes": 0, **({"comm": e[2]} if len(e) > 2 else {})}
        for e in edges
    ]
    doc = {
        "name": "t",
        "devices": list(devices),
        "nodes": nodes,
        "edges": es,
        "groups": [
            {"nodes": list(g), "cost": dict(zip(devices, c, strict=False))} for g, c in groups
        ],
        "comm": comm or {},
    }
    return Problem.from_json(doc)


def golden() -> Problem:
    """PartitionTuner Table 1 / Figure 1 (issue 3): free transfers."""
    costs = {
        "v1": (1, 10),
        "v2": (2, None),
        "v3": (10, 2),
        "v4": (10, 2),
        "v5": (1, None),
        "v6": (1, 1.5),
        "v7": (1, None),
        "v8": (5, None),
    }
    edges = [
        ("v1", "v2"),
        ("v2", "v3"),
        ("v2", "v6"),
        ("v3", "v4"),
        ("v4", "v5"),
        ("v5", "v8"),
        ("v6", "v7"),
        ("v7", "v8"),
    ]
    groups = [(("v4", "v5"), (10.5, 2.5)), (("v6", "v7"), (1.5, 2.0))]
    return make(["cpu", "npu"], costs, edges, groups)


# --- PartitionTuner golden example ----------------------------------------------------
def test_golden_opseq_is_15():
    plan = schedule(golden(), "opseq")
    assert plan.makespan == 15.0
    assert plan.sequential
    assert plan.device_of == {
        "v1": "cpu",
        "v2": "cpu",
        "v3": "npu",
        "v4": "npu",
        "v5": "cpu",
        "v6": "cpu",
        "v7": "cpu",
        "v8": "cpu",
    }


def test_golden_partitiontuner_is_12_5():
    plan = schedule(golden(), "partitiontuner")
    assert plan.makespan == 12.5
    assert not plan.sequential
    assert ["v4", "v5"] in plan.fused
    assert plan.device_of["v4"] == plan.device_of["v5"] == "npu"
    assert plan.device_of["v6"] == plan.device_of["v7"] == "cpu"  # the parallel branch
    assert plan.extra["parallel_split"] == 1


def test_golden_branches():
    p = golden()
    ids = [[p.nodes[v].id for v in b] for b in extract_branches(p)]
    assert ids == [["v1", "v2"], ["v3", "v4", "v5"], ["v6", "v7"], ["v8"]]
    assert parallel_levels(p, extract_branches(p)) == [[1, 2]]


def test_partitiontuner_ignores_groups_across_branches():
    p = golden()
    doc = p.to_json()
    doc["groups"].append({"nodes": ["v2", "v3"], "cost": {"cpu": 0.1, "npu": None}})  # a fork
    plan = schedule(Problem.from_json(doc), "partitiontuner")
    assert ["v2", "v3"] not in plan.fused and plan.makespan == 12.5


def test_golden_single_devices():
    p = golden()
    assert schedule(p, "single:cpu").makespan == 31.0
    plan = schedule(p, "single:npu")  # v2, v5, v7, v8 fall back to cpu
    assert plan.makespan == 10 + 2 + 2 + 2 + 1 + 1.5 + 1 + 5
    assert plan.extra["fallback_ops"] == 4


# --- ranks, HEFT, PEFT ----------------------------------------------------------------
def chain3() -> Problem:
    """v1 -> v2 -> v3 on a, b; every transfer costs 1."""
    costs = {"v1": (1, 3), "v2": (4, 1), "v3": (2, 2)}
    return make(
        ["a", "b"],
        costs,
        [("v1", "v2"), ("v2", "v3")],
        comm={"default": {"latency": 1.0, "bandwidth": None}},
    )


def test_upward_rank_chain():
    np.testing.assert_allclose(upward_rank(chain3()), [8.5, 5.5, 2.0])
    assert [chain3().nodes[v].id for v in costliest_path(chain3())] == ["v1", "v2", "v3"]


def test_oct_chain():
    p = chain3()
    np.testing.assert_allclose(optimistic_cost_table(p), [[4, 3], [2, 2], [0, 0]])
    np.testing.assert_allclose(rank_oct(p), [3.5, 2, 0])


def test_oct_skips_unsupported_devices():
    p = make(
        ["a", "b"],
        {"x": (1, 1), "y": (None, 5)},
        [("x", "y")],
        comm={"default": {"latency": 2.0, "bandwidth": None}},
    )
    np.testing.assert_allclose(optimistic_cost_table(p)[0], [7, 5])


@pytest.mark.parametrize("algo", ["heft", "peft"])
def test_list_schedulers_chain3(algo):
    plan = schedule(chain3(), algo)
    assert plan.device_of == {"v1": "a", "v2": "b", "v3": "b"}
    assert plan.makespan == 5.0  # 1 on a, then 1 + 1 receive on b, then 2 on b


def test_priority_order_is_topological_under_ties():
    p = make(["a"], {"x": (0,), "y": (0,), "z": (0,)}, [("x", "y"), ("y", "z")])
    assert priority_order(p, np.zeros(3)) == [0, 1, 2]
    assert priority_order(p, np.array([0.0, 5.0, 9.0])) == [0, 1, 2]


# --- StarPU dmda / dmdar --------------------------------------------------------------
def test_dmda_spreads_independent_tasks():
    p = make(["a", "b"], {"t1": (2, 3), "t2": (2, 3)}, [])
    plan = schedule(p, "dmda")
    assert plan.device_of == {"t1": "a", "t2": "b"}
    assert plan.makespan == 3.0


def test_dmdar_runs_data_local_tasks_first():
    # r1 (needs 5 ms of transfer from b) is pushed before r2 (its input is already on a);
    # dmda's FIFO runs r1 first and delays s behind r2, dmdar runs r2 first.
    costs = {"q": (None, 1), "p": (1, None), "r1": (1, None), "r2": (1, None), "s": (None, 10)}
    edges = [("q", "r1", {"b->a": 5.0}), ("p", "r2"), ("r2", "s", {"a->b": 0.0})]
    p = make(["a", "b"], costs, edges)
    assert schedule(p, "dmda").makespan == 18.0
    plan = schedule(p, "dmdar")
    assert plan.makespan == 12.0
    start = {a.node: a.start for a in plan.assignments}
    assert start["r2"] < start["r1"]


# --- MOSAIC, OverSeer -------------------------------------------------------------------
def test_mosaic_slices_chain():
    costs = {"x": (1, 5), "y": (9, 1), "z": (9, 1), "w": (1, 5)}
    edges = [("x", "y"), ("y", "z"), ("z", "w")]
    p = make(["a", "b"], costs, edges, comm={"default": {"latency": 1.0, "bandwidth": None}})
    plan = schedule(p, "mosaic")
    assert plan.sequential
    assert plan.device_of == {"x": "a", "y": "b", "z": "b", "w": "a"}
    assert plan.makespan == 1 + 1 + 1 + 1 + 1 + 1 == plan.extra["dp_time"]
    assert plan.extra["slices"] == 3


def test_overseer_follows_costliest_branch():
    # fork f -> {h (heavy), l (light)} -> j: the tree keeps f -> h, drops f -> l.
    costs = {"f": (1, 1), "h": (10, 2), "l": (1, 1), "j": (1, 1)}
    p = make(
        ["a", "b"],
        costs,
        [("f", "h"), ("f", "l"), ("h", "j"), ("l", "j")],
        comm={"default": {"latency": 3.0, "bandwidth": None}},
    )
    assert [p.nodes[v].id for v in costliest_path(p)] == ["f", "h", "j"]
    plan = schedule(p, "overseer")
    assert plan.sequential
    assert plan.device_of == {"f": "b", "h": "b", "l": "b", "j": "b"}
    assert plan.makespan == 5.0
    assert not schedule(p, "overseer", parallel=True).sequential


# --- seq baselines ----------------------------------------------------------------------
def test_typeseq_heavy_ops_to_accelerator():
    costs = {"c1": (8, 2), "r1": (1, 3), "m1": (6, None), "s1": (None, 1)}
    types = {"c1": "Conv", "r1": "Relu", "m1": "MatMul", "s1": "Softmax"}
    p = make(["cpu", "npu"], costs, [("c1", "r1"), ("r1", "m1"), ("m1", "s1")], op_types=types)
    plan = schedule(p, "typeseq")
    # npu is fastest on Conv+MatMul in total (2 + 6 fallback < 8 + 6); MatMul falls back to
    # cpu, Softmax (not heavy, cpu unsupported) falls back to npu
    assert plan.device_of == {"c1": "npu", "r1": "cpu", "m1": "cpu", "s1": "npu"}
    assert plan.extra["accelerator"] == "npu" and plan.makespan == 2 + 1 + 6 + 1


@pytest.mark.parametrize(
    "op",
    [
        "Conv",
        "Conv2D",
        "separable_conv2d",
        "depthwise",
        "Gemm",
        "MatMul",
        "BatchMatMul",
        "QLinearConv",
        "ConvTranspose",
    ],
)
def test_heavy_ops(op):
    assert is_heavy(op)


@pytest.mark.parametrize("op", ["Relu", "Add", "ConvertLayout", "Softmax", "", "concat"])
def test_light_ops(op):
    assert not is_heavy(op)


def test_single_unknown_device_lists_devices():
    with pytest.raises(HetlabError, match="cpu, npu"):
        schedule(golden(), "single:gpu9")
    with pytest.raises(HetlabError, match="single:DEVICE"):
        schedule(golden(), "single")
