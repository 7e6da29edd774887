"""HOPE GS specifics: node merging keeps a short single-predecessor op with its predecessor."""

from __future__ import annotations

import pytest

from hetlab.cost.problem import Problem
from hetlab.errors import HetlabError
from hetlab.schedulers import schedule
from hetlab.schedulers.bounds import validate_plan
from hetlab.schedulers.greedy import merge_superops
from tests.schedulers.helpers import random_problem


def chain_problem() -> Problem:
    # conv on the gpu is far cheaper; the relu is short (0.01 cpu, 0.05 gpu) with one predecessor
    return Problem.from_json(
        {
            "name": "chain",
            "devices": ["cpu", "gpu"],
            "nodes": [
                {"id": "conv", "cost": {"cpu": 9.0, "gpu": 1.0}},
                {"id": "relu", "cost": {"cpu": 0.01, "gpu": 0.05}},
                {"id": "pool", "cost": {"cpu": 0.5, "gpu": 3.0}},
            ],
            "edges": [
                {"src": "conv", "dst": "relu", "comm": {"gpu->cpu": 0.001, "cpu->gpu": 0.001}},
                {"src": "relu", "dst": "pool", "comm": {"gpu->cpu": 0.001, "cpu->gpu": 0.001}},
            ],
        }
    )


def test_merging_builds_superops():
    p = chain_problem()
    assert merge_superops(p, 0.1) == [[0, 1], [2]]
    assert merge_superops(p, 0.0) == [[0], [1], [2]]


def test_merged_op_shares_its_predecessors_device():
    p = chain_problem()
    plan = schedule(p, "greedy", merge_threshold=0.1)
    validate_plan(p, plan)
    assert plan.device_of["relu"] == plan.device_of["conv"] == "gpu"
    unmerged = schedule(p, "greedy", merge_threshold=0.0)
    assert unmerged.device_of["relu"] == "cpu"  # alone it prefers the cpu


def test_k_range_and_blowup_are_bad_input():
    p = random_problem(1, 6, 4)
    with pytest.raises(HetlabError):
        schedule(p, "greedy", k=0)
    assert schedule(p, "greedy", k=1).makespan > 0
    assert schedule(p, "greedy", k=3).makespan > 0
