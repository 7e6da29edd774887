"""Property tests of every baseline on random DAGs (2-4 devices, unsupported ops, costly links),
and of the two DPs against brute force."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetlab.cost.problem import Problem
from hetlab.schedulers import schedule, simulate
from hetlab.schedulers.base import REGISTRY, algorithm
from hetlab.schedulers.mosaic import mosaic_slices
from hetlab.schedulers.overseer import overseer_devices

BASELINES = [
    "heft",
    "heft-append",
    "peft",
    "dmda",
    "dmdar",
    "mosaic",
    "overseer",
    "partitiontuner",
    "opseq",
    "typeseq",
    "single",
]
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

cost_st = st.one_of(st.none(), st.integers(0, 20), st.floats(0, 20, allow_nan=False))


@st.composite
def problems(draw, max_nodes: int = 9, chain: bool = False, in_tree: bool = False) -> Problem:
    n = draw(st.integers(1, max_nodes))
    nd = draw(st.integers(2, 4 if not (chain or in_tree) else 3))
    devs = [f"d{i}" for i in range(nd)]
    nodes = []
    for i in range(n):
        c = draw(st.lists(cost_st, min_size=nd, max_size=nd))
        if all(x is None for x in c):
            c[draw(st.integers(0, nd - 1))] = draw(st.integers(0, 20))
        op = draw(st.sampled_from(["Conv", "Relu", "MatMul", "Add", ""]))
        nodes.append({"id": f"n{i}", "op_type": op, "cost": dict(zip(devs, c, strict=False))})
    if chain:
        pairs = [(i, i + 1) for i in range(n - 1)]
    elif in_tree:
        pairs = [(i, draw(st.integers(i + 1, n - 1))) for i in range(n - 1)]
    else:
        cand = [(i, j) for j in range(n) for i in range(j)]
        pairs = sorted(draw(st.sets(st.sampled_from(cand), max_size=2 * n))) if cand else []
    edges = []
    for i, j in pairs:
        e = {"src": f"n{i}", "dst": f"n{j}", "bytes": draw(st.integers(0, 5000))}
        if draw(st.booleans()):
            a, b = draw(st.permutations(devs))[:2]
            e["comm"] = {f"{a}->{b}": draw(st.integers(0, 30))}
        edges.append(e)
    comm = {
        f"{a}->{b}": {
            "latency": draw(st.integers(0, 10)),
            "bandwidth": draw(st.one_of(st.none(), st.sampled_from([10.0, 1000.0]))),
        }
        for a in devs
        for b in devs
        if a != b and draw(st.booleans())
    }
    comm["default"] = {"latency": draw(st.integers(0, 5)), "bandwidth": 100.0}
    groups = []
    for i, j in pairs[: draw(st.integers(0, 3))]:
        g = draw(st.lists(st.one_of(st.none(), st.integers(0, 20)), min_size=nd, max_size=nd))
        groups.append({"nodes": [f"n{i}", f"n{j}"], "cost": dict(zip(devs, g, strict=False))})
    doc = {
        "name": "rand",
        "devices": devs,
        "nodes": nodes,
        "edges": edges,
        "comm": comm,
        "groups": groups,
    }
    return Problem.from_json(doc)


def trivial_bound(p: Problem) -> float:
    """max over nodes of the least time it can take (alone, or inside any group)."""
    best = p.cost_matrix.min(axis=1)
    for g in p.groups:
        c = min((x for x in g.cost.values() if x is not None), default=float("inf"))
        for v in g.nodes:
            best[p.index[v]] = min(best[p.index[v]], c)
    return float(best.max(initial=0.0))


@pytest.mark.parametrize("algo", BASELINES)
@SETTINGS
@given(p=problems(), data=st.data())
def test_valid_plans_on_random_dags(algo, p, data):
    name = algo
    if algo == "single":
        name = f"single:{data.draw(st.sampled_from(p.devices))}"
    alg = algorithm(name)
    kw = {"device": name.split(":", 1)[1]} if ":" in name else {}
    untimed = alg.func(p, **kw)
    assert untimed.algo == alg.name and untimed.makespan is None  # times come from schedule
    device_of = untimed.device_of
    ids = [n.id for n in p.nodes]
    # every node placed once, order topological
    assert sorted(untimed.order) == sorted(ids) and sorted(device_of) == sorted(ids)
    pos = {v: i for i, v in enumerate(untimed.order)}
    assert all(pos[e.src] < pos[e.dst] for e in p.edges)
    # on a device that supports it (alone, or as a member of a fused group)
    in_group = {}
    for g in untimed.fused:
        assert len({device_of[v] for v in g}) == 1
        assert p.group_cost(g, device_of[g[0]]) is not None
        for v in g:
            assert v not in in_group
            in_group[v] = g
    for v, d in device_of.items():
        assert v in in_group or p.cost_matrix[p.index[v], p.dev_index[d]] < float("inf")
    # the plan the registry returns is the simulator's timing of the algorithm's plan
    plan = schedule(p, name)
    t = simulate(p, device_of, untimed.order, untimed.fused, untimed.sequential or alg.sequential)
    assert plan.makespan == pytest.approx(t.makespan)
    assert plan.makespan >= trivial_bound(p) - 1e-9
    assert plan.sequential == (untimed.sequential or alg.sequential)
    if "predicted_makespan" in untimed.extra:  # list schedulers model spec §3 exactly
        assert untimed.extra["predicted_makespan"] == pytest.approx(plan.makespan)
    if plan.sequential:  # one unit at a time: no overlap at all
        spans = sorted({(a.start, a.finish) for a in plan.assignments})
        assert all(f1 <= s2 + 1e-9 for (_, f1), (s2, _) in itertools.pairwise(spans))


def brute_force_sequential(p: Problem) -> float:
    """The least sequential makespan over every device assignment (topological order)."""
    ids = [n.id for n in p.nodes]
    order = [ids[v] for v in p.topo]
    best = float("inf")
    for devs in itertools.product(p.devices, repeat=len(ids)):
        if any(p.cost_matrix[i, p.dev_index[d]] == float("inf") for i, d in enumerate(devs)):
            continue
        best = min(best, simulate(p, dict(zip(ids, devs, strict=False)), order, (), True).makespan)
    return best


@settings(max_examples=25, deadline=None)
@given(p=problems(max_nodes=5, chain=True))
def test_mosaic_dp_equals_brute_force_on_chains(p):
    value, slices = mosaic_slices(p)
    brute = brute_force_sequential(p)
    assert value == pytest.approx(brute)
    assert schedule(p, "mosaic").makespan == pytest.approx(brute)
    assert all(a[2] != b[2] for a, b in itertools.pairwise(slices))


@settings(max_examples=25, deadline=None)
@given(p=problems(max_nodes=5, in_tree=True))
def test_overseer_dp_equals_brute_force_on_in_trees(p):
    # on an in-tree the spanning tree is the whole graph, so eq. 2 minimises eq. 1 exactly
    _, total = overseer_devices(p)
    brute = brute_force_sequential(p)
    assert total == pytest.approx(brute)
    assert schedule(p, "overseer").makespan == pytest.approx(brute)


def test_every_baseline_is_registered():
    for name in BASELINES:
        algorithm(name)
        assert name in REGISTRY


@settings(max_examples=25, deadline=None)
@given(p=problems(max_nodes=6, chain=True))
def test_partitiontuner_on_chains_is_mosaic_plus_groups(p):
    # a chain is one branch: PartitionTuner's DP is MOSAIC's (optimal) one with fused groups
    # as extra choices, so it is never worse, and equal when no group is cheaper
    pt, mo = schedule(p, "partitiontuner").makespan, schedule(p, "mosaic").makespan
    assert pt <= mo + 1e-9
    if not p.groups:
        assert pt == pytest.approx(mo)


@pytest.mark.parametrize("algo", [*BASELINES[:-1], "single:d0"])
def test_one_device_runs_everything_back_to_back(algo):
    doc = {
        "name": "one",
        "devices": ["d0"],
        "nodes": [{"id": f"n{i}", "cost": {"d0": float(i + 1)}} for i in range(5)],
        "edges": [
            {"src": "n0", "dst": "n2"},
            {"src": "n1", "dst": "n2"},
            {"src": "n2", "dst": "n4"},
        ],
    }
    assert schedule(Problem.from_json(doc), algo).makespan == 15.0
