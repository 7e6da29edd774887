"""A device's queues as devices of the problem (``cost/queues.py``)."""

from __future__ import annotations

import pytest

from hetlab.cost.problem import Problem
from hetlab.cost.queues import only_devices, queue_names, with_queues
from hetlab.errors import HetlabError
from hetlab.schedulers.base import schedule


def fork_join(width: int = 4, cost: float = 1.0) -> Problem:
    """src -> width independent branches -> sink, on a CPU and a GPU (the GPU 4x faster)."""
    nodes = [{"id": "src", "cost": {"cpu": 4 * cost, "gpu": cost}}]
    nodes += [{"id": f"b{i}", "cost": {"cpu": 4 * cost, "gpu": cost}} for i in range(width)]
    nodes += [{"id": "sink", "cost": {"cpu": 4 * cost, "gpu": cost}}]
    edges = [{"src": "src", "dst": f"b{i}", "bytes": 1e6} for i in range(width)]
    edges += [{"src": f"b{i}", "dst": "sink", "bytes": 1e6} for i in range(width)]
    return Problem.from_json(
        {
            "name": "fork_join",
            "devices": ["cpu", "gpu"],
            "nodes": nodes,
            "edges": edges,
            "comm": {"default": {"latency": 0.5, "bandwidth": 1e6}},
        }
    )


def test_queue_names_keep_the_device_name():
    assert queue_names("cl0", 3) == ["cl0", "cl0.q1", "cl0.q2"]
    assert queue_names("cl0", 1) == ["cl0"]


def test_queues_cost_like_their_device_and_pass_tensors_for_latency_only():
    p = with_queues(fork_join(), {"gpu": ["gpu.q1", "gpu.q2"]}, latency=0.01, slowdown=1.5)
    assert p.devices == ["cpu", "gpu", "gpu.q1", "gpu.q2"]
    node = p.nodes[1]
    assert node.cost["gpu.q1"] == pytest.approx(1.5 * node.cost["gpu"])
    assert p.comm_cost("src", "b0", "gpu", "gpu.q2") == pytest.approx(0.01)
    assert p.comm_cost("src", "b0", "gpu.q1", "gpu.q2") == pytest.approx(0.01)
    assert p.comm_cost("src", "b0", "gpu.q1", "cpu") == pytest.approx(
        p.comm_cost("src", "b0", "gpu", "cpu")
    )
    assert p.extra["queues"]["gpu"]["views"] == ["gpu.q1", "gpu.q2"]


def test_branches_spread_over_queues_beat_one_queue():
    base = only_devices(fork_join(), ["gpu"])
    one = schedule(base, "heft").makespan
    four = schedule(with_queues(base, {"gpu": queue_names("gpu", 4)[1:]}), "heft").makespan
    assert one == pytest.approx(6.0)
    assert four == pytest.approx(3.0)  # src, the four branches at once, sink


def test_bad_queue_requests_are_one_line_errors():
    with pytest.raises(HetlabError, match="no such device"):
        with_queues(fork_join(), {"npu": ["npu.q1"]})
    with pytest.raises(HetlabError, match="already has"):
        with_queues(fork_join(), {"gpu": ["cpu"]})
    with pytest.raises(HetlabError, match="no device"):
        only_devices(fork_join(), ["tpu"])
