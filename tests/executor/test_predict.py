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
    assert end_to_end_ms(p, g, on_cpu, order, "cpu0", {"gpu"}) == pytest.approx(
        simulate(p, on_cpu, order).makespan
    )


def test_mixed_plan_and_unknown_host():
    p = chain()
    g = graph_from_problem(p)
    order = ["a", "b", "c"]
    mixed = {"a": "cpu0", "b": "gpu", "c": "gpu"}
    base = simulate(p, mixed, order).makespan
    down = 0.5 + g.tensors["c:out"].nbytes / 100.0
    assert end_to_end_ms(p, g, mixed, order, "cpu0", {"gpu"}) == pytest.approx(base + down)
    assert end_to_end_ms(p, g, mixed, order, "cpu9", {"gpu"}) is None


def diamond(per_unit: float, boundary: float) -> Problem:
    nodes = [PNode(v, {"x": 1.0, "y": 1.0}) for v in ("a", "b", "c", "d")]
    edges = [PEdge("a", "b", 4.0), PEdge("a", "c", 4.0), PEdge("b", "d", 4.0), PEdge("c", "d", 4.0)]
    link = Link(latency=0.1 + boundary, bandwidth=None)
    cal = {"ms": boundary, "per_unit_ms": per_unit, "method": "alternating windows"}
    return Problem("diamond", ["x", "y"], nodes, edges, {"x->y": link, "y->x": link},
                   extra={"boundary": {"x->y": dict(cal), "y->x": dict(cal)}})  # fmt: skip


def test_host_serial_charges_each_unit_the_host_one_at_a_time():
    from hetlab.executor.predict import end_to_end_ms, host_serial_ms

    order = ["a", "b", "c", "d"]
    p = diamond(per_unit=0.0, boundary=0.0)
    g = graph_from_problem(p)
    split = {"a": "x", "b": "x", "c": "y", "d": "x"}
    assert host_serial_ms(p, g, split, order, "x", set()) == pytest.approx(
        end_to_end_ms(p, g, split, order, "x", set())
    )
    p = diamond(per_unit=0.5, boundary=0.3)
    one = {v: "x" for v in order}
    # one unit: its compute plus one host slot; the boundary latency is not charged
    assert host_serial_ms(p, g, one, order, "x", set()) == pytest.approx(4.0 + 0.5)
    # split: units a | b | c (on y) | d; b and c are ready at once, but the host serves one
    t = host_serial_ms(p, g, split, order, "x", set())
    assert t == pytest.approx(0.5 + 1.0 + 0.5 + 0.5 + 0.1 + 1.0 + 0.5 + 0.1 + 1.0)
    p.extra.pop("boundary")
    assert host_serial_ms(p, g, split, order, "x", set()) is None


def test_run_report_has_the_predictions_and_a_foreign_profile_does_not_stop_the_run():
    from hetlab.devices.fake import fake_devices
    from hetlab.executor import run
    from hetlab.schedulers.plan import Plan

    p = chain()
    g = graph_from_problem(p)
    plan = Plan.build(p, "by hand", {"a": "cpu0", "b": "gpu", "c": "gpu"}, ["a", "b", "c"])
    doc = run(g, plan, fake_devices(p, time_scale=0.01), problem=p).to_json()
    assert doc["predicted_io_ms"] == pytest.approx(doc["predicted_ms"])  # no remote device here
    other = diamond(per_unit=0.1, boundary=0.0)
    doc = run(g, plan, fake_devices(p, time_scale=0.01), problem=other).to_json()
    assert "predicted_io_ms" not in doc and "predicted_host_ms" not in doc
