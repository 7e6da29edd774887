"""Devices that share cores (spec §2 ``shared_cores``, §3): one resource in the simulator, the
timelines and every scheduler."""

from __future__ import annotations

import json

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from hetlab.cost.problem import Problem
from hetlab.cost.queues import only_devices
from hetlab.cost.shared import derive
from hetlab.errors import HetlabError
from hetlab.schedulers import schedule, simulate
from hetlab.schedulers.bounds import lower_bound, validate_plan
from tests.schedulers.helpers import random_problem
from tests.schedulers.test_properties import SETTINGS, brute_force, heuristics, run_ok

QUICK = {**SETTINGS, "phases": [Phase.explicit, Phase.reuse, Phase.generate]}  # no shrinking
SHARED = [["d0", "d2"], ["d1", "d2"]]  # two core groups and a device on both their cores


def shared_problem(seed: int, n: int, p_edge: float = 0.3) -> Problem:
    doc = random_problem(seed, n, 3, p_edge=p_edge).to_json()
    doc["shared_cores"] = SHARED
    return Problem.from_json(doc)


def overlaps(plan, a: str, b: str) -> bool:
    ia = [(x.start, x.finish) for x in plan.assignments if x.device == a]
    ib = [(x.start, x.finish) for x in plan.assignments if x.device == b]
    return any(min(f1, f2) - max(s1, s2) > 1e-9 for s1, f1 in ia for s2, f2 in ib)


def three_independent(shared: bool) -> Problem:
    """Three independent nodes, 4 ms on either core group, 3 ms on the device over both."""
    doc = {
        "name": "three",
        "devices": ["c0", "c1", "cl"],
        "nodes": [{"id": v, "cost": {"c0": 4, "c1": 4, "cl": 3}} for v in "abc"],
        "edges": [],
    }
    if shared:
        doc["shared_cores"] = [["c0", "cl"], ["c1", "cl"]]
    return Problem.from_json(doc)


def test_occupancy_from_the_key_and_nothing_without_it():
    p = shared_problem(1, 6)
    assert p.occupancy == [[0, 2], [1, 2], [2, 0, 1]]
    assert random_problem(1, 6, 3).occupancy is None
    # a set naming devices the problem does not have (a subset of a profile) is harmless
    assert only_devices(p, ["d0", "d1"]).occupancy is None


def test_bad_key_is_one_line():
    doc = random_problem(1, 4, 3).to_json()
    doc["shared_cores"] = "d0,d2"
    with pytest.raises(HetlabError, match="shared_cores must be a list"):
        Problem.from_json(doc)


def test_derived_from_the_platform_section():
    cpu = [{"name": f"cpu{i}", "kind": "onnxruntime-cpu", "cores": [i]} for i in range(2)]
    pocl = {
        "name": "cl0",
        "kind": "opencl",
        "platform": "Portable Computing Language",
        "device": "pthread-Intel(R) Xeon(R)",
    }
    gpu = {"name": "cl1", "kind": "opencl", "type": "GPU", "device": "H100"}
    plat = {"usable_cpus": 2, "devices": [*cpu, pocl, gpu]}
    assert derive(plat, {}) == [["cl0", "cpu0"], ["cl0", "cpu1"]]
    # two disjoint core groups and a GPU share nothing
    assert derive({"usable_cpus": 2, "devices": [*cpu, gpu]}, {}) == []
    # a queue view shares its device's cores, never with the device itself
    view = {**pocl, "name": "cl0.q1", "queue_of": "cl0"}
    assert ["cl0", "cl0.q1"] not in derive({"usable_cpus": 2, "devices": [*cpu, pocl, view]}, {})


def test_ilp_optimum_on_a_known_instance():
    # apart: one node on each device, 4 ms; sharing: the fast device first, then the two
    # core groups side by side, 3 + 4 ms
    assert schedule(three_independent(False), "ilp", nt=10).makespan == pytest.approx(4.0)
    plan = schedule(three_independent(True), "ilp", nt=10)
    assert plan.makespan == pytest.approx(7.0)
    validate_plan(three_independent(True), plan)


