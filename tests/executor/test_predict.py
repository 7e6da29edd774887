"""predict.end_to_end_ms: spec §3 with the model's inputs and outputs in host memory."""

from __future__ import annotations

import pytest

from hetlab.cost.problem import Link, PEdge, PNode, Problem
from hetlab.devices.fake import graph_from_problem
from hetlab.executor.predict import end_to_end_ms
from hetlab.schedulers.sim import simulate


def chain() -> Problem:
    nodes = [PNode(v, {"cpu0": 4.0, "gpu": 1.0}) for v in ("a", "b", "c")]
    edges = [PEdge("a", "b", 400.0), PEdge("b", "c", 400.0)]
    link = Link(latency=0.5, bandwidth=100.0)  # bytes per ms
    return Problem("chain", ["cpu0", "gpu"], nodes, edges, {"cpu0->gpu": link, "gpu->cpu0": link})


def test_a_remote_device_pays_the_input_and_output_transfers():
    p = chain()
    g = graph_from_problem(p)
    order = ["a", "b", "c"]
    on_gpu = {v: "gpu" for v in order}
    base = simulate(p, on_gpu, order).makespan
    up = 0.5 + g.tensors["input"].nbytes / 100.0
    down = 0.5 + g.tensors["c:out"].nbytes / 100.0
    assert end_to_end_ms(p, g, on_gpu, order, "cpu0", {"gpu"}) == pytest.approx(base + up + down)
    # a device sharing host memory pays nothing; on the host itself nothing either
    assert end_to_end_ms(p, g, on_gpu, order, "cpu0", set()) == pytest.approx(base)
    on_cpu = {v: "cpu0" for v in order}
    assert end_to_end_ms(p, g, on_cpu, order, "cpu0", {"gpu"}) == pytest.approx(simulate(p, on_cpu, order).makespan)


def test_mixed_plan_and_unknown_host():
    p = chain()
    g = graph_from_problem(p)
    order = ["a", "b", "c"]
    mixed = {"a": "cpu0", "b": "gpu", "c": "gpu"}
    base = simulate(p, mixed, order).makespan
    down = 0.5 + g.tensors["c:out"].nbytes / 100.0
    assert end_to_end_ms(p, g, mixed, order, "cpu0", {"gpu"}) == pytest.approx(base + down)
    assert end_to_end_ms(p, g, mixed, order, "cpu9", {"gpu"}) is None
