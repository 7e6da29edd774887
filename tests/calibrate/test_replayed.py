"""A replay says what it is: its times are the profiled devices' on a virtual clock (the
profiled costs over the executor's units and their real dependencies), this host's timing
of it is kept and labelled beside them, and Recommend never ranks plans by replays that
miss their predictions by more than a replay's tolerance."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetlab.calibrate.replayed import plan_clock, replay_line, replay_times
from hetlab.commands.recommend import format_candidates
from hetlab.cost.calibration import Calibration
from hetlab.cost.problem import Problem
from hetlab.devices.replay import (
    REPLAY_TOLERANCE,
    graph_from_problem,
    replay_devices,
    virtual_clock,
)
from hetlab.executor import build_units
from hetlab.schedulers import schedule
from hetlab.schedulers.sim import simulate
from hetlab.viz.measured import measured
from hetlab.widgets.runs import execute, summary
from tests.executor.dags import random_problem

R = importlib.import_module("hetlab.calibrate.recommend")
H200 = Path(__file__).resolve().parents[2] / "data/profiles/h200-16core/googlenet-streams.json"


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), algo=st.sampled_from(["heft", "greedy", "single:a"]))
def test_the_virtual_clock_of_one_node_units_is_the_section_3_makespan(seed, algo):
    p = random_problem(25, seed)
    plan = schedule(p, algo)
    units = [(plan.device_of[v], [v]) for v in plan.order]
    want = simulate(p, plan.device_of, plan.order).makespan
    assert virtual_clock(p, units).makespan == pytest.approx(want)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000))
def test_executor_units_start_after_their_inputs_and_their_device(seed):
    p = random_problem(30, seed)
    g = graph_from_problem(p)
    plan = schedule(p, "heft")
    specs = build_units(g, plan)
    vr = plan_clock(p, g, plan)
    assert len(vr.units) == len(specs)
    unit_of = {v: s.index for s in specs for v in s.nodes}
    free: dict[str, float] = {}
    for s, (d, nodes, start, finish) in zip(specs, vr.units, strict=True):
        assert d == s.device and list(nodes) == list(s.nodes) and finish >= start
        assert start >= free.get(d, 0.0) - 1e-9
        free[d] = finish
        for v in nodes:
            for u in g.preds(v):
                if unit_of[u] != s.index:
                    assert start >= vr.units[unit_of[u]][3] - 1e-9
    # a unit waits for all its outside inputs before it starts: never before §3's nodes
    assert vr.makespan >= plan.makespan - 1e-9


def test_a_replay_reports_the_virtual_clock_and_labels_the_hosts_timing():
    p = random_problem(12, 3)
    plan = schedule(p, "heft")
    report = execute(plan, p, None, [], True, 2)
    doc = report.to_json()
    info = doc["replay"]
    assert info["clock"] == "virtual" and info["of"] == p.name
    assert doc["latency_ms"]["median"] == pytest.approx(
        plan_clock(p, graph_from_problem(p), plan).makespan, abs=1e-4
    )
    assert info["host_ms"] > 0 and info["units"] == len({e["unit"] for e in doc["timeline"]})
    assert info["host_overhead_ms_per_unit"] is not None and info["profiled_unit_ms"] > 0
    # every node once, each unit's nodes tiling its interval: one bar per unit
    assert sorted(e["node"] for e in doc["timeline"]) == sorted(n.id for n in p.nodes)
    m = measured(doc["timeline"])
    assert {r.device for r in m.rows} <= set(p.devices)
    line, err = summary(doc, plan, replay=True)
    assert "replayed" in line and "virtual clock, not a measurement" in line
    assert f"{info['host_ms']:.3f} ms" in line  # the host's timing, named as the host's
    assert err == pytest.approx(
        (doc["latency_ms"]["median"] - doc["predicted_ms"]) / doc["predicted_ms"]
    )
    assert replay_line({"latency_ms": {}}) is None  # a measured run has no replay line


def test_the_public_run_on_a_profiles_replay_devices_is_the_replay_on_the_virtual_clock():
    """``hetlab.run`` (the CLI's, the course's and the workbench's path) gives a replay's
    report on the virtual clock wherever the devices replay the problem given."""
    import hetlab

    p = random_problem(9, 4)
    plan = schedule(p, "heft")
    report = hetlab.run(graph_from_problem(p), plan, replay_devices(p), problem=p, repeat=2)
    doc = report.to_json()
    assert doc["replay"]["clock"] == "virtual"
    assert doc["latency_ms"]["median"] == pytest.approx(
        plan_clock(p, graph_from_problem(p), plan).makespan, abs=1e-4
    )


def test_the_status_line_compares_with_the_reports_prediction_and_names_the_makespan():
    p = random_problem(10, 1)
    plan = schedule(p, "heft")
    doc = {"latency_ms": {"median": 2 * plan.makespan}, "predicted_ms": 1.5 * plan.makespan}
    line, err = summary(doc, plan, replay=False)
    assert line.startswith(
        f"measured {2 * plan.makespan:.3f} ms vs predicted {1.5 * plan.makespan:.3f} ms"
    )
    assert f"the plan's §3 makespan {plan.makespan:.3f} ms" in line
    assert err == pytest.approx(1 / 3)
    same, _ = summary({**doc, "predicted_ms": plan.makespan}, plan, replay=False)
    assert "§3 makespan" not in same  # one prediction, named once


@pytest.fixture(scope="module")
def h200() -> Problem:
    return Problem.load(H200)


def test_a_replay_of_the_h200_streams_profile_is_labelled_and_on_the_profiles_clock(h200):
    g = graph_from_problem(h200)
    plan = schedule(h200, "heft")
    doc = execute(plan, h200, None, [], True, 1).to_json()
    assert doc["replay"]["clock"] == "virtual" and doc["replay"]["of"] == h200.name
    assert doc["latency_ms"]["median"] == pytest.approx(
        plan_clock(h200, g, plan).makespan, abs=1e-4
    )
    assert {e["device"] for e in doc["timeline"]} <= set(h200.devices)
    line, _ = summary(doc, plan, replay=True)
    assert line.startswith(f"replayed {doc['latency_ms']['median']:.3f} ms vs predicted")
    assert "virtual clock, not a measurement" in line and "per unit" in line


def test_recommend_on_a_replay_of_the_h200_streams_profile_ranks_by_prediction(h200):
    g = graph_from_problem(h200)
    plan = R.recommend(h200, g, replay_devices(h200), algo="heft", measure=1)
    rec = plan.extra["recommended"]
    assert rec["basis"] == "prediction" and "why" in rec
    assert rec["why"].startswith("ranked by prediction") and "±25%" in rec["why"]
    predicted, replayed = rec["predicted"], rec["replayed"]
    assert max(abs(replayed[n] / predicted[n] - 1) for n in predicted) > REPLAY_TOLERANCE
    by_prediction = R.recommend(h200, g, replay_devices(h200), algo="heft")
    assert rec["chosen"] == by_prediction.extra["recommended"]["chosen"]
    assert "measured" not in rec  # nothing was timed on this host's threads
    text = format_candidates(rec)
    assert "replayed" in text.splitlines()[0] and rec["why"] in text
    assert "virtual clock, not a measurement" in text


def test_recommend_ranks_by_replays_that_match_their_predictions():
    p = random_problem(12, 5)
    p.calibration = Calibration()  # no host terms: the prediction is the virtual clock's
    g = graph_from_problem(p)
    plan = R.recommend(p, g, replay_devices(p), algo="heft", measure=1)
    rec = plan.extra["recommended"]
    assert rec["basis"] == "replayed" and "why" not in rec
    candidates = R.candidate_plans(p, "heft", R.MEASURED_EXTRA, {})
    assert rec["replayed"] == replay_times(candidates, g, p)
