from __future__ import annotations

import itertools
import random
import threading

import numpy as np
import pytest

from hetlab.cost.problem import Problem
from hetlab.devices.binding import bind
from hetlab.devices.capabilities import Capabilities
from hetlab.devices.replay import ReplayDevice, graph_from_problem
from hetlab.executor import Executor, RunError, run
from hetlab.schedulers.plan import Plan
from hetlab.schedulers.sim import simulate
from tests.executor.dags import random_problem


def fork(ms: float = 30.0) -> Problem:
    """s -> (x1 -> x2) | (y1 -> y2) -> j, with a 4 KiB tensor on every edge."""
    c = lambda v: {"a": v, "b": v}
    nodes = [
        {"id": "s", "cost": c(1)},
        {"id": "x1", "cost": c(ms)},
        {"id": "x2", "cost": c(1)},
        {"id": "y1", "cost": c(ms)},
        {"id": "y2", "cost": c(1)},
        {"id": "j", "cost": c(1)},
    ]
    e = lambda u, v: {"src": u, "dst": v, "bytes": 4096}
    edges = [e("s", "x1"), e("x1", "x2"), e("s", "y1"), e("y1", "y2"), e("x2", "j"), e("y2", "j")]
    return Problem.from_json(
        {"name": "fork", "devices": ["a", "b"], "nodes": nodes, "edges": edges}
    )


SPLIT = {"s": "a", "x1": "a", "x2": "a", "y1": "b", "y2": "b", "j": "a"}


def unit_events(rep):
    return {ev.args["unit"]: ev for ev in rep.events if ev.kind == "unit"}


def test_devices_run_in_parallel_and_match_the_prediction():
    p = fork(30.0)
    g = graph_from_problem(p)
    rep = run(
        g,
        Plan.build(p, "manual", SPLIT, g.topo_order()),
        [ReplayDevice("a", p), ReplayDevice("b", p)],
        repeat=3,
        warmup=0,
    )
    units = unit_events(rep)
    on = {d: [e for e in units.values() if e.device == d] for d in ("a", "b")}
    assert any(x.start < y.finish and y.start < x.finish for x in on["a"] for y in on["b"])
    assert rep.predicted_ms == pytest.approx(33.0)
    assert 0.9 * rep.predicted_ms <= rep.latency_ms["median"] <= 1.3 * rep.predicted_ms
    assert rep.devices == {"a": 4, "b": 2} and rep.units == 4


@pytest.mark.parametrize("seed", range(4))
def test_each_unit_starts_after_its_producers_finished(seed):
    rng = random.Random(seed)
    p = random_problem(40, seed, devices=("a", "b", "c"))
    g = graph_from_problem(p)
    device_of = {n.id: rng.choice("abc") for n in g.nodes}
    devs = [ReplayDevice(d, p, time_scale=0.2) for d in "abc"]
    ex = Executor(bind(Plan.of(device_of, g.topo_order()), g, devs))
    try:
        rep = ex.run_once({"input": np.zeros(1, np.float32)})
    finally:
        ex.close()
    evs = unit_events(rep)
    assert set(evs) == {s.index for s in ex.specs}
    for s in ex.specs:
        for d in s.deps:
            assert evs[d].finish <= evs[s.index].start
    by_dev: dict[str, list] = {}
    for s in ex.specs:  # a device runs its units one at a time, in plan order
        by_dev.setdefault(s.device, []).append(evs[s.index])
    for lst in by_dev.values():
        assert all(a.finish <= b.start for a, b in itertools.pairwise(lst))
    assert set(rep.outputs) == set(g.outputs)


def test_a_tensor_is_sent_to_a_device_once_and_buffers_are_freed():
    # s(a) is read on b by x1 and, in a later unit of b, by x2 (which also waits for y(a))
    c = {"a": 1.0, "b": 1.0}
    nodes = [{"id": v, "cost": c} for v in ("s", "x1", "y", "x2")]
    edges = [
        {"src": "s", "dst": "x1", "bytes": 64},
        {"src": "x1", "dst": "y", "bytes": 64},
        {"src": "y", "dst": "x2", "bytes": 64},
        {"src": "s", "dst": "x2", "bytes": 64},
    ]
    p = Problem.from_json({"name": "cache", "devices": ["a", "b"], "nodes": nodes, "edges": edges})
    g = graph_from_problem(p)
    a, b = ReplayDevice("a", p), ReplayDevice("b", p)
    freed: list[int] = []
    b.free = lambda buf: freed.append(id(buf))  # type: ignore[method-assign]
    ex = Executor(
        bind(Plan.of({"s": "a", "x1": "b", "y": "a", "x2": "b"}, g.topo_order()), g, [a, b])
    )
    try:
        rep = ex.run_once({"input": np.zeros(1, np.float32)})
        assert len([s for s in ex.specs if s.device == "b"]) == 2  # x1 and x2 in two units
        recv_b = [ev.name for ev in rep.events if ev.kind == "recv" and ev.device == "b"]
        assert sorted(recv_b) == ["s:out", "y:out"]  # s:out once, though two units read it
        assert b.copies_in == 2
        assert ex._workers["b"].local == {} and ex._workers["a"].local == {}
        assert len(freed) == 2  # the received s:out and y:out, after their last use on b
    finally:
        ex.close()


