"""The recommended plan: a scheduler's or a single device's, by the calibrated prediction
(or, with ``measure``, by times measured on the devices), a mixed plan only where it is
faster by the margin."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hetlab.calibrate import measured as M
from hetlab.calibrate.recommend import MIXED_MARGIN, one_device, recommend
from hetlab.cost.calibration import Calibration
from hetlab.cost.problem import Link, PEdge, PNode, Problem
from hetlab.devices.replay import graph_from_problem, replay_devices
from hetlab.errors import HetlabError
from hetlab.schedulers import schedule
from hetlab.schedulers.plan import Plan
from tests.calibrate.test_prediction_host import diamond

R = importlib.import_module(
    "hetlab.calibrate.recommend"
)  # the package's ``recommend`` is the function


def stand_ins(p: Problem) -> list:
    """Devices that stand in for real ones: they replay a copy of ``p``, so ``recommend``
    measures them as it measures real devices (it replays only devices of ``p`` itself)."""
    return replay_devices(Problem.from_json(p.to_json()))


def test_without_a_calibration_the_smallest_makespan_wins():
    p = diamond(per_unit=0.0, boundary=0.0)
    p.calibration = Calibration()
    plan = recommend(p, graph_from_problem(p), replay_devices(p))
    rec = plan.extra["recommended"]
    assert rec["basis"] == "prediction" and rec["margin"] == MIXED_MARGIN
    assert set(rec["predicted"]) == {"ilp+", "single:x", "single:y"}
    assert plan.makespan == pytest.approx(min(rec["predicted"].values()))
    assert rec["fastest"] == rec["chosen"] == "ilp+"
    assert "measured" not in rec  # the default measures nothing


def fork(gain: float) -> Problem:
    """a -> (b, c) -> d on two equal devices, no transfer cost: one device takes
    ``2s + 2w``, b and c on the two devices ``2s + w``, i.e. ``gain`` less."""
    s, w = 1.0, 2.0 * gain / (1.0 - 2.0 * gain)
    cost = {"a": s, "b": w, "c": w, "d": s}
    nodes = [PNode(v, {"x": t, "y": t}) for v, t in cost.items()]
    edges = [PEdge(u, v, 0.0) for u, v in (("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"))]
    link = Link(latency=0.0, bandwidth=None)
    return Problem("fork", ["x", "y"], nodes, edges, {"x->y": link, "y->x": link})


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gain=st.floats(0.005, 0.45))
@example(gain=0.05)
@example(gain=0.20)
def test_a_mixed_plan_is_recommended_only_when_predicted_faster_by_the_margin(gain):
    p = fork(gain)
    plan = recommend(p, graph_from_problem(p), replay_devices(p))
    rec = plan.extra["recommended"]
    pred = rec["predicted"]
    assert pred["ilp+"] == pytest.approx((1.0 - gain) * pred["single:x"], rel=1e-3)
    assert rec["fastest"] == "ilp+"  # without the margin the mixed plan would win
    mixed = len(set(plan.device_of.values())) == 2
    if gain < MIXED_MARGIN - 0.005:
        assert not mixed and rec["chosen"].startswith("single:")
    elif gain > MIXED_MARGIN + 0.005:
        assert mixed and rec["chosen"] == "ilp+"
    # the margin is a parameter: without it the smallest prediction wins
    plain = recommend(p, graph_from_problem(p), replay_devices(p), margin=0.0)
    assert plain.extra["recommended"]["chosen"] == "ilp+"


def test_a_per_unit_cost_makes_one_device_the_recommendation():
    cheap = diamond(per_unit=0.0, boundary=0.0)
    costly = diamond(per_unit=2.0, boundary=0.0)
    g = graph_from_problem(cheap)
    assert len(set(schedule(costly, "ilp+").device_of.values())) == 2  # the makespan splits it
    assert len(set(recommend(cheap, g, replay_devices(cheap)).device_of.values())) == 2
    chosen = recommend(costly, g, replay_devices(costly))
    assert chosen.extra["recommended"]["basis"] == "prediction"
    assert chosen.extra["recommended"]["chosen"].startswith("single:")


@pytest.fixture
def one_warmup(monkeypatch):
    """One warm-up run per executor instead of half a second of them: replay devices need
    no warming, and the tests stay fast."""
    monkeypatch.setattr("hetlab.executor.api.WARMUP_S", 0.0)


@pytest.fixture
def counted_runs(monkeypatch, one_warmup):
    """The plans ``measured_ms`` runs, one entry per ``run`` (one executor each)."""
    runs = []

    def run(graph, plan, devices, **kw):
        runs.append(plan)
        return real(graph, plan, devices, **kw)

    real = M.run
    monkeypatch.setattr(M, "run", run)
    return runs


def margin_choice(rec, candidates):
    """The margin rule applied to ``rec["measured"]`` (the candidates that ran)."""
    t = {n: ms for n, ms in rec["measured"].items() if ms is not None}
    alone = [n for n in t if one_device(candidates[n])]
    best, best_alone = min(t, key=t.__getitem__), min(alone, key=t.__getitem__)
    if best in alone or t[best] < (1.0 - rec["margin"]) * t[best_alone]:
        return best
    return best_alone


def test_measured_times_choose_and_identical_plans_share_one_measurement(counted_runs):
    p = fork(0.3)
    g = graph_from_problem(p)
    plan = recommend(p, g, stand_ins(p), measure=2)
    rec = plan.extra["recommended"]
    assert rec["basis"] == "measured"
    assert (
        set(rec["measured"])
        == set(rec["predicted"])
        == {"ilp+", "single:x", "single:y", *R.MEASURED_EXTRA}
    )
    assert "measure_errors" not in rec and "max_rel_err" not in rec  # no ONNX file here
    candidates = R.candidate_plans(p, "ilp+", R.MEASURED_EXTRA, {})
    keys = {n: M.program_key(g, c) for n, c in candidates.items()}
    # one run per distinct program and round; names of one program share its value
    assert len(set(keys.values())) < len(keys)  # ilp+, greedy and heft split fork alike
    assert len(counted_runs) == M.ROUNDS * len(set(keys.values()))
    for a, ka in keys.items():
        for b, kb in keys.items():
            if ka == kb:
                assert rec["measured"][a] == rec["measured"][b]
    assert rec["fastest"] == min(rec["measured"], key=rec["measured"].__getitem__)
    assert rec["chosen"] == margin_choice(rec, candidates)
    assert keys[rec["chosen"]] == M.program_key(g, plan)


def test_program_key_a_one_device_plan_is_its_device():
    p = fork(0.3)
    g = graph_from_problem(p)
    x = schedule(p, "single:x")
    other_order = Plan.build(p, "x", x.device_of, ["a", "c", "b", "d"])
    assert M.program_key(g, x) == M.program_key(g, other_order) == ("one-device", "x")
    assert M.program_key(g, schedule(p, "ilp+")) != M.program_key(g, x)


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    mixed=st.floats(0.5, 1.5),
    y=st.floats(0.8, 1.2),
    margin=st.sampled_from([0.0, MIXED_MARGIN, 0.3]),
)
@example(mixed=0.85, y=1.0, margin=MIXED_MARGIN)  # predicted to win, measured not by the margin
@example(mixed=0.80, y=1.0, margin=MIXED_MARGIN)
def test_the_margin_rule_applies_to_the_measured_times(monkeypatch, mixed, y, margin):
    """Whatever was predicted, the measured times decide: a mixed plan only when it ran
    ``margin`` faster than the fastest one-device plan."""
    single = {"x": 10.0, "y": 10.0 * y}

    def measured_ms(candidates, graph, devices, repeat, inputs=None):
        return M.Timings(
            ms={
                n: single[c.assignments[0].device] if one_device(c) else 10.0 * mixed
                for n, c in candidates.items()
            }
        )

    monkeypatch.setattr(R, "measured_ms", measured_ms)
    p = fork(0.3)  # predicted: the mixed plan 30% faster
    plan = recommend(p, graph_from_problem(p), stand_ins(p), margin=margin, measure=1)
    rec = plan.extra["recommended"]
    best_single = min(single.values())
    if 10.0 * mixed < (1.0 - margin) * best_single:
        assert not one_device(plan) and rec["chosen"] == rec["fastest"]
    else:
        assert one_device(plan) and rec["measured"][rec["chosen"]] == best_single


def test_a_candidate_whose_run_fails_is_dropped(monkeypatch, one_warmup):
    def run(graph, plan, devices, **kw):
        if "y" in plan.device_of.values():
            raise HetlabError("y: simulated failure")
        return real(graph, plan, devices, **kw)

    real = M.run
    monkeypatch.setattr(M, "run", run)
    p = fork(0.3)
    plan = recommend(p, graph_from_problem(p), stand_ins(p), measure=1)
    rec = plan.extra["recommended"]
    failed = {n for n, ms in rec["measured"].items() if ms is None}
    assert "single:y" in failed and set(rec["measure_errors"]) == failed
    assert all("simulated failure" in e for e in rec["measure_errors"].values())
    assert rec["chosen"] == "single:x" and set(plan.device_of.values()) == {"x"}

    def down(*args, **kw):
        raise HetlabError("down")

    monkeypatch.setattr(M, "run", down)
    with pytest.raises(HetlabError, match="no candidate plan ran"):
        recommend(p, graph_from_problem(p), stand_ins(p), measure=1)


def test_outputs_are_checked_once_per_program_against_one_reference(monkeypatch, counted_runs):
    p = fork(0.3)
    g = graph_from_problem(p)
    g.model_path = "fork.onnx"
    refs = []

    def reference_outputs(path, feed, outputs):
        refs.append(path)
        return {t: np.ones(g.tensors[t].shape, "float32") for t in outputs}

    monkeypatch.setattr(M, "reference_outputs", reference_outputs)
    candidates = R.candidate_plans(p, "ilp+", R.MEASURED_EXTRA, {})
    got = M.measured_ms(candidates, g, {d.name: d for d in replay_devices(p)}, repeat=1)
    assert refs == ["fork.onnx"]  # one reference for every candidate
    # replay devices return zeros: every candidate is checked, and is 100% off
    assert got.max_rel_err == dict.fromkeys(candidates, 1.0) and not got.errors
    assert len(counted_runs) == M.ROUNDS * len({M.program_key(g, c) for c in candidates.values()})
