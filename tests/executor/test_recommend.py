"""The recommended plan: a scheduler's or a single device's, by the calibrated prediction."""

from __future__ import annotations

import pytest

from hetlab.calibrate.recommend import recommend
from hetlab.devices.replay import graph_from_problem, replay_devices
from hetlab.schedulers import schedule
from tests.executor.test_predict import diamond


def test_without_a_calibration_the_smallest_makespan_wins():
    p = diamond(per_unit=0.0, boundary=0.0)
    p.extra.pop("boundary")
    plan = recommend(p, graph_from_problem(p), replay_devices(p))
    rec = plan.extra["recommended"]
    assert rec["basis"] == "makespan"
    assert set(rec["predicted"]) == {"ilp+", "single:x", "single:y"}
    assert plan.makespan == pytest.approx(min(rec["predicted"].values()))


def test_a_per_unit_cost_makes_one_device_the_recommendation():
    cheap = diamond(per_unit=0.0, boundary=0.0)
    costly = diamond(per_unit=2.0, boundary=0.0)
    g = graph_from_problem(cheap)
    assert len(set(schedule(costly, "ilp+").device_of.values())) == 2  # the makespan splits it
    assert len(set(recommend(cheap, g, replay_devices(cheap)).device_of.values())) == 2
    chosen = recommend(costly, g, replay_devices(costly))
    assert chosen.extra["recommended"]["basis"] == "predicted_host_ms"
    assert chosen.extra["recommended"]["chosen"].startswith("single:")
