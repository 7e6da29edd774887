"""``ilp`` as HOPE published it and ``ilp+`` on top: plans, the partition they record, defaults."""

from __future__ import annotations

import json

import pytest

from hetlab.cost.datasets import load_hope_profile, profile_names
from hetlab.schedulers import schedule
from hetlab.schedulers.base import algorithm, defaults, param
from hetlab.schedulers.bounds import lower_bound, validate_plan
from hetlab.schedulers.partition import partition
from tests.schedulers.helpers import random_problem
from tests.schedulers.test_properties import brute_force

P40 = "inception-v3-huawei_p40"
CELLS = [(0.05, 4), (0.3, 8)]  # a corner of the 5 x 5 grid that benchmarks/schedulers.py runs
KEYS = {"subgraphs", "windows", "windows_optimal", "windows_limit", "mip_gap_max", "solve_s"}
DECIDERS = {"ilp", "mip-start", "passes", "search"}


@pytest.fixture(scope="module")
def p40():
    if P40 not in profile_names():
        pytest.skip("HOPE phone profiles are not in this checkout")
    return load_hope_profile(P40)


def check_extra(p, plan, nt: int) -> None:
    e = plan.extra
    assert KEYS | {"decided_by"} <= set(e)
    assert e["windows_optimal"] + e["windows_limit"] == e["windows"]
    assert 0 <= e["windows_start_kept"] <= e["windows_limit"]
    flat = [v for part in e["subgraphs"] for v in part]
    assert sorted(flat) == sorted(n.id for n in p.nodes)  # a partition: every node once
    assert all(1 <= len(part) <= nt for part in e["subgraphs"])
    assert e["decided_by"] in DECIDERS or e["decided_by"].startswith("floor:")
    json.dumps(plan.to_json())  # the plan file carries all of it


@pytest.mark.parametrize(("eps", "nt"), CELLS)
def test_ilp_and_ilp_plus_on_the_p40_profile(p40, eps, nt):
    lb = lower_bound(p40)
    a = schedule(p40, "ilp", epsilon=eps, nt=nt)
    b = schedule(p40, "ilp+", epsilon=eps, nt=nt)
    for plan in (a, b):
        validate_plan(p40, plan)  # precedence, one op at a time, exact spec §3 times
        assert plan.makespan >= lb - 1e-9
        check_extra(p40, plan, nt)
    assert b.makespan <= a.makespan + 1e-9
    assert a.extra["decided_by"] in ("ilp", "mip-start")
    assert a.extra["windows"] == len(a.extra["subgraphs"])  # one ILP per subgraph
    ids = [n.id for n in p40.nodes]
    assert a.extra["subgraphs"] == [[ids[v] for v in s] for s in partition(p40, nt, eps)]
    assert b.extra["subgraphs"] == a.extra["subgraphs"]
    if b.makespan < a.makespan - 1e-9:  # something other than HOPE's pass decided it
        assert b.extra["decided_by"] not in ("ilp", "mip-start")


def test_ilp_plus_without_extras_is_ilp(p40):
    a = schedule(p40, "ilp", nt=8)
    b = schedule(p40, "ilp+", nt=8, floor=False, passes=0, search=False)
    assert b.device_of == a.device_of and b.makespan == pytest.approx(a.makespan)
    assert b.extra["decided_by"] == a.extra["decided_by"]


@pytest.mark.parametrize("seed", range(4))
def test_ilp_is_the_exact_optimum_with_one_subgraph(seed):
    p = random_problem(seed, 6, 2, p_edge=0.35)
    plan = schedule(p, "ilp", nt=len(p.nodes))
    validate_plan(p, plan)
    assert plan.extra["windows"] == plan.extra["windows_optimal"] == 1
    assert plan.makespan == pytest.approx(brute_force(p), rel=1e-6, abs=1e-6)


def test_ilp_takes_only_hopes_parameters():
    hope = {"epsilon", "nt", "node_limit", "time_limit", "groups"}  # Alg. 1 and the ILP budget
    assert {x.name for x in algorithm("ilp").params} == hope
    plus = {x.name for x in algorithm("ilp+").params}
    assert {"floor", "passes", "search", "kicks", "lookahead"} <= plus


def test_defaults_come_from_param_alone():
    d = defaults("ilp")
    assert d["epsilon"] == param("ilp", "epsilon").default == 0.2
    assert d["nt"] == param("ilp", "nt").default == 12
    assert param("ilp+", "nt") is param("ilp", "nt")  # ilp+ shares HOPE's specs
    p2, p3 = random_problem(1, 8, 2), random_problem(1, 8, 3)
    assert defaults("greedy")["k"] is None  # depends on the problem
    assert defaults("greedy", p2)["k"] == 4 and defaults("greedy", p3)["k"] == 3
    assert schedule(p2, "greedy").params["k"] == 4
    assert schedule(p3, "greedy").extra["k"] == 3


def test_the_cli_listing_shows_the_param_defaults():
    from hetlab.commands.schedule import registry_listing

    listed = {a["name"]: {p["name"]: p["default"] for p in a["params"]} for a in registry_listing()}
    for algo in ("ilp", "ilp+", "greedy"):
        assert listed[algo] == defaults(algo)
