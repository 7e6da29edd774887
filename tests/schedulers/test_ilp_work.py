"""The ILP's work budget scaled to the window size, and the estimate a caller reads first."""

from __future__ import annotations

import itertools
import warnings

import pytest

from hetlab.schedulers import schedule
from hetlab.schedulers.ilp_model import WindowSpec, _Model
from hetlab.schedulers.ilp_warm import window_start
from hetlab.schedulers.ilp_work import BUDGET_S, REF_NT, estimate, window_node_limit, window_rows
from hetlab.schedulers.incremental import Timeline
from hetlab.schedulers.partition import partition
from tests.schedulers.helpers import layered_problem


def test_node_budget_shrinks_only_above_the_default_window():
    assert window_node_limit(500, REF_NT) == 500
    assert window_node_limit(500, 1) == 500
    assert window_node_limit(None, 40) is None
    sizes = range(REF_NT, 200)
    limits = [window_node_limit(500, s) for s in sizes]
    assert all(a >= b for a, b in itertools.pairwise(limits))
    assert window_node_limit(500, 2 * REF_NT) == 125
    assert min(limits) >= 1


def test_rows_counted_as_the_model_builds_them():
    p = layered_problem(1, 200, 6, 3)
    tl = Timeline(p)
    for W in partition(p, 16)[:4]:
        _, wd, ws, wf = window_start(p, tl, W)
        m = _Model(p, tl, WindowSpec(W, wd, ws, wf))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            m.build()
        assert window_rows(p, W) == pytest.approx(m.lp.numConstraints(), rel=0.15)


def test_estimate_grows_with_nt_and_names_one_that_fits():
    p = layered_problem(2, 400, 8, 3)
    small, big = estimate(p, 4), estimate(p, 40)
    assert small.seconds < big.seconds
    assert small.largest <= 4 < big.largest <= 40
    assert (big.line() == "") == big.within
    if not big.within:
        assert "over the" in big.line()
        assert big.fits_nt is not None and big.fits_nt < 40
        assert estimate(p, big.fits_nt).seconds <= BUDGET_S
    assert estimate(p, 40) == big  # a function of its input


def test_large_windows_solve_with_the_scaled_budget():
    p = layered_problem(3, 60, 6, 2)
    plan = schedule(p, "ilp", nt=30, node_limit=40)
    # each window's branch-and-bound nodes stay within its scaled budget
    sizes = [len(w) for w in plan.extra["subgraphs"]]
    for size, row in zip(sizes, plan.extra["window_log"], strict=True):
        assert row[1] <= max(window_node_limit(40, size), 1) + 1


def test_solve_line_only_over_the_budget():
    from hetlab.schedulers.ilp_work import solve_line
    from hetlab.schedulers.plan import Plan

    plan = Plan.of({"a": "d0"}, ["a"], algo="ilp", extra={"solve_s": 0.5})
    assert solve_line(plan) == ""
    plan.extra["solve_s"], plan.params["nt"] = 12.0, 20
    assert solve_line(plan) == "ILP at nt=20 took 12.0 s, over the 3 s budget per move"


def test_ilp_plus_passes_count_as_more_solves():
    p = layered_problem(4, 200, 6, 3)
    one, three = estimate(p, 12), estimate(p, 12, passes=2)
    assert three.seconds == pytest.approx(3 * one.seconds, abs=0.02)