def test_a_failing_unit_is_named():
    p = fork(1.0)
    g = graph_from_problem(p)
    with pytest.raises(RunError, match=r"unit \d+ on b \[y1\.\.y2.*DeviceFailure"):
        run(g, SPLIT, [ReplayDevice("a", p), ReplayDevice("b", p, fail_on=["y2"])], warmup=0)


def test_a_failure_ends_a_sequential_run_while_another_device_waits_for_its_turn():
    """b fails y1 (turn 1) while a already waits for x1's turn (2), which depends on s only."""
    p = fork(1.0)
    g = graph_from_problem(p)
    plan = Plan.build(p, "seq", SPLIT, ["s", "y1", "y2", "x1", "x2", "j"], sequential=True)
    devs = [ReplayDevice("a", p), ReplayDevice("b", p, fail_on=["y1"])]
    raised: list[BaseException] = []

    def go() -> None:
        try:
            run(g, plan, devs, warmup=0)
        except RunError as e:
            raised.append(e)

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(timeout=30)
    assert not t.is_alive(), "the run hangs"
    assert len(raised) == 1 and "on b [y1..y2" in str(raised[0])


def test_opencl_failure_falls_back_to_the_first_cpu_device():
    p = fork(2.0)
    g = graph_from_problem(p)
    cl = ReplayDevice("b", p, kind="opencl", fail_on=["y1"])
    rep = run(g, SPLIT, [ReplayDevice("a", p), cl], repeat=3, warmup=0)
    assert [(f["device"], f["to"], f["first"]) for f in rep.fallbacks] == [("b", "a", "y1")]
    assert "DeviceFailure" in rep.fallbacks[0]["error"]
    assert set(rep.outputs) == {"j:out"} and rep.outputs["j:out"].shape == g.tensors["j:out"].shape


def test_sequential_plans_run_one_unit_at_a_time():
    p = fork(5.0)
    g = graph_from_problem(p)
    plan = Plan.build(p, "seq", SPLIT, g.topo_order(), sequential=True)
    rep = run(g, plan, [ReplayDevice("a", p), ReplayDevice("b", p)], warmup=0)
    evs = sorted((ev for ev in rep.events if ev.kind == "unit"), key=lambda e: e.start)
    assert all(x.finish <= y.start for x, y in itertools.pairwise(evs))
    assert rep.predicted_ms == pytest.approx(
        simulate(p, SPLIT, g.topo_order(), sequential=True).makespan
    )


def test_trace_has_one_row_per_device(tmp_path):
    import json

    p = fork(1.0)
    g = graph_from_problem(p)
    rep = run(
        g, SPLIT, [ReplayDevice("a", p), ReplayDevice("b", p)], warmup=0, trace=tmp_path / "t.json"
    )
    doc = json.loads((tmp_path / "t.json").read_text())
    rows = {e["args"]["name"]: e["tid"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    assert set(rows) == {"a", "b"}
    units = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["cat"] == "unit"]
    assert {e["tid"] for e in units} == set(rows.values()) and len(units) == rep.units
    assert {r["node"] for r in rep.timeline} == {n.id for n in g.nodes}


class PooledFake(ReplayDevice):
    """A fake that, like OpenCL, ``writes_inputs``: received tensors get buffers reused
    across runs."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.allocs = self.writes = self.frees = 0

    def capabilities(self):
        return Capabilities(writes_inputs=True)

    def alloc(self, shape, dtype="float32"):
        self.allocs += 1
        return np.empty(shape, dtype)

    def write(self, buf, array):
        self.writes += 1
        buf[...] = array

    def free(self, buf):
        self.frees += 1


def test_devices_that_write_inputs_reuse_receive_buffers_across_runs():
    p = fork(0.5)
    g = graph_from_problem(p)
    b = PooledFake("b", p)
    ex = Executor(bind(Plan.of(SPLIT, g.topo_order()), g, [ReplayDevice("a", p), b]))
    try:
        for _ in range(3):
            ex.run_once({"input": np.zeros(1, np.float32)})
        assert b.allocs == 1 and b.writes == 3 and b.frees == 0  # s:out, allocated once
    finally:
        ex.close()
    assert b.frees == 1


def test_unit_time_is_shared_by_flops_when_nodes_are_not_timed():
    from hetlab.executor.trace import Event, node_timeline

    ev = Event("unit", "a", "u", 1.0, 11.0, {"unit": 0})
    rows = node_timeline([ev], {0: ["x", "y", "z"]}, {}, {"x": 0, "y": 300, "z": 100})
    assert [r["node"] for r in rows] == ["x", "y", "z"] and rows[0]["start"] == 1.0
    assert rows[-1]["finish"] == 11.0
    span = {r["node"]: r["finish"] - r["start"] for r in rows}
    assert span["y"] == pytest.approx(3 * span["z"], rel=0.05) and 0 < span["x"] < span["z"]
    even = node_timeline([ev], {0: ["x", "y"]}, {})
    assert [r["finish"] - r["start"] for r in even] == pytest.approx([5.0, 5.0])
