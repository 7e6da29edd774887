"""The course's helpers: the enumerated optimum, the labelled figures, plan information."""

from __future__ import annotations

import pytest

from hetlab import course
from hetlab.errors import HetlabError
from hetlab.schedulers import schedule
from hetlab.schedulers.partition import partition


def test_optimum_is_a_lower_bound_that_a_plan_reaches():
    p = course.small_dag()
    best, device_of, order = course.optimum(p)
    from hetlab.schedulers import simulate

    assert simulate(p, device_of, order).makespan == pytest.approx(best)
    for algo in ("heft", "peft", "dmda", "greedy", "single:cpu", "single:gpu"):
        assert schedule(p, algo).makespan >= best - 1e-9, algo
    assert schedule(p, "ilp", nt=len(p.nodes)).makespan == pytest.approx(best)


def test_optimum_refuses_large_problems():
    with pytest.raises(HetlabError, match="8 operators"):
        course.optimum(course.two_branch_dag())


def test_levels_follow_eq8():
    p = course.two_branch_dag()
    lvl = course.levels(p)
    for e in p.edges:
        assert lvl[e.dst] >= lvl[e.src] + 1
    assert {v for v, r in lvl.items() if r == 1} == {"in"}


def test_hand_dag_labels_every_node_with_its_costs():
    p = course.partitiontuner_example()
    fig = course.hand_dag(p, values={"v1": 3.0}, value_name="x")
    labels = {t.split("<br>")[0]: t for t in fig.data[0].text}
    assert set(labels) == {f"<b>{n.id}</b>" for n in p.nodes}
    assert "cpu 2 · npu –" in labels["<b>v2</b>"] and "x = 3" in labels["<b>v1</b>"]


def test_plan_info_reports_the_partition_size():
    p = course.two_branch_dag()
    plan = schedule(p, "ilp", nt=4, epsilon=0.2)
    info = course.plan_info(plan)
    assert set(info) == set(course.INFO_KEYS)
    assert info["subgraphs"] == len(partition(p, 4, 0.2))
    assert info["solve_s"] >= 0


def test_defaults_come_from_the_registry():
    from hetlab.schedulers.base import algorithm

    d = course.defaults("ilp")
    assert set(d) == {p.name for p in algorithm("ilp").params}
    assert course.defaults("greedy", course.small_dag())["k"] is not None


def test_lookahead_dag_tells_peft_from_heft():
    """HEFT (and dmda) start the chain where its first operator finishes first and pay a
    transfer; PEFT's look-ahead keeps the chain on the GPU. A chain has no idle gap, so
    gap insertion cannot change this."""
    p = course.lookahead_dag()
    heft, peft = schedule(p, "heft"), schedule(p, "peft")
    assert heft.device_of["prep"] == "cpu" and peft.device_of["prep"] == "gpu"
    assert peft.makespan < heft.makespan - 1.0
    assert peft.makespan == pytest.approx(schedule(p, "single:gpu").makespan)


def test_how_far_says_the_direction_and_a_coarse_size_never_the_value():
    from hetlab.course.wrong import early_or_late, first_gap, how_far

    assert how_far(10.5, 10.0) == "a little too high (off by less than 10%)"
    assert how_far(7.5, 10.0) == "too low (off by 10% or more)"
    assert how_far(25.5, 10.0) == "too high, more than twice what it should be"
    assert how_far(4, 10.5) == "too low, less than half of what it should be"
    assert how_far(-1.5, 2.5) == "of the wrong sign"
    assert how_far(3, 2) == "too high" and how_far("x", 2) == "not right"
    assert early_or_late(5.0, 3.5) == "too late (off by 10% or more)"
    assert first_gap({"a": [1, ...]}, "answer") == "answer['a'][1]"
    assert first_gap({"a": [1, 2]}, "answer") is None


def test_the_chapter_s_own_ilp_prints_no_banner():
    """HiGHS prints a banner when a process makes its first solver, whatever ``msg`` says:
    chapter 04's own PuLP model (``quiet_solver``) prints nothing, in a fresh process."""
    import subprocess
    import sys

    code = (
        "import pulp\n"
        "from hetlab.course import quiet_solver\n"
        "m = pulp.LpProblem('x', pulp.LpMinimize)\n"
        "x = pulp.LpVariable('x', cat='Binary')\n"
        "m += x\n"
        "m += x >= 0\n"
        "m.solve(quiet_solver())\n"
        "print('solved', pulp.LpStatus[m.status])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "solved Optimal" and "HiGHS" not in out.stderr
