"""ILP regressions found by other areas."""

from __future__ import annotations

from hetlab.schedulers import schedule
from hetlab.schedulers.bounds import lower_bound, validate_plan
from tests.executor.dags import random_problem


def test_device_free_after_the_window_horizon():
    # a device busy until after the window's horizon made L_d's bounds empty (lb > ub)
    p = random_problem(16, 2)
    plan = schedule(p, "ilp+", nt=4, time_limit=0.05, balance=True)
    validate_plan(p, plan)
    assert plan.makespan >= lower_bound(p) - 1e-9
    assert plan.makespan <= schedule(p, "greedy").makespan + 1e-9
