"""A run of an ``If`` unit on OpenCL waits for its queue where it reads the condition and at
its end, however many kernel segments and nested ``If`` s the taken branch has
(``devices/opencl/composite.py``), and the executor writes a unit's inputs with one wait and
reads its outputs with one. The host waits are counted: every ``finish`` of the device's
queues and every blocking read, map or copy."""

from __future__ import annotations

import itertools

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

pytest.importorskip("pyopencl")

from hetlab.devices.binding import bind
from hetlab.devices.ort_cpu import OrtCpuDevice
from hetlab.executor.check import max_rel_err, reference_outputs
from hetlab.executor.interpreter import Executor
from hetlab.graph.onnx_io import load


def _out(name: str) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, None)


def _model(tmp_path, depth: int) -> str:
    """y = Relu(If(flag, then: Relu(x), then ``depth`` times If(flag2, Sigmoid, Tanh) and a
    Neg; else: Abs(x) * 2)): ``2 * depth + 1`` kernel segments in the then branch."""
    then_nodes = [helper.make_node("Relu", ["x"], ["t0"])]
    for i in range(depth):
        inner_t = helper.make_graph(
            [helper.make_node("Sigmoid", [f"t{i}"], [f"s{i}"])], f"it{i}", [], [_out(f"s{i}")]
        )
        inner_e = helper.make_graph(
            [helper.make_node("Tanh", [f"t{i}"], [f"h{i}"])], f"ie{i}", [], [_out(f"h{i}")]
        )
        then_nodes += [
            helper.make_node("If", ["flag2"], [f"c{i}"], then_branch=inner_t, else_branch=inner_e),
            helper.make_node("Neg", [f"c{i}"], [f"t{i + 1}"]),
        ]
    two = numpy_helper.from_array(np.array(2.0, np.float32))
    else_nodes = [
        helper.make_node("Constant", [], ["e_two"], value=two),
        helper.make_node("Abs", ["x"], ["e_a"]),
        helper.make_node("Mul", ["e_a", "e_two"], ["e_out"]),
    ]
    g = helper.make_graph(
        [
            helper.make_node(
                "If",
                ["flag"],
                ["z"],
                then_branch=helper.make_graph(then_nodes, "then", [], [_out(f"t{depth}")]),
                else_branch=helper.make_graph(else_nodes, "else", [], [_out("e_out")]),
            ),
            helper.make_node("Relu", ["z"], ["y"]),
        ],
        "if_deep",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 5, 5]),
            helper.make_tensor_value_info("flag", TensorProto.BOOL, []),
            helper.make_tensor_value_info("flag2", TensorProto.BOOL, []),
        ],
        [_out("y")],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    path = tmp_path / f"if_deep{depth}.onnx"
    onnx.save(m, str(path))
    return str(path)


class _Counting:
    """``dev.cl`` seen through a counter of the blocking reads, maps and copies."""

    def __init__(self, cl, counts: dict[str, int]) -> None:
        self._cl, self._counts = cl, counts

    def __getattr__(self, name):
        return getattr(self._cl, name)

    def enqueue_copy(self, queue, dst, src, **kw):
        self._counts["waits"] += bool(kw.get("is_blocking", True))
        return self._cl.enqueue_copy(queue, dst, src, **kw)

    def enqueue_map_buffer(self, queue, buf, flags, offset, shape, dtype, **kw):
        self._counts["waits"] += bool(kw.get("is_blocking", True))
        return self._cl.enqueue_map_buffer(queue, buf, flags, offset, shape, dtype, **kw)


def _count_waits(dev, monkeypatch) -> dict[str, int]:
    """From now on, every host wait on ``dev``'s queues adds one to ``counts["waits"]``."""
    counts = {"waits": 0}

    class Queue(dev.cl.CommandQueue):
        def finish(self):
            counts["waits"] += 1
            return super().finish()

    props = dev.cl.command_queue_properties.PROFILING_ENABLE
    monkeypatch.setattr(dev, "plain_queue", Queue(dev.ctx))
    monkeypatch.setattr(dev, "_profiling_queue", Queue(dev.ctx, properties=props))
    monkeypatch.setattr(dev, "cl", _Counting(dev.cl, counts))
    return counts


def _feed(depth: int, flag2: bool) -> dict[str, np.ndarray]:
    return {
        "x": np.random.default_rng(depth).standard_normal((1, 3, 5, 5)).astype(np.float32),
        "flag": np.array(True),
        "flag2": np.array(flag2),
    }


@pytest.mark.parametrize("timed", [False, True], ids=["untimed", "timed"])
def test_if_run_waits_for_the_condition_and_the_end_only(dev, tmp_path, monkeypatch, timed):
    if dev.kind != "opencl":
        pytest.skip("If runs on OpenCL devices only")
    counts = _count_waits(dev, monkeypatch)
    for depth, flag2 in ((1, True), (5, False)):
        path = _model(tmp_path, depth)
        feed = _feed(depth, flag2)
        g = load(path, values={"flag": feed["flag"], "flag2": feed["flag2"]})
        unit = dev.prepare(g, g.topo_order())
        bufs = {t: dev.copy_in(feed[t]) for t in unit.inputs}
        dev.run(unit, bufs, timed)  # the first run builds the branch
        counts["waits"] = 0
        res = dev.run(unit, bufs, timed)
        assert counts["waits"] == 2, (depth, counts)  # the condition's read, the run's end
        assert unit.handle.waits == 2
        out = {"y": dev.copy_out(res.outputs["y"])}
        assert max_rel_err(out, reference_outputs(path, feed, ["y"])) <= 1e-5, depth
        step = next(s for k, s in unit.handle.steps if k == "if")
        assert step.executed["device"] == 1 + 2 * depth + depth  # Relu, each If and Neg, bodies
        if timed:  # the If's interval covers its branch's launches
            times = {i.name: i for i in res.node_times}
            assert times["If_0"].finish > times["If_0"].start >= res.start


def test_executor_run_of_an_if_model_waits_four_times(dev, tmp_path, monkeypatch):
    if dev.kind != "opencl" or dev.map_io:
        pytest.skip("If runs on OpenCL devices only; a mapped copy waits twice")
    path = _model(tmp_path, 5)
    feed = _feed(5, True)
    g = load(path, values={"flag": feed["flag"], "flag2": feed["flag2"]})
    ex = Executor(bind(dev.name, g, {"cpu0": OrtCpuDevice("cpu0", [0]), dev.name: dev}))
    counts = _count_waits(dev, monkeypatch)
    with ex:
        ex.run_once(feed)
        counts["waits"] = 0
        rep = ex.run_once(feed)
    # the three inputs' copies, the condition, the unit's end, the output's copy
    assert counts["waits"] == 4, counts
    assert max_rel_err(rep.outputs, reference_outputs(path, feed, ["y"])) <= 1e-5
    recv = sorted((e for e in rep.events if e.kind == "recv"), key=lambda e: e.start)
    assert sorted(e.name for e in recv) == ["flag", "flag2", "x"]  # one batch, split by bytes
    assert all(a.finish == b.start for a, b in itertools.pairwise(recv))
