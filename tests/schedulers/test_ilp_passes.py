"""The ILP's improvement pass (ilp_passes), window MIP starts (ilp_warm) and window bound."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetlab.schedulers import ilp_model, schedule, simulate
from hetlab.schedulers.bounds import validate_plan
from hetlab.schedulers.greedy import greedy_timeline
from hetlab.schedulers.ilp_bounds import path_bound
from hetlab.schedulers.ilp_guided import PassContext, fusable_tail, guided_pass
from hetlab.schedulers.ilp_guided import plain_tail as _plain_tail
from hetlab.schedulers.ilp_passes import _Draft, improve
from hetlab.schedulers.ilp_plus_options import PlusOptions
from hetlab.schedulers.ilp_warm import completion_makespan, window_start
from hetlab.schedulers.incremental import Timeline
from hetlab.schedulers.partition import partition
from tests.schedulers.helpers import golden, layered_problem, random_problem

SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow], "derandomize": True}


def tail_of(p):
    return _plain_tail(p, p.cost_matrix.min(axis=1))


def sim_ms(p, tl: Timeline) -> float:
    dev, order, fused = tl.decision_parts()
    return simulate(p, dev, order, fused).makespan


@settings(max_examples=15, **SETTINGS)
@given(
    seed=st.integers(0, 10**6), n=st.integers(2, 40), nd=st.integers(2, 4), kicks=st.integers(0, 20)
)
def test_improve_never_worse_and_its_makespan_is_the_simulators(seed, n, nd, kicks):
    p = random_problem(seed, n, nd, p_edge=0.2)
    g = greedy_timeline(p)
    out = improve(p, g, tail_of(p), kicks=kicks, kick_s=5.0)
    assert out.makespan <= g.makespan + 1e-9
    assert sim_ms(p, out) == pytest.approx(out.makespan, abs=1e-9)


@settings(max_examples=10, **SETTINGS)
@given(seed=st.integers(0, 10**6), n=st.integers(3, 40), nd=st.integers(2, 3))
def test_pruned_move_timing_is_exact(seed, n, nd):
    # try_move returns the exact makespan, or inf only when the move cannot beat the incumbent
    p = random_problem(seed, n, nd, p_edge=0.25)
    plan = _Draft(p, greedy_timeline(p), tail_of(p))
    rng = random.Random(seed)
    moves = plan.moves()
    for _ in range(30):
        m, d = moves[rng.randrange(len(moves))], rng.randrange(nd)
        if not all(np.isfinite(plan.ucost[x][d]) for x in m):
            continue
        got = plan.try_move(m, d)
        dev = list(plan.dev)
        for x in m:
            dev[x] = d
        full = plan._run(0, dev, [0.0] * len(dev), [0.0] * nd, np.inf, last=1 << 60)
        if np.isfinite(got):
            assert got == pytest.approx(full, abs=1e-9)
        else:
            assert full >= plan.makespan - 1e-9


def test_improve_keeps_fused_groups_valid():
    p = golden()
    plan = schedule(p, "ilp", nt=3, groups=True, time_limit=1.0)
    validate_plan(p, plan)
    tl = Timeline(p)  # the golden optimum with groups is 12.5; a worse start must not break groups
    for v in p.topo:
        tl.place([v], 0)
    out = improve(p, tl, fusable_tail(p, p.cost_matrix.min(axis=1)), kicks=5)
    assert out.makespan <= tl.makespan + 1e-9
    assert sim_ms(p, out) == pytest.approx(out.makespan)


def test_improve_gains_on_a_layered_dag():
    p = layered_problem(3, 200, 6, 2)
    g = greedy_timeline(p)
    assert improve(p, g, tail_of(p)).makespan < g.makespan * 0.99


@settings(max_examples=8, **SETTINGS)
@given(seed=st.integers(0, 10**6), n=st.integers(6, 30), nd=st.integers(2, 3))
def test_window_start_is_feasible_and_no_worse_than_the_guide(seed, n, nd):
    p = random_problem(seed, n, nd, p_edge=0.25)
    g = greedy_timeline(p)
    tail = tail_of(p)
    parts = partition(p, 6)
    g_pos = {v: i for i, v in enumerate(g.order)}
    tl = Timeline(p)
    for v in parts[0]:  # commit the first subgraph as greedy did
        tl.place([v], int(g.dev[v]))
    for W in parts[1:2]:
        obj, dev, st_, fin = window_start(p, tl, W, tail, g.dev, g_pos)
        ref = Timeline.__new__(Timeline)
        ref.__dict__.update(tl.__dict__)
        ref.dev, ref.finish, ref.start, ref.dev_free = (
            tl.dev.copy(),
            tl.finish.copy(),
            tl.start.copy(),
            tl.dev_free.copy(),
        )
        for v in sorted(W, key=g_pos.__getitem__):
            ref.place([v], int(g.dev[v]))
        assert obj <= max(ref.finish[v] + tail[v] for v in W) + 1e-9
        for v in W:  # a real schedule: after its inputs, costs and receives included
            assert fin[v] >= st_[v] + p.cost_matrix[v, dev[v]] - 1e-9
            for u, _ in p.preds[v]:
                assert st_[v] >= (fin[u] if u in fin else tl.finish[u]) - 1e-9


@settings(max_examples=8, **SETTINGS)
@given(seed=st.integers(0, 10**6), n=st.integers(6, 24), nd=st.integers(2, 3))
def test_window_path_bound_is_below_the_optimum(seed, n, nd):
    p = random_problem(seed, n, nd, p_edge=0.25)
    g = greedy_timeline(p)
    tail = tail_of(p)
    g_pos = {v: i for i, v in enumerate(g.order)}
    W = partition(p, 8)[0]
    tl = Timeline(p)
    _, wd, ws, wf = window_start(p, tl, W, tail, g.dev, g_pos)
    spec = ilp_model.WindowSpec(W, wd, ws, wf, time_limit=30.0, tail=tail, skip_by_bound=False)
    res = ilp_model.solve_window(p, tl, spec)  # exact: no skip
    inw = set(W)
    allowed = {v: np.flatnonzero(np.isfinite(p.cost_matrix[v])).tolist() for v in W}
    rel = {}  # the model's releases on an empty prefix: the cheapest path before each node
    for v in W:
        rel[v] = max((rel[u] + float(p.cost_matrix[u].min()) for u, _ in p.preds[v]), default=0.0)
    assert path_bound(p, tl, W, inw, rel, allowed, tail, None) <= res.objective + 1e-6


@settings(max_examples=10, **SETTINGS)
@given(
    seed=st.integers(0, 10**6), n=st.integers(1, 40), nd=st.integers(2, 4), cut=st.floats(0.0, 1.0)
)
def test_completion_makespan_is_the_simulators(seed, n, nd, cut):
    # the guide's completion of a committed prefix, used to accept or refuse a window's result
    p = random_problem(seed, n, nd, p_edge=0.25)
    g = greedy_timeline(p)
    k = int(cut * n)
    tl = Timeline(p)
    for v in g.order[:k]:
        tl.place([v], int(g.dev[v]))
    assert completion_makespan(p, tl, list(g.order[k:]), g.dev) == pytest.approx(
        sim_ms(p, g), abs=1e-9
    )


def test_forward_pass_keeps_the_guides_window_when_the_mip_result_completes_worse():
    p = layered_problem(2, 120, 6, 2)
    g = greedy_timeline(p)
    tail = tail_of(p)
    parts = partition(p, 12)
    ctx = PassContext(tail)
    tl = guided_pass(p, parts, PlusOptions.of("ilp+", time_limit=0.2, balance=True), g, ctx)
    assert sim_ms(p, tl) == pytest.approx(tl.makespan)
    assert sorted(tl.order) == list(range(len(p.nodes)))
    assert ctx.kept_guide + ctx.stats.optimal + ctx.stats.limit >= len(parts)
