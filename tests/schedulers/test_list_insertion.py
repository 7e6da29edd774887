"""The insertion-based policy of HEFT and PEFT under spec §3: a node goes into an idle gap only
if the gap holds its blocking receives and its compute, and the plan the executor gets (nodes
by start time) is timed by the simulator exactly as the scheduler placed it."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from hetlab.cost.problem import Problem
from hetlab.schedulers import schedule
from hetlab.schedulers.bounds import lower_bound, validate_plan
from hetlab.schedulers.heft import heft_timeline
from hetlab.schedulers.incremental import GapTimeline
from hetlab.schedulers.peft import peft_timeline
from tests.schedulers.helpers import random_problem
from tests.schedulers.test_baselines_props import problems


def gap_problem(remote_input: bool) -> Problem:
    """Device a idles over [1, 7) while b runs B; X (a only, 5.5) comes last by rank_u and is
    ready at 1. With ``remote_input`` X also needs R from b: a 1 ms receive on a."""
    cost = {"s": (1, None), "B": (None, 5), "L": (1, None), "T": (10, None), "X": (5.5, None)}
    edges = [("s", "B"), ("B", "L"), ("L", "T"), ("s", "X")]
    if remote_input:
        cost["R"] = (None, 1)
        edges.append(("R", "X"))
    return Problem.from_json(
        {
            "name": "gap",
            "devices": ["a", "b"],
            "nodes": [{"id": k, "cost": {"a": x, "b": y}} for k, (x, y) in cost.items()],
            "edges": [{"src": u, "dst": v, "bytes": 0} for u, v in edges],
            "comm": {"default": {"latency": 1.0, "bandwidth": None}},
        }
    )


def starts(plan) -> dict[str, float]:
    return {a.node: a.start for a in plan.assignments}


@pytest.mark.parametrize("algo", ["heft", "peft"])
def test_a_node_goes_into_the_gap_that_holds_it(algo):
    plan = schedule(gap_problem(remote_input=False), algo)
    assert starts(plan)["X"] == 1.0 and plan.makespan == 19.0  # s, X in the gap, L, T
    assert plan.device_order()["a"] == ["s", "X", "L", "T"]
    validate_plan(gap_problem(False), plan)


def test_without_insertion_the_gap_stays_idle():
    plan = schedule(gap_problem(remote_input=False), "heft-append")
    assert starts(plan)["X"] == 19.0 and plan.makespan == 24.5


def test_a_receive_needs_the_gap_too():
    # 5.5 of compute fits the 6 idle ms, 1 of receive + 5.5 does not: X waits for T
    p = gap_problem(remote_input=True)
    plan = schedule(p, "heft")
    assert starts(plan)["R"] == 0.0  # R itself fills b's idle [0, 1) before B
    assert starts(plan)["X"] == 19.0 and plan.makespan == 25.5
    validate_plan(p, plan)


def timeline_of(algo: str, p: Problem):
    return heft_timeline(p) if algo == "heft" else peft_timeline(p)


def check_exact(p: Problem, algo: str) -> None:
    """The plan is the simulator's timing of the scheduler's own placements, node by node."""
    tl = timeline_of(algo, p)
    assert isinstance(tl, GapTimeline)
    plan = schedule(p, algo)
    validate_plan(p, plan)  # precedence, no overlap, the simulator's times
    for a in plan.assignments:
        v = p.index[a.node]
        assert (a.start, a.finish) == (tl.start[v], tl.finish[v]), a.node
    for d, nodes in plan.device_order().items():  # the executor's order is the slot order
        assert nodes == [p.nodes[x[3]].id for x in tl.slots[p.dev_index[d]]]
    assert plan.timed(p).makespan == plan.makespan
    assert plan.makespan >= lower_bound(p) - 1e-9


@pytest.mark.parametrize("algo", ["heft", "peft"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=problems(max_nodes=10))
def test_insertion_plans_are_exact_on_random_dags(algo, p):
    # zero costs, unsupported ops and costly links included
    check_exact(p, algo)


@pytest.mark.parametrize("algo", ["heft", "peft"])
@pytest.mark.parametrize("seed", range(6))
def test_insertion_plans_are_exact_on_larger_dags(algo, seed):
    check_exact(random_problem(seed, 40, n_dev=3, p_edge=0.15), algo)
