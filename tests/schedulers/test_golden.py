"""PartitionTuner Table 1 / Figure 1 (issue 3): simulator numbers, ilp 13, ilp --groups 12.5."""

from __future__ import annotations

import pytest

from hetlab.errors import HetlabError
from hetlab.schedulers import Plan, schedule, simulate
from hetlab.schedulers.bounds import lower_bound, validate_plan
from tests.schedulers.helpers import golden

OPSEQ = {
    "v1": "cpu",
    "v2": "cpu",
    "v3": "npu",
    "v4": "npu",
    "v5": "cpu",
    "v6": "cpu",
    "v7": "cpu",
    "v8": "cpu",
}
ORDER = ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8"]


def test_sim_opseq_sequential_is_15():
    assert simulate(golden(), OPSEQ, ORDER, sequential=True).makespan == pytest.approx(15.0)


def test_sim_partitiontuner_plan_is_12_5():
    dev = dict(OPSEQ, v5="npu")
    t = simulate(golden(), dev, ORDER, fused=[["v4", "v5"]])
    assert t.makespan == pytest.approx(12.5)
    assert t.start["v4"] == t.start["v5"] == pytest.approx(5.0)
    assert t.finish["v8"] == pytest.approx(12.5)


def test_sim_parallel_unfused_is_13_or_15_by_order():
    assert simulate(
        golden(), OPSEQ, ["v1", "v2", "v3", "v6", "v7", "v4", "v5", "v8"]
    ).makespan == pytest.approx(13.0)
    assert simulate(golden(), OPSEQ, ORDER).makespan == pytest.approx(
        15.0
    )  # v5 before v6 on the cpu


def test_ilp_is_13_and_exact():
    p = golden()
    plan = schedule(p, "ilp")
    validate_plan(p, plan)
    assert plan.makespan == pytest.approx(13.0)
    assert plan.fused == []
    assert plan.makespan <= plan.extra["ilp"]["solves"]["objective"] + 1e-6


def test_ilp_groups_is_12_5():
    p = golden()
    plan = schedule(p, "ilp", groups=True)
    validate_plan(p, plan)
    assert plan.makespan == pytest.approx(12.5)
    assert ["v4", "v5"] in plan.fused
    assert plan.device_of["v4"] == plan.device_of["v5"] == "npu"


def test_lower_bound_golden_allows_groups():
    p = golden()
    lb = lower_bound(p)
    assert lb == pytest.approx(12.25)  # v4 may take half of the 2.5 group cost
    assert lb <= 12.5


def test_greedy_golden_valid_and_not_below_optimum():
    p = golden()
    plan = schedule(p, "greedy")
    validate_plan(p, plan)
    assert plan.makespan >= 13.0 - 1e-9


def test_validator_rejects_tampered_plans():
    p = golden()
    good = schedule(p, "ilp")
    doc = good.to_json()
    doc["assignments"][0]["finish"] += 1.0
    with pytest.raises(HetlabError):
        validate_plan(p, Plan.from_json(doc))
    bad_dev = dict(OPSEQ, v2="npu")  # v2 cannot run on the npu
    with pytest.raises(HetlabError):
        validate_plan(
            p,
            Plan(p.name, "x", [], 0.0).__class__.from_json(
                {
                    "assignments": [
                        {"node": v, "device": bad_dev[v], "start": 0, "finish": 0} for v in ORDER
                    ]
                }
            ),
        )
    overlap = Plan.build(p, "x", OPSEQ, ORDER)
    doc = overlap.to_json()
    for a in doc["assignments"]:
        if a["node"] == "v7":
            a["start"], a["finish"] = 3.0, 4.0  # same time as v6 on the cpu
    with pytest.raises(HetlabError):
        validate_plan(p, Plan.from_json(doc))
    doc = overlap.to_json()
    doc["assignments"] = doc["assignments"][:-1]
    with pytest.raises(HetlabError):
        validate_plan(p, Plan.from_json(doc))
