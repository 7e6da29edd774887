"""The recommended plan: a scheduler's or a single device's, by the calibrated prediction,
a mixed plan only where it is predicted faster by the margin."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hetlab.calibrate.recommend import MIXED_MARGIN, recommend
from hetlab.cost.problem import Link, PEdge, PNode, Problem
from hetlab.devices.replay import graph_from_problem, replay_devices
from hetlab.schedulers import schedule
from tests.executor.test_predict import diamond


def test_without_a_calibration_the_smallest_makespan_wins():
    p = diamond(per_unit=0.0, boundary=0.0)
    p.extra.pop("boundary")
    plan = recommend(p, graph_from_problem(p), replay_devices(p))
    rec = plan.extra["recommended"]
    assert rec["basis"] == "makespan" and rec["margin"] == MIXED_MARGIN
    assert set(rec["predicted"]) == {"ilp+", "single:x", "single:y"}
    assert plan.makespan == pytest.approx(min(rec["predicted"].values()))
    assert rec["fastest"] == rec["chosen"] == "ilp+"


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
    assert chosen.extra["recommended"]["basis"] == "predicted_host_ms"
    assert chosen.extra["recommended"]["chosen"].startswith("single:")
