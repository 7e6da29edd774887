"""Mutually exclusive device sets (the whole CPU or its core groups): a plan uses one."""

from __future__ import annotations

import pytest

from hetlab.cost.problem import Problem
from hetlab.errors import HetlabError
from hetlab.schedulers.base import schedule


def problem(whole: float, group: float, width: int = 2) -> Problem:
    """``width`` independent nodes; each costs ``whole`` on the whole CPU and ``group`` on
    either of its two groups."""
    nodes = [
        {"id": f"n{i}", "cost": {"cpu": whole, "cpu0": group, "cpu1": group}} for i in range(width)
    ]
    return Problem.from_json(
        {
            "name": "alternatives",
            "devices": ["cpu0", "cpu1", "cpu"],
            "nodes": nodes,
            "edges": [],
            "exclusive": [["cpu"], ["cpu0", "cpu1"]],
        }
    )


@pytest.mark.parametrize("algo", ["heft", "greedy", "ilp", "single:cpu"])
def test_a_plan_never_mixes_the_whole_cpu_with_its_groups(algo):
    plan = schedule(problem(1.0, 1.5), algo)
    used = set(plan.device_of.values())
    assert not ({"cpu"} & used and {"cpu0", "cpu1"} & used)


def test_the_better_alternative_wins_and_says_so():
    groups_win = schedule(problem(whole=1.0, group=1.5), "heft")  # 1.5 in parallel < 2.0
    assert set(groups_win.device_of.values()) == {"cpu0", "cpu1"}
    assert groups_win.extra["alternative"] == "cpu0+cpu1"
    assert groups_win.extra["alternatives"] == {"cpu": 2.0, "cpu0+cpu1": 1.5}
    whole_wins = schedule(problem(whole=0.5, group=1.5), "heft")
    assert set(whole_wins.device_of.values()) == {"cpu"}
    assert whole_wins.makespan == pytest.approx(1.0)


def test_no_alternative_that_runs_every_node_is_one_line():
    p = problem(1.0, 1.5)
    p.nodes[0].cost = {"cpu": None, "cpu0": None, "cpu1": None}
    with pytest.raises(HetlabError):
        schedule(p, "heft")
