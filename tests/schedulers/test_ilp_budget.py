"""``ilp``'s windows under a work budget: one plan per input, what the plan says about its
windows, and the optimum the tightened formulation keeps (bounds, cuts, symmetry breaking)."""

from __future__ import annotations

import random

import pytest

from hetlab.commands.schedule import gap_text, windows_line
from hetlab.cost.datasets import load_hope_profile, profile_names
from hetlab.cost.problem import Problem
from hetlab.schedulers import ilp, ilp_model, schedule
from hetlab.schedulers.bounds import validate_plan
from hetlab.schedulers.ilp_solver import WindowResult
from hetlab.schedulers.ilp_warm import window_start
from hetlab.schedulers.incremental import Timeline
from hetlab.schedulers.partition import partition
from tests.schedulers.helpers import random_problem
from tests.schedulers.test_properties import brute_force

P40 = "inception-v3-huawei_p40"


@pytest.fixture(scope="module")
def p40():
    if P40 not in profile_names():
        pytest.skip("HOPE phone profiles are not in this checkout")
    return load_hope_profile(P40)


def solve_afresh(problem, **kw):
    ilp.forget()  # not the session's remembered plan: a second, independent solve
    plan = schedule(problem, "ilp", **kw)
    assert plan.extra["cached"] is False
    return plan


@pytest.mark.parametrize(("nt", "node_limit"), [(8, None), (20, 30)])
def test_the_same_input_gives_the_same_plan(p40, nt, node_limit):
    """With nt=20 and 30 nodes the budget stops windows short of a proof: still one answer."""
    a = solve_afresh(p40, nt=nt, node_limit=node_limit)
    b = solve_afresh(p40, nt=nt, node_limit=node_limit)
    assert a.device_of == b.device_of and a.order == b.order
    assert a.makespan == b.makespan
    assert [w[:3] for w in a.extra["window_log"]] == [w[:3] for w in b.extra["window_log"]]
    if node_limit is not None:
        assert a.extra["windows_limit"] > 0  # the case this test is about
    assert a.extra["windows_time_limit"] == 0  # the work budget, not the clock, stopped them


def test_the_plan_says_how_its_windows_ended(p40):
    plan = solve_afresh(p40, nt=8)
    validate_plan(p40, plan)
    e = plan.extra
    log = e["window_log"]
    assert e["decided_by"] in ("ilp", "mip-start")
    assert len(log) == e["windows"] == e["windows_optimal"] + e["windows_limit"]
    assert e["mip_nodes"] == sum(w[1] for w in log)
    assert e["mip_nodes_max"] == max(w[1] for w in log)
    assert e["solve_s"] == pytest.approx(sum(w[3] for w in log), abs=1e-3 * len(log))
    assert e["ilp"]["node_limit"] == ilp.NODE_LIMIT
    for status, nodes, gap, _ in log:
        assert status in ("Optimal", "bound", "NodeLimit") and nodes <= ilp.NODE_LIMIT
        assert gap is None or gap >= 0.0


def test_a_window_stopped_by_the_budget_keeps_the_best_incumbent(p40):
    plan = solve_afresh(p40, nt=20, node_limit=1)
    validate_plan(p40, plan)
    e = plan.extra
    assert e["windows_limit"] > 0 and e["decided_by"] in ("ilp", "mip-start")
    stopped = [w for w in e["window_log"] if w[0] not in ("Optimal", "bound")]
    assert all(w[0] == "NodeLimit" and w[1] <= 1 for w in stopped)
    assert e["decided_by"] == ilp.hope_decided_by(_stats_of(e), e["windows"])


def _stats_of(extra) -> ilp.Windows:
    return ilp.Windows(
        optimal=extra["windows_optimal"],
        limit=extra["windows_limit"],
        start_kept=extra["windows_start_kept"],
    )


def test_no_incumbent_is_said_in_words():
    stats = ilp.Windows()
    res = WindowResult({}, {}, [], 1.0, None, "warm:TimeLimit", 0.1, 1.0)
    stats.add(res)
    assert res.no_incumbent and res.clock_stopped and res.start_kept
    assert stats.gap_shown() == ilp.NO_INCUMBENT == "no incumbent from the ILP"
    extra = {"windows": 1, "windows_optimal": 0, "mip_gap_max": stats.gap_shown()}
    assert "inf" not in windows_line(extra) and ilp.NO_INCUMBENT in windows_line(extra)
    assert gap_text(0.0125) == "1.25%"


def _with_twins(seed: int, n: int) -> Problem:
    """A random problem on d0 and two interchangeable devices t1, t2."""
    rng = random.Random(seed)
    nodes = []
    for i in range(n):
        c = round(rng.uniform(0.5, 5.0), 3)
        nodes.append(
            {"id": f"n{i}", "cost": {"d0": round(rng.uniform(0.5, 5.0), 3), "t1": c, "t2": c}}
        )
    edges = []
    for j in range(n):
        for i in range(j):
            if rng.random() < 0.35:
                x, y, z = (round(rng.uniform(0.0, 2.0), 3) for _ in range(3))
                comm = {
                    "d0->t1": x,
                    "d0->t2": x,
                    "t1->d0": y,
                    "t2->d0": y,
                    "t1->t2": z,
                    "t2->t1": z,
                }
                edges.append({"src": f"n{i}", "dst": f"n{j}", "bytes": 1, "comm": comm})
    doc = {"name": f"twins{seed}", "devices": ["d0", "t1", "t2"], "nodes": nodes, "edges": edges}
    return Problem.from_json(doc)


@pytest.mark.parametrize("seed", range(3))
def test_symmetry_breaking_keeps_the_optimum(seed):
    p = _with_twins(seed, 6)
    W = list(p.topo)
    _, wd, ws, wf = window_start(p, Timeline(p), W)
    spec = ilp_model.WindowSpec(W, wd, ws, wf, skip_by_bound=False)
    assert ilp_model._Model(p, Timeline(p), spec).twins() == [[1, 2]]
    plan = solve_afresh(p, nt=len(p.nodes))
    validate_plan(p, plan)
    assert plan.extra["windows_optimal"] == 1
    assert plan.makespan == pytest.approx(brute_force(p), rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_window_bounds_hold_for_the_optimal_window(seed):
    """Releases, deadlines and what must follow each node bound the window's optimum."""
    p = random_problem(seed, 12, 2, p_edge=0.3)
    parts = partition(p, 6, 0.2)
    tl = Timeline(p)
    for part in parts:
        _, wd, ws, wf = window_start(p, tl, part)
        spec = ilp_model.WindowSpec(part, wd, ws, wf, time_limit=30.0, skip_by_bound=False)
        m = ilp_model._Model(p, tl, spec)
        res = ilp_model.solve_window(p, tl, spec)
        assert res.optimal
        ilp.commit(p, tl, part, res, [])  # re-timed ASAP: any schedule must respect the bounds
        for v in part:
            assert m.rel[v] <= tl.start[v] + 1e-9
            assert tl.finish[v] <= m.ub[v] + 1e-9  # as good as the start: before the deadline
            assert m.rel[v] + m.least_cost(v) + m.after[v] <= res.objective + 1e-6