def test_simulator_orders_conflicting_nodes_by_the_plan_order():
    p = three_independent(True)
    dev = {"a": "c0", "b": "c1", "c": "cl"}
    t = simulate(p, dev, ["a", "c", "b"])
    assert (t.start["a"], t.start["c"], t.start["b"]) == (0.0, 4.0, 7.0)
    t = simulate(p, dev, ["a", "b", "c"])
    assert (t.start["a"], t.start["b"], t.start["c"]) == (0.0, 0.0, 4.0)


@settings(max_examples=10, **QUICK)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 20), nt=st.integers(3, 8))
def test_no_two_sharing_devices_overlap(seed, n, nt):
    p = shared_problem(seed, n)
    lb = lower_bound(p)
    ilp_kw = {"nt": nt, "time_limit": 2.0}
    for algo, kw in [("ilp", ilp_kw), ("ilp+", ilp_kw)] + [(a, {}) for a in heuristics(p)]:
        plan = run_ok(p, algo, **kw)
        if plan is None:
            continue
        validate_plan(p, plan)  # times are the simulator's, no overlap on one device
        assert not overlaps(plan, "d0", "d2") and not overlaps(plan, "d1", "d2"), algo
        assert plan.makespan >= lb - 1e-9, algo
        predicted = plan.extra.get("predicted_makespan")
        if predicted is not None:  # a timeline's own timing is the simulator's
            assert predicted == pytest.approx(plan.makespan, abs=1e-9), algo


@settings(max_examples=8, **QUICK)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 5))
def test_exact_ilp_equals_brute_force_with_shared_cores(seed, n):
    p = shared_problem(seed, n, p_edge=0.4)
    plan = schedule(p, "ilp", nt=2000)
    validate_plan(p, plan)
    assert plan.makespan == pytest.approx(brute_force(p), rel=1e-6, abs=1e-6)


def test_saved_plan_reads_back_to_the_same_times(tmp_path):
    p = shared_problem(7, 14)
    for algo in ("heft", "peft", "ilp"):
        plan = schedule(p, algo)
        path = tmp_path / f"{algo}.json"
        path.write_text(json.dumps(plan.to_json()))
        from hetlab.schedulers.plan import Plan

        back = Plan.load(path)
        t = simulate(p, back.device_of, back.order, back.fused, back.sequential)
        assert t.makespan == pytest.approx(plan.makespan, abs=1e-9), algo


@settings(max_examples=25, **QUICK)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 12), algo=st.sampled_from(["heft", "ilp"]))
def test_the_prediction_with_only_scheduled_terms_is_the_makespan(seed, n, algo):
    """The run's prediction (``calibrate``'s event engine) orders the units of devices that
    share cores as §3 does."""
    from hetlab.calibrate.prediction import SCHEDULED, predict
    from hetlab.devices.replay import graph_from_problem

    p = shared_problem(seed, n)
    plan = schedule(p, algo)
    got = predict(p, graph_from_problem(p), plan, terms=SCHEDULED)
    assert got.total_ms == pytest.approx(plan.makespan, abs=1e-9)


def test_shipped_profiles_read_what_their_platform_says():
    from hetlab.cost.datasets import load_measured_profile

    pocl = load_measured_profile("xeon-2core-pocl", "squeezenet")  # written before the key
    assert pocl.occupancy == [[0, 2], [1, 2], [2, 0, 1]]
    # disjoint core groups and an OpenCL GPU share nothing
    assert load_measured_profile("h100-16core", "squeezenet").occupancy is None
    # an explicit empty key overrides the section
    doc = pocl.to_json()
    doc["shared_cores"] = []
    assert Problem.from_json(doc).occupancy is None


def test_queue_views_share_their_device_cores_but_not_with_each_other():
    doc = {
        "name": "views",
        "devices": ["cpu0", "cl0", "cl0.q1"],
        "nodes": [{"id": "a", "cost": {"cpu0": 1, "cl0": 1, "cl0.q1": 1}}],
        "edges": [],
        "queues": {"cl0": {"views": ["cl0.q1"], "latency": 0.0, "slowdown": 1.5}},
        "shared_cores": [["cpu0", "cl0"]],
    }
    assert Problem.from_json(doc).occupancy == [[0, 1, 2], [1, 0], [2, 0]]
