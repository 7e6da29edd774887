"""Property tests on random DAGs: valid plans, lower bound, partition shape, ILP == brute force."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetlab.errors import HetlabError
from hetlab.schedulers import REGISTRY, schedule, simulate
from hetlab.schedulers.base import MODULES, algorithm
from hetlab.schedulers.bounds import lower_bound, validate_plan
from hetlab.schedulers.partition import partition
from tests.schedulers.helpers import random_problem

SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow], "derandomize": True}


def heuristics(problem) -> list[str]:
    """Every registered algorithm in this build except ilp and ilp+ (single: one per device)."""
    names = []
    for name in MODULES:
        if name in ("ilp", "ilp+"):
            continue
        try:
            algorithm(name)
        except (HetlabError, ModuleNotFoundError):
            continue
        if name == "single":
            names += [f"single:{d}" for d in problem.devices]
        else:
            names.append(name)
    assert "greedy" in REGISTRY
    return names


def run_ok(problem, algo, **kw):
    try:
        return schedule(problem, algo, **kw)
    except HetlabError:  # e.g. single:DEVICE where that device cannot run some op
        if algo.startswith("single:"):
            return None
        raise


def brute_force(problem) -> float:
    """Best makespan over every supported device map and every topological order (spec §3)."""
    ids = [n.id for n in problem.nodes]
    opts = [[d for d in problem.devices if n.cost.get(d) is not None] for n in problem.nodes]
    preds = {v: {problem.nodes[u].id for u, _ in problem.preds[i]} for i, v in enumerate(ids)}
    orders = [
        o
        for o in itertools.permutations(ids)
        if all(preds[v] <= set(o[:k]) for k, v in enumerate(o))
    ]
    best = float("inf")
    for devs in itertools.product(*opts):
        dmap = dict(zip(ids, devs, strict=False))
        for o in orders:
            best = min(best, simulate(problem, dmap, o).makespan)
    return best


@settings(max_examples=12, **SETTINGS)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 22), nd=st.integers(2, 4), nt=st.integers(3, 8))
def test_plans_valid_and_above_lower_bound(seed, n, nd, nt):
    p = random_problem(seed, n, nd, p_edge=0.25)
    lb = lower_bound(p)
    ilp_kw = {"nt": nt, "time_limit": 2.0}
    plans = {}
    for algo, kw in [("greedy", {}), ("ilp", ilp_kw), ("ilp+", ilp_kw)] + [
        (a, {}) for a in heuristics(p) if a != "greedy"
    ]:
        plan = plans[algo] = run_ok(p, algo, **kw)
        if plan is None:
            continue
        validate_plan(p, plan)
        assert plan.makespan >= lb - 1e-9, algo
    g = plans["greedy"]
    got = plans["ilp+"].makespan  # the floor: never above greedy or one device
    assert got <= g.makespan + 1e-9
    for j in range(nd):  # never worse than the whole model on one device that runs it all
        if all(n.cost.get(p.devices[j]) is not None for n in p.nodes):
            assert got <= p.cost_matrix[:, j].sum() + 1e-9


@settings(max_examples=10, **SETTINGS)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 5), nd=st.integers(2, 3))
def test_exact_ilp_equals_brute_force_and_beats_heuristics(seed, n, nd):
    p = random_problem(seed, n, nd, p_edge=0.4)
    plan = schedule(p, "ilp", nt=2000)
    validate_plan(p, plan)
    bf = brute_force(p)
    assert plan.makespan == pytest.approx(bf, rel=1e-6, abs=1e-6)
    assert plan.makespan <= plan.extra["ilp"]["solves"]["objective"] + 1e-6
    for algo in heuristics(p):
        h = run_ok(p, algo)
        if h is not None:
            assert plan.makespan <= h.makespan + 1e-6, algo


@settings(max_examples=25, **SETTINGS)
@given(
    seed=st.integers(0, 10**6),
    n=st.integers(1, 60),
    nt=st.integers(1, 15),
    eps=st.floats(0.0, 1.0),
    p_edge=st.floats(0.0, 0.5),
)
def test_partition_sizes_topological_cover(seed, n, nt, eps, p_edge):
    p = random_problem(seed, n, 2, p_edge=p_edge)
    parts = partition(p, nt, eps)
    flat = [v for part in parts for v in part]
    assert sorted(flat) == list(range(n))
    assert all(1 <= len(part) <= nt for part in parts)
    where = {v: i for i, part in enumerate(parts) for v in part}
    for e in p.edges:
        assert where[p.index[e.src]] <= where[p.index[e.dst]]
    for part in parts:  # each piece lists its nodes in topological order
        pos = {v: i for i, v in enumerate(part)}
        for v in part:
            for u, _ in p.preds[v]:
                if u in pos:
                    assert pos[u] < pos[v]


def test_partition_balanced_cut_on_a_chain():
    p = random_problem(3, 24, 2, p_edge=0.0)  # antichain: chunks
    assert [len(x) for x in partition(p, 12)] == [12, 12]
    doc = p.to_json()
    doc["edges"] = [{"src": f"n{i}", "dst": f"n{i + 1}", "bytes": 0} for i in range(23)]
    from hetlab.cost.problem import Problem

    parts = partition(Problem.from_json(doc), 12, 0.2)
    assert [len(x) for x in parts] == [12, 12]
