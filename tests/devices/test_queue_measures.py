"""Queue measures: one computation over the parts each backend supplies
(``devices/queue_measures.py``), checked on fake timers with known figures and on the
OpenCL device's own parts (PoCL here)."""

from __future__ import annotations

import pytest

from hetlab.devices.queue_measures import ChainTimers, QueueMeasures, medians


class Steps:
    """A timer whose calls return ``values`` in turn (the first is the warm-up)."""

    def __init__(self, *values: float) -> None:
        self.values, self.calls = list(values), 0

    def __call__(self) -> float:
        self.calls += 1
        return self.values.pop(0)


class Fake(QueueMeasures):
    def __init__(self, timers: ChainTimers) -> None:
        self.timers = timers

    def chain_timers(self, device, n):
        return self.timers

    def copies_timer(self, queues, units, which):
        raise AssertionError("not used")


def test_medians_warm_each_timer_once_then_take_the_median_of_the_rounds():
    a, b = Steps(99.0, 3.0, 1.0, 2.0), Steps(-5.0, 7.0, 7.0, 9.0)
    assert medians([a, b], rounds=3) == [2.0, 7.0]
    assert a.calls == b.calls == 4


@pytest.mark.parametrize("at_once", [False, True])
def test_queue_costs_are_per_kernel_differences_of_the_two_chains(at_once):
    """11 kernels: 1 s alone, 1.5 s alternating: 50 ms per wait across queues; a chain
    launched at once pays its 0.1 s launch once, which is not a kernel's."""
    timers = ChainTimers(
        single=lambda: 1.0, alternate=lambda: 1.5, launch=lambda: 0.1, launched_at_once=at_once
    )
    got = Fake(timers).queue_costs(None, n=11, rounds=3)
    assert got["event_ms"] == pytest.approx(50.0)
    assert got["launch_ms"] == pytest.approx(100.0)
    assert got["chain_ms"] == pytest.approx((900.0 if at_once else 1000.0) / 11, abs=1e-4)


def test_a_faster_alternating_chain_costs_no_negative_wait():
    timers = ChainTimers(single=lambda: 1.0, alternate=lambda: 0.9, launch=lambda: 0.0)
    assert Fake(timers).queue_costs(None, n=5, rounds=1)["event_ms"] == 0.0


def test_the_opencl_parts_measure_its_queues(tmp_path):
    pytest.importorskip("pyopencl")
    from hetlab.devices.platform import devices as platform_devices
    from hetlab.graph import load
    from tests.executor.models import two_branch

    found = {d.name: d for d in platform_devices({"opencl": {"queues": {"cl0": 2}}})}
    if "cl0.q1" not in found:
        pytest.skip("no OpenCL device here")
    root = found["cl0"]
    costs = root.queue_measures().queue_costs(root, n=20, rounds=2)
    assert set(costs) == {"launch_ms", "event_ms", "chain_ms"}
    assert costs["launch_ms"] > 0 and costs["chain_ms"] > 0 and costs["event_ms"] >= 0
    graph = load(two_branch(tmp_path / "two_branch.onnx"))
    slow = root.queue_measures().model_slowdown([root, found["cl0.q1"]], graph, rounds=2)
    assert slow["slowdown"] >= 1.0 and slow["single_ms"] > 0
    assert slow["slowdown"] == pytest.approx(
        max(1.0, slow["together_ms"] / slow["single_ms"]), rel=1e-2
    )
