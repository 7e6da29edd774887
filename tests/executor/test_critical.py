"""The measured critical path (``executor.critical``): an exact split of the latency."""

from __future__ import annotations

import pytest

from hetlab.devices.bound import UnitSpec
from hetlab.executor.critical import critical_path, summary
from hetlab.executor.trace import Event


def ev(kind: str, dev: str, unit: int, start: float, finish: float) -> Event:
    return Event(kind, dev, f"u{unit}", start, finish, {"unit": unit})


def two_device_run() -> tuple[list[UnitSpec], list[Event]]:
    """x: unit 0 [0.1, 1.0] sends until 1.2; y: unit 1 waits for 0, receives 1.5-1.6, runs
    1.6-3.0; x: unit 2 (after 0 on x) runs 1.3-1.8 and is off the path."""
    specs = [UnitSpec(0, "x", ["a"]), UnitSpec(1, "y", ["b"], deps=[0]), UnitSpec(2, "x", ["c"])]
    events = [
        ev("unit", "x", 0, 0.1, 1.0),
        ev("send", "x", 0, 1.0, 1.2),
        ev("recv", "y", 1, 1.5, 1.6),
        ev("unit", "y", 1, 1.6, 3.0),
        ev("unit", "x", 2, 1.3, 1.8),
    ]
    return specs, events


def test_the_path_follows_what_made_each_unit_ready():
    specs, events = two_device_run()
    path = critical_path(specs, events)
    assert [s.unit for s in path] == [0, 1]
    first, second = path
    assert first.dispatch == pytest.approx(0.1) and not first.cross
    assert second.ready == pytest.approx(1.2) and second.cross
    assert second.dispatch == pytest.approx(0.3)
    assert second.copies == pytest.approx(0.1) and second.run == pytest.approx(1.4)


def test_the_parts_add_up_to_the_latency_and_are_compared_with_the_profile():
    specs, events = two_device_run()
    s = summary(specs, events, 3.1, {0: 0.8, 1: 1.0, 2: 0.5})
    parts = s["dispatch_ms"] + s["copies_ms"] + s["run_ms"] + s["tail_ms"]
    assert parts == pytest.approx(3.1)
    assert s["units"] == 2 and s["cross_device"] == 1
    assert s["predicted_run_ms"] == pytest.approx(1.8)
    assert s["dispatch_after_other_device_ms"] == pytest.approx(0.3)
    # a profile that does not price a unit on the path gives no comparison
    assert "predicted_run_ms" not in summary(specs, events, 3.1, {0: 0.8})
    assert summary(specs, [], 3.1) == {}


def test_a_real_run_reports_its_critical_path():
    from hetlab.calibrate import run  # the profile's cost of the path is calibrate's
    from hetlab.devices.replay import graph_from_problem, replay_devices
    from hetlab.schedulers.plan import Plan
    from tests.calibrate.test_prediction_host import chain

    p = chain()
    g = graph_from_problem(p)
    plan = Plan.build(p, "by hand", {"a": "cpu0", "b": "gpu", "c": "gpu"}, ["a", "b", "c"])
    doc = run(g, plan, replay_devices(p, time_scale=0.01), problem=p, repeat=3).to_json()
    cp = doc["critical_path"]
    assert cp["units"] == 2 and cp["cross_device"] == 1
    total = cp["dispatch_ms"] + cp["copies_ms"] + cp["run_ms"] + cp["tail_ms"]
    assert total == pytest.approx(doc["latency_ms"]["median"], abs=1e-3)  # the median repetition's
    assert cp["predicted_run_ms"] == pytest.approx(
        sum(n.cost["cpu0" if n.id == "a" else "gpu"] for n in p.nodes)
    )
